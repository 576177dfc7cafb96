// The fuzz harness: runs one parser on one input, times it, and checks the properties every reader must keep.
// An input may be accepted or rejected; a rejection must be one of the project's typed errors, carry a position
// (line and column, 1-based) and a message a person can read. Anything else (a TypeError from deep inside a
// parser, a RangeError from a blown stack, an input that takes seconds) is a failure that names the format and
// shows the input.
import { performance } from 'node:perf_hooks';
import { appendFileSync } from 'node:fs';
import fc from 'fast-check';
import { ConfigError } from '../../../src/config/positioned';
import { MeasurementParseError } from '../../../src/native/import/model';
import { MeasurementFileError } from '../../../src/native/import-file';
import type { ImportResult } from '../../../src/native/import/model';
import type { Trace } from '../../../src/engine/index';

/** Every input gets this long; a parser that needs more on a small input has a super-linear path. */
export const INPUT_TIME_LIMIT_MS = Number(process.env.FUZZ_INPUT_LIMIT_MS ?? 2000);

/** `npm run fuzz` raises this (FUZZ_SCALE=20 runs twenty times as many inputs); CI runs the plan as written. */
export const FUZZ_SCALE = Math.max(1, Number(process.env.FUZZ_SCALE ?? 1) || 1);

/** CI uses a fixed seed so a red build reproduces; a longer run picks a fresh one unless FUZZ_SEED pins it. */
export const FUZZ_SEED =
  process.env.FUZZ_SEED !== undefined
    ? Number(process.env.FUZZ_SEED)
    : FUZZ_SCALE > 1
      ? Date.now() % 2 ** 31
      : 20_261_130;

export function runsFor(planned: number): number {
  return Math.round(planned * FUZZ_SCALE);
}

const counts = new Map<string, number>();
const slowest = new Map<string, number>();
const accepted = new Map<string, number>();

export function countsByFormat(): ReadonlyMap<string, number> {
  return counts;
}

/** Prints what this file tried, per format, and appends it to FUZZ_STATS_FILE so scripts/fuzz.mjs can add up. */
export function reportCounts(file: string): string {
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const lines = [...counts].map(
    ([format, n]) =>
      `  ${format.padEnd(28)} ${String(n).padStart(7)} inputs (${String(accepted.get(format) ?? 0).padStart(6)} accepted), slowest ${(slowest.get(format) ?? 0).toFixed(1)} ms`,
  );
  const text = `fuzz ${file} (seed ${FUZZ_SEED}):\n${lines.join('\n')}\n  ${'total'.padEnd(28)} ${String(total).padStart(7)} inputs`;
  console.log(text);
  if (process.env.FUZZ_STATS_FILE)
    appendFileSync(
      process.env.FUZZ_STATS_FILE,
      `${JSON.stringify({ file, seed: FUZZ_SEED, counts: Object.fromEntries(counts) })}\n`,
    );
  return text;
}

/** A message a user can act on: words, not a serialised object or a missing value. */
export function unreadableReason(message: unknown): string | undefined {
  if (typeof message !== 'string') return `message is ${typeof message}`;
  if (message.trim().length === 0) return 'message is empty';
  if (message.includes('[object Object]')) return 'message contains [object Object]';
  if (/\bundefined\b/.test(message)) return 'message contains "undefined"';
  return undefined;
}

function positionProblem(line: unknown, column: unknown): string | undefined {
  const ok = (n: unknown): boolean => typeof n === 'number' && Number.isInteger(n) && n >= 1;
  return ok(line) && ok(column)
    ? undefined
    : `position is ${String(line)}:${String(column)}, not a 1-based line and column`;
}

/** Why a thrown value breaks the contract, or undefined when it is an acceptable, well-formed rejection. */
export function rejectionProblem(error: unknown): string | undefined {
  if (error instanceof ConfigError) {
    for (const issue of error.issues) {
      const problem = positionProblem(issue.line, issue.column) ?? unreadableReason(issue.message);
      if (problem) return `ConfigError issue '${issue.message}': ${problem}`;
    }
    return positionProblem(error.line, error.column) ?? unreadableReason(error.message);
  }
  if (error instanceof MeasurementParseError)
    return positionProblem(error.line, error.column) ?? unreadableReason(error.message);
  // A file that cannot be read or inflated has no line to point at; the message must name the file instead.
  if (error instanceof MeasurementFileError) return unreadableReason(error.message);
  const name = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return `uncaught ${name}`;
}

