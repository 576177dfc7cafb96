// Heterogeneity in proportion for PAT (one GPU per node): an edited system simulates, in each round, the senders
// whose flows an edit touches (as senders, as receivers, or across a changed leaf or spine link that could bind)
// and one stand-in sender (pat-edited.ts). The result must be the unreduced simulation's to rounding: a traced run
// builds every rank's flows (a trace lists them all), so it is the path the reduction replaces; the full expansion
// (every channel, on the built topology) must agree to the microsecond, as it does for every fast path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  asBytes,
  resolveSystem,
  simulateCollective,
  type CollectiveKind,
  type System,
} from '../../../src/engine/index';
import { buildPat } from '../../../src/engine/algorithms/pat';
import { editedPat } from '../../../src/engine/algorithms/pat-edited';
import { channelClasses } from '../../../src/engine/algorithms/context';
import { channelsFor } from '../../../src/engine/channels';
import { assertClose } from './support/close';
import {
  type Edit,
  builtTopology,
  nodeLinkEdit,
  nodeOf,
  randomOnePerNodeSpec,
  resultFields,
  sharedLinks,
  withLinks,
  SLOW_NODE,
} from './support/edited-systems';
import { pick, random } from './support/random';

const EDITS: readonly Edit[] = [
  nodeLinkEdit(
    'one link of a random node slower or faster',
    [0.05, 0.25, 0.5, 0.9, 1.5],
    (l, node, nodes) => nodes.get(l.from) === node || nodes.get(l.to) === node,
  ),
  SLOW_NODE,
  nodeLinkEdit(
    "a random node's receiving NIC link",
    [0.1, 0.5],
    (l, node, nodes) => l.kind === 'network' && nodes.get(l.to) === node,
  ),
  {
    name: 'two nodes with a degraded link each',
    apply(system, next) {
      const shared = new Set(sharedLinks(system));
      const network = system.topology.links.flatMap((l, i) => (l.kind === 'network' && !shared.has(i) ? [i] : []));
      const a = pick(next, network);
      const b = pick(next, network);
      return withLinks(system, (i) => (i === a ? 0.3 : i === b ? 0.6 : undefined));
    },
  },
  {
    name: 'one leaf or spine link, sometimes a node link besides',
    apply(system, next) {
      const link = pick(next, sharedLinks(system));
      const other = next() < 0.4 ? Math.floor(next() * system.topology.links.length) : -1;
      const factor = pick(next, [0.05, 0.25, 0.5, 1.5]);
      return withLinks(system, (i) => (i === link ? factor : i === other ? 0.5 : undefined));
    },
  },
  {
    name: 'every NIC slower (every node touched: not reduced)',
    apply(system) {
      const shared = new Set(sharedLinks(system));
      return withLinks(system, (i) =>
        system.topology.links[i].kind === 'network' && !shared.has(i) ? 0.5 : undefined,
      );
    },
  },
];

/** The build context of PAT on the reducing path, as simulateCollective makes it for an edited system. */
function patContext(system: System, kind: CollectiveKind, bytes: number) {
  const channels = channelsFor(system, 'pat', 'Simple', bytes);
  return { system, algorithm: 'pat', kind, bytes, protocol: 'Simple', channels, reduceEdits: true } as const;
}

/** PAT's channel classes (one per NIC). */
function weightsOf(system: System, bytes: number): number[] {
  return channelClasses(channelsFor(system, 'pat', 'Simple', bytes), system.fabric.nicsPerNode);
}

/** Flows solved in PAT's rounds on the reducing path, and flows the rounds stand for. */
function solvedFlows(system: System, kind: CollectiveKind, bytes: number): { solved: number; every: number } {
  let solved = 0;
  let every = 0;
  for (const round of buildPat(patContext(system, kind, bytes)).rounds) {
    solved += round.packed?.set.count ?? round.flows.length;
    every += round.flows.length;
  }
  return { solved, every };
}

