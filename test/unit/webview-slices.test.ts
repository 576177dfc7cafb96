// Long panel computations run in slices (webview/shared/slices.ts) so that input never waits for long: the counter
// tracks of a large trace are computed after the first paint in slices of a few milliseconds, each loop looking at
// the slice's clock and yielding when it is due. Sliced or not, wherever the clock falls due, the result is the
// same; the slices keep to their budget; a computation for a trace that is no longer shown stops.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { PHASES, asBytes, asMicros, type Lane, type Phase, type Span } from '../../src/engine/index';
import { CLOCK_CHECK_ELEMENTS, finish, runInSlices, type Steps } from '../../webview/shared/slices';
import { rateSeries, traceCounterSteps, traceCounters, type CounterSeries } from '../../webview/timeline/counters';
import { TimelineModel } from '../../webview/timeline/model';
import { sortIndicesByTime, sortIndicesByTimeSteps } from '../../webview/timeline/sort-by-time';

/** A small seeded generator, so a failure names inputs that can be reproduced. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Runs the next slice when the test says so; the real page queues it behind input and frames. */
const immediately = (next: () => void): void => void setImmediate(next);

/** A computation of `count` steps, each advancing a fake clock by `stepMs`. */
function* clockSteps(clock: { nowMs: number }, count: number, stepMs: number): Steps<number> {
  for (let i = 0; i < count; i++) {
    clock.nowMs += stepMs;
    yield;
  }
  return count;
}

test('slices keep to their budget: 100 steps of 1 ms in 8 ms slices are 13 slices, none over 8 ms', async () => {
  const clock = { nowMs: 0 };
  const done = await runInSlices(() => clockSteps(clock, 100, 1), {
    budgetMs: 8,
    now: () => clock.nowMs,
    schedule: immediately,
  });
  assert.ok(done);
  assert.equal(done.value, 100);
  assert.equal(done.report.slices, 13);
  assert.equal(done.report.longestSliceMs, 8);
  assert.equal(done.report.slicesOver50Ms, 0);
  assert.equal(done.report.elapsedMs, 100);
});

test('a cancelled computation stops before its next slice and resolves with nothing', async () => {
  const clock = { nowMs: 0 };
  let slices = 0;
  const done = await runInSlices(() => clockSteps(clock, 100, 1), {
    budgetMs: 8,
    now: () => clock.nowMs,
    schedule: (next) => void setImmediate(() => (slices++, next())),
    cancelled: () => clock.nowMs >= 16,
  });
  assert.equal(done, undefined);
  assert.equal(clock.nowMs, 16, 'two slices ran, the third was dropped');
  assert.equal(slices, 3);
});

test('an error inside a slice rejects the computation', async () => {
  function* failing(): Steps<number> {
    yield;
    throw new Error('broken span');
  }
  await assert.rejects(
    runInSlices(() => failing(), { schedule: immediately }),
    /broken span/,
  );
});

test('the sort over many chunks equals the comparator sort', () => {
  const random = generator(7);
  const n = 40 * CLOCK_CHECK_ELEMENTS + 123;
  const times = Array.from({ length: n }, () => Math.round(random() * 5000) * 0.5 - 100);
  const expected = [...times.keys()].sort((a, b) => times[a] - times[b]);
  assert.deepEqual([...sortIndicesByTime(times)], expected);
});

