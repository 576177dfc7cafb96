// The native engine on 4 gloo ranks with Debian's torch: every rank's exchange, reduce and broadcast spans for
// every ring step, verified sums and averages, and the fused all_reduce time next to the step-by-step one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runNative } from '../../../src/native/runner';
import { nativeMeasurements, nativeTrace } from '../../../src/native/convert';
import { checkEnvironment } from '../../../src/native/python';
import { PYTHON, torchMissing } from './fixtures/torch';

const skip = torchMissing();

test('environment check reports torch, backend and GPUs', { skip }, async () => {
  const env = await checkEnvironment({ python: PYTHON });
  assert.match(env.torch, /^\d+\.\d+/);
  assert.equal(env.python, PYTHON);
  assert.ok(env.gloo);
  assert.equal(env.backend, env.gpuCount > 0 && env.nccl ? 'nccl' : 'gloo');
});

test(
  '4 gloo ranks: ring steps traced per rank and phase, values verified, fused time alongside',
  { skip },
  async () => {
    const bytes = 1 << 20;
    const run = await runNative({
      nproc: 4,
      sizesBytes: [bytes],
      python: PYTHON,
      backend: 'gloo',
      iters: 3,
      timeoutMs: 120_000,
    });
    assert.equal(run.env.backend, 'gloo');
    assert.equal(run.env.worldSize, 4);
    // All four ranks run on this host and read one clock: no estimated offset may shift their spans.
    assert.deepEqual(run.env.clockOffsetsUs, [0, 0, 0, 0]);
    const trace = nativeTrace(run);
    for (let rank = 0; rank < 4; rank++) {
      for (let step = 0; step < 3; step++) {
        for (const phase of ['exchange', 'reduce', 'broadcast'] as const) {
          const span = trace.spans.find(
            (s) => s.rank === rank && s.step === step && s.phase === phase && s.args?.algorithm === 'ring',
          );
          assert.ok(span, `rank ${rank} ring step ${step} has a ${phase} span`);
          assert.equal(span.bytes, bytes / 4, 'each ring step moves one quarter of the buffer');
          assert.ok(span.endUs >= span.startUs);
        }
      }
    }
    // With aligned clocks, a rank's receive in ring step s cannot finish before its left neighbour started sending.
    const ex = (rank: number, step: number) =>
      trace.spans.find(
        (s) => s.rank === rank && s.step === step && s.phase === 'exchange' && s.args?.algorithm === 'ring',
      )!;
    for (let rank = 0; rank < 4; rank++)
      for (let step = 0; step < 3; step++) assert.ok(ex(rank, step).endUs >= ex((rank + 3) % 4, step).startUs - 50);
    // Tree spans exist too: each non-root rank receives the total from its parent.
    assert.ok(trace.spans.some((s) => s.args?.algorithm === 'tree' && s.phase === 'broadcast' && s.rank === 3));
    const fused = run.results.find((r) => r.kind === 'fused')!;
    const ring = run.results.find((r) => r.kind === 'ring')!;
    assert.deepEqual(fused.verified, { sum: true, avg: true, avgMethod: fused.verified?.avgMethod });
    assert.equal(ring.verified?.sum, true);
    assert.ok(fused.timeUs! > 0 && ring.timeUs! > 0, 'fused and step-by-step times are both reported');
    const rsag = run.results.find((r) => r.kind === 'reduce_scatter+all_gather')!;
    assert.ok(rsag.unsupported ? /reduce_scatter/.test(rsag.unsupported) : rsag.timeUs! > 0);
    const methods = nativeMeasurements(run).map((m) => m.meta.method);
    assert.deepEqual(methods.slice(0, 1), ['fused']);
    assert.ok(methods.includes('ring') && methods.includes('tree'));
  },
);
