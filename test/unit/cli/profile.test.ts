// `profile` end to end on the example configs: DeepSpeed, Accelerate plus a model config.json, and a
// *.collective.yaml each print the summary and write a trace that parses as Chrome Trace Event JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './run-cli';

const OUT = mkdtempSync(join(tmpdir(), 'cp-profile-'));

interface ChromeEvent {
  readonly ph: string;
  readonly ts?: number;
  readonly dur?: number;
  readonly pid?: number;
  readonly tid?: number;
  readonly name?: string;
}

function readChromeTrace(path: string): ChromeEvent[] {
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as { traceEvents?: ChromeEvent[] };
  assert.ok(Array.isArray(parsed.traceEvents), 'a Chrome trace has a traceEvents array');
  const complete = parsed.traceEvents.filter((e) => e.ph === 'X');
  assert.ok(complete.length > 0, 'the trace has complete events');
  for (const e of complete)
    assert.ok(
      Number.isFinite(e.ts) && (e.dur ?? 0) >= 0 && e.pid !== undefined && e.tid !== undefined,
      JSON.stringify(e),
    );
  return parsed.traceEvents;
}

const CASES: readonly [string, readonly string[], RegExp][] = [
  ['DeepSpeed config', ['examples/ds_config.json', '--model', 'examples/models/gpt2/config.json'], /ZeRO-2/],
  [
    'Accelerate config plus config.json',
    ['examples/accelerate_config.yaml', '--model', 'examples/models/bert-base-uncased/config.json'],
    /gradients reduced in fp32/,
  ],
  ['*.collective.yaml', ['examples/llama2-7b-ddp.collective.yaml'], /25 MiB buckets/],
];

for (const [what, args, detail] of CASES) {
  test(`profile ${what}: summary and a Chrome trace`, async () => {
    const trace = join(OUT, `${what.replace(/\W+/g, '-')}.json`);
    const result = await runCli(['profile', ...args, '--trace', trace]);
    assert.equal(result.code, 0, result.stderr);
    for (const row of [
      'step time',
      'compute',
      'exposed communication',
      'overlap',
      'scaling efficiency',
      'gradient-scaling check',
    ])
      assert.match(result.stdout, new RegExp(row));
    assert.match(result.stdout, detail);
    assert.match(result.stdout, /trace: \d+ spans/);
    const events = readChromeTrace(trace);
    const names = events.map((e) => e.name ?? '');
    assert.ok(
      names.some((n) => /^(allreduce|reducescatter) /.test(n)),
      'one span per bucket collective',
    );
    assert.ok(
      names.some((n) => n.startsWith('exchange')),
      'collective phases',
    );
    assert.ok(
      names.some((n) => n.startsWith('backward')),
      'compute spans',
    );
  });
}

test('profile --json has the documented shape, and --sweep adds the curve, the best value and a recommendation', async () => {
  const result = await runCli([
    'profile',
    'examples/ds_config.json',
    '--model',
    'gpt2',
    '--json',
    '--sweep',
    'bucket_cap_mb=1..64',
    '--what-if',
    'wrapper=ddp',
  ]);
  assert.equal(result.code, 0, result.stderr);
  const json = JSON.parse(result.stdout);
  for (const key of [
    'parameters',
    'gradientBytes',
    'worldSize',
    'stepTimeMs',
    'computeMs',
    'exposedCommMs',
    'overlapPct',
    'buckets',
    'assumed',
    'scalingCheck',
    'sweep',
    'best',
  ])
    assert.ok(key in json, key);
  assert.equal(json.parameters, 124_439_808);
  assert.equal(json.worldSize, 16);
  assert.equal(json.wrapper, 'ddp');
  assert.ok(json.buckets.length > 0);
  for (const b of json.buckets)
    for (const key of ['bytes', 'startMs', 'endMs', 'algorithm', 'protocol']) assert.ok(key in b, key);
  assert.ok(Math.abs(json.scalingCheck.lrMultiplier - 1) < 0.01);
  assert.deepEqual(
    json.sweep.map((p: { value: number }) => p.value),
    [1, 2, 4, 8, 16, 32, 64],
  );
  assert.ok(
    json.sweep.every(
      (p: Record<string, unknown>) => typeof p.stepTimeMs === 'number' && typeof p.exposedCommMs === 'number',
    ),
  );
  assert.ok(json.sweep.some((p: { value: number }) => p.value === json.best));
  assert.match(json.recommendation, /bucket_cap_mb|barely matters/);
});

test('a bare sum on 16 ranks shows up in the scaling check as a 16× learning rate', async () => {
  const result = await runCli([
    'profile',
    'examples/train_torchrun.sh',
    '--model',
    'gpt2',
    '--what-if',
    'reduce_op=sum',
    '--json',
  ]);
  assert.equal(result.code, 0, result.stderr);
  const check = JSON.parse(result.stdout).scalingCheck;
  assert.ok(Math.abs(check.lrMultiplier - 16) / 16 < 0.01, String(check.lrMultiplier));
  assert.equal(check.matchesReference, false);
});
