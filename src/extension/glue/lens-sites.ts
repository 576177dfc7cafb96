// Where code lenses go. Placement is cheap text scanning (no parser), so `provideCodeLenses` answers at once
// while the costly predictions wait for `resolveCodeLens`. Pure: text in, sites out.
import type { CollectiveKind } from '../../engine/index';
import { l10n } from './l10n';

/** What a Python lens stands on. */
export type PythonSiteKind = 'collective' | 'ddp' | 'fsdp' | 'horovod' | 'jax' | 'deepspeed' | 'bucket';

export interface PythonLensSite {
  readonly kind: PythonSiteKind;
  /** 0-based line and columns of the matched call or keyword. */
  readonly line: number;
  readonly column: number;
  readonly endColumn: number;
  /** The collectives this site issues, in the order a step issues them. */
  readonly collectives: readonly CollectiveKind[];
  /** The text that matched, e.g. "dist.all_reduce" or "DistributedDataParallel". */
  readonly callee: string;
  /** bucket_cap_mb given on this call (DDP) or on this line (bucket sites), in MB as DDP counts them (MiB). */
  readonly bucketCapMb?: number;
}

interface Pattern {
  readonly kind: PythonSiteKind;
  readonly regex: RegExp;
  readonly collectives: (name: string) => CollectiveKind[];
}

const collectiveOf = (name: string): CollectiveKind[] =>
  /reduce_scatter/.test(name) ? ['reducescatter'] : /all_gather|allgather/.test(name) ? ['allgather'] : ['allreduce'];

