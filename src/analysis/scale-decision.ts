// The arithmetic of the judge (judge.ts): the power of N an update carries, from the reduction's operation, the
// scaling terms of the gradients and the loss, and the verdict that power proves.
import type { PyNode } from './tree';
import type { Syntax } from './syntax';
import type { Binding } from './sizes';
import type { Decision } from './conditions';
import type { LossInfo } from './losses';
import type { Fact } from './facts';
import type { Term, Verdict } from './judge-verdict';
import type { MeshSpan } from './mesh-shapes';

/** Where and how a verdict is reported, as the caller of `decideScale` knows it. */
export interface ScaleDecisionContext {
  fact?: Fact;
  sumCode: 'CP001' | 'CP004';
  sumLocation: PyNode;
  defeated?: Decision;
  opBinding?: Binding;
  group?: string;
  /** For a mesh dimension, whether its ranks are the whole job (groups.ts `span`); absent for other groups. */
  groupSpan?: MeshSpan;
  /** True when a divisor's group argument is another spelling of the reduction's group (`mesh.get_group("dp")`). */
  sameGroup?: (divisorGroup: PyNode) => boolean;
  doubleWhy: string;
}

export function decideScale(
  syntax: Syntax,
  worldSize: number | undefined,
  opExponent: number,
  gradTerms: Term[],
  loss: LossInfo,
  ctx: ScaleDecisionContext,
): Verdict | undefined {
  const text = (n: PyNode) => syntax.text(n).replace(/\s+/g, '');
  const unknown = new Map<string, number>();
  let exponent = opExponent + loss.exponent;
  const wrong: Term[] = [];
  const world: Term[] = [];
  for (const t of gradTerms) {
    switch (t.size.kind) {
      case 'world':
        if (
          ctx.group &&
          t.size.group !== undefined &&
          t.size.group !== ctx.group &&
          !/WORLD/.test(t.size.group) &&
          !(t.size.groupNode && ctx.sameGroup?.(t.size.groupNode))
        ) {
          if (t.sign === -1) wrong.push(t);
          else return undefined;
          break;
        }
        if (ctx.group && !t.size.group && t.sign === -1 && /^get_world_size$/.test(calleeOf(syntax, t.node))) {
          // The default group's size is wrong for a sub-group only where the sub-group is proven smaller: a
          // dimension of a one-dimensional mesh is the whole job, and a mesh whose shape is not in view proves
          // nothing. A group that is no mesh dimension keeps the reading of its name.
          // `group=dist.group.WORLD` is the default group itself, so its size is the right divisor.
          if (ctx.groupSpan === 'unknown') return undefined;
          if (ctx.groupSpan !== 'world' && !/WORLD/.test(ctx.group)) {
            wrong.push(t);
            break;
          }
        }
        exponent += t.sign;
        world.push(t);
        break;
      case 'global-count':
        if (t.sign === 1) return undefined;
        exponent -= 1;
        world.push(t);
        break;
      case 'local':
      case 'batch':
      case 'const':
        if (t.sign === -1) wrong.push(t);
        else if (t.size.kind !== 'const') return undefined;
        break;
      case 'unknown': {
        const key = text(t.node);
        unknown.set(key, (unknown.get(key) ?? 0) + t.sign);
        break;
      }
      default:
        break;
    }
  }
  if ([...unknown.values()].some((v) => v !== 0)) return undefined;
  if (wrong.length > 0) {
    if (world.length > 0 || loss.exponent !== 0 || opExponent !== 1) return undefined;
    const t = wrong[0];
    if (t.size.kind === 'const' && (t.size.value ?? 0) <= 1) return undefined;
    // A hard-coded divisor equals the world size of the runs it was written for; it is wrong only for a known
    // world size that differs, so without one it is a hint.
    if (t.size.kind === 'const' && worldSize !== undefined && t.size.value === worldSize) return undefined;
    const hint = t.size.kind === 'const' && worldSize === undefined;
    return { code: 'CP003', exponent: 0, location: t.node, fact: ctx.fact, term: t, why: 'wrong divisor', hint };
  }
  if (exponent > 0) {
    return {
      code: ctx.sumCode,
      exponent,
      location: ctx.sumLocation,
      fact: ctx.fact,
      defeated: ctx.defeated,
      opBinding: ctx.opBinding,
      why: 'sum',
    };
  }
  if (exponent < 0) {
    const gradWorld = world.filter((t) => !t.fromLoss && t.sign === -1);
    const lossTerms = loss.terms.filter((t) => t.sign === -1);
    const chosen: Term | undefined =
      gradWorld[gradWorld.length - 1] ??
      (lossTerms.length > 0 ? { ...lossTerms[lossTerms.length - 1], fromLoss: true } : undefined);
    if (!chosen) return undefined;
    let why = ctx.doubleWhy;
    if (!chosen.fromLoss && lossTerms.length > 0)
      why = `the loss was already divided by \`${syntax.text(lossTerms[0].node)}\` before backward, and this divides the reduced gradients again`;
    else if (ctx.fact && !chosen.fromLoss && opExponent === 0)
      why = 'the reduction already averages, and this divides again';
    else if (ctx.fact && chosen.fromLoss && opExponent === 1)
      why = 'the loss is divided by the world size and so are the summed gradients';
    return { code: 'CP002', exponent, location: chosen.node, fact: ctx.fact, term: chosen, why };
  }
  return undefined;
}

function calleeOf(syntax: Syntax, node: PyNode): string {
  const n = syntax.stripWrappers(node);
  return n.type === 'call' ? syntax.calleeName(n) : '';
}
