// Issue 17's planning workloads inside one process: a 31-size sweep on a 1,024-GPU system (what `sweep` and the
// panels run), and one 1 GiB AllReduce on 131,072 GPUs with one degraded cable, which the fast path may not reduce
// to one representative node. The degraded system is the resolved one with one NIC link of the last node at a
// quarter of its speed, as the equivalence test edits it; resolution and the edit are reported, not timed.
import { performance } from 'node:perf_hooks';
import {
  presetSystem,
  resolveSystem,
  simulateCollective,
  sweepAllReduce,
  type Algorithm,
  type System,
  asBytes,
  asGBps,
} from '../src/engine/index';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sweepInParallel } from '../src/cli/commands/sweep';
import type { Benchmark } from './types';

const GiB = asBytes(2 ** 30);
const DEGRADED_NODES = 16384;
const PAT_NODES = 131072;

let sweepFacts: Record<string, unknown> = {};
let parallelFacts: Record<string, unknown> = {};
/** The CLI's worker bundle (`npm run bench` builds it first). */
const CLI_WORKER = join(import.meta.dirname, '..', 'dist', 'cli-worker.js');
let degradedFacts: Record<string, unknown> = {};
let leafFacts: Record<string, unknown> = {};
const forcedFacts: Record<string, Record<string, unknown>> = {};

/** The system with the last node's first network link at a quarter of its bandwidth. */
function withDegradedLink(system: System): { system: System; link: string } {
  const lastNode = `n${system.nodes - 1}.`;
  const index = system.topology.links.findIndex((l) => l.kind === 'network' && l.from.startsWith(lastNode));
  if (index < 0) throw new Error(`no network link leaves node ${system.nodes - 1}`);
  const links = system.topology.links.map((l, i) => (i === index ? { ...l, GBps: asGBps(l.GBps / 4) } : l));
  return { system: { ...system, topology: { ...system.topology, links } }, link: system.topology.links[index].id };
}

/**
 * The system with rail 0's first leaf uplink (leaf 0 to the spine) at a quarter of its bandwidth: a shared link that
 * serves the 32 nodes under that leaf, on one rail.
 */
function withDegradedLeafUplink(system: System): { system: System; link: string } {
  const index = system.topology.links.findIndex((l) => l.from === 'rail0.leaf0' && l.to === 'spine');
  if (index < 0) throw new Error('no link from rail 0 leaf 0 to the spine');
  const links = system.topology.links.map((l, i) => (i === index ? { ...l, GBps: asGBps(l.GBps / 4) } : l));
  return { system: { ...system, topology: { ...system.topology, links } }, link: system.topology.links[index].id };
}

