// Reads torchrun and Slurm (srun / #SBATCH) command lines out of a shell script: how many nodes and how many
// processes per node. Simple shell variables set earlier in the script ($NNODES, ${GPUS:-8}) are expanded.
import { ConfigError, MAX_CONFIG_BYTES, type ConfigIssue } from './positioned';
import { limitProblem } from './limits';
import type { Located, RunPart } from './run-part';

interface Token {
  readonly text: string;
  readonly line: number;
  readonly column: number;
}

type Launcher = 'torchrun' | 'srun';
type Setting = 'nodes' | 'gpusPerNode' | 'tasksPerNode' | 'tasks';

/** Flag spellings for each launcher, mapped to what they set. */
const FLAGS: Record<Launcher, Record<string, Setting>> = {
  torchrun: { '--nproc_per_node': 'gpusPerNode', '--nproc-per-node': 'gpusPerNode', '--nnodes': 'nodes' },
  srun: {
    '-N': 'nodes',
    '--nodes': 'nodes',
    '--gpus-per-node': 'gpusPerNode',
    '--ntasks-per-node': 'tasksPerNode',
    '-n': 'tasks',
    '--ntasks': 'tasks',
    '--gres': 'gpusPerNode',
  },
};

function launcherOf(token: string, previous: string | undefined): Launcher | undefined {
  const base = token.split('/').pop() ?? token;
  if (
    base === 'torchrun' ||
    ((token === 'torch.distributed.run' || token === 'torch.distributed.launch') && previous === '-m')
  )
    return 'torchrun';
  if (base === 'srun' || token === '#SBATCH') return 'srun';
  return undefined;
}