test('counters of a trace of several chunks: sliced, whole and a direct sum agree', async () => {
  const random = generator(11);
  const lanes = 8;
  const count = 30 * CLOCK_CHECK_ELEMENTS + 999;
  const startUs = new Float64Array(count);
  const endUs = new Float64Array(count);
  const lane = new Uint32Array(count);
  const phase = new Uint8Array(count);
  const transferBytes = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    lane[i] = i % lanes;
    startUs[i] = Math.floor(i / lanes) * 10 + random() * 3;
    endUs[i] = startUs[i] + 1 + random() * 6;
    phase[i] = i % 4;
    transferBytes[i] = i % 2 === 0 ? 1 + Math.floor(random() * 1e6) : 0;
  }
  const model = TimelineModel.fromColumns(
    { origin: 'simulated', title: 'generated', ranks: lanes },
    Array.from({ length: lanes }, (_, l) => ({ id: l, kind: 'rank' as const, label: `rank ${l}`, rank: l, node: 0 })),
    { startUs, endUs, lane, phase, transferBytes },
  );
  const whole = traceCounters(model);
  const sliced = await runInSlices((clock) => traceCounterSteps(model, clock), {
    budgetMs: 1,
    schedule: immediately,
  });
  assert.ok(sliced);
  assert.ok(sliced.report.slices > 1, `cut into slices (${sliced.report.slices})`);
  assert.deepEqual(sliced.value, whole);
  // The busbw counter holds every byte of every transfer on the ranks' rows, divided by the 8 ranks on display.
  const moved = transferBytes.reduce((sum, b) => sum + b, 0);
  const busbw = whole[0];
  assert.equal(busbw.divisor, lanes);
  const total = busbw.cumulativeBytes[busbw.cumulativeBytes.length - 1];
  assert.ok(Math.abs(total - moved) <= 1e-9 * moved, `${total} vs ${moved}`);
  // And it is the same series as rateSeries computed in one go on the same spans.
  const transfers = [...transferBytes.keys()].filter((i) => transferBytes[i] > 0);
  const direct = rateSeries(
    busbw.label,
    transfers.map((i) => startUs[i]),
    transfers.map((i) => endUs[i]),
    transfers.map((i) => transferBytes[i]),
    lanes,
  );
  assert.equal(direct.timesUs.length, busbw.timesUs.length);
  assert.ok(Math.abs(direct.cumulativeBytes.at(-1)! - total) <= 1e-9 * moved);
});

test('finish runs a computation to its end at once', () => {
  const clock = { nowMs: 0 };
  assert.equal(finish(clockSteps(clock, 5, 2)), 5);
  assert.equal(clock.nowMs, 10);
});

/**
 * The counters as the plain loops compute them, gathering into growing arrays: what the sliced computation must give
 * span for span, wherever its clock falls due.
 */
function referenceCounters(model: TimelineModel): CounterSeries[] {
  type Gathered = { starts: number[]; ends: number[]; bytes: number[]; total: number };
  const gathered = (): Gathered => ({ starts: [], ends: [], bytes: [], total: 0 });
  const push = (into: Gathered, k: number, b: number): void => {
    into.starts.push(model.start[k]);
    into.ends.push(model.end[k]);
    into.bytes.push(b);
    into.total += b;
  };
  const transfers = gathered();
  const collectives = gathered();
  const perLink = new Map<string, Gathered>();
  const ranks = new Set<number>();
  model.rows.forEach((lane, r) => {
    if (lane.kind !== 'rank' && lane.kind !== 'stream') return;
    if (lane.rank !== undefined) ranks.add(lane.rank);
    for (let k = model.rowOffsets[r]; k < model.rowOffsets[r + 1]; k++) {
      const b = model.bytesAt(k);
      if (!(b > 0)) continue;
      if (PHASES[model.phase[k]] === 'collective') {
        push(collectives, k, b);
        continue;
      }
      const span = model.spanAt(k);
      if (span && span.links.length === 0) continue;
      push(transfers, k, b);
      for (const link of span?.links ?? []) {
        if (!perLink.has(link)) perLink.set(link, gathered());
        push(perLink.get(link)!, k, b);
      }
    }
  });
  if (transfers.starts.length === 0 && collectives.starts.length === 0) return [];
  const rankCount = Math.max(1, ranks.size > 0 ? ranks.size : model.metadata.ranks);
  const series = (label: string, from: Gathered, divisor: number): CounterSeries =>
    rateSeries(label, from.starts, from.ends, from.bytes, divisor);
  const counters: CounterSeries[] = [];
  if (transfers.starts.length > 0) counters.push(series(`busbw per rank (${rankCount} ranks)`, transfers, rankCount));
  if (collectives.starts.length > 0)
    counters.push(series(`algbw per rank (${rankCount} ranks)`, collectives, rankCount));
  const links = [...perLink.entries()].sort((a, b) => b[1].total - a[1].total || a[0].localeCompare(b[0]));
  for (const [link, from] of links.slice(0, 32)) counters.push(series(link, from, 1));
  return counters;
}

/** A clock that moves on by a random amount each time it is read: slices end at random places in the loops. */
function randomClock(seed: number): () => number {
  const random = generator(seed);
  let nowMs = 0;
  return () => (nowMs += random() < 0.1 ? 5 : random() * 0.3);
}

const LINK_POOL = ['gpu0->sw0', 'gpu1->sw0', 'sw0->gpu2', 'nic0->nic1'];
const PHASE_POOL: Phase[] = ['exchange', 'collective', 'reduce', 'compute', 'copy'].filter((p): p is Phase =>
  (PHASES as readonly string[]).includes(p),
);

