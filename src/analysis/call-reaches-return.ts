// Decides which returns of a helper function a given call reaches, from the guards on its parameters
// (`if reduction == "mean":`, `if labels is not None:`) and the arguments the call binds. It is apart from
// token-counts.ts because it knows nothing of tokens: it reads calls and guards, and the token trace asks it which
// of a helper's returns to follow.
import { child, hasSplat, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';

/**
 * Whether a call reaches a return of the callee: every guard between them that compares a parameter with a
 * string (`reduction == "batchmean"`) or with None holds for the argument the call passes (or the default).
 * A guard the call does not decide keeps the return out of reach.
 */
export function callReachesReturn(model: FileModel, ret: PyNode, callee: FunctionInfo, call: PyNode): boolean {
  for (let n: PyNode | null = ret.parent; n && n !== callee.node; n = n.parent) {
    if (n.type !== 'block' || !n.parent) continue;
    // An `else` branch is reached when the guards before it fail: not decided here, so out of reach.
    if (n.parent.type === 'else_clause') return false;
    if (n.field !== 'consequence') continue;
    const condition = child(n.parent, 'condition');
    if (!condition || guardHolds(model, condition, callee, call) !== true) return false;
  }
  return true;
}

function guardHolds(model: FileModel, condition: PyNode, callee: FunctionInfo, call: PyNode): boolean | undefined {
  const s = model.syntax;
  const c = unparen(condition);
  if (c.type !== 'comparison_operator') return undefined;
  const [left, right] = named(c);
  if (!left || !right || left.type !== 'identifier') return undefined;
  const value = boundValue(model, s.text(left), callee, call);
  const op = s
    .text(c)
    .slice(left.end - c.start, right.start - c.start)
    .trim();
  if (right.type === 'none') {
    if (value === undefined) return undefined;
    const isNone = value === null || unparen(value).type === 'none';
    if (op === 'is') return isNone;
    if (op.replace(/\s+/g, ' ') === 'is not') return !isNone;
    return undefined;
  }
  const wanted = s.stringValue(right);
  const given = value ? s.stringValue(value) : undefined;
  if (wanted === undefined || given === undefined) return undefined;
  if (op === '==') return wanted === given;
  if (op === '!=') return wanted !== given;
  return undefined;
}

/** The argument a call binds to a parameter, its default, null for an absent argument without one. */
function boundValue(model: FileModel, name: string, callee: FunctionInfo, call: PyNode): PyNode | null | undefined {
  const index = callee.params.findIndex((p) => p.name === name);
  if (index < 0) return undefined;
  const args = model.syntax.args(call);
  const keyword = args.keywords.get(name);
  if (keyword) return keyword.value;
  const offset = callee.params[0] && /^(self|cls)$/.test(callee.params[0].name) ? 1 : 0;
  const position = index - offset;
  if (position >= 0 && position < args.positional.length) return args.positional[position];
  if (hasSplat(args.list)) return undefined;
  return callee.params[index].defaultValue ?? null;
}
