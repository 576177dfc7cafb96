// Heterogeneity in proportion for a forced ring: an edited system (a slow node, a degraded NIC link, a degraded
// NVLink, a different rail on one node, a degraded leaf or spine link) simulates the node groups and network flows
// its edit touches plus one stand-in of each (algorithms/ring-edited.ts). Its results must equal the unreduced
// simulation, which a traced run is (a trace lists every flow, so every rank's flows are built and solved), and the
// full expansion (every channel, every step) to the microsecond.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  asBytes,
  asGBps,
  resolveSystem,
  simulateCollective,
  type Protocol,
  type System,
} from '../../../src/engine/index';
import { buildRing } from '../../../src/engine/algorithms/ring';
import { editedRing } from '../../../src/engine/algorithms/ring-edited';
import type { BuildContext } from '../../../src/engine/algorithms/context';
import { channelsFor } from '../../../src/engine/channels';
import { runSchedule, type RunResult } from '../../../src/engine/sim/run';
import type { Schedule } from '../../../src/engine/sim/schedule';
import { nodesIdentical } from '../../../src/engine/topology/uniform';
import { assertClose } from './support/close';
import { random, pick } from './support/random';
import {
  type Edit,
  builtTopology,
  nodeLinkEdit,
  nodeOf,
  randomH100Spec,
  resultFields,
  sharedLinks,
  withLinks,
  SLOW_NODE,
} from './support/edited-systems';

const EDITS: readonly Edit[] = [
  SLOW_NODE,
  nodeLinkEdit(
    'one degraded NIC-side link of a random node',
    [0.25, 0.5, 0.9],
    (l, node, nodes) =>
      (l.kind === 'network' || l.kind === 'pcie') && (nodes.get(l.from) === node || nodes.get(l.to) === node),
  ),
  {
    name: 'one or two degraded NVLinks (switch uplink or downlink)',
    apply(system, next) {
      const a = system.fabric.switchUplink(Math.floor(next() * system.ranks));
      const b = system.fabric.switchDownlink(Math.floor(next() * system.ranks));
      const both = next() < 0.5;
      return withLinks(system, (i) => (i === a ? 0.5 : both && i === b ? 0.75 : undefined));
    },
  },
  {
    name: 'a different rail on one node (one NIC faster or slower, both directions)',
    apply(system, next) {
      const nodes = nodeOf(system);
      const node = Math.floor(next() * system.nodes);
      const nic = new RegExp(`^n${node}\\.nic${Math.floor(next() * system.gpusPerNode)}$`);
      const factor = pick(next, [0.5, 2]);
      return withLinks(system, (i) => {
        const l = system.topology.links[i];
        return l.kind === 'network' && nodes.get(l.from) !== undefined && (nic.test(l.from) || nic.test(l.to))
          ? factor
          : undefined;
      });
    },
  },
  {
    name: 'one degraded leaf or spine link (the flows crossing it simulated with it where it could bind)',
    apply(system, next) {
      const shared = sharedLinks(system);
      const link = pick(next, shared);
      const factor = pick(next, [0.05, 0.25, 0.5, 0.999]);
      // With a second edit inside a node, so that the nodes differ whether the shared link binds or not.
      const up = system.fabric.switchUplink(0);
      return withLinks(system, (i) => (i === link ? factor : i === up ? 0.5 : undefined));
    },
  },
];

/**
 * The forced ring's schedule on an edited system, reduced (the fast path) or with every rank's flows (what the
 * fast path ran before the reduction, and what a traced run still builds).
 */
function ringSchedule(system: System, bytes: number, protocol: Protocol, reduceEdits: boolean): Schedule {
  return buildRing({ ...context(system, bytes, protocol), representative: false, reduceEdits });
}

/** The forced ring's build context on a system. */
function context(system: System, bytes: number, protocol: Protocol): BuildContext {
  const channels = channelsFor(system, 'ring', protocol, bytes);
  return { system, algorithm: 'ring', kind: 'allreduce', bytes, protocol, channels };
}

