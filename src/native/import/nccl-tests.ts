// Parses nccl-tests stdout (all_reduce_perf and every other *_perf binary) in all the layouts seen in the wild:
// the 2020 layout with an `error` column, the 2022-2024 layout with `Group`, `root` and `#wrong`, and the
// 2025+ layout with a version banner and `Collective test starting/concluded` lines. Open MPI `--tag-output`
// prefixes and NCCL INFO lines inside the table are skipped; several tests in one log become several measurements.
import {
  MeasurementParseError,
  busbwFactor,
  dtypeBytes,
  normalizeCollective,
  splitLines,
  type CollectiveName,
  type Measurement,
  type MeasurementRow,
  type MetaValue,
} from './model';
import { asBytes, asMicros, asGBps } from '../../engine/index';

const MPI_PREFIX = /^\[\d+,\d+\]<(?:stdout|stderr)>:/;
const RANK_LINE =
  /^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s+(.*?)\s*$/;
const NTHREAD_LINE = /^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)\s+minBytes\s+(\d+)\s+maxBytes\s+(\d+)/;
const BANNER_LINE = /^#\s*nccl-tests version\s+(\S+)(?:\s+nccl-headers=(\d+))?(?:\s+nccl-library=(\d+))?/;
const STARTING_LINE = /^#\s*Collective test starting:\s*(\S+)/;
const INFO_VERSION = /NCCL version\s+(\d+\.\d+\.\d+)/;

/**
 * The first line of `collective-profiler sweep` output, which prints all_reduce_perf's table for a prediction:
 * the importer reads it back (for tests, and for a user who imports it by mistake) and says it is not a measurement.
 */
export const PREDICTION_MARKER = 'collective-profiler sweep';
const PREDICTION_LINE = new RegExp(`^#\\s*${PREDICTION_MARKER}\\s+(\\S+?):.*?\\b(\\d+) ranks\\b`);

/** A test block being read: one `# nThread` header, its device list and its table. */
interface Block {
  collectiveName?: string;
  testsVersion?: string;
  ncclVersion?: string;
  /** Set by the line `collective-profiler sweep` prints first: its version and the ranks it predicted for. */
  prediction?: { tool: string; ranks: number };
  header: Record<string, MetaValue>;
  ranks: Map<number, { host: string; gpu: string }>;
  columns?: string[];
  rows: MeasurementRow[];
  rowTypes: { dtype: string; redop?: string; root?: number; count: number; bytes: number }[];
  avgBusbwGBps?: number;
  outOfBounds?: number;
  validation?: string;
  /** Rows dropped for nan or inf values. */
  corruptRows: number;
  concluded: boolean;
}

function newBlock(): Block {
  return { header: {}, ranks: new Map(), rows: [], rowTypes: [], corruptRows: 0, concluded: false };
}

/** Decodes nccl-headers=22902 (major*10000 + minor*100 + patch since 2.9) into "2.29.2". */
function decodeNcclCode(code: string | undefined): string | undefined {
  if (!code) return undefined;
  const n = Number(code);
  if (!Number.isFinite(n) || n < 20900) return undefined;
  return `${Math.floor(n / 10000)}.${Math.floor((n % 10000) / 100)}.${n % 100}`;
}

export interface NcclTestsParseOptions {
  /** File name, used in errors and as a hint for the collective when the output does not name it. */
  readonly fileName?: string;
}

export function looksLikeNcclTests(text: string): boolean {
  return (
    /^(?:\[\d+,\d+\]<stdout>:)?#\s+(?:nThread\s+\d+|\s*size\s+count)/m.test(text) ||
    /^(?:\[\d+,\d+\]<stdout>:)?#\s+size\s+count/m.test(text)
  );
}

/** Longest line read; nccl-tests lines are under 200 characters, MPI prefixes and glued NCCL lines included. */
const MAX_LINE_CHARS = 64 * 1024;

