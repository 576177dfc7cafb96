// Output flags (--trace, --out, --write-system) are checked as soon as the flags are parsed, before any long work,
// so a path that cannot be written costs nothing: the run's results are never lost to a typo in a folder name.
// Every command treats an existing file alike: it is replaced only with --force (then atomically, by
// native/files/output-file.ts), so no command overwrites a file silently while another refuses.
import { existsSync } from 'node:fs';
import { checkOutputPath, type OutputTarget } from '../native/files/output-file';
import { UserFileError } from '../native/files/file-errors';
import { UsageError } from './command';
import { flagValue } from './flag-values';
import { terminalInline } from './terminal-text';
import type { OptionSpec } from './options';

/** The table entry of --force, which every command that writes a file takes. */
export const FORCE_OPTION: OptionSpec = { name: 'force', help: 'Replace output files that already exist' };

export interface OutputFlagOptions {
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
  if (!flags.has('force') && !target.stdout && existsSync(target.path))
    throw new UsageError(`${terminalInline(path)} exists; pass --force to overwrite it`);
  // The label is printed in summaries ("written to ...") and errors: a name from the user stays on its line.
  return { ...target, label: terminalInline(target.label) };
}