test('a forced ring on an edited system gives the unreduced results, and the full expansion to the µs', () => {
  let reduced = 0;
  let bound = 0;
  let compared = 0;
  const kinds = new Set<string>();
  for (let seed = 1; seed <= 40; seed++) {
    const next = random(9100 + seed);
    const nodes = pick(next, [2, 3, 5, 17, 33]);
    const system = resolveSystem(randomH100Spec(next, nodes));
    const edit = EDITS[seed % EDITS.length];
    const edited = edit.apply(system, next);
    if (nodesIdentical(edited)) continue;
    const where = `seed ${9100 + seed} (${system.label}, ${edit.name})`;
    const sizes = [asBytes(pick(next, [64 << 10, 1 << 20])), asBytes(pick(next, [4 << 20, 64 << 20, 1 << 30]))];
    for (const bytes of sizes) {
      for (const protocol of ['Simple', 'LL128', 'LL'] as const) {
        if (protocol === 'LL' && bytes > 1 << 20) continue;
        const label = `${where} ring/${protocol} ${bytes} B`;
        // Round by round: the reduced schedule against every rank's flows, each on the fast path's runner.
        const fast = ringSchedule(edited, bytes, protocol, true);
        const every = ringSchedule(edited, bytes, protocol, false);
        if (fast.rounds.every((round) => round.packed !== undefined)) {
          reduced++;
          kinds.add(edit.name);
          if (
            editedRing({ ...context(edited, bytes, protocol), reduceEdits: true })?.sharedBound?.some((s) => s.size > 0)
          )
            bound++;
        }
        assert.equal(fast.rounds.length, every.rounds.length, label);
        fast.rounds.forEach((round, i) => {
          assert.equal(round.latencyUs, every.rounds[i].latencyUs, `${label}: round ${i} latency`);
          const one = (schedule: Schedule): RunResult =>
            runSchedule(edited, { ...schedule, rounds: [schedule.rounds[i]] }, { full: false });
          assertClose(one(fast), one(every), `${label}: round ${i}`);
        });
        compared++;
      }
      // End to end at the smaller size: the fast path against a traced run (every flow), and the full expansion.
      if (bytes > 1 << 20) continue;
      const request = { bytes, algorithm: 'ring' as const, protocol: 'Simple' as const };
      const fast = simulateCollective(edited, request);
      const unreduced = simulateCollective(edited, { ...request, trace: true });
      assertClose(resultFields(fast), resultFields(unreduced), `${where} ring/Simple ${bytes} B, traced`);
      if (nodes > 5) continue;
      const full = simulateCollective(builtTopology(edited), request, { path: 'full' });
      for (const key of ['exchange', 'reduce', 'broadcast'] as const)
        assert.ok(Math.abs(fast.phases[key] - full.phases[key]) < 1, `${where} ${bytes} B: ${key}`);
      assert.ok(Math.abs(fast.timeUs - full.timeUs) < 1, `${where} ${bytes} B: ${fast.timeUs} µs`);
    }
  }
  assert.ok(compared >= 150, `only ${compared} comparisons ran`);
  // The reduction must have run, under every kind of edit (a binding shared link too), else this compares the
  // node-by-node path with itself; and a changed shared link must have bound in some reduced rounds.
  assert.ok(reduced >= compared / 2, `only ${reduced} of ${compared} runs were reduced`);
  assert.ok(kinds.size >= 5, `reduced under ${[...kinds].join(', ')}`);
  assert.ok(bound >= 10, `a changed shared link bound in only ${bound} reduced runs`);
});

test('a ring round whose memories could bind is not reduced, and still gives the unreduced results', () => {
  const system = resolveSystem(randomH100Spec(random(3), 5));
  const uplink = system.fabric.switchUplink(1);
  const edited = withLinks(system, (i) => (i === uplink ? 0.5 : undefined));
  const bytes = asBytes(4 << 20);
  const [reduceRound, broadcastRound] = ringSchedule(edited, bytes, 'Simple', true).rounds;
  assert.ok(reduceRound.packed && broadcastRound.packed, 'with HBM to spare both rounds are reduced');
  // Memory slower than a channel's ceiling times the channels (and than the ring's flows need) binds in the reduction
  // round: that round runs every rank's flows, the broadcast (no reduction) is still reduced, and the results are the
  // unreduced ones.
  const slowMemory = { ...edited, hbmGBps: asGBps(40) };
  const request = { bytes, algorithm: 'ring' as const, protocol: 'Simple' as const };
  assertClose(
    resultFields(simulateCollective(slowMemory, request)),
    resultFields(simulateCollective(slowMemory, { ...request, trace: true })),
    'slow memory',
  );
  const [reduceSlow, broadcastSlow] = ringSchedule(slowMemory, bytes, 'Simple', true).rounds;
  assert.equal(reduceSlow.packed, undefined);
  assert.ok(broadcastSlow.packed);
});