/** Parses every test block in the text. Throws MeasurementParseError when no table is present or a cell is malformed. */
export function parseNcclTests(
  text: string,
  options: NcclTestsParseOptions = {},
): { measurements: Measurement[]; warnings: string[] } {
  const lines = splitLines(text);
  const blocks: Block[] = [];
  const warnings: string[] = [];
  let block = newBlock();
  let pendingBanner: Partial<Block> = {};
  let infoNcclVersion: string | undefined;
  let pending: Cell[] = [];
  const flush = (): void => {
    if (block.rows.length > 0 || block.columns) blocks.push(block);
    block = newBlock();
  };
  for (let index = 0; index < lines.length; index++) {
    const lineNo = index + 1;
    const raw = lines[index];
    // No header, banner or row comes near this length; skipping such a line keeps the per-line regexes cheap
    // (a 100 MB line of cells took minutes to split, and one long token made the glued-line regex quadratic).
    if (raw.length > MAX_LINE_CHARS) {
      warnings.push(
        `line ${lineNo} is ${raw.length.toLocaleString('en-US')} characters long, too long for nccl-tests output; skipped`,
      );
      continue;
    }
    const prefix = MPI_PREFIX.exec(raw);
    const line = prefix ? raw.slice(prefix[0].length) : raw;
    const column0 = prefix ? prefix[0].length : 0;
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const info = INFO_VERSION.exec(line);
    if (info && !line.startsWith('#')) infoNcclVersion ??= info[1];
    let m: RegExpExecArray | null;
    if ((m = BANNER_LINE.exec(trimmed))) {
      if (block.rows.length > 0 || block.columns) flush();
      pendingBanner = { testsVersion: m[1], ncclVersion: decodeNcclCode(m[3] ?? m[2]) };
      continue;
    }
    if ((m = PREDICTION_LINE.exec(trimmed))) {
      if (block.rows.length > 0 || block.columns) flush();
      pendingBanner.prediction = { tool: `${PREDICTION_MARKER} ${m[1]}`, ranks: Number(m[2]) };
      continue;
    }
    if ((m = STARTING_LINE.exec(trimmed))) {
      if (block.rows.length > 0 || block.columns) flush();
      pendingBanner.collectiveName = m[1];
      continue;
    }
    if ((m = NTHREAD_LINE.exec(trimmed))) {
      if (block.rows.length > 0 || block.columns) flush();
      Object.assign(block, pendingBanner);
      pendingBanner = {};
      block.header = { nThread: Number(m[1]), nGpus: Number(m[2]), minBytes: Number(m[3]), maxBytes: Number(m[4]) };
      for (const kv of trimmed.matchAll(/([a-zA-Z][a-zA-Z ]*?):\s*(\S+)/g)) {
        const key = kv[1].trim().replace(/\s+(\w)/g, (_, c: string) => c.toUpperCase());
        block.header[key] = Number.isFinite(Number(kv[2])) ? Number(kv[2]) : kv[2];
      }
      continue;
    }
    if ((m = RANK_LINE.exec(trimmed))) {
      block.ranks.set(Number(m[1]), { host: m[2], gpu: m[5] });
      continue;
    }
    if (trimmed.startsWith('#')) {
      if (pending.length > 0) warnings.push(`line ${pending[0].line}: incomplete table row; skipped`);
      pending = [];
      const tokens = trimmed.slice(1).trim().split(/\s+/);
      if (tokens[0] === 'size' && tokens.includes('count') && tokens.includes('time')) {
        if (block.rows.length > 0) {
          // A second table without its own header lines: keep the previous one and start afresh.
          const header = block.header;
          flush();
          block.header = header;
        }
        // Output without a `# nThread` line (a sweep prediction) takes its banner here.
        Object.assign(block, pendingBanner);
        pendingBanner = {};
        block.columns = tokens;
        continue;
      }
      const oob = /Out of bounds values\s*:\s*(\d+)\s+(\S+)/.exec(trimmed);
      if (oob) {
        block.outOfBounds = Number(oob[1]);
        block.validation = oob[2];
      }
      const avg = /Avg bus bandwidth\s*:\s*([\d.eE+-]+)/.exec(trimmed);
      if (avg) block.avgBusbwGBps = Number(avg[1]);
      if (/Collective test concluded/.test(trimmed)) block.concluded = true;
      continue;
    }
    if (!block.columns) continue;
    // nccl-tests prints a row in two flushes, so NCCL INFO lines from other threads can land inside it: keep
    // only the text before a glued-on "host:pid:tid [dev] NCCL ..." and join the pieces until the row is whole.
    const fragment = beforeGluedNcclLine(line);
    if (fragment.trim() === '') continue;
    if (pending.length === 0 && !/^\s*\d+\s/.test(fragment)) continue;
    for (const match of fragment.matchAll(/\S+/g))
      pending.push({ text: match[0], column: column0 + (match.index ?? 0) + 1, line: lineNo });
    if (pending.length < block.columns.length) continue;
    if (pending.length > block.columns.length) {
      warnings.push(
        `line ${pending[0].line}: table row has ${pending.length} cells, the header has ${block.columns.length}; row skipped`,
      );
    } else {
      const row = parseRow(pending, block.columns, options.fileName);
      // A row with nan or inf where a number belongs is dropped and counted, so it cannot skew the fit or the plot.
      if (row === undefined) block.corruptRows++;
      else {
        block.rows.push(row.row);
        block.rowTypes.push(row.type);
      }
    }
    pending = [];
  }
  if (pending.length > 0)
    warnings.push(`line ${pending[0].line}: the last table row is incomplete (the file looks truncated); row skipped`);
  flush();
  if (blocks.length === 0) {
    throw new MeasurementParseError(
      'no nccl-tests table found (expected a "#  size  count  type ..." header line)',
      1,
      1,
      options.fileName,
    );
  }
  const measurements = blocks.map((b) => toMeasurement(b, options.fileName, infoNcclVersion, warnings));
  return { measurements, warnings };
}

