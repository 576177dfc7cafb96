// Traces: every step becomes spans with rank, phase, step, channel, chunk, bytes, links and times, and they
// export to Chrome Trace Event JSON.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { presetSystem, resolveSystem, simulateCollective, traceToChromeJson, asBytes } from '../../../src/engine/index';

test('ring AllReduce spans cover exchange, reduce and broadcast with valid link ids', () => {
  const system = resolveSystem(presetSystem('dgx-a100')!);
  const result = simulateCollective(system, {
    bytes: asBytes(32 << 20),
    algorithm: 'ring',
    protocol: 'Simple',
    trace: true,
  });
  const trace = result.trace!;
  assert.equal(result.spanCount, trace.spans.length);
  const phases = new Set(trace.spans.map((s) => s.phase));
  assert.deepEqual([...phases].sort(), ['broadcast', 'exchange', 'reduce']);
  const linkIds = new Set(system.topology.links.map((l) => l.id));
  for (const span of trace.spans) {
    assert.ok(span.endUs >= span.startUs && span.startUs >= 0 && span.endUs <= result.timeUs + 1e-6);
    assert.ok(span.rank >= 0 && span.rank < 8);
    for (const id of span.links) assert.ok(linkIds.has(id), id);
    if (span.phase !== 'reduce') assert.ok(span.links.length > 0);
  }
  const steps = new Set(trace.spans.filter((s) => s.phase !== 'reduce').map((s) => s.step));
  assert.equal(steps.size, 14);
  // Reduce-scatter (exchange) finishes before all-gather (broadcast) starts.
  const lastExchange = Math.max(...trace.spans.filter((s) => s.phase === 'exchange').map((s) => s.endUs));
  const firstBroadcast = Math.min(...trace.spans.filter((s) => s.phase === 'broadcast').map((s) => s.startUs));
  assert.ok(lastExchange <= firstBroadcast);
  // The device phases account for the time; the host's launches, overlapped, add a little on top.
  const phaseSum = result.phases.exchange + result.phases.reduce + result.phases.broadcast;
  assert.ok(phaseSum <= result.timeUs && phaseSum > 0.999 * result.timeUs, `${phaseSum} vs ${result.timeUs}`);
});

test('without trace no spans are produced; traces of huge systems are capped', () => {
  assert.equal(simulateCollective(presetSystem('dgx-h100')!, { bytes: asBytes(1 << 20) }).spanCount, 0);
  const big = simulateCollective(presetSystem('dgx-h100', { nodes: 128 })!, {
    bytes: asBytes(1 << 30),
    algorithm: 'hierarchical',
    trace: true,
  });
  assert.ok(big.spanCount > 0 && big.spanCount <= 200_000);
});

test('Chrome trace JSON has complete events in µs with rank and link details', () => {
  const result = simulateCollective(presetSystem('dgx-h100')!, { bytes: asBytes(4 << 20), trace: true });
  const json = traceToChromeJson(result.trace!) as {
    traceEvents: { ph: string; ts?: number; dur?: number; args?: Record<string, unknown> }[];
  };
  const complete = json.traceEvents.filter((e) => e.ph === 'X');
  assert.equal(complete.length, result.spanCount);
  assert.ok(complete.every((e) => typeof e.ts === 'number' && typeof e.dur === 'number' && e.dur >= 0));
  assert.ok(json.traceEvents.some((e) => e.ph === 'M'));
  assert.doesNotThrow(() => JSON.parse(JSON.stringify(json)));
});
