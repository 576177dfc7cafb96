// Turns a simulated training step into a Trace: per rank, a compute lane (the step, inside it each micro-step's
// forward and backward pass and the optimizer, inside those the layers), a gradient lane with one span per bucket
// (the stretch of backward that wrote its gradients) and a communication lane with one span per collective and,
// nested inside it, its exchange, reduce and broadcast phases. A flow arrow leads from each bucket to the
// collective that reduces it. Every rank runs the same schedule, so large jobs show the first few ranks and say so.
import type { Phase } from '../trace/model';
import type { Trace } from '../trace/model';
import { TraceBuilder } from '../trace/builder';
import { formatBytes, asMicros, asBytes } from '../units';
import type { StepCollective, StepResult } from './step';

/** Ranks drawn by default: enough to see that they agree, few enough to keep a 1,024-GPU trace small. */
export const DEFAULT_TRACE_RANKS = 8;

const COLLECTIVE_PHASES: readonly ('exchange' | 'reduce' | 'broadcast')[] = ['exchange', 'reduce', 'broadcast'];

export interface StepTraceOptions {
  readonly ranks?: number;
  readonly title?: string;
  readonly gpusPerNode?: number;
}

/**
 * Each gradient collective's bucket: the stretch of its micro-step's backward pass from the previous bucket's
 * readiness (or the pass's start) to its own. Buckets of one pass are contiguous and end where the pass ends.
 */
export function bucketSpans(step: StepResult): { collective: StepCollective; startUs: number; endUs: number }[] {
  const out: { collective: StepCollective; startUs: number; endUs: number }[] = [];
  const passStart = new Map<number, number>();
  for (const span of step.compute)
    if (span.kind === 'backward')
      passStart.set(span.microStep, Math.min(passStart.get(span.microStep) ?? Infinity, span.startUs));
  const previousReady = new Map<number, number>();
  for (const c of step.collectives) {
    // Bucket collectives are the gradient reductions named "bucket k"; FSDP's per-layer reduce-scatters are not.
    if (c.purpose !== 'gradients' || !c.label.startsWith('bucket ')) continue;
    const startUs = Math.min(c.readyUs, previousReady.get(c.microStep) ?? passStart.get(c.microStep) ?? c.readyUs);
    previousReady.set(c.microStep, c.readyUs);
    out.push({ collective: c, startUs, endUs: c.readyUs });
  }
  return out;
}

/** The spans that hold others on a rank's compute lane: the step, and each micro-step's forward and backward pass. */
function addContainers(builder: TraceBuilder, lane: number, rank: number, step: StepResult): void {
  const common = { lane, rank, step: -1, channel: 0, bytes: asBytes(0), links: [] as string[] };
  builder.add({ ...common, phase: 'other', name: 'step', chunk: -1, startUs: asMicros(0), endUs: step.stepTimeUs });
  const passes = new Map<string, { kind: string; microStep: number; startUs: number; endUs: number }>();
  for (const span of step.compute) {
    if (span.kind === 'optimizer') continue;
    const key = `${span.kind} ${span.microStep}`;
    const pass = passes.get(key) ?? { kind: span.kind, microStep: span.microStep, startUs: Infinity, endUs: -Infinity };
    pass.startUs = Math.min(pass.startUs, span.startUs);
    pass.endUs = Math.max(pass.endUs, span.endUs);
    passes.set(key, pass);
  }
  for (const pass of passes.values()) {
    builder.add({
      ...common,
      phase: 'compute',
      name: step.microSteps > 1 ? `${pass.kind} · micro-step ${pass.microStep}` : pass.kind,
      chunk: pass.microStep,
      startUs: asMicros(pass.startUs),
      endUs: asMicros(pass.endUs),
      args: { microStep: pass.microStep },
    });
  }
}

