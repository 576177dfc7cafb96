// The table of limits: every config format refuses a value over its limit with file:line:col, the key, the value
// and the limit; launch scripts and the assembled world size are held to it too; docs/limits.md lists the table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIMITS, limitForKey, limitProblem, type Limit } from '../../../src/config/limits';
import { ConfigError } from '../../../src/config/positioned';
import { readTrainingConfig } from '../../../src/config/training-config';
import { parseSystemFile } from '../../../src/config/system-file';
import { assembleTrainingRun } from '../../../src/config/training-run';
import { ROOT } from '../cli/run-cli';

function refusedAt(file: string, line: number, column: number, pattern: RegExp): (error: unknown) => boolean {
  return (error) => {
    if (!(error instanceof ConfigError)) return false;
    const text = error.toString();
    return text.startsWith(`${file}:${line}:${column}: `) && pattern.test(text);
  };
}

test('docs/limits.md lists every limit with its maximum and keys', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'limits.md'), 'utf8');
  for (const [name, limit] of Object.entries(LIMITS) as [string, Limit][]) {
    const row = doc.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
    assert.ok(row, `docs/limits.md has no row for ${name}`);
    assert.ok(row.includes(`| ${limit.max.toLocaleString('en-US')} ${limit.unit} |`), `${name}: the docs say ${row}`);
    for (const key of limit.keys) assert.ok(row.includes(`\`${key}\``), `${name}: key ${key} is not in the docs`);
  }
});

test('keys are matched across formats without case, - or _', () => {
  assert.equal(limitForKey('num_hidden_layers'), 'layers');
  assert.equal(limitForKey('NUM-MACHINES'), 'nodes');
  assert.equal(limitForKey('gpusPerNode'), 'gpusPerNode');
  assert.equal(limitForKey('learning_rate'), undefined);
  assert.match(limitProblem('nodes', 'nodes', 1e9) ?? '', /nodes = 1000000000 is over the limit of 16,384 nodes/);
  assert.match(limitProblem('nodes', 'nodes', Infinity) ?? '', /not finite/);
  assert.equal(limitProblem('nodes', 'nodes', 16384), undefined);
});

test('every config format refuses an over-limit value at its position', () => {
  const cases: [string, string, number, number, RegExp][] = [
    [
      'run.collective.yaml',
      'model: {preset: gpt2}\nsystem:\n  preset: dgx-h100\n  nodes: 100000\n',
      4,
      10,
      /nodes = 100000 is over the limit of 16,384 nodes/,
    ],
    [
      'ds_config.json',
      '{\n  "train_micro_batch_size_per_gpu": 1e12,\n  "gradient_accumulation_steps": 1\n}\n',
      2,
      37,
      /train_micro_batch_size_per_gpu = 1000000000000 is over the limit/,
    ],
    [
      'accelerate_config.yaml',
      'distributed_type: MULTI_GPU\nnum_machines: 2\nnum_processes: .inf\n',
      3,
      16,
      /num_processes = Infinity is not finite/,
    ],
    [
      'config.json',
      '{"model_type": "llama", "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,\n "num_hidden_layers": 9999999, "num_attention_heads": 32}\n',
      2,
      23,
      /num_hidden_layers = 9999999 is over the limit of 1,024 layers/,
    ],
  ];
  for (const [file, text, line, column, pattern] of cases) {
    assert.throws(() => readTrainingConfig(text, file), refusedAt(file, line, column, pattern), file);
  }
  assert.throws(
    () =>
      parseSystemFile(
        'gpu: H100-SXM\nnodes: 50000\ngpusPerNode: 8\nintraNode: nvswitch\nnic: {bandwidthGBps: 50}\n',
        'big.system.yaml',
      ),
    refusedAt('big.system.yaml', 2, 8, /nodes = 50000/),
  );
});

test('launch scripts and the assembled world size are held to the limits', () => {
  assert.throws(
    () => readTrainingConfig('#!/bin/bash\ntorchrun --nnodes=99999 --nproc_per_node=8 train.py\n', 'train.sh'),
    refusedAt('train.sh', 2, 19, /--nnodes = 99999 is over the limit of 16,384 nodes/),
  );
  // 16,384 nodes and 1,024 GPUs per node are each allowed; together they are 16 Mi ranks.
  const { part } = readTrainingConfig(
    'model: {preset: gpt2}\nsystem:\n  preset: dgx-h100\n  nodes: 16384\n  gpusPerNode: 1024\n',
    'wide.collective.yaml',
  );
  assert.throws(
    () => assembleTrainingRun([part]),
    (error: unknown) =>
      error instanceof ConfigError &&
      /wide\.collective\.yaml:\d+:\d+: 16384 nodes × 1024 GPUs per node = 16777216 is over the limit of 131,072 ranks/.test(
        error.toString(),
      ),
  );
});

test('the JSON schemas (editor validation) allow no more than the limits table', () => {
  const mismatches: string[] = [];
  const walk = (node: unknown, file: string): void => {
    if (Array.isArray(node)) node.forEach((n) => walk(n, file));
    if (!node || typeof node !== 'object') return;
    const properties = (node as { properties?: Record<string, { maximum?: number }> }).properties ?? {};
    for (const [key, property] of Object.entries(properties)) {
      const name = limitForKey(key);
      const max = name ? (LIMITS[name] as Limit).max : undefined;
      if (max !== undefined && property.maximum !== max)
        mismatches.push(`${file}: ${key} maximum ${property.maximum}, limit ${max}`);
    }
    for (const value of Object.values(node)) walk(value, file);
  };
  for (const file of ['schemas/system.schema.json', 'schemas/collective.schema.json'])
    walk(JSON.parse(readFileSync(join(ROOT, file), 'utf8')), file);
  assert.deepEqual(mismatches, []);
});
