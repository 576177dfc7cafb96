// Reads the shell commands that the Markdown docs show in fenced sh/bash/shell/console blocks, as a reader would
// paste them: one command a line (a trailing backslash continues it), `#` starts a comment, `&&` chains commands.
// Only what a pasted example can do without a real shell is accepted (words, quotes, leading VAR=value); pipes,
// redirections, substitutions and placeholders are reported as problems so the docs stay runnable as written.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

export type Requirement = 'shared' | 'torch';

export interface DocCommand {
  /** The Markdown file, relative to the repository root, and the 1-based line the command starts on. */
  readonly file: string;
  readonly line: number;
  /** The command as written (one part of an `&&` chain), without its comment. */
  readonly text: string;
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** The exit code the comment states (`# exit 1`, `exits 1`, `exit code 1`), else 0. */
  readonly expectedExit: number;
  /** What the block or the command's comment says it needs (`needs ../shared`, `needs torch`). */
  readonly needs: readonly Requirement[];
}

export interface Extraction {
  readonly commands: DocCommand[];
  /** `file:line: problem` for every command that cannot run as pasted. */
  readonly problems: string[];
}

const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);
const FENCE = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/;

/** The Markdown files whose examples are checked: README.md, CONTRIBUTING.md and everything under docs/. */
export function documentationFiles(root: string): string[] {
  const files = ['README.md', 'CONTRIBUTING.md'].map((name) => join(root, name));
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(root, 'docs'));
  return files.map((path) => relative(root, path));
}

function requirementsIn(comment: string): Requirement[] {
  const needs: Requirement[] = [];
  if (/needs \.\.\/shared/i.test(comment)) needs.push('shared');
  if (/needs torch/i.test(comment)) needs.push('torch');
  return needs;
}

interface Split {
  readonly words: string[][];
  readonly comment: string;
  readonly problem?: string;
}

/** Splits one logical line into words per `&&`-separated command and its trailing comment, without expansions. */
export function splitWords(line: string): Split {
  const commands: string[][] = [[]];
  let word: string | undefined;
  const push = (): void => {
    if (word !== undefined) commands[commands.length - 1].push(word);
    word = undefined;
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return { words: commands, comment: '', problem: 'an unterminated single quote' };
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      const end = line.indexOf('"', i + 1);
      if (end < 0) return { words: commands, comment: '', problem: 'an unterminated double quote' };
      const inner = line.slice(i + 1, end);
      if (/[$`\\]/.test(inner)) return { words: commands, comment: '', problem: `"${inner}" needs shell expansion` };
      word = (word ?? '') + inner;
      i = end;
    } else if (c === '\\' && i + 1 < line.length) {
      word = (word ?? '') + line[++i];
    } else if (/\s/.test(c)) {
      push();
    } else if (c === '#' && word === undefined) {
      push();
      return finish(commands, line.slice(i + 1).trim());
    } else if (c === '&' && line[i + 1] === '&' && word === undefined) {
      commands.push([]);
      i++;
    } else if ('|;<>`$(){}&*?'.includes(c)) {
      return { words: commands, comment: '', problem: `'${c}' needs a real shell (pipes, redirections, globs and substitutions are not run by the docs test)` };
    } else {
      word = (word ?? '') + c;
    }
  }
  push();
  return finish(commands, '');
}

function finish(commands: string[][], comment: string): Split {
  if (commands.some((words) => words.length === 0)) return { words: commands, comment, problem: 'an empty command around &&' };
  return { words: commands, comment };
}

function placeholder(words: readonly string[]): string | undefined {
  return words.find((w) => w.startsWith('[') || w === '...' || /^(DIR|FILE|PATH|NAME|SIZE|CODE|N)$/.test(w));
}

/** Every command of the shell blocks of one Markdown text. */
export function extractCommands(markdown: string, file: string): Extraction {
  const commands: DocCommand[] = [];
  const problems: string[] = [];
  const lines = markdown.split('\n');
  let fence: string | undefined;
  let language = '';
  let blockNeeds: Requirement[] = [];
  for (let index = 0; index < lines.length; index++) {
    const raw = lines[index];
    const opening = FENCE.exec(raw);
    if (fence === undefined) {
      if (opening) {
        fence = opening[1];
        language = opening[2].toLowerCase();
        blockNeeds = [];
      }
      continue;
    }
    if (raw.trim().startsWith(fence) && raw.trim().replace(/[`~]/g, '') === '') {
      fence = undefined;
      continue;
    }
    // A command in a block without a language would never run here: the block must say it is shell.
    if (language === '' && /^\s*(\$ )?(node|npm|npx|collective-profiler|code)\s/.test(raw))
      problems.push(`${file}:${index + 1}: a command in a code block without a language; mark the block \`\`\`sh`);
    if (!SHELL_LANGUAGES.has(language)) continue;
    const start = index;
    let text = raw.trim();
    if (language === 'console') {
      if (!text.startsWith('$ ')) continue;
      text = text.slice(2);
    }
    while (text.endsWith('\\') && index + 1 < lines.length) text = `${text.slice(0, -1)} ${lines[++index].trim()}`;
    if (text === '') continue;
    if (text.startsWith('#')) {
      blockNeeds = [...new Set([...blockNeeds, ...requirementsIn(text)])];
      continue;
    }
    const where = `${file}:${start + 1}`;
    const split = splitWords(text);
    if (split.problem) {
      problems.push(`${where}: ${split.problem}: ${text}`);
      continue;
    }
    const needs = [...new Set([...blockNeeds, ...requirementsIn(split.comment)])];
    const exit = /\bexits?(?: with)?(?: code| status)? (\d+)\b/i.exec(split.comment);
    for (const words of split.words) {
      const env: Record<string, string> = {};
      let first = 0;
      while (first < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[first])) {
        const [name, ...value] = words[first].split('=');
        env[name] = value.join('=');
        first++;
      }
      const argv = words.slice(first);
      const hole = placeholder(argv);
      if (hole !== undefined) {
        problems.push(`${where}: '${hole}' is a placeholder, not something a pasted command can use: ${text}`);
        continue;
      }
      commands.push({ file, line: start + 1, text: words.join(' '), argv, env, expectedExit: exit ? Number(exit[1]) : 0, needs });
    }
  }
  if (fence !== undefined) problems.push(`${file}: a code fence is never closed`);
  return { commands, problems };
}

/** The CLI arguments of a command that runs the CLI (`node dist/cli.js ...` or `collective-profiler ...`). */
export function cliArguments(command: DocCommand): string[] | undefined {
  const [program, script, ...rest] = command.argv;
  if (program === 'node' && script === 'dist/cli.js') return rest;
  if (program === 'collective-profiler') return command.argv.slice(1);
  return undefined;
}
