// The spans of a traced run: made as the run goes (SpanEmitter), or recorded as the flows and times they come from
// (SpanRecorder) and made later for chosen ranks only. A summary of 131,072 ranks draws a few dozen nodes, while
// the run simulates one GPU of every node: recording keeps four entries per flow instead of a Span object with its
// name, links and lane, and the summary asks for the Span objects of the ranks it draws (trace/summary.ts).
import { REDUCE_MEMORY_FACTOR } from '../constants';
import { linkIds, linkTable } from '../topology/link-table';
import type { System } from '../topology/model';
import { TraceBuilder } from '../trace/builder';
import type { Trace, TraceMetadata } from '../trace/model';
import type { RecordedSpans, SimulatedSpanVisitor, SpanKeys } from '../trace/simulated-index';
import { asBytes, asMicros } from '../units';
import type { Flow } from './schedule';

/** The spans (a flow's transfer, and its reduction when it reduces) that `flow` adds to a trace. */
export function spansOf(flow: Flow): number {
  return flow.reduceBytes > 0 ? 2 : 1;
}

/** Time the receiver's reduction of `flow` takes at the end of the transfer, µs. */
function reduceUsOf(system: System, flow: Flow, finishUs: number): number {
  return Math.min(finishUs, (flow.reduceBytes * flow.weight * REDUCE_MEMORY_FACTOR) / (system.hbmGBps * 1e3));
}

/** Makes the Span objects of flows on a builder: a lane per rank, made up front, and a reduce stream per receiver. */
export class SpanEmitter {
  private readonly builder: TraceBuilder;
  private readonly rankLanes: number[] = [];
  private readonly reduceLanes: number[] = [];
  /** Each round's flows cross the links of the round before: one string per link, shared by the spans naming it. */
  private readonly linkNames = new Map<number, string>();

  /** `ranks`: the ranks whose spans are made (every rank when not given); the others' flows are passed over. */
  constructor(
    private readonly system: System,
    metadata: TraceMetadata,
    private readonly ranks?: ReadonlySet<number>,
  ) {
    this.builder = new TraceBuilder(metadata);
    const wanted = ranks ? [...ranks].sort((a, b) => a - b) : Array.from({ length: system.ranks }, (_, r) => r);
    for (const r of wanted) {
      this.rankLanes[r] = this.builder.lane('rank', `rank ${r}`, { rank: r, node: Math.floor(r / system.gpusPerNode) });
    }
  }

  get spanCount(): number {
    return this.builder.spanCount;
  }

  build(): Trace {
    return this.builder.build();
  }

  record(flow: Flow, step: number, startUs: number, finishUs: number): void {
    const { builder, system, ranks } = this;
    if (!ranks || ranks.has(flow.rank)) {
      builder.add({
        lane: this.rankLanes[flow.rank],
        rank: flow.rank,
        phase: flow.phase,
        name: `${flow.phase} → rank ${flow.peer}`,
        step,
        channel: flow.channel,
        chunk: flow.chunk,
        bytes: asBytes(flow.bytes * flow.weight),
        links: this.linkNamesOf(flow),
        startUs: asMicros(startUs),
        endUs: asMicros(startUs + finishUs),
        args: { copies: flow.weight, peer: flow.peer },
      });
    }
    if (flow.reduceBytes <= 0) return;
    const receiver = flow.reducedAt?.rank ?? flow.peer;
    if (ranks && !ranks.has(receiver)) return;
    const sender = flow.reducedAt?.from ?? flow.rank;
    if (this.reduceLanes[receiver] === undefined) {
      this.reduceLanes[receiver] = builder.lane('stream', `rank ${receiver} · reduce`, {
        rank: receiver,
        node: Math.floor(receiver / system.gpusPerNode),
      });
    }
    const reduceUs = reduceUsOf(system, flow, finishUs);
    builder.add({
      lane: this.reduceLanes[receiver],
      rank: receiver,
      phase: 'reduce',
      name: `reduce from rank ${sender}`,
      step,
      channel: flow.channel,
      chunk: flow.chunk,
      bytes: asBytes(flow.reduceBytes * flow.weight),
      links: [],
      startUs: asMicros(startUs + finishUs - reduceUs),
      endUs: asMicros(startUs + finishUs),
    });
  }

  /** Named from the layout: reading topology.links would build every node's links (a million at 131,072 GPUs). */
  private linkNamesOf(flow: Flow): string[] {
    const count = linkTable(this.system.topology).count;
    const ids = linkIds(this.system.topology);
    const names: string[] = [];
    for (const r of flow.resources) {
      if (r >= count) continue;
      let name = this.linkNames.get(r);
      if (name === undefined) this.linkNames.set(r, (name = ids.id(r)));
      names.push(name);
    }
    return names;
  }
}

/** The flows of a traced run and their times, from which any rank's spans are made as SpanEmitter makes them. */
export class SpanRecorder implements RecordedSpans {
  private readonly flows: Flow[] = [];
  private readonly steps: number[] = [];
  private readonly startsUs: number[] = [];
  private readonly finishesUs: number[] = [];
  private spans = 0;
  private lastUs = 0;
  /** The trace's metadata, with the run's facts once it has ended (see close). */
  private metadata: TraceMetadata;

  constructor(
    private readonly system: System,
    metadata: TraceMetadata,
  ) {
    this.metadata = metadata;
  }

  get count(): number {
    return this.spans;
  }

  get endUs(): number {
    return this.lastUs;
  }

  record(flow: Flow, step: number, startUs: number, finishUs: number): void {
    this.flows.push(flow);
    this.steps.push(step);
    this.startsUs.push(startUs);
    this.finishesUs.push(finishUs);
    this.spans += spansOf(flow);
    this.lastUs = Math.max(this.lastUs, startUs + finishUs);
  }

  /** Ends the recording with the trace's final metadata (the run's facts, a truncation). */
  close(metadata: TraceMetadata): void {
    this.metadata = metadata;
  }

  forEach(visit: SimulatedSpanVisitor, keys?: SpanKeys): void {
    const { flows, steps, startsUs, finishesUs, system } = this;
    for (let i = 0; i < flows.length; i++) {
      const flow = flows[i];
      const step = steps[i];
      const startUs = startsUs[i];
      const endUs = startUs + finishesUs[i];
      const { channel, chunk, weight } = flow;
      visit(
        flow.rank,
        flow.peer,
        keys ? keys.id(true, flow.phase, step, channel, chunk, flow.bytes * weight, startUs, endUs) : -1,
      );
      if (flow.reduceBytes <= 0) continue;
      const reduceUs = reduceUsOf(system, flow, finishesUs[i]);
      visit(
        flow.reducedAt?.rank ?? flow.peer,
        flow.reducedAt?.from ?? flow.rank,
        keys ? keys.id(false, 'reduce', step, channel, chunk, flow.reduceBytes * weight, endUs - reduceUs, endUs) : -1,
      );
    }
  }

  traceOf(ranks: ReadonlySet<number>): Trace {
    const emitter = new SpanEmitter(this.system, this.metadata, ranks);
    for (let i = 0; i < this.flows.length; i++)
      emitter.record(this.flows[i], this.steps[i], this.startsUs[i], this.finishesUs[i]);
    return emitter.build();
  }
}
