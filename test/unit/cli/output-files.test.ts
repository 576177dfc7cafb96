// Every flag that writes a file refuses to replace one without --force, before any work starts, with the same
// message (docs/cli.md#output-files). The exit codes are checked in test/unit/docs/exit-codes.test.ts.
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
