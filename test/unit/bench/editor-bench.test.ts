// The editor benchmarks' pieces: the generated Chrome trace is a real trace the extension reads back span for
// span, the host-memory child opens it through the real bundle and reports sane figures, and the per-edit child
// gets real diagnostics and predicted lenses from the providers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeChromeTrace } from '../../../bench/support/chrome-trace';
import { readTraceFile } from '../../../src/extension/glue/trace-file';
import { measureEditorPasses, measureHostMemory } from '../../../bench/editor.bench';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');

test('the generated Chrome trace reads back as every span on one lane per rank', () => {
  const path = join(mkdtempSync(join(tmpdir(), 'cp-trace-')), 'trace.json');
  const bytes = writeChromeTrace(path, 6400, 64);
  assert.equal(bytes, statSync(path).size);
  const { trace, format, warnings } = readTraceFile(readFileSync(path, 'utf8'), path);
  assert.equal(format, 'chrome');
  assert.deepEqual(warnings, []);
  assert.equal(trace.spans.length, 6400);
  assert.equal(trace.lanes.length, 64);
  assert.equal(trace.lanes[9].label, 'node 1 · rank 9 stream 7');
  // Every fourth kernel is an NCCL AllReduce carrying its size; the rest are compute or CPU ops.
  const collectives = trace.spans.filter((s) => s.phase === 'collective');
  assert.equal(collectives.length, 1600);
  assert.ok(collectives.every((s) => s.bytes === 26214400));
  assert.ok(trace.spans.every((s) => s.endUs > s.startUs && s.startUs >= 0));
});

test('the generator is deterministic, so a cached file is reused only when it is the same trace', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-trace-'));
  writeChromeTrace(join(dir, 'a.json'), 500, 8);
  writeChromeTrace(join(dir, 'b.json'), 500, 8);
  assert.equal(readFileSync(join(dir, 'a.json'), 'utf8'), readFileSync(join(dir, 'b.json'), 'utf8'));
});

const NEEDS_BUNDLE = existsSync(join(ROOT, 'dist', 'extension.js'))
  ? false
  : 'dist/extension.js is missing: run npm run build';

test(
  'the host-memory child opens a trace through Open Trace and posts it to the timeline',
  { skip: NEEDS_BUNDLE },
  async () => {
    const result = await measureHostMemory(20_000);
    assert.equal(result.spans, 20_000);
    assert.equal(result.lanes, 64);
    // 20,000 spans stay in one `trace` message; the theme goes first.
    assert.equal(result.postedMessages, 2);
    assert.ok(result.postedMB > 1, `posted ${result.postedMB} MB`);
    assert.ok(result.baselineRssMB > 10 && result.peakRssMB >= result.baselineRssMB);
    // Holding 20,000 spans costs some heap, and nowhere near a gigabyte.
    assert.ok(result.heapUsedMB > 0.5 && result.heapUsedMB < 200, `heap grew by ${result.heapUsedMB} MB`);
  },
);

test(
  'the per-edit child gets the summed-gradient diagnostic and predicted lenses from the providers',
  { skip: NEEDS_BUNDLE },
  async () => {
    const result = await measureEditorPasses(1);
    assert.equal(result.timesMs.length, 1);
    assert.equal(result.cpuMs.length, 1);
    assert.ok(result.timesMs[0] > 0 && result.firstMs > 0);
    assert.ok(result.lines >= 3000);
    assert.equal(result.findings, 1);
    // Two dist.all_reduce calls get predictions on the default system (a scalar one is latency-bound, judged in
    // time); the finding gets its warning lens.
    assert.equal(
      result.titles.filter((t) => /^≈ .* (busbw|latency-bound) · /.test(t)).length,
      2,
      result.titles.join(' | '),
    );
    assert.ok(
      result.titles.some((t) => t.includes('CP001')),
      result.titles.join(' | '),
    );
  },
);
