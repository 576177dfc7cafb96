// A selected range's statistics and aggregate are counted in slices (webview/shared/slices.ts), so a range over a
// million spans never holds up input. Wherever the clock falls due the result is the one counted in one go, and
// that is what the plain loops give: each span's two edges as objects, sorted with a comparator, and each stretch
// between edges shared out among the phases active in it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PHASES, asBytes, asMicros, type Lane, type Phase, type Span } from '../../src/engine/index';
import { runInSlices } from '../../webview/shared/slices';
import { rangeAggregate, rangeAggregateSteps } from '../../webview/timeline/aggregate';
import { TimelineModel } from '../../webview/timeline/model';

const COLLECTIVE = PHASES.indexOf('collective');
const PARTS = new Set(['exchange', 'reduce', 'broadcast'].map((p) => PHASES.indexOf(p as Phase)));

/** The range statistics as plain loops over the model's rows: phase time per rank, idle time and clipped bytes. */
function referenceStats(model: TimelineModel, startUs: number, endUs: number) {
  const byRank = new Map<number, number[]>();
  model.rows.forEach((lane, r) => {
    if ((lane.kind !== 'rank' && lane.kind !== 'stream') || lane.rank === undefined) return;
    byRank.set(lane.rank, [...(byRank.get(lane.rank) ?? []), r]);
  });
  const groups = byRank.size > 0 ? [...byRank.values()] : model.rows.map((_, r) => [r]);
  const phaseUs = new Float64Array(PHASES.length);
  let idleUs = 0;
  let transferredBytes = 0;
  let collectiveBytes = 0;
  for (const group of groups) {
    const edges: { timeUs: number; phase: number; delta: number; track: number }[] = [];
    group.forEach((r, track) => {
      for (let i = model.firstVisible(r, startUs); i < model.rowOffsets[r + 1] && model.start[i] < endUs; i++) {
        const from = Math.max(startUs, model.start[i]);
        const to = Math.min(endUs, model.end[i]);
        if (to <= from) continue;
        edges.push({ timeUs: from, phase: model.phase[i], delta: 1, track });
        edges.push({ timeUs: to, phase: model.phase[i], delta: -1, track });
        const bytes = model.bytesAt(i);
        const spanUs = model.end[i] - model.start[i];
        if (bytes > 0 && spanUs > 0) {
          const clipped = (bytes * (to - from)) / spanUs;
          if (model.phase[i] === COLLECTIVE) collectiveBytes += clipped;
          else transferredBytes += clipped;
        }
      }
    });
    edges.sort((a, b) => a.timeUs - b.timeUs);
    const tracks = group.map((r) => {
      const row = model.rows[r] as Lane & { laneId?: number; depth?: number };
      return { lane: row.laneId ?? row.id, depth: row.depth ?? 0 };
    });
    const active = tracks.map(() => new Int32Array(PHASES.length));
    const busy = new Int32Array(tracks.length);
    let at = startUs;
    let k = 0;
    // Idle time is summed per rank, then over the ranks.
    let rankIdleUs = 0;
    while (at < endUs) {
      const next = k < edges.length ? edges[k].timeUs : endUs;
      if (next > at) {
        const innermost = new Map<number, number>();
        tracks.forEach((track, t) => {
          if (busy[t] > 0 && track.depth >= (innermost.get(track.lane) ?? -1)) innermost.set(track.lane, track.depth);
        });
        let holders = PHASES.map((_, p) => p).filter((p) =>
          tracks.some((track, t) => busy[t] > 0 && innermost.get(track.lane) === track.depth && active[t][p] > 0),
        );
        if (holders.some((p) => PARTS.has(p))) holders = holders.filter((p) => p !== COLLECTIVE);
        if (holders.length === 0) rankIdleUs += next - at;
        else for (const p of holders) phaseUs[p] += (next - at) / holders.length;
        at = next;
      }
      for (; k < edges.length && edges[k].timeUs <= at; k++) {
        active[edges[k].track][edges[k].phase] += edges[k].delta;
        busy[edges[k].track] += edges[k].delta;
      }
    }
    idleUs += rankIdleUs;
  }
  return { phaseUs, idleUs, transferredBytes, collectiveBytes };
}

/** A small seeded generator, so a failure names inputs that can be reproduced. */
function randomClock(seed: number): () => number {
  let state = seed >>> 0;
  let nowMs = 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return (nowMs += state / 2 ** 32 < 0.1 ? 5 : (state / 2 ** 32) * 0.3);
  };
}

const immediately = (next: () => void): void => void setImmediate(next);

// Ranks 0-2 (two on node 0), a stream of rank 0 and a link row; spans nest where one holds another.
const LANES: Lane[] = [
  ...[0, 1, 2].map((r) => ({ id: r, kind: 'rank' as const, label: `rank ${r}`, rank: r, node: r >> 1 })),
  { id: 3, kind: 'stream', label: 'rank 0 · stream 7', rank: 0, node: 0 },
  { id: 4, kind: 'link', label: 'gpu0->sw0' },
];
const PHASE_POOL = ['exchange', 'collective', 'reduce', 'compute', 'broadcast'].filter((p): p is Phase =>
  (PHASES as readonly string[]).includes(p),
);

