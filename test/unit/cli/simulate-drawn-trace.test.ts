// `simulate --trace` writes the trace the extension's timeline draws (issue 14): every rank has spans, the launch
// is drawn, the last span ends at the predicted time, and a large system's trace stays within the engine's cap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LAUNCH_SPAN_NAME } from '../../../src/engine/index';
import { runCli } from './run-cli';

const dir = mkdtempSync(join(tmpdir(), 'cp-simulate-drawn-'));

interface ChromeSpan {
  readonly ph: string;
  readonly name: string;
  readonly ts: number;
  readonly dur: number;
  readonly args: { readonly rank: number; readonly name?: string };
}

async function simulateTrace(args: readonly string[], name: string) {
  const target = join(dir, name);
  const run = await runCli(['simulate', ...args, '--json', '--trace', target]);
  assert.equal(run.code, 0, run.stderr);
  const summary = JSON.parse(run.stdout) as { timeUs: number };
  const chrome = JSON.parse(readFileSync(target, 'utf8')) as {
    traceEvents: ChromeSpan[];
    otherData: { ranks: number; facts?: Record<string, string | number> };
  };
  const spans = chrome.traceEvents.filter((e) => e.ph === 'X');
  const labels = chrome.traceEvents
    .filter((e) => e.ph === 'M' && e.name === 'thread_name')
    .map((e) => e.args.name ?? '');
  return { summary, spans, otherData: chrome.otherData, stderr: run.stderr, labels };
}

test('a 2-node dgx-h100 trace has spans on all 16 ranks, from the launch to the predicted time', async () => {
  const { summary, spans, otherData, stderr } = await simulateTrace(
    ['--system', 'dgx-h100', '--nodes', '2', '--bytes', '25M'],
    'dgx-h100x2.json',
  );
  assert.equal(otherData.ranks, 16);
  const ranks = new Set(spans.map((s) => s.args.rank));
  for (let rank = 0; rank < 16; rank++) assert.ok(ranks.has(rank), `rank ${rank} has spans`);
  const startUs = Math.min(...spans.map((s) => s.ts));
  const endUs = Math.max(...spans.map((s) => s.ts + s.dur));
  assert.equal(startUs, 0, 'the trace starts at the launch');
  assert.ok(
    spans.some((s) => s.name === LAUNCH_SPAN_NAME),
    'the launch and base latency are drawn',
  );
  assert.ok(
    Math.abs(endUs - summary.timeUs) <= 1e-6 * summary.timeUs,
    `last span ends at ${endUs} µs, predicted ${summary.timeUs} µs`,
  );
  assert.match(String(otherData.facts?.['mirrored ranks']), /^\d+ ranks drawn from the rank they mirror/);
  assert.match(stderr, new RegExp(`trace \\(full\\): ${spans.length} spans written to`));
});

test('a 128-rank ring trace streamed in full holds every rank', async () => {
  const { spans, otherData, stderr } = await simulateTrace(
    ['--system', 'dgx-h100', '--nodes', '16', '--bytes', '1M', '--algo', 'ring', '--trace-detail', 'full'],
    'dgx-h100x16.json',
  );
  assert.equal(otherData.facts?.['ranks left out'], undefined);
  const ranks = new Set(spans.map((s) => s.args.rank));
  assert.equal(ranks.size, otherData.ranks, 'every rank has spans');
  assert.match(String(otherData.facts?.detail), /^full: every one of 128 ranks drawn/);
  assert.match(stderr, new RegExp(`trace \\(full\\): ${spans.length} spans written to`));
});

test('above 1,024 ranks the trace is summarised per node by default, its lanes saying what they stand for', async () => {
  const { summary, spans, otherData, stderr, labels } = await simulateTrace(
    ['--system', 'dgx-h100', '--nodes', '256', '--bytes', '4M', '--algo', 'ring'],
    'dgx-h100x256.json',
  );
  assert.match(String(otherData.facts?.detail), /^summary: [12] lane groups? for 256 nodes \(2048 ranks\)/);
  const ranks = new Set(spans.map((s) => s.args.rank));
  assert.ok(ranks.size <= 16, `${ranks.size} ranks drawn: a node's GPUs stand for the nodes that draw alike`);
  // Node 0 (the ring's start) may draw apart; the other 255 nodes are one group.
  assert.ok(
    labels.some((l) => / · stands for 255 nodes \(1–255\)$/.test(l)),
    labels.slice(0, 10).join('; '),
  );
  const endUs = Math.max(...spans.map((s) => s.ts + s.dur));
  assert.ok(Math.abs(endUs - summary.timeUs) <= 1e-6 * summary.timeUs, `ends at ${endUs}, predicted ${summary.timeUs}`);
  assert.match(stderr, /trace \(summary\): \d+ spans written to/);
});

test('--trace-detail takes auto, summary or full', async () => {
  const run = await runCli([
    'simulate',
    '--system',
    'dgx-h100',
    '--bytes',
    '1M',
    '--trace',
    join(dir, 'x.json'),
    '--trace-detail',
    'some',
  ]);
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /--trace-detail 'some' must be one of auto, summary, full/);
});
