// Entry point of `node dist/cli.js`: dispatches to a subcommand and turns errors into the exit codes of
// docs/cli.md: 0 done, 1 findings, 2 usage or input error, 70 internal error, 130 interrupted, 141 stdout closed
// by its reader, 128 + n `run` stopped by a signal.
import { UserFileError } from '../native/files/file-errors';
import { UsageError, type CliIo } from './command';
import { COMMAND_CATALOGUE } from './commands/catalogue';
import { endProcess } from './exit';
import { suggestion } from './suggest';
import { terminalInline, terminalMessage, terminalSafe } from './terminal-text';
import { TOOL_VERSION } from './version';

/** The exit code of a program killed by SIGPIPE (128 + 13), which shells and `set -o pipefail` expect. */
export const EXIT_CLOSED_PIPE = 141;

/**
 * A reader that stops early (`sweep | head`) closes the pipe; the next write fails with EPIPE. That is not an
 * error of this program: it stops at once and quietly, as a C program killed by SIGPIPE would.
 */
function exitQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT_CLOSED_PIPE);
    throw error;
  });
}

// Everything printed passes through the escaping of terminal-text.ts: the commands print text from input files.
const io: CliIo = {
  stdout: (text) => process.stdout.write(terminalSafe(text.endsWith('\n') ? text : `${text}\n`)),
  stderr: (text) => process.stderr.write(terminalMessage(text.endsWith('\n') ? text : `${text}\n`)),
};

function help(): string {
  const width = Math.max(...COMMAND_CATALOGUE.map((c) => c.name.length), 8);
  const lines = COMMAND_CATALOGUE.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    'Usage: collective-profiler <command> [options]',
    '       collective-profiler --version',
    '',
    'Commands:',
    ...lines,
    '',
    'Run `collective-profiler <command> --help` for its options. Exit codes: 0 done, 1 findings, 2 usage or input',
    'error, 70 internal error, 130 interrupted, 141 standard output closed by its reader, 128 + n `run` stopped by',
    'signal n (docs/cli.md).',
  ].join('\n');
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h') {
    io.stdout(help());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V') {
    io.stdout(`collective-profiler ${TOOL_VERSION}`);
    return 0;
  }
  // `help sweep` is `sweep --help`.
  const [commandName, args] = name === 'help' && rest.length > 0 ? [rest[0], ['--help']] : [name, rest];
  if (commandName === 'help') {
    io.stdout(help());
    return 0;
  }
  const names = COMMAND_CATALOGUE.map((c) => c.name);
  const entry = COMMAND_CATALOGUE.find((c) => c.name === commandName);
  if (!entry) {
    const what = commandName.startsWith('-') ? 'option' : 'command';
    const hint = what === 'command' ? suggestion(commandName, names) : undefined;
    io.stderr(
      `error: unknown ${what} '${terminalInline(commandName)}'${hint ? `; ${hint}` : ''} (commands: ${names.join(', ')})`,
    );
    return 2;
  }
  // Only the command that runs is loaded (commands/catalogue.ts).
  const command = await entry.load();
  // Before `--`, a help flag anywhere asks for help: the command is not run.
  const beforeSeparator = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
  if (beforeSeparator.includes('--help') || beforeSeparator.includes('-h')) {
    io.stdout(command.usage);
    return 0;
  }
  try {
    return await command.run(args, io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof UserFileError) {
      // A user error is one line each: a name or value from input that holds a newline is shown escaped, so it
      // can neither split the message nor start a line of its own.
      io.stderr(`error: ${terminalInline(error.message)}`);
      if (error instanceof UsageError) for (const line of error.more) io.stderr(`error: ${terminalInline(line)}`);
      return 2;
    }
    io.stderr(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 70;
  }
}

exitQuietlyOnClosedPipe(process.stdout);
exitQuietlyOnClosedPipe(process.stderr);
main(process.argv.slice(2)).then(
  (code) => endProcess(code),
  (error) => {
    process.stderr.write(`internal error: ${String(error)}\n`);
    process.exitCode = 70;
  },
);
