// A builder that validates spans as they are recorded, so renderers and exporters can trust a trace.
import type { Flow, Lane, LaneKind, Span, Trace, TraceMetadata } from './model';

export class TraceBuilder {
  private readonly lanes: Lane[] = [];
  private readonly laneByKey = new Map<string, number>();
  private readonly spans: Span[] = [];
  private readonly flows: Flow[] = [];

  constructor(private readonly metadata: TraceMetadata) {}

  /** Returns the id of the lane with this kind and label, creating it on first use. */
  lane(kind: LaneKind, label: string, extra: { node?: number; rank?: number } = {}): number {
    const key = `${kind}\u0000${label}`;
    const existing = this.laneByKey.get(key);
    if (existing !== undefined) return existing;
    const id = this.lanes.length;
    this.lanes.push({ id, kind, label, ...extra });
    this.laneByKey.set(key, id);
    return id;
  }

  /** Records a span; returns its index, which flows refer to. */
  add(span: Span): number {
    if (!(span.lane >= 0 && span.lane < this.lanes.length)) throw new Error(`span on unknown lane ${span.lane}`);
    if (!Number.isFinite(span.startUs) || !Number.isFinite(span.endUs)) throw new Error('span time is not finite');
    if (span.endUs < span.startUs)
      throw new Error(`span ends (${span.endUs} µs) before it starts (${span.startUs} µs)`);
    if (span.bytes < 0) throw new Error('span has negative bytes');
    this.spans.push(span);
    return this.spans.length - 1;
  }

  /** Records a flow arrow from one recorded span to another. */
  flow(fromSpan: number, toSpan: number, name?: string): void {
    const known = (i: number): boolean => Number.isInteger(i) && i >= 0 && i < this.spans.length;
    if (!known(fromSpan) || !known(toSpan)) throw new Error(`flow between unknown spans ${fromSpan} → ${toSpan}`);
    this.flows.push(name === undefined ? { fromSpan, toSpan } : { fromSpan, toSpan, name });
  }

  get spanCount(): number {
    return this.spans.length;
  }

  build(): Trace {
    const trace = { metadata: this.metadata, lanes: this.lanes, spans: this.spans };
    return this.flows.length > 0 ? { ...trace, flows: this.flows } : trace;
  }
}
