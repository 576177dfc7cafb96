// Every shell command shown in README.md, CONTRIBUTING.md and docs/**/*.md runs as a reader would paste it on a
// fresh clone: CLI commands run against dist/cli.js in a scratch folder that sees the repository's files (and
// ../shared beside it, where it exists), with exit code 0 or the one the command's comment states. Other commands
// must be in ALLOWED with the reason this test does not run them, so a new example is never left unchecked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { needShared, SHARED_ROOT, torchAbsent } from '../requirements';
import { cliArguments, documentationFiles, extractCommands, type DocCommand } from './shell-examples';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const CLI = join(ROOT, 'dist', 'cli.js');

/** Commands the docs show that are not the CLI, each with the reason this test does not run it. */
export const ALLOWED: Readonly<Record<string, string>> = {
  'npm ci': 'installs node_modules from the registry; the test runs inside an installed checkout',
  'npm test': 'the full test suite, which includes this test (several minutes)',
  'npm run build': 'rebuilds dist/, which the other test files are using while this one runs',
  'npm run lint': 'the three typechecks; CI runs them as its own step',
  'npm run demo': 'long-running (builds, then simulates and profiles); its CLI commands run in a test below',
  'npm run package': 'builds production bundles over dist/ and writes the .vsix (test/unit/extension/vsix.test.ts checks a packaged one)',
  'code --install-extension collective-profiler.vsix': 'needs VS Code and a packaged .vsix',
  'node scripts/test.mjs cli docs': 'runs test files, this one among them',
  'node scripts/test.mjs engine/calibration': 'runs a test file (test/unit/engine/calibration.test.ts), in the suite already',
  'npm run test:e2e': 'long-running: installs code-server and drives real VS Code for minutes',
  'npm run test:vscode': 'downloads VS Code, which this machine cannot reach',
  'npm run bench -- --quick': 'long-running benchmarks (minutes); CI runs the quick ones as its own step',
  'npm run bench -- --filter engine --strict': 'long-running benchmarks, timed under load',
  'npm run bench -- --markdown': 'long-running: every benchmark',
  'npm run fuzz': 'long-running: ten times the fuzz inputs of npm test',
  'npm run fuzz -- --seed 1234': 'long-running: ten times the fuzz inputs of npm test',
};

/** Flags whose value is a file the CLI writes: kept in the scratch folder so no example writes into the checkout. */
const OUTPUT_FLAGS = new Set(['--trace', '--out', '--write-system']);

const documents = documentationFiles(ROOT).map((file) => ({ file, ...extractCommands(readFileSync(join(ROOT, file), 'utf8'), file) }));

let torchReason: string | false | undefined;
function needTorch(): string | false {
  if (torchReason !== undefined) return torchReason;
  const candidates = [process.env.COLLECTIVE_PROFILER_PYTHON, '/usr/bin/python3', 'python3'].filter((p): p is string => !!p && p !== 'off');
  const found = candidates.some((python) => spawnSync(python, ['-c', 'import torch'], { timeout: 60_000 }).status === 0);
  return (torchReason = found ? false : torchAbsent(`no Python that can import torch (tried ${candidates.join(', ')})`));
}

function skipReason(command: DocCommand): string | false {
  for (const need of command.needs) {
    const reason = need === 'shared' ? needShared(SHARED_ROOT, '../shared') : needTorch();
    if (reason) return reason;
  }
  return false;
}

/**
 * A folder shaped like a fresh clone with ../shared beside it: the repository's tracked top-level entries are
 * linked in (dist/ too, as `npm run build` leaves it), and everything a command writes lands in the folder itself.
 */
