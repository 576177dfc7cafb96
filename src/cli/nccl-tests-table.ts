// The text layout of nccl-tests' all_reduce_perf (release 2.17 and later), reproduced column for column so a
// prediction can be put beside a real log with `diff` or `paste`, and read back by the same importer
// (src/native/import/nccl-tests.ts). The widths are nccl-tests' printf formats: `%12li  %12li  %8s  %6s  %6i` for
// size, count, type, redop and root, then `  %7s  %6.2f  %6.2f  %6s` for time, algbw, busbw and #wrong, out of
// place and then in place.
import type { Dtype, ReduceOp, SweepRow } from '../engine/index';
import { PREDICTION_MARKER } from '../native/import/nccl-tests';
import { terminalInline } from './terminal-text';

/** nccl-tests' names for the element types (its test_typenames), so the `type` column reads the same. */
export const NCCL_TYPE_NAMES: Record<Dtype, string> = {
  fp32: 'float',
  fp16: 'half',
  bf16: 'bfloat16',
  fp8e4m3: 'f8e4m3',
  fp8e5m2: 'f8e5m2',
};

/** nccl-tests' names for the reduction operations (its test_opnames); premulsum is `mulsum` there. */
export const NCCL_OP_NAMES: Record<ReduceOp, string> = { sum: 'sum', avg: 'avg', premulsum: 'mulsum' };

/** What the header says about the prediction, so the importer can tell it from a measurement. */
export interface PredictionHeader {
  readonly toolVersion: string;
  readonly systemLabel: string;
  readonly ranks: number;
  readonly nodes: number;
  readonly gpusPerNode: number;
  readonly ncclVersion: string;
  readonly op: ReduceOp;
}

const left = (cells: readonly string[], widths: readonly number[]): string =>
  cells.map((cell, i) => cell.padStart(widths[i])).join('  ');

const KEY_WIDTHS = [10, 12, 8, 6, 6];
const HALF_WIDTHS = [7, 6, 6, 6];

/**
 * A time in the 7 characters nccl-tests gives it: two decimals while they fit (9999.99), then one, then none, as
 * nccl-tests 2.17 prints (`837.47`, `12322.0`, `123456`).
 */
export function ncclTime(timeUs: number): string {
  for (const digits of [2, 1]) {
    const text = timeUs.toFixed(digits);
    if (text.length <= 7) return text;
  }
  return timeUs.toFixed(0);
}

/** C's `%g` (six significant digits, no trailing zeros), which nccl-tests uses for the average bus bandwidth. */
export function printfG(value: number): string {
  return String(Number(value.toPrecision(6)));
}

/** The three header lines of the table, byte for byte as all_reduce_perf prints them. */
export function tableHeader(): string[] {
  const half = (cells: readonly string[]): string => `  ${left(cells, HALF_WIDTHS)}`;
  return [
    `# ${left(['', '', '', '', ''], KEY_WIDTHS)}           out-of-place                       in-place          `,
    `# ${left(['size', 'count', 'type', 'redop', 'root'], KEY_WIDTHS)}${half(['time', 'algbw', 'busbw', '#wrong'])}${half(['time', 'algbw', 'busbw', '#wrong'])} `,
    `# ${left(['(B)', '(elements)', '', '', ''], KEY_WIDTHS)}${half(['(us)', '(GB/s)', '(GB/s)', ''])}${half(['(us)', '(GB/s)', '(GB/s)', ''])} `,
  ];
}

/**
 * One row. A prediction has no data to check, so #wrong is `N/A` (as nccl-tests prints it with `-c 0`), and
 * in-place repeats out-of-place: the engine does not model the difference between the two.
 */
export function tableRow(row: SweepRow, op: ReduceOp): string {
  const half = `  ${left([ncclTime(row.timeUs), row.algbwGBps.toFixed(2), row.busbwGBps.toFixed(2), 'N/A'], HALF_WIDTHS)}`;
  const key = [
    String(row.bytes).padStart(12),
    String(row.count).padStart(12),
    NCCL_TYPE_NAMES[row.dtype].padStart(8),
    NCCL_OP_NAMES[op].padStart(6),
    '-1'.padStart(6),
  ].join('  ');
  return `${key}${half}${half}`;
}

/** The line that marks the output as a prediction; the importer reads the rank count from it. */
export function predictionLine(header: PredictionHeader): string {
  return `# ${PREDICTION_MARKER} ${header.toolVersion}: a prediction, not a measurement. AllReduce on ${terminalInline(header.systemLabel)}, ${header.ranks} ranks (${header.nodes} × ${header.gpusPerNode}), algorithms as NCCL ${header.ncclVersion} chooses`;
}

/** Which algorithm and protocol ran over which sizes, as comment lines after the table. */
function choiceLines(rows: readonly SweepRow[]): string[] {
  const runs: { choice: string; from: number; to: number }[] = [];
  for (const row of rows) {
    const choice = `${row.algorithm}/${row.protocol}`;
    const last = runs.at(-1);
    if (last?.choice === choice) last.to = row.bytes;
    else runs.push({ choice, from: row.bytes, to: row.bytes });
  }
  return runs.map((r) => `#   ${r.choice.padEnd(20)} ${r.from === r.to ? r.from : `${r.from} to ${r.to}`} bytes`);
}

/** The whole output of `sweep`: the prediction line, nccl-tests' banner, header, rows and summary. */
export function formatSweepTable(header: PredictionHeader, rows: readonly SweepRow[]): string {
  const averageBusbw = rows.length > 0 ? rows.reduce((sum, r) => sum + r.busbwGBps, 0) / rows.length : 0;
  return [
    predictionLine(header),
    '# Collective test starting: all_reduce_perf',
    '#',
    ...tableHeader(),
    ...rows.map((row) => tableRow(row, header.op)),
    `# Avg bus bandwidth    : ${printfG(averageBusbw)} `,
    '#',
    '# Collective test concluded: all_reduce_perf',
    '#',
    '# Algorithm/protocol chosen, by size:',
    ...choiceLines(rows),
  ].join('\n');
}
