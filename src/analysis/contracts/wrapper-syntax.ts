// Syntax the optimizer-wrapper rule reads off a method (wrapper-step-path.ts): returns, updates, product factors, and
// what a reduction or an expression does with a gradient.
import { child, hasSplat, named, unparen, visit, type PyNode } from '../tree';
import type { FileModel } from '../scope';

export function containsUpdate(s: FileModel['syntax'], node: PyNode): boolean {
  let found = false;
  visit(node, (n) => {
    if (n.type === 'call' && /^(self\.\w+|super\(\))\.step$/.test(s.calleeText(n))) found = true;
    return !found;
  });
  return found;
}

export function containsReturn(node: PyNode): boolean {
  let found = false;
  visit(node, (n) => {
    if (n.type === 'function_definition' || n.type === 'lambda') return false;
    if (n.type === 'return_statement') found = true;
    return !found;
  });
  return found;
}

/** Every `return` in the statement returns False, None or nothing. */
export function onlyFalsyReturns(s: FileModel['syntax'], node: PyNode): boolean {
  let ok = true;
  visit(node, (n) => {
    if (n.type === 'function_definition' || n.type === 'lambda') return false;
    if (n.type === 'return_statement') {
      const value = named(n)[0];
      if (value && !['False', 'None', '0'].includes(s.text(value).trim())) ok = false;
    }
    return ok;
  });
  return ok;
}

/**
 * The text of an expression without the places that read only a gradient's shape or placement
 * (`(p.summed_grad + noise).view_as(p.grad)`, `p.grad.shape`), which do not carry its value.
 */
export function valueReads(text: string): string {
  return text
    .replace(/\.(view_as|reshape_as|expand_as|type_as)\(\s*[A-Za-z_]\w*\.grad\s*\)/g, '')
    .replace(/\b[A-Za-z_]\w*\.grad\.(shape|dtype|device|size\(\s*\))/g, '');
}

/** `a * b` → [a, b]; any other expression is one factor. */
export function productFactors(text: (n: PyNode) => string, node: PyNode): string[] {
  const n = unparen(node);
  if (n.type === 'binary_operator' && text(n).includes('*') && !text(n).includes('/')) {
    const left = child(n, 'left');
    const right = child(n, 'right');
    if (left && right && text(n).slice(text(left).length).trimStart().startsWith('*')) {
      if (!text(n).slice(text(left).length).trimStart().startsWith('**'))
        return [...productFactors(text, left), ...productFactors(text, right)];
    }
  }
  return [text(n).replace(/\s+/g, '')];
}

/** `dist.all_reduce(p.grad)` or with `op=ReduceOp.SUM`, from torch.distributed, over the default group. */
export function isWorldSum(model: FileModel, call: PyNode): boolean {
  const s = model.syntax;
  const callee = s.calleeText(call);
  const object = callee.slice(0, callee.lastIndexOf('.'));
  const module = object.includes('.') ? object : (model.moduleOf(object) ?? object);
  if (module !== 'torch.distributed') return false;
  const args = s.args(call);
  if (args.positional.length > 2 || hasSplat(args.list)) return false;
  for (const key of args.keywords.keys()) if (key !== 'op') return false;
  const op = args.keywords.get('op')?.value ?? args.positional[1];
  return op === undefined || /(^|\.)ReduceOp\.SUM$/.test(s.text(op).replace(/\s+/g, ''));
}
