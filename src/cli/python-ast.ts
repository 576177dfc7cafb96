// Asks Python itself whether files that tree-sitter could not parse are valid Python: one python3 process for the
// whole run (never one per file), started only when some file has a syntax error. Where Python accepts a file, its
// skipped statements are reported as what tree-sitter-python cannot read, not as syntax errors. Without a python3
// (or when it fails or takes too long) the reports stay as they are.
import { spawnSync } from 'node:child_process';

const SCRIPT = [
  'import ast, json, sys',
  'out = []',
  'for path in json.load(sys.stdin):',
  '    try:',
  '        with open(path, "rb") as f:',
  '            ast.parse(f.read())',
  '        out.append(True)',
  '    except Exception:',
  '        out.append(False)',
  'print(json.dumps({"version": "%d.%d" % sys.version_info[:2], "valid": out}))',
].join('\n');

/** The python3 to ask: COLLECTIVE_PROFILER_PYTHON when set ("off" asks none), else python3 on the PATH. */
function pythonCommand(): string | undefined {
  const chosen = process.env.COLLECTIVE_PROFILER_PYTHON;
  if (chosen === 'off') return undefined;
  return chosen || 'python3';
}

/** For each path, whether Python's own parser accepts it, and which Python said so; undefined when none could. */
export function pythonAccepts(paths: readonly string[]): { version: string; valid: boolean[] } | undefined {
  const command = pythonCommand();
  if (!command || paths.length === 0) return undefined;
  const r = spawnSync(command, ['-c', SCRIPT], {
    input: JSON.stringify(paths),
    encoding: 'utf8',
    timeout: 30_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  if (r.status !== 0 || typeof r.stdout !== 'string') return undefined;
  try {
    const parsed = JSON.parse(r.stdout) as { version?: unknown; valid?: unknown };
    if (typeof parsed.version !== 'string' || !Array.isArray(parsed.valid) || parsed.valid.length !== paths.length)
      return undefined;
    return { version: parsed.version, valid: parsed.valid.map((v) => v === true) };
  } catch {
    return undefined;
  }
}

/** `syntax error at line 8: lines 8-9 not analysed; ...` becomes `line 8 is valid Python 3.11 that tree-sitter-python cannot parse: lines 8-9 not analysed; ...`. */
export function rewordAsUnparsed(message: string, version: string): string {
  const m = /^syntax error at (lines? [^:]+): (.*)$/s.exec(message);
  if (!m) return message;
  const verb = m[1].startsWith('lines') ? 'are' : 'is';
  return `${m[1]} ${verb} valid Python ${version} that tree-sitter-python cannot parse: ${m[2]}`;
}
