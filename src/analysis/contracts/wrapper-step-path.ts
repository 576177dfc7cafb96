// What an optimizer wrapper's `step` does to each parameter's gradient before it hands over to the wrapped optimizer,
// through the methods it calls on `self` and `super()`, resolved along the class's bases (the chain may span files).
// The walk keeps two lists: the gradient rescalings and reductions that run whenever the update runs (guaranteed),
// and every one that may run (possible). A method that cannot be resolved, or a rescaling of another shape, makes
// the path unknown, so the rule built on it (optimizer-wrappers.ts) proves nothing and stays silent.
import { child, named, visit, type PyNode } from '../tree';
import {
  containsReturn,
  containsUpdate,
  isWorldSum,
  onlyFalsyReturns,
  productFactors,
  valueReads,
} from './wrapper-syntax';
import type { FileModel, FunctionInfo } from '../scope';

/** One class of the chain, with the file model that defines it. */
export interface ChainClass {
  readonly path: string;
  readonly name: string;
  readonly model: FileModel;
}

export interface GradEvent {
  readonly kind: 'divide' | 'reduce' | 'other';
  readonly node: PyNode;
  readonly path: string;
  readonly model: FileModel;
  /** The class and method whose body holds it. */
  readonly className: string;
  readonly method: string;
  /** The `if` conditions around it on the path, as written. */
  readonly guards: readonly string[];
  /** The divisor's factors as written (`self.expected_batch_size`), for a division. */
  readonly factors: readonly string[];
  /** The loop body it runs in, to pair a reduction with the division that follows it. */
  readonly loop: PyNode | undefined;
  readonly guaranteed: boolean;
  /** For a reduction: a SUM all-reduce over the default group, in place. */
  readonly worldSum: boolean;
}

export interface StepPath {
  readonly events: readonly GradEvent[];
  /** The wrapped optimizer's `step` is called on a guaranteed path. */
  readonly updates: boolean;
  /** A method on the path could not be resolved or read. */
  readonly unknown: boolean;
}

/** How many methods deep the walk follows `self.m()` calls. */
const MAX_DEPTH = 8;
const GRAD = /^[A-Za-z_]\w*\.grad$/;
/** Methods that take a tensor for its shape or type, not its value. */
const SHAPE_READS = new Set(['view_as', 'reshape_as', 'expand_as', 'type_as']);

interface Walk {
  readonly chain: readonly ChainClass[];
  readonly events: GradEvent[];
  updates: boolean;
  unknown: boolean;
  depth: number;
  /** The method being read. */
  method: string;
}

/** The step path of the first class of `chain` (its bases follow, in order). */
export function stepPath(chain: readonly ChainClass[]): StepPath | undefined {
  const step = findMethod(chain, 0, 'step');
  if (!step) return undefined;
  const walk: Walk = { chain, events: [], updates: false, unknown: false, depth: 0, method: 'step' };
  walkMethod(walk, step.index, step.fn, [], true, 'statement');
  return { events: walk.events, updates: walk.updates, unknown: walk.unknown };
}

/** The method `name` as the class at `from` in the chain resolves it (its own, then its bases'). */
export function findMethod(
  chain: readonly ChainClass[],
  from: number,
  name: string,
): { index: number; fn: FunctionInfo } | undefined {
  for (let i = from; i < chain.length; i++) {
    const fn = chain[i].model.functions.find((f) => f.className === chain[i].name && f.name === name);
    if (fn) return { index: i, fn };
  }
  return undefined;
}

function walkMethod(
  walk: Walk,
  index: number,
  fn: FunctionInfo,
  guards: readonly string[],
  guaranteed: boolean,
  mode: 'statement' | 'truthy',
): void {
  const body = child(fn.node, 'body');
  if (!body || walk.depth >= MAX_DEPTH) {
    walk.unknown = true;
    return;
  }
  const caller = walk.method;
  walk.depth++;
  walk.method = fn.name;
  walkBlock(walk, index, body, guards, guaranteed, mode, undefined);
  walk.method = caller;
  walk.depth--;
}

