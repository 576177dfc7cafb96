// A round whose duration a builder shows from classes of its flows instead of listing them. NVLSTree's trees on
// identical nodes (algorithms/nvls-tree-classes.ts) have a flow per node and tree; their uniform-round verdict
// (uniform-round.ts) follows from per-node and per-leaf sums, so the flows are neither packed nor grouped. The
// runner asks the proof first and solves the packed flows only when it declines.
//
// Joining. A pipeline's steady round runs every stage at once: the proof's own parts are joined into one question,
// and the other stages' flows (the NVSwitch stages, a few dozen) are solved as the solver solves them. When those
// flows cross none of the proof's resources, every check of uniformRound on the whole round (per flow, per
// resource, and the closure over shared resources) splits into the checks on each side. So where the proof shows
// its side solved, the solver on the whole round would have solved its side the same way and handed the same other
// flows, in the same order, to the component solver: solving the other flows alone (uniformRound, then the
// components of what it leaves) does the same work on the same numbers, and the round lasts the larger duration.
import type { FlowSet, RoundResult } from './maxmin';

export interface ClassProof {
  /**
   * The duration of the union of these parts' flows when uniformRound would solve every one of them at its level
   * (bit for bit the same number), else undefined.
   */
  durationUs(parts: readonly number[], capacityGBps: (resource: number) => number): number | undefined;
  /** Whether any flow of the proof may cross this resource (true when unsure). */
  mayCross(resource: number): boolean;
}

export interface ShownParts {
  readonly proof: ClassProof;
  readonly parts: readonly number[];
  /** Flows of the same round outside the proof, solved by the solver. */
  readonly others?: FlowSet;
}

/**
 * The round's duration, shown without solving the proof's flows, or undefined (the caller then solves the whole
 * round, and `solve` has not been called). `solve` is the round's solver (ComponentSolver.solve).
 */
export function shownDurationUs(
  shown: ShownParts,
  capacityGBps: (resource: number) => number,
  solve: (flows: FlowSet) => RoundResult,
): number | undefined {
  const classes = shown.proof.durationUs(shown.parts, capacityGBps);
  const others = shown.others;
  if (classes === undefined || !others || others.count === 0) return classes;
  for (let k = 0; k < others.resource.length; k++) if (shown.proof.mayCross(others.resource[k])) return undefined;
  return Math.max(classes, solve(others).durationUs);
}
