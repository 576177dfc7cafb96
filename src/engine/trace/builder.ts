// A builder that validates spans as they are recorded, so renderers and exporters can trust a trace.
import type { Lane, LaneKind, Span, Trace, TraceMetadata } from './model';

export class TraceBuilder {
  private readonly lanes: Lane[] = [];
  private readonly laneByKey = new Map<string, number>();
  private readonly spans: Span[] = [];

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

  add(span: Span): void {
    if (!(span.lane >= 0 && span.lane < this.lanes.length)) throw new Error(`span on unknown lane ${span.lane}`);
    if (!Number.isFinite(span.startUs) || !Number.isFinite(span.endUs)) throw new Error('span time is not finite');
    if (span.endUs < span.startUs)
      throw new Error(`span ends (${span.endUs} µs) before it starts (${span.startUs} µs)`);
    if (span.bytes < 0) throw new Error('span has negative bytes');
    this.spans.push(span);
  }

  get spanCount(): number {
    return this.spans.length;
  }

  build(): Trace {
    return { metadata: this.metadata, lanes: this.lanes, spans: this.spans };
  }
}
