// The trace model every layer shares: the simulator, the native engine and the importers produce it,
// and the timeline, charts and exporters consume it. Times are microseconds from the trace's origin.
import type { Bytes, Micros } from '../units';

/** The three steps of an AllReduce, plus the compute and idle time around them in a training step. */
export type Phase = 'exchange' | 'reduce' | 'broadcast' | 'compute' | 'collective' | 'optimizer' | 'other';

export const PHASES: readonly Phase[] = [
  'exchange',
  'reduce',
  'broadcast',
  'compute',
  'collective',
  'optimizer',
  'other',
];

/** What a lane draws: one rank's GPU stream, a link's traffic, or a node summary. */
export type LaneKind = 'rank' | 'link' | 'node' | 'stream';

export interface Lane {
  /** Stable index used by spans. */
  readonly id: number;
  readonly kind: LaneKind;
  /** Human label, e.g. "node 0 · rank 3" or "nvlink gpu3→nvswitch". */
  readonly label: string;
  readonly node?: number;
  readonly rank?: number;
}

export interface Span {
  readonly lane: number;
  readonly rank: number;
  readonly phase: Phase;
  /** Display name; rendered as text, never as HTML. */
  readonly name?: string;
  /** Algorithm step (ring step, tree level), or -1 when not part of a schedule. */
  readonly step: number;
  readonly channel: number;
  readonly chunk: number;
  readonly bytes: Bytes;
  /** Ids of the links this transfer used, e.g. "gpu0->sw0". Empty for pure compute. */
  readonly links: readonly string[];
  readonly startUs: Micros;
  readonly endUs: Micros;
  /** Where the span came from in user code, when it did. */
  readonly source?: { readonly file: string; readonly line: number };
  /** Free-form details shown in the timeline's details view. */
  readonly args?: Readonly<Record<string, string | number>>;
}

export interface TraceMetadata {
  /** "simulated" | "native" | "imported:<kind>". */
  readonly origin: string;
  readonly title: string;
  readonly system?: string;
  readonly ranks: number;
  /** Free-form facts shown in the panel header, e.g. algorithm and protocol. */
  readonly facts?: Readonly<Record<string, string | number>>;
}

/**
 * A flow arrow between two spans, as Perfetto draws Chrome's flow events: what one span hands to another (a
 * gradient bucket to the collective that reduces it, a CPU launch to its kernel). Indices into Trace.spans.
 */
export interface Flow {
  readonly fromSpan: number;
  readonly toSpan: number;
  readonly name?: string;
}

export interface Trace {
  readonly metadata: TraceMetadata;
  readonly lanes: readonly Lane[];
  readonly spans: readonly Span[];
  /** Flow arrows between spans; absent when the trace has none. */
  readonly flows?: readonly Flow[];
}

/** The fact a simulated trace carries when its span limit left flows without spans: the limit. */
export const TRUNCATED_FACT = 'span limit reached';
