// PAT on identical one-GPU nodes whose leaf uplinks and downlinks can bind (an oversubscribed network): every
// round is one component across the leaves, and pat-folded.ts solves leaf 0's senders only, each receiving side and
// downlink moved to leaf 0's, by the shift of one leaf's nodes that maps the round onto itself. The result must be
// the unreduced simulation's to rounding (a traced run builds every rank's flows) and the full expansion's to the
// microsecond; where the leaves do not repeat (a last leaf with fewer nodes) every rank still runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asBytes, resolveSystem, simulateCollective, type System } from '../../../src/engine/index';
import { buildPat } from '../../../src/engine/algorithms/pat';
import { editedPat } from '../../../src/engine/algorithms/pat-edited';
import { channelClasses } from '../../../src/engine/algorithms/context';
import { channelsFor } from '../../../src/engine/channels';
import { assertClose } from './support/close';
import { builtTopology, resultFields } from './support/edited-systems';
import { pick, random } from './support/random';

/** Flows solved in PAT's rounds on the fast path of identical nodes, and flows the rounds stand for. */
function solvedFlows(system: System, kind: 'allgather' | 'reducescatter', bytes: number) {
  const channels = channelsFor(system, 'pat', 'Simple', bytes);
  const ctx = { system, algorithm: 'pat', kind, bytes, protocol: 'Simple', channels, representative: true } as const;
  const weights = channelClasses(channels, system.fabric.nicsPerNode);
  const fold = editedPat(ctx, weights)?.foldedLinks !== undefined;
  let solved = 0;
  let every = 0;
  for (const round of buildPat(ctx).rounds) {
    solved += round.packed?.set.count ?? round.flows.length;
    every += round.flows.length;
  }
  return { solved, every, fold };
}

test('PAT on identical nodes of an oversubscribed network folds onto one leaf and gives the unreduced results', () => {
  let folded = 0;
  let exact = 0;
  let compared = 0;
  for (let seed = 1; seed <= 28; seed++) {
    const next = random(10500 + seed);
    const perLeaf = pick(next, [1, 2, 3, 4, 8, 16]);
    // One system in seven has a last leaf with fewer nodes: it cannot fold.
    const nodes = perLeaf * pick(next, [2, 3, 4, 5, 8, 12]) - (seed % 7 === 0 && perLeaf > 1 ? 1 : 0);
    const system = resolveSystem({
      gpu: 'H100-SXM',
      nodes,
      gpusPerNode: 1,
      intraNode: 'nvswitch',
      nic: { gbps: pick(next, [200, 400]), perNode: pick(next, [1, 1, 2]) },
      network: { nodesPerLeaf: perLeaf, oversubscription: pick(next, [1.5, 2, 4, 8]) },
    });
    const kind = pick(next, ['allgather', 'reducescatter'] as const);
    const where = `seed ${10500 + seed} (${nodes} nodes, ${perLeaf} a leaf, ${system.fabric.nicsPerNode} NICs, ${kind})`;
    const { solved, every, fold } = solvedFlows(system, kind, 1 << 20);
    if (fold) {
      folded++;
      assert.ok(solved < every, `${where}: ${solved} of ${every} flows solved`);
    }
    for (const bytes of [asBytes(pick(next, [64 << 10, 1 << 20])), asBytes(pick(next, [64 << 20, 1 << 30]))]) {
      const request = { bytes, kind, algorithm: 'pat' } as const;
      const fast = simulateCollective(system, request);
      const unreduced = simulateCollective(system, { ...request, trace: true });
      assertClose(resultFields(fast), resultFields(unreduced), `${where} ${bytes} B`);
      if (fast.timeUs === unreduced.timeUs) exact++;
      compared++;
      if (bytes > 1 << 20 || nodes > 24) continue;
      const full = simulateCollective(builtTopology(system), request, { path: 'full' });
      assert.ok(Math.abs(fast.timeUs - full.timeUs) < 1, `${where} ${bytes} B: ${fast.timeUs} against ${full.timeUs}`);
    }
  }
  assert.equal(compared, 56);
  assert.ok(folded >= 18, `only ${folded} systems were folded`);
  // Most results are the same bit for bit; the rest differ in the last places (the header of pat-folded.ts).
  assert.ok(exact >= 28, `only ${exact} of ${compared} results bit for bit`);
});
