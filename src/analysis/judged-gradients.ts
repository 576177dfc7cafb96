// What the judge (judge.ts) asks of a reduction's facts that needs no other analysis: whether the reduced tensors are
// gradients, which functions hold the reduction, and whether it writes the parameters' own `.grad`.
import type { PyNode } from './tree';
import type { Syntax } from './syntax';
import type { FunctionInfo } from './scope';
import type { Fact } from './facts';
import { isGradientName, NOT_GRADIENT } from './flow';

/** True when the reduced tensors are gradients, by their names or by the keys the flow marks as gradients. */
export function isGradientFact(syntax: Syntax, fact: Fact): boolean {
  const text = (n: PyNode) => syntax.text(n).replace(/\s+/g, '');
  const r = fact.reduction;
  if (r.via) return true;
  const texts = [r.tensor, r.output].filter((n): n is PyNode => !!n).map((n) => text(n));
  const lastName = (t: string) => /(\w+)\W*$/.exec(t.replace(/\[[^\]]*\]|\([^()]*\)/g, ''))?.[1] ?? t;
  if (texts.some((t) => !/\.grad\b/.test(t) && NOT_GRADIENT.test(lastName(t)))) return false;
  if (
    texts.some(
      (t) =>
        /\.grad\b|\.buffer\(\)|get_tensor\(\)/.test(t) ||
        /grad/i.test(t.replace(/requires_grad/g, '')) ||
        isGradientName(t),
    )
  )
    return true;
  return fact.frames.some((f) => f.key !== undefined && f.flow.isGradientKey(f.key));
}

/** The functions of the chain of callers, then the functions that enclose the reducing one (closures). */
export function enclosingChain(fact: Fact): FunctionInfo[] {
  const out = fact.frames.map((f) => f.fn);
  for (let fn = fact.frames[0].fn.enclosing; fn && fn.node.type !== 'module'; fn = fn.enclosing) out.push(fn);
  return out;
}

/**
 * The reduced tensors are the parameters' `.grad` (or a view written back into it) and the function keeps them:
 * a function that returns the reduced tensor hands it to a caller, whose use must then be seen.
 */
export function writesParameterGradients(fact: Fact): boolean {
  const first = fact.frames[0];
  if (first.key === undefined || first.flow.returnKeys.includes(first.flow.find(first.key))) return false;
  return first.flow.members(first.key).some((m) => /\.grad$/.test(m) && !m.startsWith('#'));
}
