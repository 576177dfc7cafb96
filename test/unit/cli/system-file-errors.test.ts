// The built CLI turns every bad system file and bad flag into one line naming the problem, and exit code 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError, type CliCommand } from '../../../src/cli/command';
import { simulateCommand } from '../../../src/cli/commands/simulate';
import { sweepCommand } from '../../../src/cli/commands/sweep';
import { runCli } from './run-cli';

const dir = mkdtempSync(join(tmpdir(), 'cp-systems-'));
const SINGLE_NODE = ['gpu: H100-SXM', 'nodes: 1', 'gpusPerNode: 8', 'intraNode: nvswitch', ''].join('\n');
const GOOD = [
  'gpu: H100-SXM',
  'nodes: 2',
  'gpusPerNode: 8',
  'intraNode: nvswitch',
  'nic:',
  '  gbps: 400',
  '  perNode: 8',
  '',
].join('\n');

function systemFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/** Each bad file, and the `line:col: message` it must produce. */
const BAD_FILES: { name: string; text: string; expected: RegExp }[] = [
  {
    name: 'missing-field.yaml',
    text: GOOD.replace('intraNode: nvswitch\n', ''),
    expected: /:1:1: missing required key 'intraNode'$/,
  },
  {
    name: 'negative-bandwidth.yaml',
    text: GOOD.replace('gbps: 400', 'gbps: -400'),
    expected: /:6:9: nic\.gbps: must be greater than 0 \(got -400\)$/,
  },
  {
    name: 'unknown-gpu.yaml',
    text: GOOD.replace('H100-SXM', 'H1000'),
    expected: /:1:6: gpu: unknown GPU 'H1000'.*known GPUs: V100-SXM, /,
  },
  {
    name: 'non-integer-nodes.yaml',
    text: GOOD.replace('nodes: 2', 'nodes: 1.5'),
    expected: /:2:8: nodes: must be an integer \(got 1\.5\)$/,
  },
  {
    name: 'malformed.yaml',
    text: 'gpu: H100-SXM\nnodes: 2\ngpusPerNode: [8\nintraNode: nvswitch\n',
    expected: /:\d+:\d+: invalid YAML: /,
  },
  {
    name: 'malformed.json',
    text: '{"gpu": "H100-SXM", "nodes": 2,, "gpusPerNode": 8}',
    expected: /:1:32: invalid JSON: expected a double-quoted key but found ','$/,
  },
];

for (const bad of BAD_FILES) {
  test(`simulate and sweep reject ${bad.name} with file:line:col and exit code 2`, async () => {
    const path = systemFile(bad.name, bad.text);
    // Both commands load systems through the same code; sweep is spawned for one file to prove it is wired.
    const commands = [
      ['simulate', '--system', path, '--bytes', '8MiB'],
      ...(bad.name === 'unknown-gpu.yaml'
        ? [['sweep', '--system', path, '--min-bytes', '8', '--max-bytes', '1M']]
        : []),
    ];
    for (const args of commands) {
      const run = await runCli(args);
      assert.equal(run.code, 2, `${args[0]} exit code; stderr: ${run.stderr}`);
      assert.equal(run.stdout, '');
      const lines = run.stderr.trimEnd().split('\n');
      assert.equal(lines.length, 1, `one line, got:\n${run.stderr}`);
      assert.ok(lines[0].startsWith(`error: ${path}:`), lines[0]);
      assert.match(lines[0], bad.expected);
    }
  });
}

test('bad flags give one line naming the flag and exit code 2', async () => {
  for (const [args, expected] of [
    [['simulate', '--system', 'dgx-h100', '--bytes', 'lots'], /^error: --bytes 'lots' is not a size/],
    [['sweep', '--system', 'dgx-h100', '--frobnicate'], /^error: unknown flag --frobnicate/],
  ] as const) {
    const run = await runCli(args);
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    assert.equal(run.stderr.trimEnd().split('\n').length, 1, run.stderr);
    assert.match(run.stderr, expected);
  }
});