const arbitrarySpan = fc.record({
  lane: fc.integer({ min: 0, max: 5 }),
  phase: fc.constantFrom(...PHASE_POOL),
  startUs: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.double({ min: 0, max: 100, noNaN: true })),
  durationUs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 20 }), fc.double({ min: 1e-6, max: 30, noNaN: true })),
  bytes: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1 << 24 })),
  links: fc.subarray(LINK_POOL),
});

test('property: sliced counters equal the unsliced ones and the plain loops, wherever the clock falls due', async () => {
  // Lanes 0-3 are ranks (two on one node), 4 a stream of rank 0, 5 a link row: the kinds a trace's rows come in.
  const lanes: Lane[] = [
    ...[0, 1, 2, 3].map((r) => ({ id: r, kind: 'rank' as const, label: `rank ${r}`, rank: r, node: r >> 1 })),
    { id: 4, kind: 'stream', label: 'rank 0 · stream 7', rank: 0, node: 0 },
    { id: 5, kind: 'link', label: 'gpu0->sw0' },
  ];
  await fc.assert(
    fc.asyncProperty(fc.array(arbitrarySpan, { maxLength: 300 }), fc.nat(), async (drawn, clockSeed) => {
      const spans: Span[] = drawn.map((s) => ({
        lane: s.lane,
        rank: lanes[s.lane].rank ?? -1,
        phase: s.phase,
        step: -1,
        channel: 0,
        chunk: 0,
        bytes: asBytes(s.bytes),
        links: s.links,
        startUs: asMicros(s.startUs),
        endUs: asMicros(s.startUs + s.durationUs),
      }));
      const model = TimelineModel.fromTrace({
        metadata: { origin: 'simulated', title: 'random', ranks: 4 },
        lanes,
        spans,
      });
      const whole = traceCounters(model);
      assert.deepEqual(whole, referenceCounters(model));
      const sliced = await runInSlices((clock) => traceCounterSteps(model, clock), {
        budgetMs: 1,
        now: randomClock(clockSeed),
        schedule: immediately,
      });
      assert.ok(sliced);
      assert.deepEqual(sliced.value, whole);
    }),
    { numRuns: 150 },
  );
});

test('property: the sort sliced at random places equals the sort in one go', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ noNaN: true })), { maxLength: 4000 }),
      fc.nat(),
      async (times, clockSeed) => {
        const sliced = await runInSlices((clock) => sortIndicesByTimeSteps(times, clock), {
          budgetMs: 1,
          now: randomClock(clockSeed),
          schedule: immediately,
        });
        assert.ok(sliced);
        assert.deepEqual([...sliced.value], [...sortIndicesByTime(times)]);
      },
    ),
    { numRuns: 60 },
  );
});

test('every walk over the spans looks at the clock: with a clock always due no step reads more than a group', () => {
  const count = 20 * CLOCK_CHECK_ELEMENTS + 17;
  const lanes = 3;
  const startUs = Float64Array.from({ length: count }, (_, i) => Math.floor(i / lanes));
  const model = TimelineModel.fromColumns(
    { origin: 'simulated', title: 'generated', ranks: lanes },
    Array.from({ length: lanes }, (_, l) => ({ id: l, kind: 'rank' as const, label: `rank ${l}`, rank: l, node: 0 })),
    {
      startUs,
      endUs: startUs.map((t) => t + 0.5),
      lane: Uint32Array.from({ length: count }, (_, i) => i % lanes),
      phase: new Uint8Array(count),
      transferBytes: new Float64Array(count).fill(4096),
    },
  );
  // Counts the spans read between two yields, through the model's one per-span accessor of the walks.
  let readSinceYield = 0;
  let mostRead = 0;
  const counted = Object.create(model, {
    bytesAt: { value: (k: number) => (readSinceYield++, model.bytesAt(k)) },
  }) as TimelineModel;
  const steps = traceCounterSteps(counted, { due: () => true });
  let yields = 0;
  for (let step = steps.next(); !step.done; step = steps.next()) {
    mostRead = Math.max(mostRead, readSinceYield);
    readSinceYield = 0;
    yields++;
  }
  mostRead = Math.max(mostRead, readSinceYield);
  assert.ok(mostRead <= CLOCK_CHECK_ELEMENTS, `${mostRead} spans read in one step`);
  // Two walks over the spans, then the edges' sort (six passes) and the merges: hundreds of steps, not a few.
  assert.ok(yields > 2 * (count / CLOCK_CHECK_ELEMENTS) + 6 * ((2 * count) / CLOCK_CHECK_ELEMENTS), `${yields} steps`);
});
