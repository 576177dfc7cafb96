// Where one file names the workspace's autograd loss scalers (loss-scaler-classes.ts), and how: imported, applied to
// an activation that leaves its function, its setter called (with the divisor of the value given), its scale read,
// or anything else (stored, passed, aliased, written), which keeps the rule silent about that scaler. With them, the
// file's top-level functions, the plain names each calls, and its loops that run backward: enough to follow a
// setter's function up the calls of its own file to a loop that runs backward once per micro-batch.
import type { Parser } from 'web-tree-sitter';
import { parseModule } from '../parse';
import { ancestors, child, named, unparen, visit, type PyNode, type Source } from '../tree';
import type { SourceRange } from '../types';
import { ACCUMULATION_NAME } from '../accumulation-syntax';
import { compact, operator } from './loss-scaler-classes';

export type MentionKind = 'import' | 'own' | 'apply' | 'setter' | 'read' | 'other';

export interface Mention {
  readonly name: string;
  readonly kind: MentionKind;
  /** The top-level function it is in (a method is `Class.method`). */
  readonly fn?: string;
  readonly range: SourceRange;
  readonly line: number;
  /** `apply`: the result is returned by its function, directly or through the name it is assigned to. */
  readonly flows?: boolean;
  /** `apply`: the attached loss already names a micro-batch count (`aux_loss / num_microbatches`). */
  readonly countedLoss?: boolean;
  /** `setter`: the method, and the count the value is divided by (`loss_scale / num_microbatches`). */
  readonly setter?: string;
  readonly divisor?: string;
}

export interface FunctionCalls {
  /** Plain names called anywhere in the function (`forward_step(…)`). */
  readonly calls: ReadonlySet<string>;
  /** Per loop of the function: the plain names called in its body, and whether its body runs backward. */
  readonly loops: readonly { readonly calls: ReadonlySet<string>; readonly backward: boolean }[];
}

export interface MentionFacts {
  readonly mentions: readonly Mention[];
  readonly functions: ReadonlyMap<string, FunctionCalls>;
}

const PARSE_BUDGET_MS = 5_000;

/** Reads the mentions of `scalers` (name → its setters and scale attribute); undefined when the file does not parse. */
export function readMentions(
  parser: Parser,
  text: string,
  scalers: ReadonlyMap<string, { readonly setters: readonly string[]; readonly attribute: string }>,
): MentionFacts | undefined {
  const parsed = parseModule(parser, text, PARSE_BUDGET_MS, Number.POSITIVE_INFINITY);
  if (!('module' in parsed)) return undefined;
  const { module, source } = parsed;
  const mentions: Mention[] = [];
  visit(module, (n) => {
    if (n.type === 'identifier' && scalers.has(source.textOf(n)))
      mentions.push(mention(n, source.textOf(n), scalers.get(source.textOf(n))!, source));
    return true;
  });
  return { mentions, functions: functionCalls(module, source) };
}

function mention(
  n: PyNode,
  name: string,
  scaler: { readonly setters: readonly string[]; readonly attribute: string },
  source: Source,
): Mention {
  const up = ancestors(n);
  const at = { name, range: source.range(n), line: source.lineOf(n), fn: functionName(up, source) };
  const importing = up.find((a) => a.type === 'import_from_statement' || a.type === 'import_statement');
  if (importing) {
    // `import Scaler as Other` gives the scaler a second name this rule does not follow.
    const aliased = up.find((a) => a.type === 'aliased_import');
    return { ...at, kind: aliased && child(aliased, 'alias') !== undefined ? 'other' : 'import' };
  }
  if (up.some((a) => a.type === 'class_definition' && source.textOf(child(a, 'name') ?? a) === name))
    return { ...at, kind: 'own' };
  const parent = n.parent;
  if (parent?.type !== 'attribute' || child(parent, 'object') !== n) return { ...at, kind: 'other' };
  const member = source.textOf(child(parent, 'attribute') ?? parent);
  const call = parent.parent?.type === 'call' && child(parent.parent, 'function') === parent ? parent.parent : null;
  if (call && member === 'apply')
    return { ...at, kind: 'apply', flows: flowsOut(call, source), countedLoss: countedLoss(call, source) };
  if (call && scaler.setters.includes(member)) {
    const value = named(child(call, 'arguments') ?? call)[0];
    return { ...at, kind: 'setter', setter: member, divisor: value ? divisorOf(value, source) : undefined };
  }
  if (!call && member === scaler.attribute && !written(parent)) return { ...at, kind: 'read' };
  return { ...at, kind: 'other' };
}

/**
 * The loss given to `apply` (its second argument), or an assignment to a name in it within the function, names a
 * micro-batch count: the loss may be scaled for the window already, and a scale of one may be right.
 */
function countedLoss(call: PyNode, source: Source): boolean {
  const loss = named(child(call, 'arguments') ?? call)[1];
  if (!loss) return false;
  const names = identifiersIn(loss, source);
  const def = ancestors(call).find((a) => a.type === 'function_definition');
  const values: PyNode[] = [loss];
  if (def)
    visit(child(def, 'body') ?? def, (n) => {
      if (n.type === 'function_definition' || n.type === 'class_definition') return false;
      const left = n.type === 'assignment' || n.type === 'augmented_assignment' ? child(n, 'left') : undefined;
      const right = child(n, 'right');
      if (left && right && identifiersIn(left, source).some((x) => names.includes(x))) values.push(n);
      return true;
    });
  return values.some((v) => identifiersIn(v, source).some((x) => ACCUMULATION_NAME.test(x)));
}

