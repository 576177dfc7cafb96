// The shapes both accumulation rules read (accumulation.ts in one function, accumulation-split.ts across them): the
// names of a micro-step count, the loop around a backward, and a `% K` in a step's guard.
import type { PyNode } from './tree';

/** Names of a micro-step count: `gradient_accumulation_steps`, `accum_iter`, `update_freq`, `n_micro_batches`. */
export const ACCUMULATION_NAME = /accum|micro_?batch|micro_?step|update_?freq|iters_to_accumulate|num_?micro/i;

export function enclosingLoop(node: PyNode, stop: PyNode): PyNode | undefined {
  for (let n = node.parent; n && n !== stop; n = n.parent) {
    if (n.type === 'for_statement' || n.type === 'while_statement') return n;
    if (n.type === 'function_definition' || n.type === 'class_definition') return undefined;
  }
  return undefined;
}

export function findModulo(n: PyNode): PyNode | undefined {
  if (n.type === 'binary_operator' && n.children.some((c) => !c.named && c.type === '%')) return n;
  for (const c of n.children) {
    const found = findModulo(c);
    if (found) return found;
  }
  return undefined;
}
