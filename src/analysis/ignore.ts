// `# collective-profiler: ignore[CP001]` (or `ignore[CP001, CP003]`, or a bare `ignore`) on a line silences the
// findings that start or end on that line.
import type { Finding } from './types';

const IGNORE = /#\s*collective-profiler:\s*ignore(?:\[([A-Za-z0-9_,\s]*)\])?/;

export function applyIgnoreComments(findings: readonly Finding[], text: string): Finding[] {
  if (!text.includes('collective-profiler')) return findings.slice();
  const lines = text.split('\n');
  const silenced = (line: number, code: string): boolean => {
    const m = IGNORE.exec(lines[line] ?? '');
    if (!m) return false;
    if (m[1] === undefined) return true;
    return m[1]
      .split(',')
      .map((c) => c.trim().toUpperCase())
      .includes(code);
  };
  return findings.filter((f) => !silenced(f.range.startLine, f.code) && !silenced(f.range.endLine, f.code));
}
