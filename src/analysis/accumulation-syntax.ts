// The shapes both accumulation rules read (accumulation.ts in one function, accumulation-split.ts across them): the
// names of a micro-step count, the loop around a backward, and a `% K` in a step's guard.
import { visit, type PyNode } from './tree';
import type { Syntax } from './syntax';

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

/** Operators that rescale a value: `loss / K`, `loss * w`, `loss // n`, `loss ** p`, `w @ x`. */
const SCALING_OPERATORS = new Set(['*', '/', '//', '**', '@']);

/**
 * True where the expression multiplies, divides or raises a value, read from the syntax tree: a `*` that unpacks
 * arguments (`model(**batch)`, `f(*args)`) is a splat, not a multiplication, and a `/` inside a string is text.
 */
export function hasScalingArithmetic(node: PyNode, syntax: Syntax): boolean {
  let found = false;
  visit(node, (n) => {
    if (found) return false;
    if (n.type === 'binary_operator' && SCALING_OPERATORS.has(syntax.operator(n))) found = true;
    else if (n.type === 'augmented_assignment' && /^[*/@]/.test(syntax.operator(n))) found = true;
    return !found && n.type !== 'string';
  });
  return found;
}
