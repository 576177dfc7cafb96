// Timeline benchmarks in headless Chromium (issue 8): a 1,000,000-span trace over 64 lanes at 1600×900, its time
// to first paint and its frame times during a scripted pan and zoom, and a 10,000,000-span trace that must open
// and draw. The spans are generated inside the page as typed arrays (a multi-gigabyte postMessage would measure
// the serialiser, not the timeline) and then go through the real model and renderer: TimelineModel.fromColumns
// (grouping, sorting, level-of-detail buckets) and TimelineView, driven by real key events.
import { loadavg } from 'node:os';
import { chromiumMissing, openPanel, type PanelPage } from '../test/webview/harness';
import type { Benchmark } from './types';

const VIEWPORT = { width: 1600, height: 900 };
const LANES = 64;

/**
 * Page-side generator, as source text so that no build step rewrites it. Spans are emitted in time order across
 * lanes, the way a simulator emits them, so the model has to group them by lane; each lane cycles through the
 * phases with small gaps.
 */
const GENERATE = `(count, lanes) => {
  const phases = 4;
  const startUs = new Float64Array(count), endUs = new Float64Array(count);
  const lane = new Uint32Array(count), phase = new Uint8Array(count), transferBytes = new Float64Array(count);
  let seed = 12345;
  const random = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
  for (let i = 0; i < count; i++) {
    const l = i % lanes;
    const k = Math.floor(i / lanes);
    const t = k * 10 + l * 0.37;
    startUs[i] = t + random();
    endUs[i] = startUs[i] + 2 + random() * 6;
    lane[i] = l;
    phase[i] = (k + l) % phases;
    transferBytes[i] = phase[i] === 0 || phase[i] === 2 ? 1 << 20 : 0;
  }
  const laneList = [];
  for (let l = 0; l < lanes; l++) laneList.push({ id: l, kind: 'rank', label: 'node ' + (l >> 3) + ' · rank ' + l, node: l >> 3, rank: l });
  window.__bench = { metadata: { origin: 'simulated', title: count + ' generated spans', ranks: lanes }, lanes: laneList,
    columns: { startUs, endUs, lane, phase, transferBytes } };
}`;

/** Loads the generated spans into the view and resolves after the first frame is presented; returns ms. */
const FIRST_PAINT = `async () => {
  const b = window.__bench;
  const began = performance.now();
  window.collectiveProfilerTimeline.loadColumns(b.metadata, b.lanes, b.columns);
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const elapsed = performance.now() - began;
  window.__paintedAtMs = performance.now();
  window.__bench = undefined;
  return elapsed;
}`;

/**
 * Zooms in 30 steps with W around the middle, panning with D and A between, then back out with S, one key event
 * per frame through the real keyboard handler; returns the render time of every frame, ms.
 */
const PAN_AND_ZOOM = `async () => {
  const { view } = window.collectiveProfilerTimeline;
  const keys = [];
  for (let i = 0; i < 30; i++) keys.push('w', i % 3 === 0 ? 'd' : 'a');
  for (let i = 0; i < 30; i++) keys.push('s', i % 3 === 0 ? 'a' : 'd');
  const before = view.frameTimesMs.length;
  for (const key of keys) {
    document.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
    await new Promise((done) => requestAnimationFrame(done));
  }
  await new Promise((done) => requestAnimationFrame(done));
  return view.frameTimesMs.slice(before);
}`;

/** True when the lanes canvas shows at least one pixel of every one of the four generated phase colours. */
const DREW_PHASES = `() => {
  const { view } = window.collectiveProfilerTimeline;
  const data = view.canvas.getContext('2d').getImageData(0, 0, view.canvas.width, view.canvas.height).data;
  const wanted = ['#3794ff', '#d18616', '#89d185', '#b180d7'].map((h) => parseInt(h.slice(1), 16));
  const seen = new Set();
  for (let i = 0; i < data.length; i += 4) {
    const c = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
    if (wanted.includes(c)) seen.add(c);
  }
  return seen.size === wanted.length;
}`;

