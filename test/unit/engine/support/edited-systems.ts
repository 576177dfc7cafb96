// What the edited-system property tests share: a random H100 system with a NIC per GPU, and edits of its links.
import { asGBps, type CollectiveResult, type Link, type System, type SystemSpec } from '../../../../src/engine/index';
import { pick } from './random';

/** A random H100 system with a NIC per GPU, its leaves holding one node, a few or all. */
export function randomH100Spec(next: () => number, nodes: number): SystemSpec {
  const gpusPerNode = pick(next, [2, 4, 8]);
  return {
    gpu: 'H100-SXM',
    nodes,
    gpusPerNode,
    intraNode: 'nvswitch',
    nic: { gbps: pick(next, [200, 400]), perNode: gpusPerNode },
    network: { nodesPerLeaf: pick(next, [1, 2, 4, 32]) },
  };
}

/**
 * A random H100 system with one GPU per node (PAT's), one or two NICs, its leaves holding one node, a few or all,
 * and in one of four an oversubscribed network (its leaf uplinks can bind).
 */
export function randomOnePerNodeSpec(next: () => number, nodes: number): SystemSpec {
  return {
    gpu: 'H100-SXM',
    nodes,
    gpusPerNode: 1,
    intraNode: 'nvswitch',
    nic: { gbps: pick(next, [200, 400]), perNode: pick(next, [1, 1, 2]) },
    network: { nodesPerLeaf: pick(next, [1, 2, 3, 4, 8, 32]), oversubscription: pick(next, [1, 1, 1, 2]) },
  };
}

/** The system with each link whose index `change` answers scaled by that factor. */
export function withLinks(system: System, change: (index: number) => number | undefined): System {
  const links = system.topology.links.map((l, i) => {
    const factor = change(i);
    return factor === undefined ? l : { ...l, GBps: asGBps(l.GBps * factor) };
  });
  return { ...system, topology: { ...system.topology, links } };
}

export const nodeOf = (system: System): Map<string, number> =>
  new Map(system.topology.vertices.map((v) => [v.id, v.node]));

export type Edit = { name: string; apply: (system: System, next: () => number) => System };

/** Every link of one random node at half its speed. */
export const SLOW_NODE: Edit = {
  name: 'one slow node',
  apply(system, next) {
    const nodes = nodeOf(system);
    const node = Math.floor(next() * system.nodes);
    return withLinks(system, (i) => {
      const l = system.topology.links[i];
      return nodes.get(l.from) === node || nodes.get(l.to) === node ? 0.5 : undefined;
    });
  },
};

/** Indices of the leaf and spine links: neither end belongs to a node. */
export function sharedLinks(system: System): number[] {
  const nodes = nodeOf(system);
  const outside = (id: string): boolean => (nodes.get(id) ?? -1) < 0;
  return system.topology.links.flatMap((l, i) => (outside(l.from) && outside(l.to) ? [i] : []));
}

/**
 * An edit of one link of a random node: the node is drawn, then one of its links that `chooses` takes, then the
 * factor from `factors` (in that order, so every test draws alike).
 */
export function nodeLinkEdit(
  name: string,
  factors: readonly number[],
  chooses: (link: Link, node: number, nodes: Map<string, number>) => boolean,
): Edit {
  return {
    name,
    apply(system, next) {
      const nodes = nodeOf(system);
      const node = Math.floor(next() * system.nodes);
      const own = system.topology.links.flatMap((l, i) => (chooses(l, node, nodes) ? [i] : []));
      const link = pick(next, own);
      return withLinks(system, (i) => (i === link ? pick(next, factors) : undefined));
    },
  };
}

/** Links leaving the node. */
export const leaving = (l: Link, node: number, nodes: Map<string, number>): boolean => nodes.get(l.from) === node;

/** The first network link leaving the last node at a quarter of its speed (the benchmark's edit). */
export function lastNicEdit(name: string): Edit {
  return {
    name,
    apply(system) {
      const last = `n${system.nodes - 1}.`;
      const link = system.topology.links.findIndex((l) => l.kind === 'network' && l.from.startsWith(last));
      return withLinks(system, (i) => (i === link ? 0.25 : undefined));
    },
  };
}

/** One rail (a random local GPU's NIC) at half speed on every node, both directions. */
export function slowerRailEdit(name: string): Edit {
  return {
    name,
    apply(system, next) {
      const rail = Math.floor(next() * system.gpusPerNode);
      const nic = new RegExp(`(^|\\.)nic${rail}$`);
      return withLinks(system, (i) => {
        const l = system.topology.links[i];
        return l.kind === 'network' && (nic.test(l.from) || nic.test(l.to)) ? 0.5 : undefined;
      });
    },
  };
}

/** Every field of a result but the trace, which only a traced run has. */
export function resultFields(result: CollectiveResult): Record<string, unknown> {
  const { trace: _trace, spanCount: _spans, ...rest } = result;
  return rest;
}

/** The built topology (plain arrays of every node), as the full path's reference reads it. */
export function builtTopology(system: System): System {
  return { ...system, topology: { vertices: system.topology.vertices, links: system.topology.links } };
}