/**
 * Returns the part of a line before a glued-on NCCL log line. A whole NCCL line gives ''. When the row's last cell
 * and the host name touch ("-1mew0:64904:64904 [1] NCCL INFO ..."), the leading number stays with the row.
 */
function beforeGluedNcclLine(line: string): string {
  const glued = /(\S+):\d+:\d+ \[\d+\] NCCL (?:INFO|WARN|TRACE)/.exec(line);
  if (!glued) return line;
  const before = line.slice(0, glued.index);
  if (before.trim() === '') return '';
  const numberPrefix = /^-?\d+(?:\.\d+)?(?=[A-Za-z])/.exec(glued[1]);
  return before + (numberPrefix ? numberPrefix[0] : '');
}

interface Cell {
  readonly text: string;
  readonly line: number;
  readonly column: number;
}

/** Reads one table row; cells map one-to-one onto the header's tokens. */
/** nan and inf as C's printf writes them: a measurement that went wrong, not a format the importer misreads. */
const NON_FINITE = /^[-+]?(nan|inf(inity)?)$/i;

function parseRow(
  cells: Cell[],
  columns: string[],
  fileName: string | undefined,
): { row: MeasurementRow; type: Block['rowTypes'][number] } | undefined {
  if (cells.some((cell) => NON_FINITE.test(cell.text))) return undefined;
  const lineNo = cells[0].line;
  const at = (name: string, occurrence: number): Cell | undefined => {
    let seen = 0;
    for (let i = 0; i < columns.length; i++) if (columns[i] === name && seen++ === occurrence) return cells[i];
    return undefined;
  };
  const number = (name: string, occurrence = 0, optional = false): number | undefined => {
    const cell = at(name, occurrence);
    if (!cell) return undefined;
    if (optional && /^n\/a$/i.test(cell.text)) return undefined;
    const value = Number(cell.text);
    if (!Number.isFinite(value)) {
      throw new MeasurementParseError(
        `expected a number in column "${name}", found "${cell.text}"`,
        cell.line,
        cell.column,
        fileName,
      );
    }
    return value;
  };
  const bytes = asBytes(number('size') ?? 0);
  const count = number('count') ?? 0;
  const wrongName = columns.includes('#wrong') ? '#wrong' : undefined;
  const errorName = columns.includes('error') ? 'error' : undefined;
  const outTime = asMicros(number('time', 0) ?? 0);
  const inTime = number('time', 1);
  const row: MeasurementRow = {
    bytes,
    count,
    dtype: at('type', 0)?.text,
    timeUs: outTime,
    algbwGBps: asGBps(number('algbw', 0) ?? 0),
    busbwGBps: asGBps(number('busbw', 0) ?? 0),
    ...(wrongName && number(wrongName, 0, true) !== undefined ? { wrong: number(wrongName, 0, true) } : {}),
    ...(errorName && number(errorName, 0, true) !== undefined ? { maxError: number(errorName, 0, true) } : {}),
    ...(inTime !== undefined
      ? {
          inPlace: {
            timeUs: asMicros(inTime),
            algbwGBps: asGBps(number('algbw', 1) ?? 0),
            busbwGBps: asGBps(number('busbw', 1) ?? 0),
            ...(wrongName && number(wrongName, 1, true) !== undefined ? { wrong: number(wrongName, 1, true) } : {}),
          },
        }
      : {}),
    line: lineNo,
  };
  if (!plausibleTiming(row.bytes, row.timeUs, row.algbwGBps, row.busbwGBps)) return undefined;
  if (row.inPlace && !plausibleTiming(row.bytes, row.inPlace.timeUs, row.inPlace.algbwGBps, row.inPlace.busbwGBps))
    return undefined;
  const root = number('root', 0, true);
  return { row, type: { dtype: row.dtype ?? '', redop: at('redop', 0)?.text, root, count, bytes } };
}

