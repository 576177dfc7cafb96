// The `run` command end to end on gloo ranks, its cluster launch lines, and reading a saved run back with `import`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliIo } from '../../../src/cli/command';
import { runCommand } from '../../../src/cli/commands/run';
import { srunCommand, torchrunCommand, shellQuote } from '../../../src/native/launch-commands';
import { runNative } from '../../../src/native/runner';
import { importMeasurementText } from '../../../src/native/import/index';
import { PYTHON, torchMissing } from './fixtures/torch';

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = { stdout: (t) => (out += t), stderr: (t) => (err += t) };
  const code = await runCommand.run(args, io);
  return { code, out, err };
}

test('torchrun and srun lines for a cluster', () => {
  const launch = {
    nodes: 4,
    gpusPerNode: 8,
    rendezvous: 'node0:29500',
    sizesBytes: [1 << 20, 1 << 24],
    output: 'run.jsonl',
  };
  assert.equal(
    torchrunCommand(launch),
    'python3 -m torch.distributed.run --nnodes=4 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=node0:29500 --rdzv_id=collective-profiler collective_harness.py --backend nccl --sizes 1048576,16777216 > run.jsonl',
  );
  const srun = srunCommand(launch);
  assert.match(srun, /^srun --nodes=4 --ntasks-per-node=8 --gpus-per-node=8 bash -c '/);
  assert.match(
    srun,
    /MASTER_ADDR=node0 MASTER_PORT=29500 RANK=\$SLURM_PROCID WORLD_SIZE=\$SLURM_NTASKS LOCAL_RANK=\$SLURM_LOCALID exec python3 collective_harness.py/,
  );
  assert.equal(shellQuote("it's"), `'it'\\''s'`);
  assert.equal(shellQuote('$MASTER_ADDR:29500'), '"$MASTER_ADDR:29500"');
});

test('run --print-launch needs no Python', async () => {
  const { code, out } = await cli([
    '--engine',
    'native',
    '--print-launch',
    '--nodes',
    '2',
    '--gpus-per-node',
    '4',
    '--rendezvous',
    'head:29400',
    '--sizes',
    '1M',
  ]);
  assert.equal(code, 0);
  assert.match(out, /--nnodes=2 --nproc_per_node=4 --rdzv_backend=c10d --rdzv_endpoint=head:29400/);
  assert.match(out, /srun --nodes=2 --ntasks-per-node=4/);
});

test('run --config adds the gradient bucket size of the training config', async () => {
  const config = join(import.meta.dirname, '..', '..', '..', 'examples', 'llama2-7b-ddp.collective.yaml');
  const { code, out } = await cli(['--engine', 'native', '--print-launch', '--config', config, '--sizes', '1M']);
  assert.equal(code, 0);
  assert.match(out, /--sizes 1048576 --buckets 26214400/, 'bucket_cap_mb: 25 is 25 MiB');
  assert.match(out, /--rdzv_endpoint=\$MASTER_ADDR:29500"/);
});

test('run refuses another engine and bad sizes', async () => {
  await assert.rejects(cli(['--engine', 'sim']), /run drives the native engine only/);
  await assert.rejects(cli(['--engine', 'native', '--sizes', '1M,lots', '--print-launch']), /'lots' is not a size/);
});

test('run --engine native on 2 gloo ranks prints JSON and writes a trace', { skip: torchMissing() }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-run-'));
  try {
    const trace = join(dir, 'trace.json');
    const { code, out, err } = await cli([
      '--engine',
      'native',
      '--nproc',
      '2',
      '--sizes',
      '64K',
      '--iters',
      '1',
      '--python',
      PYTHON,
      '--json',
      '--trace',
      trace,
      '--timeout',
      '120',
    ]);
    assert.equal(code, 0, err);
    const result = JSON.parse(out) as {
      kind: string;
      ranks: number;
      rows: { bytes: number; timeUs: number }[];
      results: { kind: string }[];
    };
    assert.equal(result.kind, 'native');
    assert.equal(result.ranks, 2);
    assert.equal(result.rows[0].bytes, 65536);
    assert.ok(result.rows[0].timeUs > 0);
    assert.deepEqual([...new Set(result.results.map((r) => r.kind))].sort(), [
      'fused',
      'reduce_scatter+all_gather',
      'ring',
      'tree',
    ]);
    assert.ok(existsSync(trace));
    const chrome = JSON.parse(readFileSync(trace, 'utf8')) as { traceEvents: unknown[] };
    assert.ok(chrome.traceEvents.length > 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a run saved as JSON lines (a cluster run) imports back with its trace', { skip: torchMissing() }, async () => {
  const run = await runNative({
    nproc: 2,
    sizesBytes: [4096],
    python: PYTHON,
    iters: 2,
    algorithms: ['ring'],
    timeoutMs: 120_000,
  });
  const saved = [run.env, ...run.results, ...run.spans, { type: 'done' }].map((l) => JSON.stringify(l)).join('\n');
  const imported = importMeasurementText(saved, { fileName: 'collective-run.jsonl' });
  assert.equal(imported.kind, 'native');
  assert.equal(imported.measurements[0].meta.method, 'fused');
  assert.equal(imported.measurements[0].rows[0].bytes, 4096);
  assert.equal(imported.trace?.spans.length, run.spans.length);
  assert.deepEqual([...new Set(imported.trace!.spans.map((s) => s.phase))].sort(), ['broadcast', 'exchange', 'reduce']);
});