function scratchCheckout(): string {
  const parent = mkdtempSync(join(tmpdir(), 'cp-docs-'));
  const checkout = join(parent, 'collective-profiler');
  mkdirSync(checkout);
  const skip = new Set(['.git', 'node_modules', 'out', 'test-results']);
  for (const name of readdirSync(ROOT)) {
    if (!skip.has(name) && !name.endsWith('.vsix')) symlinkSync(join(ROOT, name), join(checkout, name));
  }
  if (existsSync(SHARED_ROOT)) symlinkSync(SHARED_ROOT, join(parent, 'shared'));
  return checkout;
}

interface Run {
  readonly code: number | null;
  readonly output: string;
}

function runCli(args: readonly string[], cwd: string, env: Readonly<Record<string, string>>): Promise<Run> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env: { ...process.env, ...env }, timeout: 180_000 });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('close', (code) => resolveRun({ code, output }));
  });
}

test('every shell example in the docs can run as pasted (no placeholders, pipes or unclosed fences)', () => {
  assert.deepEqual(documents.flatMap((d) => d.problems), []);
  assert.ok(documents.some((d) => d.file === 'README.md' && d.commands.length > 0), 'README.md shows commands');
});

test('every command that is not the CLI is allow-listed with a reason, and every allow-list entry is used', () => {
  const shown = documents.flatMap((d) => d.commands).filter((c) => !cliArguments(c));
  const unlisted = shown.filter((c) => !(c.text in ALLOWED)).map((c) => `${c.file}:${c.line}: ${c.text}`);
  assert.deepEqual(unlisted, [], 'add these to ALLOWED with the reason they are not run, or make them CLI commands');
  const texts = new Set(shown.map((c) => c.text));
  assert.deepEqual(Object.keys(ALLOWED).filter((text) => !texts.has(text)), [], 'allow-list entries no doc shows');
});

test('every npm script the docs name exists in package.json', () => {
  const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
  const named = documents.flatMap((d) => d.commands).filter((c) => c.argv[0] === 'npm').map((c) => (c.argv[1] === 'run' ? c.argv[2] : c.argv[1]));
  for (const name of named) if (name !== 'ci') assert.ok(name in scripts, `npm script '${name}' is named in the docs but not in package.json`);
});

test('the CLI commands of the quick start (npm run demo) run', async () => {
  assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` first (npm test does)');
  const demo = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.demo as string;
  const { commands, problems } = extractCommands(['```sh', demo, '```'].join('\n'), 'package.json#demo');
  assert.deepEqual(problems, []);
  const cli = commands.map(cliArguments).filter((args): args is string[] => args !== undefined);
  assert.ok(cli.length >= 2, `the demo runs the CLI: ${demo}`);
  const checkout = scratchCheckout();
  for (const args of cli) {
    const run = await runCli(args, checkout, {});
    assert.equal(run.code, 0, `demo: node dist/cli.js ${args.join(' ')}\n${run.output.slice(-2000)}`);
  }
});

test('every CLI example in the docs exits as documented', { concurrency: 3 }, async (t) => {
  assert.ok(existsSync(CLI), 'dist/cli.js is missing: run `npm run build` first (npm test does)');
  await Promise.all(
    documents
      .filter((d) => d.commands.some((c) => cliArguments(c)))
      .map((document) =>
        t.test(document.file, async (fileTest) => {
          // One scratch checkout per page, commands in page order, as a reader pastes them one after another.
          const checkout = scratchCheckout();
          for (const command of document.commands) {
            const args = cliArguments(command);
            if (!args) continue;
            await fileTest.test(`${command.file}:${command.line} ${command.text}`, { skip: skipReason(command) }, async () => {
              args.forEach((arg, i) => {
                if (OUTPUT_FLAGS.has(arg)) assert.equal(basename(args[i + 1] ?? ''), args[i + 1], `${arg} writes into the current folder`);
              });
              const run = await runCli(args, checkout, command.env);
              assert.equal(run.code, command.expectedExit, `${command.file}:${command.line}: ${command.text}\nexpected exit ${command.expectedExit}, got ${run.code}\n${run.output.slice(-2000)}`);
            });
          }
        }),
      ),
  );
});
