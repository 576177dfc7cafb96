// Parsing of flag values shared by the CLI commands; each failure is a UsageError naming the flag. Counts and
// sizes are held to the table of limits in src/config/limits.ts (docs/limits.md) here, as they are parsed.
import { parseBytes, type Bytes } from '../engine/index';
import { limitProblem, type LimitName } from '../config/limits';
import { UsageError } from './command';
import { terminalInline } from './terminal-text';

/** Throws a UsageError when `value`, given as `--flag text`, breaks the limit `name`. */
export function enforceLimit(name: LimitName, label: string, value: number, shown?: string): void {
  const problem = limitProblem(name, label, value, shown);
  if (problem) throw new UsageError(problem);
}

/** A positive byte count (8, 64K, 8MiB, 1G), at most the byte limit, so it is always an exact integer. */
export function sizeFlag(flag: string, text: string): Bytes {
  const bytes = parseBytes(text);
  if (bytes === undefined || bytes <= 0) {
    throw new UsageError(
      `--${flag} '${terminalInline(text)}' is not a size; use a positive byte count such as 8, 64K, 8MiB or 1G`,
    );
  }
  // parseBytes rounds (1.3 → 1); a size that is not a whole number of bytes is refused instead of changed.
  const exact = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unitBytes = exact ? parseBytes(`1${exact[2]}`) : undefined;
  if (exact && unitBytes !== undefined && !Number.isInteger(Number(exact[1]) * unitBytes))
    throw new UsageError(
      `--${flag} '${terminalInline(text)}' is not a whole number of bytes (it would be rounded to ${bytes}); write it in bytes or a smaller unit`,
    );
  enforceLimit('bytes', `--${flag}`, bytes, terminalInline(text.trim()));
  return bytes;
}

/** A positive whole number, held to `limit` when the flag is a count the engine allocates for. */
export function positiveIntegerFlag(flag: string, text: string, limit?: LimitName): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1) {
    throw new UsageError(`--${flag} '${terminalInline(text)}' must be a positive whole number`);
  }
  if (limit) enforceLimit(limit, `--${flag}`, Number(text));
  else if (!Number.isSafeInteger(Number(text)))
    throw new UsageError(`--${flag} ${text.trim()} is larger than ${Number.MAX_SAFE_INTEGER}`);
  return Number(text);
}

/** A decimal number as people write it: not hex, binary or octal, which Number() would also take. */
const DECIMAL = /^\s*[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i;

export function numberFlag(
  flag: string,
  text: string,
  check: (value: number) => boolean,
  requirement: string,
  limit?: LimitName,
): number {
  const value = Number(text);
  if (!DECIMAL.test(text) || !Number.isFinite(value) || !check(value))
    throw new UsageError(`--${flag} '${terminalInline(text)}' ${requirement}`);
  if (limit) enforceLimit(limit, `--${flag}`, value);
  return value;
}

/** Matches `text` against `choices` case-insensitively, with aliases (e.g. float → fp32). */
export function choiceFlag<T extends string>(
  flag: string,
  text: string,
  choices: readonly T[],
  aliases: Record<string, T> = {},
): T {
  const lower = text.toLowerCase();
  const found = choices.find((c) => c.toLowerCase() === lower) ?? aliases[lower];
  if (found === undefined)
    throw new UsageError(`--${flag} '${terminalInline(text)}' must be one of ${choices.join(', ')}`);
  return found;
}

/** The single value of a flag, or undefined when it was not given. */
export function flagValue(flags: Map<string, string[]>, name: string): string | undefined {
  return flags.get(name)?.[0];
}

export function requiredFlag(flags: Map<string, string[]>, name: string, example: string): string {
  const value = flagValue(flags, name);
  if (value === undefined) throw new UsageError(`--${name} is required (for example --${name} ${example})`);
  return value;
}
