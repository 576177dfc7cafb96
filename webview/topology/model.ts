// Pure topology computations for the panel: link utilisation from a trace, the links each channel uses, and a
// layered layout (GPUs on top, switches below, CPUs and NICs under them, the network fabric at the bottom).
import type { Trace } from '../../src/engine/index';
import type { ChannelPath, TopologyLink, TopologyVertex } from '../../src/protocol';

/** Bytes carried and share of capacity used per link id over the trace's duration, in [0, 1]. */
export function linkUtilisation(
  trace: Trace,
  links: readonly TopologyLink[],
): { utilisation: Map<string, number>; bytes: Map<string, number> } {
  const bytes = new Map<string, number>();
  let startUs = Infinity;
  let endUs = -Infinity;
  for (const span of trace.spans) {
    if (span.startUs < startUs) startUs = span.startUs;
    if (span.endUs > endUs) endUs = span.endUs;
    if (span.bytes <= 0) continue;
    for (const link of span.links) bytes.set(link, (bytes.get(link) ?? 0) + span.bytes);
  }
  const durationUs = endUs - startUs;
  const utilisation = new Map<string, number>();
  for (const link of links) {
    const carried = bytes.get(link.id) ?? 0;
    // GB/s × 1e3 is bytes per µs.
    const capacity = link.GBps * 1e3 * durationUs;
    utilisation.set(link.id, capacity > 0 ? Math.min(1, carried / capacity) : 0);
  }
  return { utilisation, bytes };
}

/** The links each channel's spans used, as edges between vertices; a ring when every vertex has one way in and out. */
export function channelsFromTrace(trace: Trace, links: readonly TopologyLink[]): ChannelPath[] {
  const byId = new Map(links.map((l) => [l.id, l]));
  const edges = new Map<number, Map<string, [string, string]>>();
  for (const span of trace.spans) {
    for (const id of span.links) {
      const link = byId.get(id);
      if (!link) continue;
      let channel = edges.get(span.channel);
      if (!channel) edges.set(span.channel, (channel = new Map()));
      channel.set(id, [link.from, link.to]);
    }
  }
  return [...edges.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([channel, map]) => {
      const list = [...map.values()];
      const out = new Map<string, number>();
      const into = new Map<string, number>();
      for (const [from, to] of list) {
        out.set(from, (out.get(from) ?? 0) + 1);
        into.set(to, (into.get(to) ?? 0) + 1);
      }
      const vertices = [...new Set(list.flat())];
      const ring = vertices.every((v) => out.get(v) === 1 && into.get(v) === 1);
      return { channel, kind: ring ? 'ring' : 'tree', vertices, edges: list };
    });
}

export interface Point {
  readonly x: number;
  readonly y: number;
}

export interface Layout {
  readonly positions: Map<string, Point>;
  /** Node boxes, for drawing a frame and a caption around each node. */
  readonly nodes: { node: number; x: number; y: number; width: number; height: number }[];
  readonly width: number;
  readonly height: number;
  /** Horizontal room per fabric vertex, so wide switch boxes can shrink to fit. */
  readonly fabricSpacing: number;
}

const LAYER: Readonly<Record<TopologyVertex['kind'], number>> = {
  gpu: 0,
  switch: 1,
  'pcie-switch': 1,
  cpu: 2,
  host: 2,
  nic: 2,
};
const NODE_WIDTH = 420;
const NODE_HEIGHT = 230;
const GAP = 24;
const FABRIC_HEIGHT = 90;

/** Positions every vertex: nodes side by side (wrapping after `columns`), layers top to bottom inside each node. */
export function layoutTopology(vertices: readonly TopologyVertex[], columns = 4): Layout {
  const nodeIds = [...new Set(vertices.filter((v) => v.node >= 0).map((v) => v.node))].sort((a, b) => a - b);
  const cols = Math.max(1, Math.min(columns, nodeIds.length));
  const positions = new Map<string, Point>();
  const nodes: Layout['nodes'] = [];
  nodeIds.forEach((node, index) => {
    const x = GAP + (index % cols) * (NODE_WIDTH + GAP);
    const y = GAP + Math.floor(index / cols) * (NODE_HEIGHT + GAP);
    nodes.push({ node, x, y, width: NODE_WIDTH, height: NODE_HEIGHT });
    const members = vertices.filter((v) => v.node === node);
    for (let layer = 0; layer < 3; layer++) {
      const inLayer = members.filter((v) => LAYER[v.kind] === layer);
      inLayer.forEach((v, i) =>
        positions.set(v.id, { x: x + ((i + 0.5) * NODE_WIDTH) / inLayer.length, y: y + 40 + layer * 75 }),
      );
    }
  });
  const rows = Math.ceil(nodeIds.length / cols);
  const fabric = vertices.filter((v) => v.node < 0 || !nodeIds.includes(v.node));
  const width = GAP + cols * (NODE_WIDTH + GAP);
  const fabricY = GAP + rows * (NODE_HEIGHT + GAP) + FABRIC_HEIGHT / 2;
  fabric.forEach((v, i) => positions.set(v.id, { x: ((i + 0.5) * width) / fabric.length, y: fabricY }));
  return {
    positions,
    nodes,
    width,
    height: fabricY + (fabric.length > 0 ? FABRIC_HEIGHT / 2 : 0) + GAP,
    fabricSpacing: width / Math.max(1, fabric.length),
  };
}

/** One drawn line per pair of vertices: the two directions of a link share it, showing the busier one. */
export function undirectedLinks(
  links: readonly TopologyLink[],
  utilisation: ReadonlyMap<string, number>,
): { a: string; b: string; links: TopologyLink[]; utilisation: number }[] {
  const pairs = new Map<string, { a: string; b: string; links: TopologyLink[]; utilisation: number }>();
  for (const link of links) {
    const [a, b] = link.from < link.to ? [link.from, link.to] : [link.to, link.from];
    const key = `${a}\u0000${b}`;
    const pair = pairs.get(key) ?? { a, b, links: [], utilisation: 0 };
    pair.links.push(link);
    pair.utilisation = Math.max(pair.utilisation, utilisation.get(link.id) ?? 0);
    pairs.set(key, pair);
  }
  return [...pairs.values()];
}
