// The labelled-corpus format (`# expect: CP001 (sum-bug)`, `# line: 26`) and the confusion table: per label, how
// many expected findings were found at the right line (TP), how many findings were wrong (FP), how many missed.
import { isRuleCode } from './rules';
import type { RuleCode } from './types';

export interface CorpusExpectation {
  readonly code: RuleCode | 'none';
  readonly label: string;
  /** 1-based line of the expected finding. */
  readonly line?: number;
  /** The world size the example runs at (`# world-size: 16`), for findings that are proven only when it is known. */
  readonly worldSize?: number;
}

export interface CorpusOutcome {
  readonly file: string;
  readonly expected: CorpusExpectation;
  readonly found: readonly { readonly code: string; readonly line: number }[];
}

export interface ConfusionRow {
  readonly label: string;
  readonly files: number;
  readonly tp: number;
  readonly fp: number;
  readonly fn: number;
  readonly precision: number;
  readonly recall: number;
}

const CODE_LABEL: Record<string, string> = {
  CP001: 'sum-bug',
  CP004: 'sum-bug',
  CP002: 'double-average',
  CP003: 'wrong-divisor',
  CP005: 'lr-scaling',
  CP006: 'avg-on-gloo',
  CP007: 'deepspeed',
  CP008: 'accumulation-sum',
};

export function parseCorpusHeader(text: string): CorpusExpectation | undefined {
  const head = text.split('\n').slice(0, 30).join('\n');
  const expect = /^#\s*expect:\s*(CP\d{3}|none)\b\s*(?:\(([^):]+))?/m.exec(head);
  if (!expect) return undefined;
  const line = /^#\s*line:\s*(\d+|none)/m.exec(head);
  const code = expect[1] === 'none' ? 'none' : isRuleCode(expect[1]) ? expect[1] : undefined;
  if (!code) return undefined;
  const label = (expect[2] ?? (code === 'none' ? 'none' : CODE_LABEL[code])).trim();
  const lineNumber = line && line[1] !== 'none' ? Number(line[1]) : undefined;
  const world = /^#\s*world-size:\s*(\d+)/m.exec(head);
  return { code, label, line: lineNumber, ...(world ? { worldSize: Number(world[1]) } : {}) };
}

/** True when the expected finding is present (or, for `none`, when nothing was found). */
export function outcomeMatches(o: CorpusOutcome): boolean {
  if (o.expected.code === 'none') return o.found.length === 0;
  return o.found.some((f) => f.code === o.expected.code && f.line === o.expected.line);
}

export function confusionTable(outcomes: readonly CorpusOutcome[]): ConfusionRow[] {
  const rows = new Map<string, { files: number; tp: number; fp: number; fn: number }>();
  const row = (label: string) => {
    let r = rows.get(label);
    if (!r) rows.set(label, (r = { files: 0, tp: 0, fp: 0, fn: 0 }));
    return r;
  };
  for (const o of outcomes) {
    row(o.expected.label).files++;
    let matched = false;
    for (const f of o.found) {
      const right = !matched && o.expected.code !== 'none' && f.code === o.expected.code && f.line === o.expected.line;
      if (right) {
        matched = true;
        row(o.expected.label).tp++;
      } else {
        row(CODE_LABEL[f.code] ?? f.code).fp++;
      }
    }
    if (o.expected.code !== 'none' && !matched) row(o.expected.label).fn++;
  }
  const total = { files: 0, tp: 0, fp: 0, fn: 0 };
  const out: ConfusionRow[] = [];
  for (const [label, r] of [...rows].sort((a, b) => a[0].localeCompare(b[0]))) {
    out.push(finish(label, r));
    total.files += r.files;
    total.tp += r.tp;
    total.fp += r.fp;
    total.fn += r.fn;
  }
  out.push(finish('all', total));
  return out;
}

function finish(label: string, r: { files: number; tp: number; fp: number; fn: number }): ConfusionRow {
  const precision = r.tp + r.fp === 0 ? 1 : r.tp / (r.tp + r.fp);
  const recall = r.tp + r.fn === 0 ? 1 : r.tp / (r.tp + r.fn);
  return { label, ...r, precision, recall };
}

export function formatConfusionTable(rows: readonly ConfusionRow[]): string {
  const header = ['label', 'files', 'TP', 'FP', 'FN', 'precision', 'recall'];
  const lines = rows.map((r) => [
    r.label,
    String(r.files),
    String(r.tp),
    String(r.fp),
    String(r.fn),
    r.precision.toFixed(2),
    r.recall.toFixed(2),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [fmt(header), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
}
