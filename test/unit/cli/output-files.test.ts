// Every flag that writes a file refuses to replace one without --force, before any work starts, with the same
// message (docs/cli.md#output-files); and the exit codes the CLI uses are the ones docs/cli.md documents.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMANDS } from '../../../src/cli/commands/index';
import { ROOT, runCli } from './run-cli';

const dir = mkdtempSync(join(tmpdir(), 'cp-output-files-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

/** `command --flag` for every option whose help says it writes a file. */
function outputFlags(): string[] {
  return COMMANDS.flatMap((c) => c.options.filter((o) => /^Write\b/.test(o.help)).map((o) => `${c.name} --${o.name}`));
}

test('every command with a flag that writes a file has --force', () => {
  const flags = outputFlags();
  assert.ok(flags.length >= 6, flags.join(', '));
  for (const flag of flags) {
    const command = COMMANDS.find((c) => c.name === flag.split(' ')[0])!;
    assert.ok(
      command.options.some((o) => o.name === 'force'),
      `${flag} writes a file, so ${command.name} needs --force`,
    );
  }
});

test('every output flag refuses an existing file without --force, exit 2, leaving it untouched', async () => {
  const existing = join(dir, 'existing.json');
  writeFileSync(existing, 'keep me');
  const table = join(dir, 'predicted.txt');
  writeFileSync(
    table,
    (await runCli(['sweep', '--system', 'dgx-h100', '--min-bytes', '1M', '--max-bytes', '4M'])).stdout,
  );
  const example = join(ROOT, 'examples', 'ds_config.json');
  const runs: Record<string, string[]> = {
    'simulate --trace': ['simulate', '--system', 'dgx-h100', '--bytes', '1M', '--trace', existing],
    'profile --trace': ['profile', example, '--model', 'gpt2', '--trace', existing],
    'run --trace': ['run', '--trace', existing],
    'import --trace': ['import', table, '--trace', existing],
    'import --write-system': ['import', table, '--write-system', existing],
    'calibrate --out': ['calibrate', table, '--system', 'dgx-h100', '--out', existing],
  };
  assert.deepEqual(Object.keys(runs).sort(), outputFlags().sort(), 'one run per output flag');
  for (const [flag, args] of Object.entries(runs)) {
    const run = await runCli(args);
    assert.equal(run.code, 2, `${flag}: ${run.stderr}`);
    assert.equal(run.stderr.trim(), `error: ${existing} exists; pass --force to overwrite it`, flag);
    assert.equal(readFileSync(existing, 'utf8'), 'keep me', flag);
  }
});

test('docs/cli.md documents exactly the exit codes the CLI uses, and --help names them', async () => {
  const docs = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
  const section = docs.slice(docs.indexOf('## Exit codes'), docs.indexOf('\n## ', docs.indexOf('## Exit codes') + 1));
  const documented = [...section.matchAll(/^\| (\d+) \|/gm)].map((m) => Number(m[1]));
  assert.deepEqual(documented, [0, 1, 2, 70, 141]);
  const main = readFileSync(join(ROOT, 'src', 'cli', 'main.ts'), 'utf8');
  const used = new Set(
    [...main.matchAll(/\breturn (\d+);|process\.exitCode = (\d+)|EXIT_CLOSED_PIPE = (\d+)/g)].map((m) =>
      Number(m[1] ?? m[2] ?? m[3]),
    ),
  );
  for (const code of used) assert.ok(documented.includes(code), `main.ts uses exit code ${code}`);
  const help = await runCli(['--help']);
  for (const code of documented) assert.match(help.stdout, new RegExp(`\\b${code}\\b`), `--help names ${code}`);
});
