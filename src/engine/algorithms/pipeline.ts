// Chunk pipelining for multi-stage algorithms (trees, NVLS): the first chunk crosses the stages one after another
// (each paying its latency: the pipeline fill), then every further chunk completes in one steady round in which all
// stages run at once and share the links. k chunks through s stages: Σ t(stage) + (k − 1) · t(steady).
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
  if (stages.length === 0) return rounds;
  stages.forEach((stage, j) => {
    rounds.push({ flows: stage.flows, latencyUs: stage.latencyUs, repeat: 1, phase: stage.phase, step: j });
  });
  if (chunks > 1) {
    const flows: Flow[] = [];
    let phase: Phase = 'broadcast';
    stages.forEach((stage, j) => {
      for (const flow of stage.flows) flows.push({ ...flow, chunk: 1 + (stages.length - 1 - j) });
      if (stage.phase !== 'broadcast') phase = stage.phase;
    });
    rounds.push({ flows, latencyUs: 0, repeat: chunks - 1, phase, step: stages.length });
  }
  return rounds;
}
