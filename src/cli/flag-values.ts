// Parsing of flag values shared by the CLI commands; each failure is a UsageError naming the flag.
import { parseBytes, type Bytes } from '../engine/index';
import { UsageError } from './command';

export function sizeFlag(flag: string, text: string): Bytes {
  const bytes = parseBytes(text);
  if (bytes === undefined || bytes <= 0) {
    throw new UsageError(`--${flag} '${text}' is not a size; use a positive byte count such as 8, 64K, 8MiB or 1G`);
  }
  return bytes;
}

export function positiveIntegerFlag(flag: string, text: string): number {
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`--${flag} '${text}' must be a positive whole number`);
  }
  return Number(text);
}

export function numberFlag(flag: string, text: string, check: (value: number) => boolean, requirement: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || !check(value)) throw new UsageError(`--${flag} '${text}' ${requirement}`);
  return value;
}

/** Matches `text` against `choices` case-insensitively, with aliases (e.g. float → fp32). */
export function choiceFlag<T extends string>(flag: string, text: string, choices: readonly T[], aliases: Record<string, T> = {}): T {
  const lower = text.toLowerCase();
  const found = choices.find((c) => c.toLowerCase() === lower) ?? aliases[lower];
  if (found === undefined) throw new UsageError(`--${flag} '${text}' must be one of ${choices.join(', ')}`);
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