/** Shows a failing input compactly: its length and the first characters, escaped. */
export function describeInput(input: string | Uint8Array): string {
  const text = typeof input === 'string' ? input : Buffer.from(input).toString('latin1');
  return `${input.length} ${typeof input === 'string' ? 'chars' : 'bytes'}: ${JSON.stringify(text.slice(0, 300))}${text.length > 300 ? '…' : ''}`;
}

export class FuzzFailure extends Error {
  constructor(format: string, problem: string, input: string | Uint8Array, cause?: unknown) {
    const stack = cause instanceof Error && cause.stack ? `\n${cause.stack.split('\n').slice(0, 6).join('\n')}` : '';
    super(`${format}: ${problem}\n  input ${describeInput(input)}${stack}`);
    this.name = 'FuzzFailure';
  }
}

/**
 * Runs `parse` on one input and checks the contract. `check` may inspect a successful result and return a
 * problem. Returns whether the input was accepted, so generators can report how many got through.
 */
export function checkInput<T>(
  format: string,
  input: string | Uint8Array,
  parse: () => T,
  check?: (result: T) => string | undefined,
): boolean {
  counts.set(format, (counts.get(format) ?? 0) + 1);
  const start = performance.now();
  let result: T | undefined;
  let thrown: unknown;
  let threw = false;
  try {
    result = parse();
  } catch (error) {
    threw = true;
    thrown = error;
  }
  const elapsedMs = performance.now() - start;
  slowest.set(format, Math.max(slowest.get(format) ?? 0, elapsedMs));
  if (elapsedMs > INPUT_TIME_LIMIT_MS)
    throw new FuzzFailure(format, `took ${elapsedMs.toFixed(0)} ms, over the ${INPUT_TIME_LIMIT_MS} ms bound`, input);
  if (threw) {
    const problem = rejectionProblem(thrown);
    if (problem) throw new FuzzFailure(format, problem, input, thrown);
    return false;
  }
  const problem = check?.(result as T);
  if (problem) throw new FuzzFailure(format, `accepted, but ${problem}`, input);
  accepted.set(format, (accepted.get(format) ?? 0) + 1);
  return true;
}

/** Runs a fast-check property with the harness's seed; fast-check shrinks a failure to a small input. */
export function fuzz<T>(arbitrary: fc.Arbitrary<T>, runs: number, predicate: (value: T) => void): void {
  fc.assert(
    fc.property(arbitrary, (value) => {
      predicate(value);
    }),
    {
      numRuns: runsFor(runs),
      seed: FUZZ_SEED,
      endOnFailure: process.env.FUZZ_SHRINK === '0',
      includeErrorInReport: true,
    },
  );
}

/** Accepted input must not carry NaN or infinite numbers into charts and comparisons. */
export function importResultProblem(result: ImportResult): string | undefined {
  for (const m of result.measurements) {
    if (!Number.isFinite(m.ranks)) return `measurement ranks is ${m.ranks}`;
    for (const row of m.rows) {
      for (const key of ['bytes', 'timeUs', 'algbwGBps', 'busbwGBps'] as const) {
        if (!Number.isFinite(row[key]))
          return `a ${m.collective} row has ${key} = ${row[key]}${row.line ? ` (line ${row.line})` : ''}`;
      }
    }
  }
  return traceProblem(result.trace);
}

/** Spans handed to the timeline must have finite, ordered times. */
export function traceProblem(trace: Trace | undefined): string | undefined {
  for (const s of trace?.spans ?? []) {
    if (!Number.isFinite(s.startUs) || !Number.isFinite(s.endUs) || s.endUs < s.startUs)
      return `span '${s.name}' runs ${s.startUs}..${s.endUs} µs`;
  }
  return undefined;
}
