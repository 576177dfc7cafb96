// Parses DeepSpeed's comms_logger output: verbose per-call lines and the log_summary() table (with or without
// debug caller names). DeepSpeed prints sizes with binary units (KB = 1024 B) and bandwidths in Gbps.
import {
  MeasurementParseError,
  normalizeCollective,
  splitLines,
  type CollectiveName,
  type Measurement,
  type MeasurementRow,
} from './model';
import { asBytes, asMicros, asGBps } from '../../engine/index';

// The numbers are matched loosely and checked after: a record whose number is negative, nan, 1e308 or not a
// number is a corrupt record, dropped and counted, not a line the importer silently fails to recognise.
const VERBOSE =
  /comm op: (\S+) \| time \(ms\): (\S+) \| msg size: (\S+) (\w+) \| algbw \(Gbps\): (\S+)\s+\| busbw \(Gbps\): (\S+)/;
const PLAIN_NUMBER = /^\d+(\.\d+)?$/;
/** A message larger than this (1 PiB, the CLI's byte limit) is not a real record. */
const MAX_RECORD_BYTES = 2 ** 50;
const SUMMARY_HEADER =
  /^Comm\. Op\s+Message Size\s+Count\s+Total Latency\(ms\)\s+Avg Latency\(ms\)\s+tput_avg \(Gbps\)\s+busbw_avg \(Gbps\)/;
const SUMMARY_ROW = /^\s+([\d.]+) (\w+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$/;
const UNITS: Record<string, number> = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3, TB: 1024 ** 4 };

export function looksLikeDeepSpeed(text: string): boolean {
  return /comm op: \S+ \| time \(ms\)/.test(text) || /^Comm\. Op\s+Message Size/m.test(text);
}

interface OpRows {
  rows: MeasurementRow[];
  callers: Set<string>;
  calls: number;
}

export function parseDeepSpeed(text: string, fileName?: string): { measurements: Measurement[]; warnings: string[] } {
  const ops = new Map<string, OpRows>();
  const warnings: string[] = [];
  let summaryOp: string | undefined;
  let inSummary = false;
  let corrupt = 0;
  const lines = splitLines(text);
  const sizeBytes = (value: string, unit: string, line: number, column: number): number => {
    const factor = UNITS[unit.toUpperCase()];
    if (factor === undefined) throw new MeasurementParseError(`unknown size unit "${unit}"`, line, column, fileName);
    return Math.round(Number(value) * factor);
  };
  const opRows = (op: string): OpRows => {
    let entry = ops.get(op);
    if (!entry) ops.set(op, (entry = { rows: [], callers: new Set(), calls: 0 }));
    return entry;
  };
  lines.forEach((line, index) => {
    const lineNo = index + 1;
    let m: RegExpExecArray | null;
    if ((m = VERBOSE.exec(line))) {
      const numbers = [m[2], m[3], m[5], m[6]];
      const bytes = numbers.every((n) => PLAIN_NUMBER.test(n))
        ? sizeBytes(m[3], m[4], lineNo, line.indexOf(m[4]) + 1)
        : NaN;
      if (!(bytes <= MAX_RECORD_BYTES)) {
        corrupt++;
        return;
      }
      const entry = opRows(m[1]);
      entry.calls++;
      entry.rows.push({
        bytes: asBytes(bytes),
        timeUs: asMicros(Number(m[2]) * 1000),
        algbwGBps: asGBps(Number(m[5]) / 8),
        busbwGBps: asGBps(Number(m[6]) / 8),
        line: lineNo,
      });
      return;
    }
    if (SUMMARY_HEADER.test(line)) {
      inSummary = true;
      return;
    }
    if (!inSummary || line.trim() === '') return;
    if ((m = SUMMARY_ROW.exec(line))) {
      if (!summaryOp) throw new MeasurementParseError('summary row before any op name', lineNo, 1, fileName);
      const bytes = sizeBytes(m[1], m[2], lineNo, line.indexOf(m[2]) + 1);
      if (!(bytes <= MAX_RECORD_BYTES) || !Number.isSafeInteger(Number(m[3]))) {
        corrupt++;
        return;
      }
      const entry = opRows(summaryOp);
      entry.calls += Number(m[3]);
      entry.rows.push({
        bytes: asBytes(bytes),
        timeUs: asMicros(Number(m[5]) * 1000),
        algbwGBps: asGBps(Number(m[6]) / 8),
        busbwGBps: asGBps(Number(m[7]) / 8),
        calls: Number(m[3]),
        line: lineNo,
      });
      return;
    }
    const op = /^(\w+)(?:\s*\|\s*\[Caller Func: ([^\]]+)\])?\s*$/.exec(line);
    if (op) {
      summaryOp = op[1];
      if (op[2]) opRows(op[1]).callers.add(op[2]);
      return;
    }
    warnings.push(`line ${lineNo}: not a comms_logger summary line; skipped`);
  });
  if (corrupt > 0)
    warnings.push(
      `${corrupt} comm op records dropped as corrupt (a time, size or bandwidth that is negative, not a number, or over 1 PiB)`,
    );
  if (ops.size === 0) throw new MeasurementParseError('no DeepSpeed comms_logger lines found', 1, 1, fileName);
  // DeepSpeed's busbw uses nccl-tests' factors, so (n-1)/n or 2(n-1)/n reveals the world size.
  const ranks = inferRanks([...ops].map(([op, e]) => ({ collective: normalizeCollective(op), rows: e.rows })));
  const measurements = [...ops].map(([op, entry]): Measurement => ({
    kind: 'deepspeed',
    collective: normalizeCollective(op),
    ranks,
    rows: entry.rows,
    meta: {
      op,
      calls: entry.calls,
      callers: [...entry.callers],
      format: entry.rows.some((r) => r.calls !== undefined) ? 'summary' : 'verbose',
    },
  }));
  return { measurements, warnings };
}

function inferRanks(ops: { collective: CollectiveName; rows: MeasurementRow[] }[]): number {
  for (const { collective, rows } of ops) {
    for (const row of rows) {
      if (row.algbwGBps < 1 || row.busbwGBps <= 0) continue;
      const ratio = row.busbwGBps / row.algbwGBps;
      if (['allgather', 'reducescatter', 'alltoall'].includes(collective) && ratio < 1)
        return Math.round(1 / (1 - ratio));
      if (collective === 'allreduce' && ratio > 1 && ratio < 2) return Math.round(2 / (2 - ratio));
    }
  }
  return 0;
}