export const benchmarks: Benchmark[] = [
  {
    name: 'engine: AllReduce sweep 8 B..8 GiB (×2, 31 sizes) on 1,024 GPUs (128 dgx-h100 nodes)',
    unit: 'ms',
    target: 1000,
    runs: 3,
    measure() {
      const system = resolveSystem(presetSystem('dgx-h100', { nodes: 128 })!);
      const started = performance.now();
      const rows = sweepAllReduce(system, { minBytes: asBytes(8), maxBytes: asBytes(8 * GiB), factor: 2 });
      const ms = performance.now() - started;
      sweepFacts = { sizes: rows.length, choices: [...new Set(rows.map((r) => `${r.algorithm}/${r.protocol}`))] };
      return ms;
    },
    extra: () => sweepFacts,
  },
  {
    // What `sweep --system dgx-h100 --nodes 128` runs: the same sizes on the CLI's worker threads, one per two cores
    // (none on two cores, where the record equals the serial one), each resolving the system itself (timed here, as
    // the workers' start is). The name is kept so the records stay comparable.
    name: 'cli: AllReduce sweep 8 B..8 GiB (×2, 31 sizes) on 1,024 GPUs, worker threads',
    unit: 'ms',
    target: 1000,
    runs: 3,
    async measure() {
      if (!existsSync(CLI_WORKER)) throw new Error(`${CLI_WORKER} is missing: run npm run build first`);
      const system = resolveSystem(presetSystem('dgx-h100', { nodes: 128 })!);
      const silent = { update: () => undefined, finish: () => undefined };
      const started = performance.now();
      const { rows, workers } = await sweepInParallel(
        system,
        { minBytes: asBytes(8), maxBytes: asBytes(8 * GiB), factor: 2 },
        silent,
        { workerScript: CLI_WORKER },
      );
      const ms = performance.now() - started;
      parallelFacts = { sizes: rows.length, workers };
      return ms;
    },
    extra: () => parallelFacts,
  },
  {
    name: 'engine: 1 GiB AllReduce, 131,072 GPUs, one degraded link',
    unit: 'ms',
    target: 2000,
    runs: 1,
    measure() {
      const resolveStarted = performance.now();
      const homogeneous = resolveSystem(presetSystem('dgx-h100', { nodes: DEGRADED_NODES })!);
      const { system, link } = withDegradedLink(homogeneous);
      const resolveMs = performance.now() - resolveStarted;
      const started = performance.now();
      const result = simulateCollective(system, { bytes: GiB });
      const ms = performance.now() - started;
      degradedFacts = {
        link,
        resolveAndEditMs: Math.round(resolveMs),
        algorithm: result.algorithm,
        timeUs: result.timeUs,
      };
      return ms;
    },
    extra: () => degradedFacts,
  },
  {
    // A degraded leaf or spine link serves many nodes of one rail: that rail is simulated over every node
    // (edited-classes.ts), not every rail (17.4 s node by node in session 10).
    name: 'engine: 1 GiB AllReduce, 131,072 GPUs, one degraded leaf-to-spine link',
    unit: 'ms',
    target: 2000,
    runs: 3,
    measure() {
      const { system, link } = withDegradedLeafUplink(
        resolveSystem(presetSystem('dgx-h100', { nodes: DEGRADED_NODES })!),
      );
      const started = performance.now();
      const result = simulateCollective(system, { bytes: GiB });
      const ms = performance.now() - started;
      leafFacts = { link, algorithm: result.algorithm, timeUs: result.timeUs };
      return ms;
    },
    extra: () => leafFacts,
  },
  // The same edited system with the algorithm forced: heterogeneity must cost in proportion whatever NCCL would
  // choose (ring-edited.ts, tree-edited.ts), not only for NVLSTree. NVLS across nodes and CollNet reduce in the
  // network's switches (SHARP, on for them); they and hierarchical simulate the edited node and one stand-in node
  // (edited-nodes.ts, sharp-edited.ts), not every node (24-39 s of CPU node by node in session 11).
  ...(['ring', 'tree'] as const).map((algorithm) => forcedOnDegradedLink(algorithm, false)),
  ...(['nvls', 'collnetdirect', 'collnetchain', 'hierarchical'] as const).map((algorithm) =>
    forcedOnDegradedLink(algorithm, true),
  ),
  {
    // Hierarchical with fewer NICs than GPUs (dgx-h100 with four NICs a node, two GPUs on each): the GPUs that share
    // a NIC form one group across nodes, and the touched groups run with one stand-in group of each NIC and shape
    // (hierarchical-edited.ts), not every pair (16.6 s of CPU pair by pair with a NIC per GPU in session 11).
    name: 'engine: 1 GiB AllReduce, 131,072 GPUs on 4 NICs a node, one degraded link, forced hierarchical',
    unit: 'ms',
    target: 2000,
    runs: 3,
    measure() {
      const spec = presetSystem('dgx-h100', { nodes: DEGRADED_NODES })!;
      const { system } = withDegradedLink(resolveSystem({ ...spec, nic: { ...spec.nic!, perNode: 4 } }));
      const started = performance.now();
      const result = simulateCollective(system, { bytes: GiB, algorithm: 'hierarchical' });
      const ms = performance.now() - started;
      forcedFacts.hierarchicalFewerNics = { timeUs: result.timeUs, protocol: result.protocol };
      return ms;
    },
    extra: () => forcedFacts.hierarchicalFewerNics ?? {},
  },
  {
    // PAT runs with one GPU per node: 131,072 nodes, the last one's NIC link at a quarter of its speed. Each round
    // simulates the senders the edit touches and one stand-in (pat-edited.ts), not every rank (2.7 s of wall time
    // at 8,192 nodes node by node, session 13).
    name: 'engine: 1 GiB all-gather, 131,072 GPUs one per node, one degraded link, forced pat',
    unit: 'ms',
    target: 2000,
    runs: 3,
    measure() {
      const { system } = withDegradedLink(
        resolveSystem({
          gpu: 'H100-SXM',
          nodes: PAT_NODES,
          gpusPerNode: 1,
          intraNode: 'nvswitch',
          nic: { gbps: 400, perNode: 1 },
        }),
      );
      const started = performance.now();
      const result = simulateCollective(system, { bytes: GiB, kind: 'allgather', algorithm: 'pat' });
      const ms = performance.now() - started;
      forcedFacts.pat = { timeUs: result.timeUs, protocol: result.protocol };
      return ms;
    },
    extra: () => forcedFacts.pat ?? {},
  },
  {
    // The same nodes under an oversubscribed network (leaf uplinks at half the NICs' sum), every node alike: the
    // binding leaf links join each round into one component across the leaves, and the round folds onto the first
    // leaf (pat-folded.ts) instead of running every rank.
    name: 'engine: 1 GiB all-gather, 131,072 GPUs one per node, 2:1 oversubscribed network, forced pat',
    unit: 'ms',
    target: 2000,
    runs: 3,
    measure() {
      const system = resolveSystem({
        gpu: 'H100-SXM',
        nodes: PAT_NODES,
        gpusPerNode: 1,
        intraNode: 'nvswitch',
        nic: { gbps: 400, perNode: 1 },
        network: { oversubscription: 2 },
      });
      const started = performance.now();
      const result = simulateCollective(system, { bytes: GiB, kind: 'allgather', algorithm: 'pat' });
      const ms = performance.now() - started;
      forcedFacts.patOversubscribed = { timeUs: result.timeUs, protocol: result.protocol };
      return ms;
    },
    extra: () => forcedFacts.patOversubscribed ?? {},
  },
];

/** One GiB on the 131,072-GPU system with one degraded link and `algorithm` forced; `sharp` turns SHARP on. */
function forcedOnDegradedLink(algorithm: Algorithm, sharp: boolean): Benchmark {
  return {
    name: `engine: 1 GiB AllReduce, 131,072 GPUs, one degraded link, forced ${algorithm}`,
    unit: 'ms',
    target: 2000,
    runs: 3,
    measure() {
      const spec = presetSystem('dgx-h100', { nodes: DEGRADED_NODES })!;
      const { system } = withDegradedLink(
        resolveSystem(sharp ? { ...spec, network: { ...spec.network, sharp: true } } : spec),
      );
      const started = performance.now();
      const result = simulateCollective(system, { bytes: GiB, algorithm });
      const ms = performance.now() - started;
      forcedFacts[algorithm] = { timeUs: result.timeUs, protocol: result.protocol };
      return ms;
    },
    extra: () => forcedFacts[algorithm] ?? {},
  };
}
