// NCCL up to 2.12 hands every channel but the first its work through a FIFO in host memory (enqueue.cc getNextOp:
// wait for the slot's flag, memset and fill it; the CTA reads it over PCIe and clears the flag), so a process pays
// host time for each channel NCCL runs beyond the first, for every GPU it drives. 2.13 replaced the FIFO with
// kernel plans. On the SuperBench 8× A100 run (-g 8, a "Launch mode" log line: ≤ 2.12) ring/LL keeps 4 KiB per
// channel and step from 32 KiB to 512 KiB while NCCL raises the channels from 1 to 16, and the time grows with
// the channels (34.7 → 60.3 µs), where the engine without this cost kept 512 KiB at about 42 µs (+44 % busbw).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  ncclTuner,
  presetSystem,
  resolveSystem,
  simulateCollective,
  asBytes,
  type SystemSpec,
} from '../../../src/engine/index';

const KiB = 1024;

const superBench = (ncclVersion: string): SystemSpec => ({
  ...(JSON.parse(
    readFileSync('calibration/systems/a100-8gpu-nvswitch-1node-superbench2021.json', 'utf8'),
  ) as SystemSpec),
  ncclVersion,
});

test('the work FIFO in host memory belongs to NCCL 2.12 and earlier', () => {
  assert.equal(ncclTuner('2.9.9').hostWorkFifo, true);
  assert.equal(ncclTuner('2.12.12').hostWorkFifo, true);
  assert.equal(ncclTuner('2.13.4').hostWorkFifo, false);
  assert.equal(ncclTuner('2.18.5').hostWorkFifo, false);
  assert.equal(ncclTuner().hostWorkFifo, false);
});

test('ring/LL on 8× A100 runs the channels NCCL reduces it to: 64 B per thread of 512, up to 24', () => {
  const system = resolveSystem(superBench('2.12'));
  const channels = [32, 64, 128, 256, 512, 1024].map(
    (k) => simulateCollective(system, { bytes: asBytes(k * KiB), algorithm: 'ring', protocol: 'LL' }).channels,
  );
  assert.deepEqual(channels, [1, 2, 4, 8, 16, 24]);
});

test('on NCCL ≤ 2.12 a -g 8 process pays host time for every channel beyond the first', () => {
  // 2.13 has 2.12's tables and search (nccl-versions-pre218.ts) and no FIFO: the difference is the FIFO alone.
  const old = resolveSystem(superBench('2.12'));
  const newer = resolveSystem(superBench('2.13.4'));
  const time = (system: ReturnType<typeof resolveSystem>, bytes: number): number =>
    simulateCollective(system, { bytes: asBytes(bytes), algorithm: 'ring', protocol: 'LL' }).timeUs;
  // One channel: the launch alone, as in later releases.
  assert.equal(time(old, 8), time(newer, 8));
  // 16 channels at 512 KiB: 15 slots for each of 8 GPUs, 0.2 µs each, on the host's 38.4 µs of launches.
  const extra = time(old, 512 * KiB) - time(newer, 512 * KiB);
  assert.ok(extra > 15, `512 KiB: ${extra.toFixed(1)} µs more on 2.12`);
  // The time grows with the channels at a constant 4 KiB per channel and step, as the measured run does (fastest
  // of out-of-place and in-place, µs). The launch floor is the engine's (38.4 µs for 8 GPUs against 34.7 measured),
  // so the growth from one channel is what is compared.
  const measuredUs: Record<number, number> = { [32 * KiB]: 35.73, [256 * KiB]: 47.53, [512 * KiB]: 60.32 };
  const base = time(old, 32 * KiB);
  for (const bytes of [256 * KiB, 512 * KiB]) {
    const grown = time(old, bytes) - base;
    const measured = measuredUs[bytes] - measuredUs[32 * KiB];
    assert.ok(
      Math.abs(grown / measured - 1) < 0.25,
      `${bytes} B: +${grown.toFixed(1)} µs against +${measured.toFixed(1)}`,
    );
  }
});

test('one process per GPU, or a later release, barely pays it: presets do not move', () => {
  const perGpu = resolveSystem({ ...presetSystem('dgx-a100')!, ncclVersion: '2.12' });
  const head = resolveSystem(presetSystem('dgx-a100')!);
  const r = simulateCollective(perGpu, { bytes: asBytes(1024 * KiB) });
  assert.ok(r.timeUs - simulateCollective(head, { bytes: asBytes(1024 * KiB) }).timeUs < 23 * 0.2 + 1e-9);
  assert.equal(head.hostWorkSlotUs, 0);
});