async function withTimeline<T>(
  count: number,
  body: (panel: PanelPage, firstPaintMs: number) => Promise<T>,
  options: { observeLongTasks?: boolean } = {},
): Promise<T> {
  const missing = chromiumMissing();
  if (missing) throw new Error(`the timeline benchmarks need Chromium: ${missing}`);
  const panel = await openPanel('timeline', VIEWPORT);
  try {
    await panel.page.evaluate(`(${GENERATE})(${count}, ${LANES})`);
    if (options.observeLongTasks) await panel.page.evaluate(`(${OBSERVE_LONG_TASKS})()`);
    const firstPaintMs = (await panel.page.evaluate(`(${FIRST_PAINT})()`)) as number;
    if (!(await panel.page.evaluate(`(${DREW_PHASES})()`)))
      throw new Error(`the ${count}-span trace did not draw its phases`);
    return await body(panel, firstPaintMs);
  } finally {
    await panel.close();
  }
}

/** The machine's 1-minute load when a figure was taken: on a shared 2-core machine it explains outliers. */
const load = (): { loadAverage1m: number } => ({ loadAverage1m: Number(loadavg()[0].toFixed(2)) });

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Records the page's long tasks (over 50 ms, Chromium's Long Tasks API) from now on, so a benchmark can tell which
 * ones came after the first paint.
 */
const OBSERVE_LONG_TASKS = `() => {
  window.__longTasks = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) window.__longTasks.push({ startMs: entry.startTime, durationMs: entry.duration });
  }).observe({ type: 'longtask' });
}`;

/**
 * Waits for the counter tracks, computed in slices after the first paint; returns how the slices ran and the long
 * tasks that began after the first frame was presented (the counters' slices and the frames drawn meanwhile).
 */
const COUNTER_SLICES = `async () => {
  const handle = window.collectiveProfilerTimeline;
  while (!handle.counterReport()) await new Promise((done) => setTimeout(done, 10));
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const after = window.__longTasks.filter((task) => task.startMs >= window.__paintedAtMs);
  return { ...handle.counterReport(), counters: handle.counterLabels().length,
    longTasksAfterPaint: after.length, longestTaskAfterPaintMs: Math.max(0, ...after.map((task) => task.durationMs)) };
}`;

interface CounterSlices {
  longestSliceMs: number;
  slices: number;
  slicesOver50Ms: number;
  elapsedMs: number;
  counters: number;
  longTasksAfterPaint: number;
  longestTaskAfterPaintMs: number;
}
let lastCounters: CounterSlices | undefined;

/**
 * Selects the whole trace by dragging along the time axis (the real mouse handler), after the counters are done,
 * and waits for the range's statistics to show; returns the long tasks from the press to then, and the time.
 */
async function selectWholeRange(panel: PanelPage): Promise<RangeSelection> {
  const { page } = panel;
  await page.evaluate(`(async () => {
    while (!window.collectiveProfilerTimeline.counterReport()) await new Promise((done) => setTimeout(done, 10));
  })()`);
  const box = (await page.locator('canvas.lanes').boundingBox())!;
  const leftPx = (await page.evaluate('window.collectiveProfilerTimeline.view.scale().leftPx')) as number;
  const dpr = (await page.evaluate('window.devicePixelRatio')) as number;
  await page.evaluate('window.__selectFromMs = performance.now()');
  await page.mouse.move(box.x + leftPx / dpr + 1, box.y + 4);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width - 2, box.y + 4, { steps: 4 });
  await page.mouse.up();
  await page.waitForSelector('.range-stats', { timeout: 120_000 });
  return (await page.evaluate(`(async () => {
    await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    const after = window.__longTasks.filter((task) => task.startMs >= window.__selectFromMs);
    return { shownAfterMs: performance.now() - window.__selectFromMs, longTasks: after.length,
      tasks: after.map((task) => Math.round(task.startMs - window.__selectFromMs) + ':' + Math.round(task.durationMs)).join(' '),
      slices: window.collectiveProfilerTimeline.rangeReport?.(),
      longestTaskMs: Math.max(0, ...after.map((task) => task.durationMs)),
      range: document.querySelector('.range-stats').innerText.split('\\n').slice(1, 3).join(' ') };
  })()`)) as RangeSelection;
}

