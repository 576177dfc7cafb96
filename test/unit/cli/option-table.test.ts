// Every command's --help is generated from the option table that parses it: each flag the help names is in the
// table, each flag of the table is in the help with its placeholder, and the parser accepts exactly the table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMMANDS } from '../../../src/cli/commands/index';
import { COMMON_OPTIONS, formatHelp, parseCommandArgs } from '../../../src/cli/options';
import { UsageError } from '../../../src/cli/command';
import { nearestNames } from '../../../src/cli/suggest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './run-cli';

for (const command of COMMANDS) {
  test(`${command.name} --help lists exactly the flags of its option table`, () => {
    const help = command.usage;
    assert.equal(help, formatHelp(command), 'the help is the one generated from the table');
    const table = new Set([...command.options, ...COMMON_OPTIONS].map((o) => o.name));
    const mentioned = new Set([...help.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1]));
    for (const name of mentioned)
      assert.ok(table.has(name), `${command.name} --help names --${name}, not in its table`);
    for (const option of command.options) {
      const shown = `--${option.name}${option.value === undefined ? '' : ` <${option.value}>`}`;
      assert.ok(
        help.split('\n').some((l) => l.startsWith(`  ${shown} `)),
        `${command.name} --help lacks ${shown}`,
      );
      if (option.default !== undefined) assert.ok(help.includes(`default ${option.default}`));
      if (option.required) assert.ok(help.split('\n')[0].includes(shown), `${shown} is required: in the usage line`);
    }
    assert.equal(table.size, command.options.length + COMMON_OPTIONS.length, 'no flag is listed twice');
  });

  test(`${command.name} parses every flag of its table and rejects others with a suggestion`, () => {
    const args = command.options.flatMap((o) => (o.value === undefined ? [`--${o.name}`] : [`--${o.name}`, 'x']));
    const parsed = parseCommandArgs(command, args);
    for (const option of command.options) assert.ok(parsed.flags.has(option.name), `--${option.name} parsed`);
    const first = command.options.find((o) => o.name.length >= 4);
    assert.ok(first);
    const typo = `--${first.name.slice(0, -1)}`;
    assert.throws(
      () => parseCommandArgs(command, [typo]),
      (e: unknown) => e instanceof UsageError && e.message.includes(`did you mean --${first.name}`),
    );
  });
}

test('a switch given a value, a missing value and a repeated flag are usage errors', () => {
  const sweep = COMMANDS.find((c) => c.name === 'sweep')!;
  assert.throws(() => parseCommandArgs(sweep, ['--system', 'a', '--json=yes']), /--json takes no value/);
  assert.throws(() => parseCommandArgs(sweep, ['--system']), /--system needs a value/);
  assert.throws(() => parseCommandArgs(sweep, ['--system', 'a', '--system', 'b']), /--system given twice/);
  assert.throws(() => parseCommandArgs(sweep, []), /--system is required/);
  const parsed = parseCommandArgs(sweep, ['--system=dgx-h100', '--factor', '4']);
  assert.deepEqual(parsed.flags.get('system'), ['dgx-h100']);
});

test('suggestions: the nearest name, or every name the typed text is part of', () => {
  assert.deepEqual(nearestNames('byte', ['bytes', 'json']), ['bytes']);
  assert.deepEqual(nearestNames('byte', ['min-bytes', 'max-bytes', 'json']), ['min-bytes', 'max-bytes']);
  assert.deepEqual(nearestNames('swep', ['simulate', 'sweep']), ['sweep']);
  assert.deepEqual(nearestNames('zzzz', ['simulate', 'sweep']), []);
});

test('the CLI prints its version, suggests commands and flags, and exits 2 on usage errors', async () => {
  const version = await runCli(['--version']);
  assert.equal(version.code, 0);
  assert.match(version.stdout, /^collective-profiler \d+\.\d+\.\d+\n$/);
  const command = await runCli(['swep']);
  assert.equal(command.code, 2);
  assert.match(command.stderr, /unknown command 'swep'; did you mean sweep\?/);
  const flag = await runCli(['simulate', '--system', 'dgx-h100', '--byte', '8M']);
  assert.equal(flag.code, 2);
  assert.match(flag.stderr, /^error: unknown flag --byte for simulate; did you mean --bytes\?/);
  const help = await runCli(['help', 'sweep']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: collective-profiler sweep --system <preset\|file> \[options\]/);
});

test('a system file with two problems prints both, one positioned error line each', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-two-problems-'));
  const file = join(dir, 'box.yaml');
  writeFileSync(file, 'gpu: H100-SXM\nnodes: 1.5\ngpusPerNode: 8\nintraNode: nvswitch\nbogus: 3\n');
  const run = await runCli(['simulate', '--system', file, '--bytes', '1M']);
  assert.equal(run.code, 2);
  const lines = run.stderr.trim().split('\n');
  assert.equal(lines.length, 2, run.stderr);
  assert.match(lines[0], /^error: .*box\.yaml:2:8: nodes: must be an integer/);
  assert.match(lines[1], /^error: .*box\.yaml:5:1: unknown key 'bogus'/);
});
