// NCCL's bus → algorithm bandwidth conversion (tuning.cc): rings, and every algorithm's AllReduce, are converted;
// NVLS and PAT reduce-scatter and all-gather keep their bus bandwidth (NVLS's per-channel figure already carries
// (ppn − 1)/ppn). The simulator's NVLS engine ceiling keeps the ring-like conversion, so only NCCL's ranking moves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { presetSystem, resolveSystem } from '../../../src/engine/index';
import { ncclAlgBwGBps, ncclBusBwGBps, ncclPredictedUs, nvlsBufferRateGBps } from '../../../src/engine/nccl-model';

const system = resolveSystem(presetSystem('dgx-h100')!);
const n = system.ranks;

test("NVLS reduce-scatter and all-gather keep their bus bandwidth in NCCL's model; rings are converted", () => {
  for (const kind of ['reducescatter', 'allgather'] as const) {
    const nvlsBus = ncclBusBwGBps(system, kind, 'nvls', 'Simple');
    assert.ok(nvlsBus > 0);
    assert.equal(ncclAlgBwGBps(system, kind, 'nvls', 'Simple'), nvlsBus);
    const ringBus = ncclBusBwGBps(system, kind, 'ring', 'Simple');
    assert.ok(Math.abs(ncclAlgBwGBps(system, kind, 'ring', 'Simple') - (ringBus * n) / (n - 1)) < 1e-9);
    // The bandwidth term of the predicted time is bytes / algbw: at 16 GiB the latency is negligible beside it.
    const bytes = 2 ** 34;
    const us = ncclPredictedUs(system, kind, bytes, 'nvls', 'Simple');
    assert.ok(Math.abs(us - bytes / (1000 * nvlsBus)) / us < 1e-3, `${kind}: ${us} µs`);
  }
  // AllReduce converts NVLS as NCCL does (n / 2(n − 1)).
  const allreduceBus = ncclBusBwGBps(system, 'allreduce', 'nvls', 'Simple');
  assert.ok(Math.abs(ncclAlgBwGBps(system, 'allreduce', 'nvls', 'Simple') - (allreduceBus * n) / (2 * (n - 1))) < 1e-9);
});

test("the simulator's NVLS ceiling keeps the ring-like conversion (forced NVLS times do not move)", () => {
  for (const kind of ['reducescatter', 'allgather'] as const) {
    const bus = ncclBusBwGBps(system, kind, 'nvls', 'Simple', system.tuner);
    assert.ok(Math.abs(nvlsBufferRateGBps(system, kind, 'nvls', system.tuner) - (bus * n) / (n - 1)) < 1e-9);
  }
});
