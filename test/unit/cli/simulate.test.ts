// `simulate`: the --json shape, the text report, and --trace writing Chrome Trace Event JSON atomically.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allReduceBusbwGBps, algbwGBps, asBytes } from '../../../src/engine/index';
import { runCli } from './run-cli';

const dir = mkdtempSync(join(tmpdir(), 'cp-simulate-'));

test('simulate --json prints exactly the documented shape, with consistent numbers', async () => {
  const run = await runCli(['simulate', '--system', 'dgx-h100', '--bytes', '256MiB', '--json']);
  assert.equal(run.code, 0, run.stderr);
  const out = JSON.parse(run.stdout);
  assert.deepEqual(Object.keys(out).sort(), ['algbwGBps', 'algorithm', 'busbwGBps', 'phasesUs', 'protocol', 'timeUs']);
  assert.deepEqual(Object.keys(out.phasesUs).sort(), ['broadcast', 'exchange', 'reduce']);
  const bytes = asBytes(256 * 2 ** 20);
  assert.ok(out.timeUs > 0);
  assert.ok(Math.abs(out.algbwGBps - algbwGBps(bytes, out.timeUs)) < 1e-6 * out.algbwGBps);
  assert.ok(Math.abs(out.busbwGBps - allReduceBusbwGBps(bytes, out.timeUs, 8)) < 1e-6 * out.busbwGBps);
  for (const phase of Object.values(out.phasesUs) as number[])
    assert.ok(phase >= 0 && phase <= out.timeUs * 1.000001, `phase ${phase} within ${out.timeUs}`);
  assert.ok(['ring', 'tree', 'nvls', 'nvlstree', 'hierarchical', 'direct'].includes(out.algorithm));
  assert.ok(['LL', 'LL128', 'Simple'].includes(out.protocol));
});

test('simulate honours --algo, --proto, --dtype, --op and scaling flags', async () => {
  const ring = JSON.parse(
    (
      await runCli([
        'simulate',
        '--system',
        'dgx-h100',
        '--bytes',
        '64M',
        '--algo',
        'ring',
        '--proto',
        'simple',
        '--json',
      ])
    ).stdout,
  );
  assert.equal(ring.algorithm, 'ring');
  assert.equal(ring.protocol, 'Simple');
  const fp16 = JSON.parse(
    (
      await runCli([
        'simulate',
        '--system',
        'dgx-h100',
        '--bytes',
        '64M',
        '--algo',
        'ring',
        '--proto',
        'Simple',
        '--dtype',
        'fp16',
        '--op',
        'avg',
        '--json',
      ])
    ).stdout,
  );
  assert.equal(fp16.algorithm, 'ring');
  const one = JSON.parse((await runCli(['simulate', '--system', 'dgx-h100', '--bytes', '1G', '--json'])).stdout);
  const four = JSON.parse(
    (await runCli(['simulate', '--system', 'dgx-h100', '--nodes', '4', '--bytes', '1G', '--json'])).stdout,
  );
  assert.ok(four.timeUs > one.timeUs, 'crossing the network to 4 nodes takes longer than NVSwitch inside one');
  const half = JSON.parse(
    (
      await runCli([
        'simulate',
        '--system',
        'dgx-h100',
        '--gpus-per-node',
        '4',
        '--bytes',
        '1G',
        '--algo',
        'ring',
        '--json',
      ])
    ).stdout,
  );
  assert.ok(half.timeUs > 0);
});

test('simulate prints a readable report with the algorithm and per-phase breakdown', async () => {
  const run = await runCli(['simulate', '--system', 'examples/systems/dgx-h100-2node.yaml', '--bytes', '8MiB']);
  assert.equal(run.code, 0, run.stderr);
  for (const label of ['system', 'algorithm', 'time', 'algbw', 'busbw', 'phases', 'exchange', 'reduce', 'broadcast'])
    assert.match(run.stdout, new RegExp(label));
  assert.match(run.stdout, /16 ranks/);
});

test('--trace refuses to replace a file without --force, as every output flag does', async () => {
  const target = join(dir, 'kept.json');
  writeFileSync(target, 'previous contents');
  const run = await runCli(['simulate', '--system', 'dgx-h100', '--bytes', '1M', '--trace', target]);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /exists; pass --force to overwrite it/);
  assert.equal(readFileSync(target, 'utf8'), 'previous contents');
});

test('--trace writes Chrome Trace Event JSON with complete (ph X) spans, atomically', async () => {
  const target = join(dir, 'trace.json');
  writeFileSync(target, 'previous contents');
  const run = await runCli([
    'simulate',
    '--system',
    'dgx-h100',
    '--bytes',
    '16MiB',
    '--algo',
    'ring',
    '--json',
    '--trace',
    target,
    '--force',
  ]);
  assert.equal(run.code, 0, run.stderr);
  JSON.parse(run.stdout); // stdout stays pure JSON; the note about the trace goes to stderr.
  assert.match(run.stderr, /spans written to/);
  const trace = JSON.parse(readFileSync(target, 'utf8'));
  assert.ok(Array.isArray(trace.traceEvents), 'traceEvents array');
  const spans = trace.traceEvents.filter((e: { ph: string }) => e.ph === 'X');
  assert.ok(spans.length > 0, 'has complete events');
  for (const span of spans.slice(0, 200)) {
    assert.equal(typeof span.ts, 'number');
    assert.ok(span.dur >= 0);
    assert.ok(span.pid !== undefined && span.tid !== undefined);
  }
  const phases = new Set(
    spans.map((s: { cat?: string; name: string; args?: { phase?: string } }) => s.args?.phase ?? s.cat ?? s.name),
  );
  assert.ok(
    [...phases].some((p) => /exchange|reduce|broadcast/.test(String(p))),
    `phases named: ${[...phases].slice(0, 5).join(', ')}`,
  );
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.endsWith('.tmp')),
    [],
    'no temporary file left behind',
  );
});
