// The trace files `simulate --trace` writes at either detail open in the extension's reader (the timeline's input):
// the summary with lanes that say what they stand for, and the streamed full trace with every rank's lane.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LazyDrawnTrace,
  asBytes,
  chromeTraceChunks,
  presetSystem,
  resolveSystem,
  simulateCollective,
  summarisedCollectiveTrace,
  traceToChromeJson,
} from '../../../src/engine/index';
import { readTraceFile } from '../../../src/extension/glue/trace-file';

const system = resolveSystem(presetSystem('dgx-h100', { nodes: 16 })!);
const result = simulateCollective(system, {
  kind: 'allreduce',
  bytes: asBytes(4 * 1024 * 1024),
  algorithm: 'nvlstree',
  trace: true,
});

test('the per-node summary opens with lane labels that say which nodes each lane stands for', () => {
  const summary = summarisedCollectiveTrace(system, result, result.trace!);
  const { trace } = readTraceFile(JSON.stringify(traceToChromeJson(summary)), 'summary.json');
  assert.equal(trace.spans.length, summary.spans.length);
  assert.ok(
    trace.lanes.some((l) => /^node \d+ · rank \d+ · stands for \d+ nodes \(/.test(l.label)),
    trace.lanes.map((l) => l.label).join('\n'),
  );
});

test('the streamed full trace, its pieces joined, opens with a lane for every rank', () => {
  const lazy = new LazyDrawnTrace(system, result, result.trace!);
  const text = [...chromeTraceChunks(lazy.items(), () => lazy.metadata())].join('');
  const { trace } = readTraceFile(text, 'full.json');
  for (let rank = 0; rank < system.ranks; rank++)
    assert.ok(
      trace.lanes.some((l) => l.label === `node ${Math.floor(rank / 8)} · rank ${rank}`),
      `rank ${rank} has its lane`,
    );
});