/**
 * nccl-tests derives algbw from the size and the time (bytes / µs / 1e3) and busbw from algbw by a factor of at
 * most 2: a row whose numbers contradict that (a negative time, a bandwidth of 1e308) was corrupted after the
 * run, and is dropped and counted like a row of nan. The tolerance covers the two printed decimals and the
 * rounding of the time; the busbw factor is 2(n-1)/n for allreduce, (n-1)/n for the gathers and 1 otherwise.
 */
function plausibleTiming(bytes: number, timeUs: number, algbwGBps: number, busbwGBps: number): boolean {
  if (bytes < 0 || timeUs < 0 || algbwGBps < 0 || busbwGBps < 0) return false;
  if (bytes === 0) return true;
  // No transfer of a byte or more takes no time; nccl-tests prints at least a few µs.
  if (timeUs === 0) return false;
  const derivedGBps = bytes / timeUs / 1e3;
  const slack = 0.01 + 0.25 * derivedGBps;
  return Math.abs(algbwGBps - derivedGBps) <= slack && busbwGBps <= 2 * algbwGBps + 0.02;
}

/** Works out the collective: the banner, then the file name, then the table's own shape. */
function inferCollective(block: Block, fileName: string | undefined): CollectiveName {
  if (block.collectiveName) return normalizeCollective(block.collectiveName);
  const hint = fileName
    ? /(all_?reduce|all_?gather|reduce_?scatter|broadcast|sendrecv|alltoall|hypercube|scatter|gather|reduce)(?:_perf)?/i.exec(
        fileName.split(/[\\/]/).pop() ?? '',
      )
    : null;
  if (hint) return normalizeCollective(hint[1]);
  const cols = block.columns ?? [];
  const sample = [...block.rowTypes].reverse().find((t) => t.count > 0);
  const elem = sample ? dtypeBytes(sample.dtype) : undefined;
  const perRankScaled = sample && elem ? sample.bytes > sample.count * elem : false;
  if (!cols.includes('redop')) return 'allgather';
  const redop = sample?.redop ?? 'sum';
  const root = sample?.root ?? -1;
  if (redop === 'none') return root >= 0 ? 'broadcast' : 'allgather';
  if (root >= 0) return 'reduce';
  return perRankScaled ? 'reducescatter' : 'allreduce';
}

