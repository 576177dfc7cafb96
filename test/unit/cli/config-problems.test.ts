// A bad config shows every problem at once, one `error: file:line:col: message` line each, for every reader: system
// files, training configs, DeepSpeed and Accelerate configs, Hugging Face model configs, and check's own rule flags.
// Fixing a file then takes one run, not one run per problem.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './run-cli';

const dir = mkdtempSync(join(tmpdir(), 'cp-config-problems-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, lines: string[]): string {
  const path = join(dir, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

const CASES: { reader: string; args: (path: string) => string[]; name: string; lines: string[]; problems: RegExp[] }[] =
  [
    {
      reader: 'system file',
      name: 'bad.system.yaml',
      lines: ['name: bad', 'gpu: H100-SXM', 'nodes: 2.5', 'gpusPerNode: 0', 'intraNod: nvswitch'],
      args: (path) => ['simulate', '--system', path, '--bytes', '1M'],
      problems: [
        /:3:8: nodes: must be an integer/,
        /:4:14: gpusPerNode: must be at least 1/,
        /:5:1: unknown key 'intraNod'/,
      ],
    },
    {
      reader: 'training config',
      name: 'bad.collective.yaml',
      lines: [
        'model:',
        '  preset: gpt2',
        'training:',
        '  global_batch_size: -1',
        '  micro_batch_size: 2.5',
        'system:',
        '  preset: dgx-h100',
        '  nodes: 0',
      ],
      args: (path) => ['profile', path],
      problems: [
        /:4:\d+: training\.global_batch_size: /,
        /:5:\d+: training\.micro_batch_size: /,
        /:8:\d+: system\.nodes: /,
      ],
    },
    {
      reader: 'DeepSpeed config',
      name: 'ds_config.json',
      lines: [
        '{',
        '  "train_batch_size": -4,',
        '  "train_micro_batch_size_per_gpu": "four",',
        '  "zero_optimization": { "stage": 7 }',
        '}',
      ],
      args: (path) => ['profile', path, '--model', 'gpt2'],
      problems: [
        /:2:\d+: train_batch_size: /,
        /:3:\d+: train_micro_batch_size_per_gpu: /,
        /:4:\d+: zero_optimization\.stage: /,
      ],
    },
    {
      reader: 'Accelerate config',
      name: 'accelerate_config.yaml',
      lines: ['distributed_type: MULTI_GPU', 'num_machines: -2', 'num_processes: many', 'mixed_precision: fp9'],
      args: (path) => ['profile', path, '--model', 'gpt2'],
      problems: [/:2:\d+: num_machines: /, /:3:\d+: num_processes: /, /:4:\d+: mixed_precision: .*did you mean 'fp8'/],
    },
    {
      reader: 'model config',
      name: 'config.json',
      lines: [
        '{',
        '  "model_type": "gpt2",',
        '  "n_embd": -768,',
        '  "n_layer": "twelve",',
        '  "n_head": 12,',
        '  "vocab_size": 0',
        '}',
      ],
      args: (path) => ['profile', 'examples/ds_config.json', '--model', path],
      problems: [/:3:\d+: n_embd: /, /:4:\d+: n_layer: /, /:6:\d+: vocab_size: /],
    },
  ];

for (const c of CASES) {
  test(`a ${c.reader} with ${c.problems.length} problems shows all of them, each on its own line, and exits 2`, async () => {
    const path = file(c.name, c.lines);
    const run = await runCli(c.args(path));
    assert.equal(run.code, 2, run.stderr);
    const lines = run.stderr.trim().split('\n');
    assert.equal(lines.length, c.problems.length, run.stderr);
    c.problems.forEach((problem, i) => {
      assert.ok(lines[i].startsWith(`error: ${path}:`), lines[i]);
      assert.match(lines[i], problem);
    });
  });
}

test("check's --rule and --ignore name every code that is not a rule, at once", async () => {
  const run = await runCli(['check', 'examples/python', '--ignore', 'CP999,CP1', '--rule', 'cp3']);
  assert.equal(run.code, 2);
  assert.deepEqual(
    run.stderr
      .trim()
      .split('\n')
      .map((line) => line.split(':').slice(0, 2).join(':')),
    ['error: --rule CP3', 'error: --ignore CP999', 'error: --ignore CP1'],
  );
});
