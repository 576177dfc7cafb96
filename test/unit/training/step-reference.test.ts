// Every step time must stay what the unreduced simulator gives: the fast path folds identical nodes onto one (the
// ring, the trees, NVLS) and caches repeated steps, so a step priced by it is compared, collective by collective,
// with the same step priced by the full expansion (every rank, channel and step) on the built topology.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulateTrainingStep } from '../../../src/engine/training/step';
import { simulatedPrice, type CollectivePricer } from '../../../src/engine/training/collective-cost';
import { resolveSystem, simulateCollective, type System } from '../../../src/engine/index';
import type { Wrapper } from '../../../src/engine/training/types';
import { toyModel, toyRun } from './helpers';

/** The simulator's full path on the system's built vertices and links, as an edited copy would be read. */
const fullPrice: CollectivePricer = (system, kind, bytes, dtype, options) => {
  const built: System = {
    ...system,
    topology: { vertices: system.topology.vertices, links: system.topology.links },
  };
  const result = simulateCollective(
    built,
    {
      kind,
      bytes,
      dtype,
      op: kind === 'allgather' ? undefined : options.op,
      algorithm: options.algorithm,
      protocol: options.protocol,
    },
    { path: 'full' },
  );
  return { timeUs: result.timeUs, algorithm: result.algorithm, protocol: result.protocol, phases: result.phases };
};

const CASES: readonly { wrapper: Wrapper; nodes: number; algorithm: 'ring' | 'auto' }[] = [
  { wrapper: 'fsdp', nodes: 3, algorithm: 'ring' },
  { wrapper: 'zero2', nodes: 2, algorithm: 'ring' },
  { wrapper: 'zero3', nodes: 4, algorithm: 'auto' },
  { wrapper: 'ddp', nodes: 3, algorithm: 'ring' },
  { wrapper: 'ddp', nodes: 2, algorithm: 'auto' },
  { wrapper: 'zero1', nodes: 5, algorithm: 'ring' },
];

test('a step priced on the fast path equals the step priced on the full expansion, collective by collective', () => {
  for (const { wrapper, nodes, algorithm } of CASES) {
    const run = toyRun({ wrapper, algorithm, gradAccumulationSteps: 2 }, { nodes, gpusPerNode: 4 }, toyModel(3, 512));
    const system = resolveSystem({ ...run.system, nic: { gbps: 400, perNode: 4 } });
    const fast = simulateTrainingStep(run, { system, price: simulatedPrice });
    const full = simulateTrainingStep(run, { system, price: fullPrice });
    const where = `${wrapper} on ${system.label} (${algorithm})`;
    assert.ok(fast.collectives.length > 0, `${where}: no collectives`);
    assert.equal(fast.collectives.length, full.collectives.length, where);
    for (let i = 0; i < fast.collectives.length; i++) {
      const a = fast.collectives[i];
      const b = full.collectives[i];
      assert.equal(`${a.kind} ${a.algorithm}/${a.protocol}`, `${b.kind} ${b.algorithm}/${b.protocol}`, where);
      assert.ok(Math.abs(a.endUs - b.endUs) < 1, `${where} ${a.label}: fast ends ${a.endUs} µs, full ${b.endUs} µs`);
    }
    assert.ok(
      Math.abs(fast.stepTimeUs - full.stepTimeUs) < 1,
      `${where}: fast ${fast.stepTimeUs} µs, full ${full.stepTimeUs} µs`,
    );
  }
});