function identifiersIn(n: PyNode, source: Source): string[] {
  const out: string[] = [];
  visit(n, (m) => {
    if (m.type === 'identifier') out.push(source.textOf(m));
    return true;
  });
  return out;
}

/** The attribute is assigned, or has a method called on it (`.copy_(…)`, `.mul_(…)`). */
function written(attribute: PyNode): boolean {
  const p = attribute.parent;
  if (!p) return false;
  if ((p.type === 'assignment' || p.type === 'augmented_assignment') && child(p, 'left') === attribute) return true;
  return p.type === 'attribute' && child(p, 'object') === attribute;
}

function functionName(up: readonly PyNode[], source: Source): string | undefined {
  const defs = up.filter((a) => a.type === 'function_definition' || a.type === 'class_definition');
  const outer = defs[defs.length - 1];
  if (!outer) return undefined;
  const name = source.textOf(child(outer, 'name') ?? outer);
  if (outer.type === 'function_definition') return name;
  const method = defs[defs.length - 2];
  return method?.type === 'function_definition' ? `${name}.${source.textOf(child(method, 'name') ?? method)}` : name;
}

/** `value / count` (or `a * b / count`) where the count is named as a micro-batch count. */
function divisorOf(value: PyNode, source: Source): string | undefined {
  const v = unparen(value);
  if (v.type !== 'binary_operator' || operator(v, source) !== '/') return undefined;
  const right = child(v, 'right');
  if (!right) return undefined;
  const r = unparen(right);
  if (r.type !== 'identifier' && r.type !== 'attribute') return undefined;
  const text = compact(source, r);
  return ACCUMULATION_NAME.test(text.split('.').pop()!) ? text : undefined;
}

/**
 * The call is the value of a `return`, or is assigned to a name that a later `return` of the function gives back,
 * with no assignment to that name in between (a branch beside the call's own does not count).
 */
function flowsOut(call: PyNode, source: Source): boolean {
  const statement = call.parent;
  if (statement?.type === 'return_statement') return true;
  if (statement?.type !== 'assignment' || child(statement, 'right') !== call) return false;
  const left = child(statement, 'left');
  if (left?.type !== 'identifier') return false;
  const name = source.textOf(left);
  const def = ancestors(call).find((a) => a.type === 'function_definition');
  if (!def) return false;
  let returned = false;
  let lost = false;
  visit(child(def, 'body') ?? def, (n) => {
    if (n.type === 'function_definition' || n.type === 'class_definition') return false;
    if (n.start <= call.end) return n.end > call.end;
    if (n.type === 'assignment' && source.textOf(child(n, 'left') ?? n) === name && !sideBranches(statement, n)) {
      const right = child(n, 'right');
      if (!right || !mentionsName(right, name, source)) lost = true;
    }
    if (n.type === 'return_statement' && !lost && !sideBranches(statement, n) && mentionsName(n, name, source))
      returned = true;
    return true;
  });
  return returned && !lost;
}

/** The two statements lie in different branches of one `if` (the call's branch and an `else`), never both run. */
function sideBranches(a: PyNode, b: PyNode): boolean {
  const up = new Set(ancestors(a));
  const common = ancestors(b).find((n) => up.has(n));
  return common?.type === 'if_statement';
}

function mentionsName(n: PyNode, name: string, source: Source): boolean {
  let found = false;
  visit(n, (m) => {
    if (m.type === 'identifier' && source.textOf(m) === name) found = true;
    return !found;
  });
  return found;
}

/** Each top-level function's calls and loops (methods are left out: the rule follows plain calls only). */
function functionCalls(module: PyNode, source: Source): Map<string, FunctionCalls> {
  const out = new Map<string, FunctionCalls>();
  for (const statement of named(module)) {
    const def = statement.type === 'decorated_definition' ? child(statement, 'definition') : statement;
    if (def?.type !== 'function_definition') continue;
    const body = child(def, 'body');
    if (!body) continue;
    const loops: { calls: Set<string>; backward: boolean }[] = [];
    visit(body, (n) => {
      if (n.type === 'function_definition' || n.type === 'class_definition') return false;
      if (n.type === 'for_statement' || n.type === 'while_statement') {
        const loopBody = child(n, 'body');
        if (loopBody) loops.push(callsIn(loopBody, source));
      }
      return true;
    });
    out.set(source.textOf(child(def, 'name') ?? def), { calls: callsIn(body, source).calls, loops });
  }
  return out;
}

function callsIn(body: PyNode, source: Source): { calls: Set<string>; backward: boolean } {
  const calls = new Set<string>();
  let backward = false;
  visit(body, (n) => {
    if (n.type === 'function_definition' || n.type === 'class_definition') return false;
    if (n.type !== 'call') return true;
    const callee = child(n, 'function');
    const text = callee ? compact(source, callee) : '';
    if (callee?.type === 'identifier') calls.add(text);
    // `loss.backward()`, `torch.autograd.backward(…)`, `backward_step(…)`: a backward pass per iteration.
    if (/(^|\.)(\w*_)?backward(_\w+)?$/.test(text)) backward = true;
    return true;
  });
  return { calls, backward };
}