const arbitraryTrace = fc
  .array(
    fc.record({
      lane: fc.integer({ min: 0, max: 4 }),
      phase: fc.constantFrom(...PHASE_POOL),
      // Whole microseconds make many shared edges (ties) and nested spans; fractions make the rest.
      startUs: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.double({ min: 0, max: 40, noNaN: true })),
      durationUs: fc.oneof(
        fc.constant(0),
        fc.integer({ min: 1, max: 30 }),
        fc.double({ min: 0, max: 30, noNaN: true }),
      ),
      bytes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1 << 20 })),
      name: fc.constantFrom('step', 'forward', 'backward', 'allreduce', undefined),
    }),
    { maxLength: 200 },
  )
  .map((drawn) => {
    const spans: Span[] = drawn.map((s) => ({
      lane: s.lane,
      rank: LANES[s.lane].rank ?? -1,
      phase: s.phase,
      name: s.name,
      step: -1,
      channel: 0,
      chunk: 0,
      bytes: asBytes(s.bytes),
      links: s.bytes > 0 && s.phase !== 'collective' ? ['gpu0->sw0'] : [],
      startUs: asMicros(s.startUs),
      endUs: asMicros(s.startUs + s.durationUs),
    }));
    return TimelineModel.fromTrace({
      metadata: { origin: 'simulated', title: 'random', ranks: 3 },
      lanes: LANES,
      spans,
    });
  });

const arbitraryRange = fc
  .tuple(fc.double({ min: -5, max: 80, noNaN: true }), fc.double({ min: 0, max: 80, noNaN: true }))
  .map(([startUs, lengthUs]) => ({ startUs, endUs: startUs + lengthUs }));

test('property: range statistics sliced anywhere = counted in one go = the plain loops', async () => {
  await fc.assert(
    fc.asyncProperty(arbitraryTrace, arbitraryRange, fc.nat(), async (model, { startUs, endUs }, clockSeed) => {
      const whole = model.rangeStats(startUs, endUs);
      const reference = referenceStats(model, startUs, endUs);
      assert.deepEqual([...whole.phaseUs], [...reference.phaseUs]);
      assert.equal(whole.idleUs, reference.idleUs);
      assert.equal(whole.transferredBytes, reference.transferredBytes);
      assert.equal(whole.collectiveBytes, reference.collectiveBytes);
      const sliced = await runInSlices((clock) => model.rangeStatsSteps(startUs, endUs, clock), {
        budgetMs: 1,
        now: randomClock(clockSeed),
        schedule: immediately,
      });
      assert.ok(sliced);
      assert.deepEqual(sliced.value, whole);
    }),
    { numRuns: 200 },
  );
});

test('property: the range aggregate sliced anywhere = counted in one go', async () => {
  await fc.assert(
    fc.asyncProperty(arbitraryTrace, arbitraryRange, fc.nat(), async (model, { startUs, endUs }, clockSeed) => {
      const sliced = await runInSlices((clock) => rangeAggregateSteps(model, startUs, endUs, clock), {
        budgetMs: 1,
        now: randomClock(clockSeed),
        schedule: immediately,
      });
      assert.ok(sliced);
      assert.deepEqual(sliced.value, rangeAggregate(model, startUs, endUs));
    }),
    { numRuns: 150 },
  );
});

test('a range over many spans is counted in many slices, each looking at the clock', async () => {
  const count = 20_000;
  const lanes: Lane[] = [0, 1].map((r) => ({ id: r, kind: 'rank' as const, label: `rank ${r}`, rank: r, node: 0 }));
  const spans: Span[] = Array.from({ length: count }, (_, i) => ({
    lane: i % 2,
    rank: i % 2,
    phase: i % 3 === 0 ? 'reduce' : 'exchange',
    step: -1,
    channel: 0,
    chunk: 0,
    bytes: asBytes(4096),
    links: ['gpu0->sw0'],
    // Four spans start at each whole microsecond on each rank: many edges share an instant.
    startUs: asMicros(Math.floor(i / 8)),
    endUs: asMicros(Math.floor(i / 8) + (i % 4) * 0.5),
  }));
  const model = TimelineModel.fromTrace({ metadata: { origin: 'simulated', title: 'many', ranks: 2 }, lanes, spans });
  // A clock that moves 1 ms each read: every look at it ends the slice.
  let nowMs = 0;
  const sliced = await runInSlices((clock) => model.rangeStatsSteps(model.startUs, model.endUs, clock), {
    budgetMs: 1,
    now: () => nowMs++,
    schedule: immediately,
  });
  assert.ok(sliced);
  // Two ranks of 10,000 spans: their collection, their 20,000 edges' sort and walk each take many slices.
  assert.ok(sliced.report.slices > 100, `${sliced.report.slices} slices`);
  assert.deepEqual(sliced.value, model.rangeStats(model.startUs, model.endUs));
  // The walk pauses every so many edges, between edges of one instant too: what it counts is the plain loops' count.
  const reference = referenceStats(model, model.startUs, model.endUs);
  assert.deepEqual([...sliced.value.phaseUs], [...reference.phaseUs]);
  assert.equal(sliced.value.idleUs, reference.idleUs);
  assert.equal(sliced.value.transferredBytes, reference.transferredBytes);
});
