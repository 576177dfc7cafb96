// The trace files `simulate --trace` writes at either detail open in the extension's reader (the timeline's input):
// the summary with lanes that say what they stand for, and the streamed full trace with every rank's lane.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LazyDrawnTrace,
  asBytes,
  asGBps,
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

test('the summary of a run recorded for it, one NIC link of node 5 degraded, opens as the full trace summarised', () => {
  const index = system.topology.links.findIndex((l) => l.kind === 'network' && l.from.startsWith('n5.'));
  const links = system.topology.links.map((l, i) => (i === index ? { ...l, GBps: asGBps(l.GBps / 4) } : l));
  const edited = { ...system, topology: { ...system.topology, links } };
  const request = { kind: 'allreduce', bytes: asBytes(4 * 1024 * 1024), algorithm: 'nvlstree', trace: true } as const;
  const full = simulateCollective(edited, request);
  const recorded = simulateCollective(edited, { ...request, traceForSummary: true });
  const text = JSON.stringify(
    traceToChromeJson(summarisedCollectiveTrace(edited, recorded, recorded.trace!, recorded.recordedSpans)),
  );
  assert.equal(text, JSON.stringify(traceToChromeJson(summarisedCollectiveTrace(edited, full, full.trace!))));
  const { trace } = readTraceFile(text, 'summary.json');
  assert.ok(
    trace.lanes.some((l) => /^node 5 · rank 40 · .*node 5 on its own$/.test(l.label)),
    trace.lanes.map((l) => l.label).join('\n'),
  );
});