/** Splits a line into whitespace-separated words with their 1-based columns, stopping at a comment. */
function words(line: string, lineNumber: number): Token[] {
  const out: Token[] = [];
  const isDirective = /^\s*#SBATCH\b/.test(line);
  for (const match of line.matchAll(/\S+/g)) {
    if (match[0].startsWith('#') && !(isDirective && match[0] === '#SBATCH')) break;
    out.push({ text: match[0].replace(/^["']|["']$/g, ''), line: lineNumber, column: (match.index ?? 0) + 1 });
  }
  return out;
}

function expand(text: string, variables: Map<string, string>): string | undefined {
  let unresolved = false;
  const value = text.replace(
    /\$\{(\w+)(?::?-([^}]*))?\}|\$(\w+)/g,
    (_, braced: string | undefined, fallback: string | undefined, bare: string | undefined) => {
      const found = variables.get((braced ?? bare)!);
      if (found !== undefined) return found;
      if (fallback !== undefined) return fallback;
      unresolved = true;
      return '';
    },
  );
  return unresolved ? undefined : value;
}

/** Parses "8", "2:4" (elastic, take the maximum), "1-4" (Slurm range) or "h100:8" (typed GPU count). */
function countOf(setting: Setting, flag: string, value: string): number | undefined {
  const gres = flag === '--gres' ? /gpu(?::[\w-]+)?:(\d+)/.exec(value)?.[1] : undefined;
  const text = gres ?? value.split(/[:-]/).pop() ?? value;
  if (!/^\d+$/.test(text)) return undefined;
  const n = Number(text);
  return setting && n >= 1 ? n : undefined;
}

export function parseLauncherScript(text: string, fileName: string): RunPart {
  // Launch scripts are small, like the config files; a huge one is refused before its lines are tokenised
  // (a 100 MB command line took about a minute).
  if (text.length > MAX_CONFIG_BYTES) {
    throw new ConfigError(fileName, [
      {
        message: `file is larger than ${MAX_CONFIG_BYTES / 1024} KiB; launch scripts are small`,
        line: 1,
        column: 1,
        path: [],
      },
    ]);
  }
  const variables = new Map<string, string>();
  const found = new Map<Setting, Located<number>>();
  const notes: string[] = [];
  const formats = new Set<Launcher>();
  let launcher: Launcher | undefined;
  let continued = false;
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const tokens = words(line, i + 1);
    if (!continued) launcher = undefined;
    continued = /\\\s*$/.test(line);
    const assignment = /^\s*(?:export\s+)?(\w+)=(\S*)\s*$/.exec(line);
    if (assignment && !continued) {
      const value = expand(assignment[2].replace(/^["']|["']$/g, ''), variables);
      if (value !== undefined) variables.set(assignment[1], value);
      continue;
    }
    for (let t = 0; t < tokens.length; t++) {
      const token = tokens[t];
      const starts = launcherOf(token.text, tokens[t - 1]?.text);
      if (starts) {
        launcher = starts;
        formats.add(starts);
        continue;
      }
      if (!launcher || token.text === '\\') continue;
      const eq = token.text.indexOf('=');
      let flag = eq > 0 ? token.text.slice(0, eq) : token.text;
      let raw: string | undefined = eq > 0 ? token.text.slice(eq + 1) : undefined;
      let at: Token = eq > 0 ? { ...token, column: token.column + eq + 1 } : token;
      // Slurm's short flags also come glued to their value: -N4.
      const glued = /^(-[Nn])(\d+)$/.exec(token.text);
      if (glued) [flag, raw, at] = [glued[1], glued[2], { ...token, column: token.column + 2 }];
      const setting = FLAGS[launcher][flag];
      if (!setting) continue;
      if (raw === undefined) {
        const next = tokens[t + 1] ?? (continued ? words(lines[i + 1] ?? '', i + 2)[0] : undefined);
        if (!next) continue;
        raw = next.text;
        at = next;
        if (tokens[t + 1]) t++;
      }
      const value = expand(raw, variables);
      if (value === undefined) {
        notes.push(`${flag} ${raw} at line ${at.line} uses a variable the script does not set; ignored`);
        continue;
      }
      if (launcher === 'torchrun' && setting === 'gpusPerNode' && /^(gpu|auto|cpu)$/.test(value)) {
        notes.push(`${flag}=${value}: one process per GPU of the node`);
        continue;
      }
      const n = countOf(setting, flag, value);
      if (n === undefined) {
        const issue: ConfigIssue = {
          message: `${flag}: expected a positive whole number, got '${value}'`,
          line: at.line,
          column: at.column,
          path: [flag],
        };
        throw new ConfigError(fileName, [issue]);
      }
      const limit =
        setting === 'nodes'
          ? 'nodes'
          : setting === 'gpusPerNode' || setting === 'tasksPerNode'
            ? 'gpusPerNode'
            : 'ranks';
      const overLimit = limitProblem(limit, flag, n);
      if (overLimit)
        throw new ConfigError(fileName, [{ message: overLimit, line: at.line, column: at.column, path: [flag] }]);
      found.set(setting, { value: n, line: at.line, column: at.column, file: fileName });
    }
  }
  if (formats.size === 0) {
    throw new ConfigError(fileName, [
      {
        message: 'no torchrun, python -m torch.distributed.run, srun or #SBATCH line found: cannot tell the world size',
        line: 1,
        column: 1,
        path: [],
      },
    ]);
  }
  const nodes = found.get('nodes');
  let gpusPerNode = found.get('gpusPerNode') ?? found.get('tasksPerNode');
  const tasks = found.get('tasks');
  if (!gpusPerNode && tasks && nodes) {
    if (tasks.value % nodes.value !== 0)
      throw new ConfigError(fileName, [
        {
          message: `${tasks.value} tasks do not split evenly over ${nodes.value} nodes`,
          line: tasks.line!,
          column: tasks.column!,
          path: ['--ntasks'],
        },
      ]);
    gpusPerNode = { ...tasks, value: tasks.value / nodes.value };
  }
  const format = formats.has('torchrun') ? 'torchrun' : 'srun';
  return {
    source: { format: formats.size > 1 ? 'srun+torchrun' : format, file: fileName },
    nodes,
    gpusPerNode,
    worldSize: !gpusPerNode && !nodes ? tasks : undefined,
    notes,
  };
}

/** True when the text looks like a launch script rather than YAML or JSON. */
export function looksLikeLauncherScript(text: string, fileName: string): boolean {
  return (
    /\.(sh|bash|slurm|sbatch)$/i.test(fileName) ||
    /^#!.*\b(ba)?sh\b/.test(text) ||
    /(^|\s)(torchrun|srun)\s/m.test(text)
  );
}
