// NVLSTree packs its tree stages straight into the solver's typed arrays, on identical nodes (local GPU 0 for all)
// and node by node, and builds the Flow objects only when read (src/engine/algorithms/nvls-tree.ts). The packed arrays, the phase byte runs and the
// largest reduction must be exactly what packing the Flow objects gives, round by round, on random systems.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildNvls } from '../../../src/engine/algorithms/nvls';
import { channelsFor } from '../../../src/engine/channels';
import { resolveSystem, type Protocol, type SystemSpec } from '../../../src/engine/index';
import { runSchedule } from '../../../src/engine/sim/run';
import { random, pick } from './support/random';
import { assertPackedMatchesFlows } from './support/packed-round';

test('packed NVLSTree stages equal the packed Flow objects (random systems)', () => {
  let packedRounds = 0;
  for (let seed = 1; seed <= 24; seed++) {
    const next = random(7000 + seed);
    const gpusPerNode = pick(next, [2, 4, 8]);
    const spec: SystemSpec = {
      gpu: pick(next, ['H100-SXM', 'B200']),
      nodes: 2 + Math.floor(next() * 90),
      gpusPerNode,
      intraNode: 'nvswitch',
      nic: { gbps: pick(next, [200, 400]), perNode: gpusPerNode },
      network: { nodesPerLeaf: pick(next, [2, 4, 32]), oversubscription: pick(next, [1, 2]) },
    };
    const system = resolveSystem(spec);
    const bytes = pick(next, [1 << 20, 64 << 20, 1 << 30]);
    const protocol = pick<Protocol>(next, ['Simple', 'LL128', 'LL']);
    const channels = channelsFor(system, 'nvlstree', protocol, bytes);
    const ctx = { system, algorithm: 'nvlstree' as const, kind: 'allreduce' as const, bytes, protocol, channels };
    // Identical nodes pack local GPU 0's flows for all; node by node (an edited system) packs every GPU's.
    const representative = seed % 3 !== 0;
    const schedule = buildNvls({ ...ctx, representative });
    const where = `seed ${7000 + seed} (${system.label}, ${protocol}, ${bytes} B, representative ${representative})`;
    for (const [i, round] of schedule.rounds.entries()) {
      if (!round.packed) continue;
      packedRounds++;
      assertPackedMatchesFlows(round.packed, round.flows, `${where} round ${i}`);
    }
    // The packed run equals a run of the same schedule's Flow objects (a trace reads the objects).
    const fromPacked = runSchedule(system, schedule, { full: false });
    const fromFlows = runSchedule(
      system,
      {
        ...schedule,
        rounds: schedule.rounds.map(({ packed: _packed, ...round }) => ({ ...round, flows: round.flows })),
      },
      { full: false },
    );
    assert.equal(fromPacked.timeUs, fromFlows.timeUs, `${where}: time`);
    assert.deepEqual(fromPacked.phases, fromFlows.phases, `${where}: phases`);
  }
  assert.ok(packedRounds > 200, `only ${packedRounds} packed rounds compared`);
});
