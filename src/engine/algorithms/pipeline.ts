// Chunk pipelining for multi-stage algorithms (trees, NVLS): chunk c runs stage j in round c + j, so stages on
// different links overlap. Rounds with the same set of active stages are identical and share one template.
import type { Flow, Round } from '../sim/schedule';
import type { Phase } from '../trace/model';

export interface Stage {
  /** Flows of one chunk through this stage. */
  readonly flows: readonly Flow[];
  readonly phase: Phase;
  /** Latency the first chunk pays entering this stage (the pipeline fill). */
  readonly latencyUs: number;
}

export function pipelineRounds(stages: readonly Stage[], chunks: number): Round[] {
  const rounds: Round[] = [];
  const s = stages.length;
  if (s === 0) return rounds;
  const total = chunks + s - 1;
  let w = 0;
  while (w < total) {
    const lo = Math.max(0, w - chunks + 1);
    const hi = Math.min(s - 1, w);
    // A round pays latency when a stage starts its first chunk (w === hi while filling).
    const fills = w < s;
    let repeat = 1;
    if (!fills) {
      while (w + repeat < total && Math.max(0, w + repeat - chunks + 1) === lo && Math.min(s - 1, w + repeat) === hi) repeat++;
    }
    const flows: Flow[] = [];
    let phase: Phase = 'broadcast';
    for (let j = lo; j <= hi; j++) {
      const chunk = w - j;
      for (const flow of stages[j].flows) flows.push(chunk === flow.chunk ? flow : { ...flow, chunk });
      if (stages[j].phase !== 'broadcast') phase = stages[j].phase;
    }
    rounds.push({ flows, latencyUs: fills ? stages[hi].latencyUs : 0, repeat, phase, step: w });
    w += repeat;
  }
  return rounds;
}
