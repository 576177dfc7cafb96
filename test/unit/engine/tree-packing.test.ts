// NCCL's tree keeps its geometry per system and channel count and packs its stages straight into the solver's
// typed arrays, sharing the arrays that do not depend on the size between the sizes of a sweep
// (src/engine/algorithms/tree.ts, tree-shape.ts). The packed arrays, the phase byte runs and the largest reduction
// must be exactly what packing the Flow objects gives, and a run of the packed rounds (whose derived checks are
// cached per shared array, sim/uniform-round.ts) must equal a run of the Flow objects, size after size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTree } from '../../../src/engine/algorithms/tree';
import { channelsFor } from '../../../src/engine/channels';
import { resolveSystem, type Protocol, type SystemSpec } from '../../../src/engine/index';
import { runSchedule } from '../../../src/engine/sim/run';
import type { Schedule } from '../../../src/engine/sim/schedule';
import { random, pick } from './support/random';
import { assertPackedMatchesFlows } from './support/packed-round';

/** The same schedule with every round's Flow objects and no packed arrays. */
function unpacked(schedule: Schedule): Schedule {
  return {
    ...schedule,
    rounds: schedule.rounds.map(({ packed: _packed, ...round }) => ({ ...round, flows: round.flows })),
  };
}

test('packed tree stages equal the packed Flow objects, size after size (random systems)', () => {
  let packedRounds = 0;
  let sharedRounds = 0;
  for (let seed = 1; seed <= 30; seed++) {
    const next = random(9100 + seed);
    const gpusPerNode = pick(next, [1, 2, 4, 8]);
    const spec: SystemSpec = {
      gpu: pick(next, ['H100-SXM', 'A100-SXM4-80GB', 'B200']),
      nodes: pick(next, [1, 2, 3, 17, 24, 40, 70]),
      gpusPerNode,
      intraNode: 'nvswitch',
      nic: { gbps: pick(next, [200, 400]), perNode: pick(next, [gpusPerNode, Math.max(1, gpusPerNode / 2)]) },
      network: { nodesPerLeaf: pick(next, [2, 4, 32]), oversubscription: pick(next, [1, 2]) },
    };
    const system = resolveSystem(spec);
    const protocol = pick<Protocol>(next, ['Simple', 'LL128', 'LL']);
    const representative = next() < 0.7;
    let previous: Schedule | undefined;
    // Sizes that keep the channel count (so the second reuses the first's arrays) and sizes that change it.
    for (const bytes of [8, 4096, 4100, 1 << 20, 3 << 20, 1 << 28]) {
      const channels = channelsFor(system, 'tree', protocol, bytes);
      const ctx = { system, algorithm: 'tree' as const, kind: 'allreduce' as const, bytes, protocol, channels };
      const schedule = buildTree({ ...ctx, representative });
      const where = `seed ${9100 + seed} (${system.label}, ${protocol}, ${bytes} B, representative ${representative})`;
      for (const [i, round] of schedule.rounds.entries()) {
        assert.ok(round.packed, `${where} round ${i}: packed`);
        packedRounds++;
        assertPackedMatchesFlows(round.packed, round.flows, `${where} round ${i}`);
        const before = previous?.rounds[i]?.packed?.set;
        if (before && before.resource === round.packed.set.resource) sharedRounds++;
      }
      const fromPacked = runSchedule(system, schedule, { full: false });
      const fromFlows = runSchedule(system, unpacked(schedule), { full: false });
      assert.equal(fromPacked.timeUs, fromFlows.timeUs, `${where}: time`);
      assert.deepEqual(fromPacked.phases, fromFlows.phases, `${where}: phases`);
      previous = schedule;
    }
  }
  assert.ok(packedRounds > 1000, `only ${packedRounds} packed rounds compared`);
  // The steady round and the stages of sizes with the same channel count share their arrays.
  assert.ok(sharedRounds > 300, `only ${sharedRounds} rounds shared their arrays with the previous size`);
});

test('a round whose arrays were checked on one system is checked again on a system with other capacities', () => {
  const spec: SystemSpec = {
    gpu: 'H100-SXM',
    nodes: 20,
    gpusPerNode: 8,
    intraNode: 'nvswitch',
    nic: { gbps: 400, perNode: 8 },
    network: { nodesPerLeaf: 4, oversubscription: 1 },
  };
  const system = resolveSystem(spec);
  const bytes = 1 << 26;
  const channels = channelsFor(system, 'tree', 'Simple', bytes);
  const ctx = { system, algorithm: 'tree' as const, kind: 'allreduce' as const, protocol: 'Simple' as const };
  const schedule = buildTree({ ...ctx, bytes, channels, representative: false });
  const homogeneous = runSchedule(system, schedule, { full: false });
  // Every network link at a quarter of its speed: a new topology object whose routes are the same link indices,
  // so the same packed arrays describe its rounds; what was derived from them on the first system must not be used.
  const links = system.topology.links.map((l) => (l.kind === 'network' ? { ...l, GBps: l.GBps / 4 } : l));
  const slow = { ...system, topology: { ...system.topology, links } } as typeof system;
  const degraded = runSchedule(slow, schedule, { full: false });
  const reference = runSchedule(slow, unpacked(schedule), { full: false });
  assert.equal(degraded.timeUs, reference.timeUs);
  assert.ok(degraded.timeUs > homogeneous.timeUs * 1.5, `${degraded.timeUs} against ${homogeneous.timeUs}`);
});
