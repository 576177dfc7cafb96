// `simulate --trace` writes the trace the extension's timeline draws (issue 14): every rank has spans, the launch
// is drawn, the last span ends at the predicted time, and a large system's trace stays within the engine's cap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LAUNCH_SPAN_NAME, MAX_TRACE_SPANS } from '../../../src/engine/index';
import { runCli } from './run-cli';

const dir = mkdtempSync(join(tmpdir(), 'cp-simulate-drawn-'));

interface ChromeSpan {
  readonly ph: string;
  readonly name: string;
  readonly ts: number;
  readonly dur: number;
  readonly args: { readonly rank: number };
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
  return { summary, spans, otherData: chrome.otherData, stderr: run.stderr };
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
  assert.match(stderr, new RegExp(`trace: ${spans.length} spans written to`));
});

test('a 512-rank ring trace stays within the span cap and says how many ranks it left out', async () => {
  const { spans, otherData } = await simulateTrace(
    ['--system', 'dgx-h100', '--nodes', '64', '--bytes', '64M', '--algo', 'ring'],
    'dgx-h100x64.json',
  );
  assert.ok(spans.length <= MAX_TRACE_SPANS, `${spans.length} spans`);
  const leftOut = Number(/^(\d+) ranks left empty/.exec(String(otherData.facts?.['ranks left out']))?.[1]);
  const mirrored = Number(/^(\d+) ranks drawn/.exec(String(otherData.facts?.['mirrored ranks']))?.[1]);
  assert.ok(leftOut > 0, 'the cap is reached, so some ranks are left out');
  assert.ok(mirrored > 0, 'ranks are mirrored up to the cap');
  const ranks = new Set(spans.map((s) => s.args.rank));
  assert.equal(ranks.size, otherData.ranks - leftOut, 'every rank not left out has spans');
});
