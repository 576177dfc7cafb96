// Entry point of `node dist/cli.js`: dispatches to a subcommand and turns errors into exit codes.
import { UserFileError } from '../native/files/file-errors';
import { UsageError, type CliIo } from './command';
import { COMMANDS } from './commands/index';
import { terminalInline, terminalMessage, terminalSafe } from './terminal-text';

// Everything printed passes through the escaping of terminal-text.ts: the commands print text from input files.
const io: CliIo = {
  stdout: (text) => process.stdout.write(terminalSafe(text.endsWith('\n') ? text : `${text}\n`)),
  stderr: (text) => process.stderr.write(terminalMessage(text.endsWith('\n') ? text : `${text}\n`)),
};

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length), 8);
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    'Usage: collective-profiler <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Run `collective-profiler <command> --help` for its options.',
  ].join('\n');
}

export async function main(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(help());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.stderr(`error: unknown command '${terminalInline(name)}'. Commands: ${COMMANDS.map((c) => c.name).join(', ')}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(command.usage);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (error) {
    if (error instanceof UsageError || error instanceof UserFileError) {
      io.stderr(`error: ${error.message}`);
      return 2;
    }
    io.stderr(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return 70;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`internal error: ${String(error)}\n`);
    process.exitCode = 70;
  },
);