interface RangeSelection {
  shownAfterMs: number;
  longTasks: number;
  longestTaskMs: number;
  range: string;
}
let lastRange: RangeSelection | undefined;

let lastFrames: number[] = [];
let last10M: Record<string, unknown> = {};

export const benchmarks: Benchmark[] = [
  {
    name: 'timeline: first paint, 1 M spans, 64 lanes, 1600×900',
    unit: 'ms',
    target: 1000,
    runs: 3,
    measure: () => withTimeline(1_000_000, async (_panel, firstPaintMs) => firstPaintMs),
    extra: () => ({
      ...load(),
      note: 'from handing typed arrays to the view (grouping, sorting, LOD buckets) to the first presented frame',
    }),
  },
  {
    name: 'timeline: counter tracks, longest slice after first paint, 1 M spans',
    unit: 'ms',
    // A task over 50 ms is a long task: a key or a click that arrives during it waits for it to end.
    target: 50,
    runs: 3,
    measure: () =>
      withTimeline(
        1_000_000,
        async (panel) => {
          lastCounters = (await panel.page.evaluate(`(${COUNTER_SLICES})()`)) as CounterSlices;
          return lastCounters.longestSliceMs;
        },
        { observeLongTasks: true },
      ),
    extra: () => ({
      ...load(),
      ...lastCounters,
      note:
        'busbw per rank and bytes in flight per link, computed after the first paint in slices of about 8 ms; ' +
        'input waits at most one slice. Long tasks (Long Tasks API) counted from the first presented frame on',
    }),
  },
  {
    name: 'timeline: whole-range selection, longest task until its statistics show, 1 M spans',
    unit: 'ms',
    // A task over 50 ms is a long task: a key or a click that arrives during it waits for it to end.
    target: 50,
    runs: 3,
    measure: () =>
      withTimeline(
        1_000_000,
        async (panel) => {
          lastRange = await selectWholeRange(panel);
          return lastRange.longestTaskMs;
        },
        { observeLongTasks: true },
      ),
    extra: () => ({
      ...load(),
      ...lastRange,
      note:
        'a drag along the time axis over the whole 1 M-span trace; long tasks (Long Tasks API, 0 when none) from ' +
        'the press until the range statistics show; the statistics and the aggregate are counted in slices',
    }),
  },
  {
    name: 'timeline: frame time median, 1 M spans, scripted pan and zoom',
    unit: 'ms',
    target: 16,
    runs: 3,
    measure: () =>
      withTimeline(1_000_000, async (panel) => {
        lastFrames = (await panel.page.evaluate(`(${PAN_AND_ZOOM})()`)) as number[];
        return percentile(lastFrames, 50);
      }),
    extra: () => ({
      ...load(),
      frames: lastFrames.length,
      p95: percentile(lastFrames, 95),
      max: Math.max(...lastFrames),
      note: 'render time per frame (rasterise, putImageData, labels), measured in the page',
    }),
  },
  {
    name: 'timeline: frame time p95, 1 M spans, scripted pan and zoom',
    unit: 'ms',
    target: 33,
    runs: 3,
    measure: () =>
      withTimeline(1_000_000, async (panel) => {
        lastFrames = (await panel.page.evaluate(`(${PAN_AND_ZOOM})()`)) as number[];
        return percentile(lastFrames, 95);
      }),
    extra: () => ({ ...load(), frames: lastFrames.length, median: percentile(lastFrames, 50) }),
  },
  {
    name: 'timeline: 10 M spans open and draw (first paint)',
    unit: 'ms',
    target: 10_000,
    runs: 1,
    measure: () =>
      withTimeline(10_000_000, async (panel, firstPaintMs) => {
        const frames = (await panel.page.evaluate(`(${PAN_AND_ZOOM})()`)) as number[];
        last10M = {
          frameMedianMs: percentile(frames, 50),
          frameP95Ms: percentile(frames, 95),
          inputOrder: 'time order across lanes (regrouped by the model)',
        };
        return firstPaintMs;
      }),
    extra: () => ({ ...load(), ...last10M }),
  },
];
