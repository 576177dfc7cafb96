// Turns a simulated training step into a Trace: per rank, a compute lane (forward, backward and optimizer spans)
// and a communication lane with one span per collective and, nested inside it, its exchange, reduce and
// broadcast phases. Every rank runs the same schedule, so large jobs show the first few ranks and say so.
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
  for (let rank = 0; rank < shownRanks; rank++) {
    const node = Math.floor(rank / gpusPerNode);
    const computeLane = builder.lane('stream', `rank ${rank} · compute`, { rank, node });
    const commLane = builder.lane('stream', `rank ${rank} · communication`, { rank, node });
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
    for (const c of step.collectives) {
      builder.add({
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
      addPhases(builder, commLane, rank, c);
    }
  }
  return builder.build();
}