// Each regex captures the callee in group 1 and ends at the opening parenthesis, so definitions
// (`def all_reduce(`) and attribute reads without a call are not matched.
const PATTERNS: readonly Pattern[] = [
  {
    kind: 'collective',
    regex:
      /(?<![\w.])((?:torch\.distributed|dist|[A-Za-z_]\w*)\.(?:all_reduce(?:_coalesced)?|reduce_scatter(?:_tensor)?|_reduce_scatter_base|all_gather(?:_into_tensor)?|_all_gather_base))\s*\(/g,
    collectives: collectiveOf,
  },
  {
    kind: 'collective',
    regex: /(?<![\w.])((?:all_reduce|reduce_scatter_tensor|all_gather_into_tensor))\s*\(/g,
    collectives: collectiveOf,
  },
  {
    kind: 'horovod',
    regex: /(?<![\w.])((?:hvd|horovod\.torch|horovod\.tensorflow)\.DistributedOptimizer)\s*\(/g,
    collectives: () => ['allreduce'],
  },
  {
    kind: 'ddp',
    regex: /(?<![\w])((?:[\w.]+\.)?(?:DistributedDataParallel|DDP))\s*\(/g,
    collectives: () => ['allreduce'],
  },
  {
    kind: 'fsdp',
    regex: /(?<![\w])((?:[\w.]+\.)?(?:FullyShardedDataParallel|FSDP|fully_shard))\s*\(/g,
    collectives: () => ['reducescatter', 'allgather'],
  },
  {
    kind: 'jax',
    regex: /(?<![\w.])((?:jax\.)?lax\.(?:psum|pmean|psum_scatter|all_gather))\s*\(/g,
    collectives: (n) =>
      /psum_scatter/.test(n) ? ['reducescatter'] : /all_gather/.test(n) ? ['allgather'] : ['allreduce'],
  },
  { kind: 'deepspeed', regex: /(?<![\w.])(deepspeed\.initialize)\s*\(/g, collectives: () => ['allreduce'] },
];

const BUCKET = /\b(bucket_cap_mb)\s*=\s*([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?\d+)?)?/g;

/**
 * Blanks out comments and string contents (keeping columns) so that calls mentioned in docstrings or comments
 * get no lens. Triple-quoted strings may span lines; the state carries over.
 */
export function codeOnlyLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  let open: string | undefined; // the quote that opened a multi-line string
  const special = /["'#]/g;
  return lines.map((line) => {
    // Most lines have no quote or comment: they are returned as they are.
    if (!open && line.indexOf('"') < 0 && line.indexOf("'") < 0 && line.indexOf('#') < 0) return line;
    const parts: string[] = [];
    let i = 0;
    while (i < line.length) {
      if (open) {
        const end = line.indexOf(open, i);
        if (end < 0) {
          parts.push(' '.repeat(line.length - i));
          break;
        }
        parts.push(' '.repeat(end - i), open);
        i = end + open.length;
        open = undefined;
        continue;
      }
      special.lastIndex = i;
      const found = special.exec(line);
      if (!found) {
        parts.push(line.slice(i));
        break;
      }
      parts.push(line.slice(i, found.index));
      i = found.index;
      const ch = line[i];
      if (ch === '#') {
        parts.push(' '.repeat(line.length - i));
        break;
      }
      const triple = line.startsWith(ch.repeat(3), i) ? ch.repeat(3) : undefined;
      if (triple) {
        parts.push(triple);
        i += 3;
        open = triple;
        continue;
      }
      let j = i + 1;
      while (j < line.length && line[j] !== ch) j += line[j] === '\\' ? 2 : 1;
      parts.push(ch + ' '.repeat(Math.max(0, Math.min(j, line.length) - i - 1)) + (j < line.length ? ch : ''));
      i = j + 1;
    }
    return parts.join('');
  });
}

/** A line without any of these words cannot hold a lens site, so the per-pattern search skips it. */
const ANY_SITE =
  /all_reduce|reduce_scatter|all_gather|_base\b|DistributedDataParallel|DDP|FSDP|FullyShardedDataParallel|fully_shard|DistributedOptimizer|psum|pmean|deepspeed\.initialize|bucket_cap_mb/;

/** Follows a call from its opening parenthesis to the matching one (at most `maxLines` lines on). */
function callText(lines: readonly string[], line: number, column: number, maxLines = 40): string {
  let depth = 0;
  let text = '';
  for (let l = line; l < Math.min(lines.length, line + maxLines); l++) {
    const s = l === line ? lines[l].slice(column) : lines[l];
    for (let i = 0; i < s.length; i++) {
      const ch = s[i];
      if (ch === '(') depth++;
      else if (ch === ')' && --depth === 0) return text + s.slice(0, i + 1);
    }
    text += `${s}\n`;
  }
  return text;
}

/** Finds every Python lens site, in line order, at most one per (line, kind). */
export function pythonLensSites(text: string): PythonLensSite[] {
  const lines = codeOnlyLines(text);
  const sites: PythonLensSite[] = [];
  const seen = new Set<string>();
  lines.forEach((line, index) => {
    if (!ANY_SITE.test(line)) return;
    if (/^\s*(?:import|from)\s/.test(line) || /^\s*(?:def|class)\s/.test(line)) return;
    for (const pattern of PATTERNS) {
      for (const m of line.matchAll(pattern.regex)) {
        const key = `${index}:${pattern.kind}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const column = m.index ?? 0;
        const callee = m[1];
        let bucketCapMb: number | undefined;
        if (pattern.kind === 'ddp') {
          const bucket = /\bbucket_cap_mb\s*=\s*([0-9]+(?:\.[0-9]+)?)/.exec(
            callText(lines, index, column + callee.length),
          );
          if (bucket) bucketCapMb = Number(bucket[1]);
        }
        sites.push({
          kind: pattern.kind,
          line: index,
          column,
          endColumn: column + callee.length,
          collectives: pattern.collectives(callee),
          callee,
          bucketCapMb,
        });
      }
    }
    for (const m of line.matchAll(BUCKET)) {
      const value = m[2];
      const column = m.index ?? 0;
      sites.push({
        kind: 'bucket',
        line: index,
        column,
        endColumn: column + m[1].length,
        collectives: ['allreduce'],
        callee: 'bucket_cap_mb',
        bucketCapMb: value !== undefined ? Number(value) : undefined,
      });
    }
  });
  // A DDP wrapper is also written `DDP(` after `from ... import DistributedDataParallel as DDP`; both match the
  // same pattern, and one site per line is enough.
  return sites.sort((a, b) => a.line - b.line || a.column - b.column);
}

/**
 * The training-config formats that get Profile · Sweep buckets lenses (and Scaling, except a model's config.json,
 * which says nothing about how gradients are reduced).
 */
export type ConfigFormat = 'collective' | 'deepspeed' | 'accelerate' | 'hf-model';

/**
 * A Hugging Face model config (config.json): a JSON object naming its model type or architectures and giving the
 * model's width and depth, the keys the config layer reads (config/hf-model.ts) under any family's names.
 */
const HF_MODEL_KEY = /"(model_type|architectures)"\s*:/;
const HF_WIDTH_KEY = /"(hidden_size|n_embd|d_model)"\s*:/;
const HF_DEPTH_KEY = /"(num_hidden_layers|n_layer|num_layers)"\s*:/;

/** Recognises a training config by its name first and then by its keys, as users name these files freely. */
export function configFormatOf(fileName: string, text: string): ConfigFormat | undefined {
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  if (/\.collective\.(ya?ml|json)$/i.test(base)) return 'collective';
  const head = text.slice(0, 65_536);
  // The config layer reads a model config before trying DeepSpeed (config/training-config.ts); so does this.
  if (/\.json$/i.test(base) && HF_MODEL_KEY.test(head) && HF_WIDTH_KEY.test(head) && HF_DEPTH_KEY.test(head))
    return 'hf-model';
  if (
    /\.json$/i.test(base) &&
    /"(train_micro_batch_size_per_gpu|train_batch_size|zero_optimization|gradient_accumulation_steps)"\s*:/.test(head)
  )
    return 'deepspeed';
  if (
    /\.ya?ml$/i.test(base) &&
    /^\s*distributed_type\s*:/m.test(head) &&
    /^\s*(num_processes|mixed_precision|compute_environment)\s*:/m.test(head)
  )
    return 'accelerate';
  return undefined;
}

/** The measurement formats that get Import · Compare with model lenses. */
export type MeasurementFormat = 'nccl-tests' | 'nccl-log' | 'deepspeed';

export interface MeasurementLensSite {
  readonly line: number;
  readonly format: MeasurementFormat;
  /** e.g. "all_reduce_perf" when the block names its test. */
  readonly test?: string;
}

/**
 * One site per nccl-tests run in the file (each "# Collective test starting" or "# nThread" banner, whichever
 * comes first in a block), or one at the top for an NCCL_DEBUG log without a table.
 */
export function measurementLensSites(languageId: string, text: string): MeasurementLensSite[] {
  const lines = text.split(/\r?\n/);
  const sites: MeasurementLensSite[] = [];
  const hasInfo = lines.some((l) => /\bNCCL (INFO|WARN)\b/.test(l));
  const format: MeasurementFormat =
    languageId === 'nccl-log' || (languageId !== 'nccl-tests' && hasInfo) ? 'nccl-log' : 'nccl-tests';
  let lastBanner = -10;
  lines.forEach((line, index) => {
    const body = line.replace(/^\[\d+,\d+\]<(stdout|stderr)>:/, '');
    const starting = /^#\s*Collective test starting:\s*(\S+)/.exec(body);
    const nthread = /^#\s*nThread\b/.test(body);
    if (starting || (nthread && index - lastBanner > 3)) {
      if (!(nthread && index - lastBanner <= 3)) sites.push({ line: index, format, test: starting?.[1] });
      lastBanner = index;
    }
  });
  if (sites.length === 0 && (hasInfo || languageId === 'nccl-tests' || languageId === 'nccl-log'))
    sites.push({ line: 0, format });
  return sites;
}

/** A verbose comms_logger line, or the header of DeepSpeed's log_summary() table (native/import/deepspeed.ts). */
const DEEPSPEED_VERBOSE = /comm op: \S+ \| time \(ms\)/;
const DEEPSPEED_SUMMARY = /^Comm\. Op\s+Message Size/;

/**
 * Lens sites of a DeepSpeed comms log: the first verbose line, and each log_summary() table (a log may print one
 * per interval). Empty for any other text, so plain-text files that are not such logs get no lens.
 */
export function deepSpeedLensSites(text: string): MeasurementLensSite[] {
  // Cheap rejection first: most plain-text files never mention a comm op.
  if (!/comm op: |Comm\. Op/.test(text)) return [];
  const sites: MeasurementLensSite[] = [];
  let verboseSeen = false;
  text.split(/\r?\n/).forEach((line, index) => {
    if (DEEPSPEED_SUMMARY.test(line)) sites.push({ line: index, format: 'deepspeed', test: 'log_summary' });
    else if (!verboseSeen && DEEPSPEED_VERBOSE.test(line)) {
      verboseSeen = true;
      sites.push({ line: index, format: 'deepspeed', test: l10n.t('comms log') });
    }
  });
  return sites;
}