test('each bad flag is a UsageError that names it', async () => {
  systemFile('scaled.yaml', SINGLE_NODE);
  const io = { stdout: () => undefined, stderr: () => undefined };
  const cases: [CliCommand, string[], RegExp][] = [
    [simulateCommand, ['--system', 'dgx-h100'], /--bytes is required/],
    [simulateCommand, ['--bytes', '8M'], /--system is required/],
    [
      simulateCommand,
      ['--system', 'dgx-h100', '--bytes', '8M', '--algo', 'rings'],
      /--algo 'rings' must be one of auto, ring/,
    ],
    [
      simulateCommand,
      ['--system', 'dgx-h100', '--bytes', '8M', '--proto', 'LL256'],
      /--proto 'LL256' must be one of auto, LL, LL128, Simple/,
    ],
    [
      simulateCommand,
      ['--system', 'dgx-h100', '--bytes', '8M', '--dtype', 'int8'],
      /--dtype 'int8' must be one of fp32/,
    ],
    [simulateCommand, ['--system', 'dgx-h100', '--bytes', '8M', '--op', 'max'], /--op 'max' must be one of sum, avg/],
    [
      simulateCommand,
      ['--system', 'dgx-h100', '--bytes', '8M', '--nodes', '1.5'],
      /--nodes '1\.5' must be a positive whole number/,
    ],
    [
      simulateCommand,
      ['--system', 'dgx-h100', '--bytes', '8M', '--gpus-per-node', '0'],
      /--gpus-per-node '0' must be a positive whole number/,
    ],
    [simulateCommand, ['--system', 'dgx-h100', '--bytes', '8M', 'extra'], /unexpected argument 'extra'/],
    [
      simulateCommand,
      ['--system', 'dgx-h101', '--bytes', '8M'],
      /unknown system 'dgx-h101': did you mean 'dgx-h100'\?/,
    ],
    [
      simulateCommand,
      ['--system', join(dir, 'absent.yaml'), '--bytes', '8M'],
      /cannot read system file .*absent\.yaml': no such file/,
    ],
    [simulateCommand, ['--system', dir, '--bytes', '8M'], /system file '.*': a folder, not a regular file/],
    [simulateCommand, ['--system', 'pcie-4090x8', '--bytes', '8M', '--algo', 'nvls'], /nvls/i],
    [
      simulateCommand,
      ['--system', 'dgx-h100', '--bytes', '8M', '--trace', join(dir, 'no', 'such', 'folder', 't.json')],
      /^--trace '.*t\.json': the folder '.*folder' does not exist$/,
    ],
    [
      sweepCommand,
      ['--system', 'dgx-h100', '--min-bytes', '1G', '--max-bytes', '1M'],
      /--min-bytes \(1073741824\) is larger than --max-bytes/,
    ],
    [sweepCommand, ['--system', 'dgx-h100', '--factor', '1'], /--factor '1' must be a number greater than 1/],
    [
      sweepCommand,
      ['--system', 'dgx-h100', '--factor', '1.0001'],
      /gives \d+ sizes, over the limit of 10000 \(docs\/limits\.md\); use a larger factor/,
    ],
    [sweepCommand, ['--system', 'dgx-h100', '--max-bytes', '-5'], /--max-bytes '-5' is not a size/],
  ];
  for (const [command, args, expected] of cases) {
    await assert.rejects(
      command.run(args, io),
      (error: unknown) => error instanceof UsageError && expected.test(error.message),
      `${command.name} ${args.join(' ')}`,
    );
  }
  await assert.rejects(
    simulateCommand.run(['--system', join(dir, 'scaled.yaml'), '--bytes', '8M', '--nodes', '2'], io),
    /needs a 'nic' section/,
  );
});

test('a good YAML file and its JSON twin give the same simulation', async () => {
  const yamlRun = await runCli([
    'simulate',
    '--system',
    'examples/systems/dgx-h100-2node.yaml',
    '--bytes',
    '64MiB',
    '--json',
  ]);
  const jsonRun = await runCli([
    'simulate',
    '--system',
    'examples/systems/dgx-h100-2node.json',
    '--bytes',
    '64MiB',
    '--json',
  ]);
  assert.equal(yamlRun.code, 0, yamlRun.stderr);
  assert.equal(jsonRun.code, 0, jsonRun.stderr);
  assert.deepEqual(JSON.parse(yamlRun.stdout), JSON.parse(jsonRun.stdout));
});

test('simulate --help lists the GPU catalogue and the presets', async () => {
  const run = await runCli(['simulate', '--help']);
  assert.equal(run.code, 0);
  for (const name of [
    'V100-SXM',
    'A100-SXM',
    'A100-PCIe',
    'H100-SXM',
    'H100-PCIe',
    'H200',
    'B200',
    'GB200',
    'L40S',
    'A10',
    'RTX3090',
    'RTX4090',
  ]) {
    assert.ok(run.stdout.includes(name), `GPU ${name} in help`);
  }
  for (const preset of ['dgx1-v100', 'dgx-a100', 'dgx-h100', 'hgx-h200', 'dgx-b200'])
    assert.ok(run.stdout.includes(preset), `preset ${preset} in help`);
});
