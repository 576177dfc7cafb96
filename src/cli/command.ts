// The contract every CLI subcommand implements, and the error type that maps to exit code 2.

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

export interface CliCommand {
  readonly name: string;
  readonly summary: string;
  /** Full usage text printed by `<command> --help`. */
  readonly usage: string;
  /** Returns the process exit code: 0 success, 1 findings/failure, 2 usage or input error. */
  run(args: readonly string[], io: CliIo): Promise<number>;
}

/** A bad flag or bad input file: printed as one line, exit code 2. */
export class UsageError extends Error {}

/**
 * Splits `--flag value`, `--flag=value` and bare `--switch` arguments. Flags named in `switches` take no value.
 * Unknown flags are rejected so a typo never silently falls back to a default.
 */
export function parseFlags(
  args: readonly string[],
  known: {
    readonly values: readonly string[];
    readonly switches?: readonly string[];
    readonly repeatable?: readonly string[];
  },
): { flags: Map<string, string[]>; positional: string[] } {
  const flags = new Map<string, string[]>();
  const positional: string[] = [];
  const switches = new Set(known.switches ?? []);
  const values = new Set(known.values);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    if (switches.has(name)) {
      if (eq >= 0) throw new UsageError(`--${name} takes no value`);
      flags.set(name, ['true']);
      continue;
    }
    if (!values.has(name)) throw new UsageError(`unknown flag --${name}`);
    const value = eq >= 0 ? arg.slice(eq + 1) : args[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    const list = flags.get(name) ?? [];
    if (list.length > 0 && !(known.repeatable ?? []).includes(name)) throw new UsageError(`--${name} given twice`);
    list.push(value);
    flags.set(name, list);
  }
  return { flags, positional };
}