function addPhases(builder: TraceBuilder, lane: number, rank: number, c: StepCollective): void {
  const total = c.phases.exchange + c.phases.reduce + c.phases.broadcast;
  const duration = c.endUs - c.startUs;
  if (!(total > 0) || !(duration > 0)) return;
  // The simulator reports each phase's time on the critical rank; phases can overlap across channels, so they are
  // scaled to fill the collective's span in order rather than drawn at their raw lengths.
  let at = c.startUs;
  for (const phase of COLLECTIVE_PHASES) {
    const share = c.phases[phase] / total;
    if (share <= 0) continue;
    const end = phase === 'broadcast' ? c.endUs : Math.min(c.endUs, at + share * duration);
    builder.add({
      lane,
      rank,
      phase,
      name: `${phase} · ${c.label}`,
      step: -1,
      channel: 0,
      chunk: c.index,
      bytes: c.bytes,
      links: [],
      startUs: at,
      endUs: asMicros(Math.max(at, end)),
    });
    at = asMicros(Math.max(at, end));
  }
}

export function stepTrace(step: StepResult, options: StepTraceOptions = {}): Trace {
  const shownRanks = Math.max(1, Math.min(step.worldSize, Math.floor(options.ranks ?? DEFAULT_TRACE_RANKS)));
  const gpusPerNode = options.gpusPerNode ?? step.worldSize;
  const builder = new TraceBuilder({
    origin: 'simulated',
    title: options.title ?? 'training step',
    system: step.systemLabel,
    ranks: step.worldSize,
    facts: {
      'step time (µs)': Math.round(step.stepTimeUs),
      'exposed communication (µs)': Math.round(step.exposedCommUs),
      'overlap %': Math.round(step.overlapPct * 10) / 10,
      'ranks shown':
        shownRanks < step.worldSize
          ? `${shownRanks} of ${step.worldSize} (every rank runs the same schedule)`
          : shownRanks,
    },
  });
  const buckets = bucketSpans(step);
  for (let rank = 0; rank < shownRanks; rank++) {
    const node = Math.floor(rank / gpusPerNode);
    const computeLane = builder.lane('stream', `rank ${rank} · compute`, { rank, node });
    const gradientLane =
      buckets.length > 0 ? builder.lane('stream', `rank ${rank} · gradient buckets`, { rank, node }) : -1;
    const commLane = builder.lane('stream', `rank ${rank} · communication`, { rank, node });
    addContainers(builder, computeLane, rank, step);
    for (const span of step.compute) {
      const phase: Phase = span.kind === 'optimizer' ? 'optimizer' : 'compute';
      builder.add({
        lane: computeLane,
        rank,
        phase,
        name: span.label,
        step: -1,
        channel: 0,
        chunk: span.microStep,
        bytes: asBytes(0),
        links: [],
        startUs: span.startUs,
        endUs: span.endUs,
        args: { microStep: span.microStep },
      });
    }
    const bucketSpan = new Map<number, number>();
    for (const b of buckets) {
      const index = builder.add({
        lane: gradientLane,
        rank,
        phase: 'compute',
        name: `backward · ${b.collective.label}`,
        step: -1,
        channel: 0,
        chunk: b.collective.index,
        // The bucket's bytes are written to memory, not moved over a link: they stay out of bandwidth sums.
        bytes: asBytes(0),
        links: [],
        startUs: asMicros(b.startUs),
        endUs: asMicros(b.endUs),
        args: { microStep: b.collective.microStep, gradientBytes: b.collective.bytes },
      });
      bucketSpan.set(b.collective.index, index);
    }
    for (const c of step.collectives) {
      const collectiveSpan = builder.add({
        lane: commLane,
        rank,
        phase: 'collective',
        name: `${c.kind} ${c.label} · ${formatBytes(c.bytes)}`,
        step: -1,
        channel: 0,
        chunk: c.index,
        bytes: c.bytes,
        links: [],
        startUs: c.startUs,
        endUs: c.endUs,
        args: {
          algorithm: c.algorithm,
          protocol: c.protocol,
          readyUs: Math.round(c.readyUs * 1000) / 1000,
          waitedUs: Math.round((c.startUs - c.readyUs) * 1000) / 1000,
          microStep: c.microStep,
        },
      });
      const bucket = bucketSpan.get(c.index);
      if (bucket !== undefined) builder.flow(bucket, collectiveSpan, `${c.label} → ${c.kind}`);
      addPhases(builder, commLane, rank, c);
    }
  }
  return builder.build();
}