test('PAT on an edited system gives the unreduced results to rounding, and the full expansion to the µs', () => {
  let reduced = 0;
  let compared = 0;
  let bound = 0;
  const reducedByEdit = new Map<string, number>();
  for (let seed = 1; seed <= 48; seed++) {
    const next = random(9900 + seed);
    const nodes = pick(next, [2, 3, 5, 6, 9, 17, 33, 40, 70]);
    const system = resolveSystem(randomOnePerNodeSpec(next, nodes));
    const edit = EDITS[seed % EDITS.length];
    const edited = edit.apply(system, next);
    const kind = pick(next, ['allgather', 'reducescatter'] as const);
    const where = `seed ${9900 + seed} (${system.label}, ${system.fabric.network?.nodesPerLeaf} a leaf, ${edit.name}, ${kind})`;
    const { solved, every } = solvedFlows(edited, kind, 1 << 20);
    if (solved < every) {
      reduced++;
      if ((editedPat(patContext(edited, kind, 1 << 20), weightsOf(edited, 1 << 20))?.bound.length ?? 0) > 0) bound++;
      reducedByEdit.set(edit.name, (reducedByEdit.get(edit.name) ?? 0) + 1);
    }
    for (const bytes of [asBytes(pick(next, [64 << 10, 1 << 20])), asBytes(pick(next, [64 << 20, 1 << 30]))]) {
      const request = { bytes, kind, algorithm: 'pat' } as const;
      const fast = simulateCollective(edited, request);
      const unreduced = simulateCollective(edited, { ...request, trace: true });
      assertClose(resultFields(fast), resultFields(unreduced), `${where} ${bytes} B`);
      compared++;
      // The full expansion runs every channel: it is compared at the smaller size on the smaller systems.
      if (bytes > 1 << 20 || nodes > 17) continue;
      const full = simulateCollective(builtTopology(edited), request, { path: 'full' });
      assert.ok(
        Math.abs(fast.timeUs - full.timeUs) < 1,
        `${where} ${bytes} B: ${fast.timeUs} against ${full.timeUs} µs`,
      );
    }
  }
  assert.equal(compared, 96);
  // The reduction must have run, for every edit that touches fewer than all nodes.
  assert.ok(reduced >= 14, `only ${reduced} systems were reduced (${bound} with a binding changed leaf or spine link)`);
  // A changed leaf or spine link that could bind is reduced too, its flows simulated on their whole routes.
  assert.ok(bound >= 3, `only ${bound} systems with a binding changed leaf or spine link`);
  for (const edit of EDITS.slice(0, 5))
    assert.ok((reducedByEdit.get(edit.name) ?? 0) >= 2, `${edit.name}: ${reducedByEdit.get(edit.name) ?? 0} reduced`);
});

test('a round simulates the touched senders, the sender into a touched node and one stand-in', () => {
  const system = resolveSystem({ ...randomOnePerNodeSpec(random(5), 16), nic: { gbps: 400, perNode: 1 } });
  const last = `n${system.nodes - 1}.`;
  const nic = system.topology.links.findIndex((l) => l.kind === 'network' && l.from.startsWith(last));
  const edited = withLinks(system, (i) => (i === nic ? 0.25 : undefined));
  const channels = channelsFor(edited, 'pat', 'Simple', 1 << 20);
  const ctx = {
    system: edited,
    algorithm: 'pat',
    kind: 'allgather',
    bytes: 1 << 20,
    protocol: 'Simple',
    channels,
    reduceEdits: true,
  } as const;
  const rounds = buildPat(ctx).rounds;
  const nodes = nodeOf(edited);
  // Each packed flow's first resource is its sender's first send-side link.
  const senders = (r: number): number[] => {
    const set = rounds[r].packed!.set;
    const found = new Set<number>();
    for (let f = 0; f < set.count; f++) found.add(nodes.get(edited.topology.links[set.resource[set.start[f]]].from)!);
    return [...found];
  };
  // All-gather's first round sends 8 apart: node 15 sends to 7 and hears from 7; node 0 stands for the rest.
  assert.deepEqual(senders(0), [7, 15, 0]);
  // The last round sends to the next node: 14 sends into node 15.
  assert.deepEqual(senders(rounds.length - 1), [14, 15, 0]);
});

test('PAT on identical nodes solves one sender per round and gives the unreduced results bit for bit', () => {
  let reduced = 0;
  for (let seed = 1; seed <= 12; seed++) {
    const next = random(9960 + seed);
    const system = resolveSystem(randomOnePerNodeSpec(next, pick(next, [2, 3, 9, 33, 70, 200])));
    const kind = pick(next, ['allgather', 'reducescatter'] as const);
    const bytes = asBytes(pick(next, [64 << 10, 1 << 20, 256 << 20]));
    const channels = channelsFor(system, 'pat', 'Simple', bytes);
    const ctx = { system, algorithm: 'pat', kind, bytes, protocol: 'Simple', channels, representative: true } as const;
    const rounds = buildPat(ctx).rounds;
    if (rounds.every((round) => round.packed && round.packed.set.count === weightsOf(system, bytes).length)) reduced++;
    const where = `seed ${9960 + seed} (${system.label}, ${system.fabric.network?.nodesPerLeaf} a leaf, ${kind} ${bytes} B)`;
    const request = { bytes, kind, algorithm: 'pat' } as const;
    const fast = simulateCollective(system, request);
    assert.deepEqual(resultFields(fast), resultFields(simulateCollective(system, { ...request, trace: true })), where);
    if (system.nodes <= 33 && bytes <= 1 << 20) {
      const full = simulateCollective(builtTopology(system), request, { path: 'full' });
      assert.ok(Math.abs(fast.timeUs - full.timeUs) < 1, `${where}: ${fast.timeUs} against ${full.timeUs} µs`);
    }
  }
  // An oversubscribed network's leaf uplinks can bind: those systems run every rank, the others one sender a round.
  assert.ok(reduced >= 7, `only ${reduced} systems were reduced`);
});
