// What the edited-system property tests share: a random H100 system with a NIC per GPU, and edits of its links.
import { asGBps, type System, type SystemSpec } from '../../../../src/engine/index';
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
