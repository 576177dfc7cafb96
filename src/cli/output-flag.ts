// Output flags (--trace, --out, --write-system) are checked as soon as the flags are parsed, before any long work,
// so a path that cannot be written costs nothing: the run's results are never lost to a typo in a folder name.
import { existsSync } from 'node:fs';
import { checkOutputPath, type OutputTarget } from '../native/files/output-file';
import { UserFileError } from '../native/files/file-errors';
import { UsageError } from './command';
import { flagValue } from './flag-values';

export interface OutputFlagOptions {
  /** Commands with --force refuse to replace a file without it; the others replace silently. */
  readonly force?: boolean;
  /** Whether `-` streams to stdout for this flag. */
  readonly allowStdout?: boolean;
}

export function outputFlag(
  flags: Map<string, string[]>,
  name: string,
  options: OutputFlagOptions = {},
): OutputTarget | undefined {
  const path = flagValue(flags, name);
  if (path === undefined) return undefined;
  let target: OutputTarget;
  try {
    target = checkOutputPath(path, { flag: `--${name}`, allowStdout: options.allowStdout });
  } catch (error) {
    // A bad output path is a bad flag: the same one-line usage error as any other.
    if (error instanceof UserFileError) throw new UsageError(error.message);
    throw error;
  }
  if (options.force === false && !target.stdout && existsSync(target.path))
    throw new UsageError(`${path} exists; pass --force to overwrite it`);
  return target;
}