/** Rank count: the device list, else the size/count relation, else the busbw/algbw factor. */
function inferRanks(block: Block, collective: CollectiveName): number {
  if (block.ranks.size > 0) return block.ranks.size;
  if (block.prediction) return block.prediction.ranks;
  const sample = [...block.rowTypes].reverse().find((t) => t.count > 0);
  const elem = sample ? dtypeBytes(sample.dtype) : undefined;
  if (sample && elem && sample.bytes > sample.count * elem) return Math.round(sample.bytes / (sample.count * elem));
  const big = [...block.rows].reverse().find((r) => r.algbwGBps > 0 && r.busbwGBps > 0);
  if (big && collective === 'allreduce') {
    const ratio = big.busbwGBps / big.algbwGBps;
    if (ratio < 2 && ratio > 1) return Math.max(2, Math.round(2 / (2 - ratio)));
  }
  return Number(block.header.nGpus ?? 1) * Number(block.header.nThread ?? 1);
}

function toMeasurement(
  block: Block,
  fileName: string | undefined,
  infoNcclVersion: string | undefined,
  warnings: string[],
): Measurement {
  const collective = inferCollective(block, fileName);
  const ranks = inferRanks(block, collective);
  const hosts = new Set([...block.ranks.values()].map((r) => r.host));
  const gpus = [...new Set([...block.ranks.values()].map((r) => r.gpu))];
  const truncated = block.avgBusbwGBps === undefined;
  if (truncated) warnings.push(`the ${collective} table has no "# Avg bus bandwidth" summary: the output is truncated`);
  const wrongRows = block.rows.filter((r) => (r.wrong ?? 0) > 0 || (r.inPlace?.wrong ?? 0) > 0).length;
  if (wrongRows > 0)
    warnings.push(`${wrongRows} ${collective} sizes report #wrong > 0: the data was corrupted in transit`);
  if (block.corruptRows > 0)
    warnings.push(
      `${block.corruptRows} ${collective} rows dropped as corrupt (nan or inf where a number belongs, a negative time, or a bandwidth the size and time contradict)`,
    );
  if (block.validation && block.validation !== 'OK')
    warnings.push(`validation ${block.validation}: ${block.outOfBounds} out-of-bounds values`);
  if (block.prediction)
    warnings.push(
      `this is a prediction printed by ${block.prediction.tool}, not a measurement: it says what the model expects, not what a machine did`,
    );
  const factor = busbwFactor(collective, ranks);
  const meta: Record<string, MetaValue> = {
    ...block.header,
    format: 'text',
    truncated,
    nodes: hosts.size,
    gpuNames: gpus,
    busbwFactor: factor,
    wrongRows,
    ...(block.testsVersion ? { ncclTestsVersion: block.testsVersion } : {}),
    ...((block.ncclVersion ?? infoNcclVersion)
      ? { ncclVersion: (block.ncclVersion ?? infoNcclVersion) as string }
      : {}),
    ...(block.avgBusbwGBps !== undefined ? { avgBusbwGBps: block.avgBusbwGBps } : {}),
    ...(block.validation ? { validation: block.validation, outOfBounds: block.outOfBounds ?? 0 } : {}),
    ...(block.collectiveName ? { test: block.collectiveName } : {}),
    ...(block.prediction ? { prediction: true, predictedBy: block.prediction.tool } : {}),
  };
  return { kind: 'nccl-tests', collective, ranks, rows: block.rows, meta };
}
