// Bad training configs through `profile`: each is one positioned `file:line:col: message` error and exit code 2.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './run-cli';

const DIR = mkdtempSync(join(tmpdir(), 'cp-profile-bad-'));

function file(name: string, text: string): string {
  const path = join(DIR, name);
  writeFileSync(path, text);
  return path;
}

const BAD: readonly [string, () => string[], RegExp][] = [
  [
    'unknown key with a suggestion',
    () => [file('typo.collective.yaml', 'model:\n  preset: gpt2\ntraining:\n  bucket_cap_bm: 25\n')],
    /typo\.collective\.yaml:4:3: training: unknown key 'bucket_cap_bm' \(did you mean 'bucket_cap_mb'\?\)/,
  ],
  [
    'wrong type',
    () => [file('type.collective.yaml', 'training:\n  gradient_accumulation_steps: many\n')],
    /type\.collective\.yaml:2:32: training\.gradient_accumulation_steps: must be an integer/,
  ],
  [
    'negative size',
    () => [
      file(
        'ds_config.json',
        '{\n  "train_micro_batch_size_per_gpu": 2,\n  "zero_optimization": {\n    "stage": 1,\n    "reduce_bucket_size": -500000000\n  }\n}\n',
      ),
    ],
    /ds_config\.json:5:27: zero_optimization\.reduce_bucket_size: must be at least 1/,
  ],
  [
    'config.json with no known architecture',
    () => [
      file(
        'config.json',
        '{\n  "architectures": ["RWForCausalLM"],\n  "model_type": "RefinedWeb",\n  "hidden_size": 4544\n}\n',
      ),
    ],
    /config\.json:3:17: unknown architecture/,
  ],
  [
    '--model config.json with no known architecture',
    () => [
      'examples/ds_config.json',
      '--model',
      file('model.json', '{"architectures": ["T5ForConditionalGeneration"], "d_model": 512}'),
    ],
    /model\.json:1:19: unknown architecture: architectures T5ForConditionalGeneration/,
  ],
  [
    'model file named by a collective file but missing',
    () => [file('missing.collective.yaml', 'model:\n  config: nowhere/config.json\n')],
    /missing\.collective\.yaml:2:11: cannot read model config/,
  ],
  [
    'launcher with a non-numeric count',
    () => [file('run.sh', '#!/bin/bash\ntorchrun --nnodes=two train.py\n')],
    /run\.sh:2:19: --nnodes: expected a positive whole number/,
  ],
  ['unknown what-if key', () => ['examples/ds_config.json', '--what-if', 'buckt=5'], /unknown what-if key 'buckt'/],
];

for (const [what, args, message] of BAD) {
  test(`profile exits 2 with a positioned error: ${what}`, async () => {
    const result = await runCli(['profile', ...args()]);
    assert.equal(result.code, 2, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stderr, message);
    assert.equal(result.stderr.trim().split('\n').length, 1, 'one line');
  });
}
