// Accumulates vertices and duplex links with stable ids, so fabric builders stay declarative.
import { EngineError } from '../errors';
import type { GBps, Micros } from '../units';
import type { Link, LinkKind, Vertex, VertexKind } from './model';

export class TopologyBuilder {
  readonly vertices: Vertex[] = [];
  readonly links: Link[] = [];
  /** Built on the first lookup by name: large NVSwitch clusters keep link indices and never need it. */
  private linkIndex: Map<string, number> | undefined;

  /**
   * Adds a vertex and returns its id. Each fabric builder creates every vertex exactly once (ids carry the node's
   * prefix), so there is no set of ids to consult: hashing 400,000 fresh id strings cost more than building them.
   */
  vertex(id: string, kind: VertexKind, label: string, node: number): string {
    this.vertices.push({ id, kind, label, node });
    return id;
  }

  /** Adds both directions of a full-duplex link (each pair is added once) and returns [forward, backward] indices. */
  duplex(a: string, b: string, GBps: GBps, latencyUs: Micros, kind: LinkKind): [number, number] {
    if (!(GBps > 0) || !Number.isFinite(GBps))
      throw new EngineError(`link ${a}↔${b} needs a positive bandwidth, got ${GBps} GB/s`);
    if (!(latencyUs >= 0) || !Number.isFinite(latencyUs))
      throw new EngineError(`link ${a}↔${b} needs a non-negative latency, got ${latencyUs} µs`);
    return [this.add(a, b, GBps, latencyUs, kind), this.add(b, a, GBps, latencyUs, kind)];
  }

  private add(from: string, to: string, GBps: GBps, latencyUs: Micros, kind: LinkKind): number {
    const id = `${from}->${to}`;
    const index = this.links.length;
    this.links.push({ id, from, to, GBps, latencyUs, kind });
    this.linkIndex?.set(id, index);
    return index;
  }

  /** Index of the directed link from → to; a missing link is a bug in a fabric builder. */
  link(from: string, to: string): number {
    if (!this.linkIndex) this.linkIndex = new Map(this.links.map((l, i) => [l.id, i]));
    const index = this.linkIndex.get(`${from}->${to}`);
    if (index === undefined) throw new Error(`no link ${from}->${to}`);
    return index;
  }
}
