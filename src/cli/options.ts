// The option table of a command: one list of flags that both parses the command line (through node:util's
// parseArgs) and writes the command's `--help`, so the two cannot drift apart. A mistyped flag gets the nearest
// known one as a suggestion.
import { parseArgs } from 'node:util';
import { UsageError } from './command-errors';
import { suggestion } from './suggest';

export interface OptionSpec {
  /** The long name without dashes: `min-bytes` for `--min-bytes`. */
  readonly name: string;
  /** The value's placeholder (`size` prints as `<size>`); absent for a switch that takes no value. */
  readonly value?: string;
  /** One sentence or phrase: what the flag does. */
  readonly help: string;
  /** The default as the user would type it, shown in the help as `(default X)`. */
  readonly default?: string;
  /** Shown in the usage line and checked after parsing. */
  readonly required?: boolean;
  /** May be given more than once (each value is kept, in order). */
  readonly repeatable?: boolean;
}

/** What a command's table says about it besides its flags, for the help text. */
export interface CommandHelp {
  readonly name: string;
  readonly summary: string;
  /** The positional arguments as the usage line shows them (`<file>`, `<files or folders...>`); absent for none. */
  readonly positionals?: string;
  /** More usage lines for other forms of the command, each using only flags of the table. */
  readonly otherForms?: readonly string[];
  /** Paragraphs printed between the usage and the options. */
  readonly description?: readonly string[];
  readonly options: readonly OptionSpec[];
  /** Text printed after the options (catalogues, exit status); a function because some of it is computed. */
  readonly epilog?: () => string;
}

export interface ParsedArgs {
  readonly flags: Map<string, string[]>;
  readonly positional: string[];
}

/** The flags every command takes, handled before its own parsing; listed in every help. */
export const COMMON_OPTIONS: readonly OptionSpec[] = [{ name: 'help', help: 'Print this help and exit' }];

const PROGRAM = 'collective-profiler';

function placeholder(option: OptionSpec): string {
  return option.value === undefined ? '' : ` <${option.value}>`;
}

/** The usage line: the positionals, the required flags with their placeholders, then `[options]`. */
export function usageLine(command: CommandHelp): string {
  const required = command.options.filter((o) => o.required).map((o) => `--${o.name}${placeholder(o)}`);
  return [PROGRAM, command.name, command.positionals, ...required, '[options]'].filter(Boolean).join(' ');
}

/** `--help` of a command, generated from its table. */
export function formatHelp(command: CommandHelp): string {
  const options = [...command.options, ...COMMON_OPTIONS];
  const left = options.map((o) => `--${o.name}${placeholder(o)}`);
  const width = Math.max(...left.map((l) => l.length)) + 2;
  const lines = options.map((o, i) => {
    const notes = [o.required ? 'required' : undefined, o.default !== undefined ? `default ${o.default}` : undefined]
      .filter(Boolean)
      .join('; ');
    const repeat = o.repeatable ? ' (repeatable)' : '';
    return `  ${left[i].padEnd(width)}${o.help}${repeat}${notes ? ` (${notes})` : ''}`;
  });
  return [
    `Usage: ${usageLine(command)}`,
    ...(command.otherForms ?? []).map((form) => `       ${PROGRAM} ${command.name} ${form}`),
    '',
    command.summary,
    ...(command.description && command.description.length > 0 ? ['', ...command.description] : []),
    '',
    'Options:',
    ...lines,
    ...(command.epilog ? ['', command.epilog()] : []),
  ].join('\n');
}

/**
 * Parses `args` against the table. Unknown flags (with a suggestion), a value given to a switch, a missing value,
 * a flag given twice that is not repeatable and a missing required flag are usage errors (exit code 2).
 */
export function parseCommandArgs(command: CommandHelp, args: readonly string[]): ParsedArgs {
  const config: Record<string, { type: 'string' | 'boolean'; multiple: boolean }> = {};
  for (const o of command.options)
    config[o.name] = { type: o.value === undefined ? 'boolean' : 'string', multiple: o.value !== undefined };
  // strict: false, so that every token comes back and the errors below can name the flag and suggest another.
  const { tokens } = parseArgs({
    args: [...args],
    options: config,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const flags = new Map<string, string[]>();
  const positional: string[] = [];
  const known = [...command.options, ...COMMON_OPTIONS].map((o) => o.name);
  for (const token of tokens) {
    if (token.kind === 'positional') {
      positional.push(token.value);
      continue;
    }
    if (token.kind !== 'option') continue;
    const option = command.options.find((o) => o.name === token.name);
    if (!option) {
      const hint = suggestion(token.name, known, '--');
      throw new UsageError(
        `unknown flag ${token.rawName} for ${command.name}${hint ? `; ${hint}` : ''} (${PROGRAM} ${command.name} --help lists them)`,
      );
    }
    if (option.value === undefined) {
      if (token.inlineValue) throw new UsageError(`--${option.name} takes no value`);
      flags.set(option.name, ['true']);
      continue;
    }
    if (token.value === undefined)
      throw new UsageError(`--${option.name} needs a value (--${option.name}${placeholder(option)})`);
    const list = flags.get(option.name) ?? [];
    if (list.length > 0 && !option.repeatable) throw new UsageError(`--${option.name} given twice`);
    list.push(token.value);
    flags.set(option.name, list);
  }
  for (const option of command.options)
    if (option.required && !flags.has(option.name))
      throw new UsageError(`--${option.name} is required (${usageLine(command)})`);
  return { flags, positional };
}
