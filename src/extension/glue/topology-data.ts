// Builds the topology panel's data: the system's vertices and links, the trace that heat-colours them when it is
// of this system, and the ring or tree of every channel. Pure, so the tests check what the panel will draw.
import {
  ALGORITHMS,
  PROTOCOLS,
  EngineError,
  channelPlan,
  type Algorithm,
  type Bytes,
  type Protocol,
  type System,
  type Trace,
} from '../../engine/index';
import type { ChannelPath, TopologyData } from '../../protocol';

/** A trace this large stays out: it travels in the panel's saved state too. */
export const MAX_TOPOLOGY_TRACE_SPANS = 200_000;
/**
 * Channels beyond this many edges in all stay out (a one-shot mesh or a tree over a thousand nodes on every
 * channel would bloat the message and the saved state); at least one channel is always sent.
 */
export const MAX_CHANNEL_EDGES = 100_000;

export interface TopologyInput {
  readonly system: System;
  /** The label the user picked the system by, e.g. "8× H100 NVSwitch". */
  readonly label: string;
  /** The message size the channels are laid out for (the selected bucket size). */
  readonly bytes: Bytes;
  /** The trace shown in the timeline, if any; used only when it is of this system. */
  readonly trace?: Trace;
}

function fact<T extends string>(trace: Trace | undefined, key: string, allowed: readonly T[]): T | undefined {
  const value = trace?.metadata.facts?.[key];
  return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
}

/**
 * The panel's data. When the trace was simulated on this system its algorithm and protocol fix the channels'
 * layout, so the overlay matches the links the trace colours; otherwise the engine picks as it would for `bytes`.
 */
export function topologyData(input: TopologyInput): TopologyData {
  const { system, label, bytes } = input;
  const fits =
    input.trace && input.trace.metadata.system === label && input.trace.spans.length <= MAX_TOPOLOGY_TRACE_SPANS;
  const trace = fits ? input.trace : undefined;
  const algorithm: Algorithm | undefined = fact(trace, 'algorithm', ALGORITHMS);
  const protocol: Protocol | undefined = fact(trace, 'protocol', PROTOCOLS);
  let channels: ChannelPath[] | undefined;
  try {
    const plan = channelPlan(system, { bytes, algorithm, protocol });
    channels = [];
    let edges = 0;
    for (const p of plan.paths) {
      edges += p.edges.length;
      if (channels.length > 0 && edges > MAX_CHANNEL_EDGES) break;
      channels.push({ channel: p.channel, kind: p.kind, vertices: p.vertices, edges: p.edges });
    }
  } catch (error) {
    // A system the engine cannot lay channels out on still shows its vertices and links.
    if (!(error instanceof EngineError)) throw error;
  }
  const { vertices, links } = system.topology;
  return { label, vertices, links, trace, channels };
}