/**
 * The statements of a block in order. A statement after a `return` (or after an `if` that may return) is not
 * guaranteed; in a method whose truthy result the caller tests, an `if` that returns False or None is the branch
 * where the update does not run, so what follows it still is.
 */
function walkBlock(
  walk: Walk,
  index: number,
  block: PyNode,
  guards: readonly string[],
  guaranteed: boolean,
  mode: 'statement' | 'truthy',
  loop: PyNode | undefined,
): void {
  const s = walk.chain[index].model.syntax;
  let sure = guaranteed;
  for (const stmt of named(block)) {
    if (stmt.type === 'comment') continue;
    if (stmt.type === 'if_statement') {
      const condition = child(stmt, 'condition');
      const consequence = child(stmt, 'consequence');
      const alternatives = named(stmt).filter((n) => n.type === 'elif_clause' || n.type === 'else_clause');
      const returns = containsReturn(stmt);
      const conditionCall = condition ? selfCall(s.text(condition)) : undefined;
      const elseWithoutUpdate = alternatives.every((a) => a.type === 'else_clause' && !containsUpdate(s, a));
      if (condition && consequence && conditionCall && elseWithoutUpdate && containsUpdate(s, consequence)) {
        // `if self.pre_step(): ... optimizer.step()`: the update runs only where the method returned a true value.
        walkCall(walk, index, conditionCall, guards, sure, 'truthy');
        walkBlock(walk, index, consequence, guards, sure, mode, loop);
        for (const part of alternatives) walkBlock(walk, index, part, guards, false, mode, loop);
        if (returns) sure = false;
        continue;
      }
      const falsyExit = mode === 'truthy' && returns && alternatives.length === 0 && onlyFalsyReturns(s, stmt);
      const plain = condition && consequence && alternatives.length === 0 && !conditionCall;
      if (plain && !returns) {
        walkBlock(walk, index, consequence, [...guards, s.text(condition).replace(/\s+/g, ' ')], sure, mode, loop);
      } else {
        if (condition) walkExpression(walk, index, condition, guards, false, loop);
        for (const part of [consequence, ...alternatives])
          if (part) walkBlock(walk, index, part, guards, false, mode, loop);
      }
      if (returns && !falsyExit) sure = false;
      continue;
    }
    if (stmt.type === 'for_statement') {
      const body = child(stmt, 'body');
      if (body) walkBlock(walk, index, body, guards, sure, mode, body);
      continue;
    }
    if (stmt.type === 'with_statement') {
      const body = child(stmt, 'body');
      if (body) walkBlock(walk, index, body, guards, sure, mode, loop);
      continue;
    }
    if (stmt.type === 'block' || stmt.type === 'else_clause' || stmt.type === 'elif_clause') {
      walkBlock(walk, index, stmt, guards, sure, mode, loop);
      continue;
    }
    if (stmt.type === 'expression_statement' || stmt.type === 'return_statement') {
      walkExpression(walk, index, stmt, guards, sure, loop);
      if (stmt.type === 'return_statement') sure = false;
      continue;
    }
    // Any other statement (while, try, a nested def) is read for what it may do, none of it guaranteed.
    walkExpression(walk, index, stmt, guards, false, loop);
    if (containsReturn(stmt)) sure = false;
  }
}

