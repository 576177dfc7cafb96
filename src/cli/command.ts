// The contract every CLI subcommand implements. A command is defined by its option table (options.ts), which
// parses its arguments and writes its `--help`; `defineCommand` joins the two so no command parses on its own.
import { UsageError } from './command-errors';
import { formatHelp, parseCommandArgs, type CommandHelp, type ParsedArgs } from './options';
import type { ProgressFactory } from './progress';

export { UsageError };

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Where long commands report progress; absent: a line on stderr, on a terminal only (progress.ts). */
  readonly progress?: ProgressFactory;
}

export interface CliCommand extends CommandHelp {
  /** Full usage text printed by `<command> --help`, generated from the option table. */
  readonly usage: string;
  /** Parses `args` against the table and runs. Returns the exit code (docs/cli.md#exit-codes). */
  run(args: readonly string[], io: CliIo): Promise<number>;
}

export interface CommandDefinition extends CommandHelp {
  /** Runs with arguments already checked against the table. */
  execute(parsed: ParsedArgs, io: CliIo): Promise<number>;
}

export function defineCommand(definition: CommandDefinition): CliCommand {
  return {
    ...definition,
    get usage(): string {
      return formatHelp(definition);
    },
    // async, so a bad flag rejects the promise like every other error of the command instead of throwing.
    run: async (args, io) => definition.execute(parseCommandArgs(definition, args), io),
  };
}

/** A command that takes no positional arguments rejects them, naming the first. */
export function noPositionals(command: string, positional: readonly string[]): void {
  if (positional.length > 0)
    throw new UsageError(`unexpected argument '${positional[0]}'; ${command} takes only flags`);
}
