// Finds the all-reduces that ask for ReduceOp.AVG on a group proven to run on gloo, which implements only SUM-like
// ops (CP006). It is apart from findings.ts because deciding which reductions fail is a judgement on the file; the
// writer only words the finding and its fix.
import { unparen, type PyNode } from './tree';
import type { FileModel } from './scope';
import type { Reduction } from './reductions';
import { groupIsGloo } from './groups';
import { guardsOf } from './conditions';

/** A torch reduction averaging on gloo, and its `op=` value (`ReduceOp.AVG`). */
export interface GlooAverage {
  readonly reduction: Reduction;
  readonly value: PyNode;
}

/** The reductions that average on gloo and do not feature-detect AVG, once each. */
export function glooAverages(model: FileModel, reductions: readonly Reduction[]): GlooAverage[] {
  const out: GlooAverage[] = [];
  const seen = new Set<PyNode>();
  for (const r of reductions) {
    if (r.framework !== 'torch' || seen.has(r.call)) continue;
    seen.add(r.call);
    const value = r.op.valueNode ? unparen(r.op.valueNode) : undefined;
    if (!value || !/ReduceOp\.AVG\b/.test(model.syntax.text(value))) continue;
    // Only a reduction whose group is proven to run on gloo fails; the word gloo elsewhere proves nothing.
    if (!groupIsGloo(model, r.groupNode)) continue;
    // Code that feature-detects AVG (`if backend == "nccl":`, `if supports_avg:`) already handles gloo.
    const fn = model.enclosingFunction(r.call);
    if (
      fn &&
      guardsOf(r.call, fn).some((g) =>
        /avg|AVG|nccl|NCCL|backend|gloo|version|feature|hasattr|support/i.test(model.syntax.text(g.test)),
      )
    )
      continue;
    out.push({ reduction: r, value });
  }
  return out;
}