/** The gradient rescalings, reductions, updates and method calls inside one statement or expression. */
function walkExpression(
  walk: Walk,
  index: number,
  node: PyNode,
  guards: readonly string[],
  guaranteed: boolean,
  loop: PyNode | undefined,
): void {
  const cls = walk.chain[index];
  const s = cls.model.syntax;
  const event = (kind: GradEvent['kind'], at: PyNode, factors: string[] = [], worldSum = false) =>
    walk.events.push({
      kind,
      node: at,
      path: cls.path,
      model: cls.model,
      className: cls.name,
      method: walk.method,
      guards,
      factors,
      loop,
      guaranteed,
      worldSum,
    });
  visit(node, (n) => {
    if (n.type === 'function_definition' || n.type === 'lambda' || n.type === 'class_definition') return false;
    if (n.type === 'augmented_assignment') {
      const left = child(n, 'left');
      const right = child(n, 'right');
      if (left && right && GRAD.test(s.text(left).replace(/\s+/g, ''))) {
        const op = s.text(n).slice(s.text(left).length).trimStart().slice(0, 2);
        if (op === '/=') event('divide', n, productFactors(s.text.bind(s), right));
        else event('other', n);
      }
      return true;
    }
    if (n.type === 'assignment') {
      const left = child(n, 'left');
      const right = child(n, 'right');
      // `p.grad = p.summed_grad + noise` gives the gradient its value; one that reads `.grad` back rescales it.
      if (left && right && GRAD.test(s.text(left).replace(/\s+/g, '')) && /\.grad\b/.test(valueReads(s.text(right))))
        event('other', n);
      return true;
    }
    if (n.type !== 'call') return true;
    const callee = s.calleeText(n);
    // `x.view_as(p.grad)` reads the gradient's shape only.
    if (SHAPE_READS.has(s.calleeName(n))) return true;
    if (/\.grad\.(div_|mul_|mul|div|copy_)$/.test(callee)) event('other', n);
    else if (s.calleeName(n) === 'all_reduce' && GRAD.test(s.text(s.args(n).positional[0] ?? n).replace(/\s+/g, '')))
      event('reduce', n, [], isWorldSum(cls.model, n));
    else if (s.calleeName(n) === 'step' && (/^self\.\w+\.step$/.test(callee) || callee === 'super().step')) {
      if (guaranteed) walk.updates = walk.updates || callee !== 'super().step';
      if (callee === 'super().step') walkCall(walk, index, 'super().step', guards, guaranteed, 'statement');
    } else {
      const own = selfCall(callee + '()');
      if (own) walkCall(walk, index, own, guards, guaranteed, 'statement');
      // Another function handed a gradient may rescale it in place: the path is not known.
      else if (s.args(n).positional.some((a) => GRAD.test(s.text(a).replace(/\s+/g, '')))) event('other', n);
    }
    return true;
  });
}

/** Follows `self.m()` (from the first class) or `super().m()` (from the next one) to the method it runs. */
function walkCall(
  walk: Walk,
  index: number,
  call: string,
  guards: readonly string[],
  guaranteed: boolean,
  mode: 'statement' | 'truthy',
): void {
  const viaSuper = call.startsWith('super().');
  const name = call.slice(call.lastIndexOf('.') + 1);
  const found = findMethod(walk.chain, viaSuper ? index + 1 : 0, name);
  if (found) walkMethod(walk, found.index, found.fn, guards, guaranteed, mode);
  // A callable held in an attribute (`self.step_hook(self)`, set by `attach_step_hook`) is a hook for observers; it
  // is not followed (a limit the rule's docs state).
  else if (!viaSuper && walk.chain.some((c) => c.model.assignedValues.has(`self.${name}`))) return;
  // A method the workspace does not define (torch's Optimizer, a base outside the tree) is unknown code, unless it
  // is the base `step` reached through `super()`, which then is the wrapped update itself.
  else if (!(viaSuper && name === 'step')) walk.unknown = true;
  else if (guaranteed) walk.updates = true;
}

/** `self.pre_step()` → `self.pre_step`; `super().m(…)` → `super().m`. Calls of attributes of self are not methods. */
function selfCall(text: string): string | undefined {
  const m = /^\s*(self|super\(\))\.([A-Za-z_]\w*)\s*\(/.exec(text.replace(/\s+/g, ''));
  if (!m || !text.trim().endsWith(')')) return undefined;
  return `${m[1]}.${m[2]}`;
}
