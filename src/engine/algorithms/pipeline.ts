// Chunk pipelining for multi-stage algorithms (trees, NVLS): the first chunk crosses the stages one after another
// (each paying its latency: the pipeline fill), then every further chunk completes in one steady round in which all
// stages run at once and share the links. k chunks through s stages: Σ t(stage) + (k − 1) · t(steady).
import { joinPacked, packFlows, type PackedFlows } from '../sim/packed';
import type { Flow, Round } from '../sim/schedule';
import type { Phase } from '../trace/model';
import { pipelineStageLatenciesUs, type BuildContext } from './context';

export interface Stage {
  /** Flows of one chunk through this stage. */
  readonly flows: readonly Flow[];
  readonly phase: Phase;
  /** Latency the first chunk pays entering this stage (the pipeline fill). */
  readonly latencyUs: number;
  /** The flows packed, when the builder made them so (`flows` is then built on first read). */
  readonly packed?: PackedFlows;
}

/** A stage before its fill latency is known: the paths that price it, and how to make it once that is known. */
export interface UnpricedStage {
  readonly paths: readonly (readonly number[])[];
  readonly stage: (latencyUs: number) => Stage;
}

/**
 * Stages in pipeline order, each with its fill latency: pipelineStageLatenciesUs over every stage's paths in that
 * order (the first network stage pays the proxy's queue), then each stage made in turn. NVLSTree's trees
 * (nvls-tree.ts) and CollNet's stages (collnet-stages.ts) share this loop.
 */
export function pricedStages(ctx: BuildContext, stages: readonly UnpricedStage[]): Stage[] {
  const latencies = pipelineStageLatenciesUs(
    ctx,
    stages.map((s) => s.paths),
  );
  return stages.map((s, i) => s.stage(latencies[i]));
}

export function pipelineRounds(stages: readonly Stage[], chunks: number): Round[] {
  const rounds: Round[] = [];
  if (stages.length === 0) return rounds;
  stages.forEach((stage, j) => {
    const round = { latencyUs: stage.latencyUs, repeat: 1, phase: stage.phase, step: j };
    // A packed stage keeps its flows unbuilt: the round reads them through the stage only when asked.
    rounds.push(
      stage.packed
        ? {
            ...round,
            packed: stage.packed,
            get flows() {
              return stage.flows;
            },
          }
        : { ...round, flows: stage.flows },
    );
  });
  if (chunks > 1) {
    let phase: Phase = 'broadcast';
    for (const stage of stages) if (stage.phase !== 'broadcast') phase = stage.phase;
    const steadyFlows = (): Flow[] => {
      const flows: Flow[] = [];
      stages.forEach((stage, j) => {
        for (const flow of stage.flows) flows.push({ ...flow, chunk: 1 + (stages.length - 1 - j) });
      });
      return flows;
    };
    const round = { latencyUs: 0, repeat: chunks - 1, phase, step: stages.length };
    if (stages.some((stage) => stage.packed)) {
      let built: Flow[] | undefined;
      rounds.push({
        ...round,
        packed: joinPacked(stages.map((stage) => stage.packed ?? packFlows(stage.flows))),
        get flows() {
          return (built ??= steadyFlows());
        },
      });
    } else rounds.push({ ...round, flows: steadyFlows() });
  }
  return rounds;
}
