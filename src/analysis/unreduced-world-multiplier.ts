// CP003 for a world-size multiplier applied on a path where nothing reduced the gradients (fairseq's trainer before
// 3c8e246). `optimizer.multiply_grads(world_size / sample_size)` is right after DDP, which averages the gradients
// (1/N of the summed gradient, times N, over the summed count). A class that wraps its module in a data-parallel
// wrapper only under some flags (`distributed_world_size > 1 and not use_bmuf`) runs the same multiplier on the paths
// where its module is bare: there the gradients are this rank's own, and when the denominator is this rank's own
// count too (its exchange with the other ranks runs only under another condition, `_sync_stats()`), the update is N
// times the local mean.
//
// The rule speaks only on a path proven feasible: the multiplier's guards, every wrapper-choosing `@property` the
// method reads choosing the bare module, the world size above one, and the denominator's fact "this rank's own value"
// (rank-local-values.ts), all as one formula over the class's flags (path-conditions.ts), satisfiable. It is silent
// when the class reduces gradients itself, when a denominator's origin on that path is not in view, or when a
// formula is too large to decide.
import { child, named, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { SizeClassifier } from './sizes';
import { and, atom, describe, not, witness, type Formula } from './path-formulas';
import { isMethod, PathConditions } from './path-conditions';
import { isCollective, RankLocalWalker } from './rank-local-values';
import type { ExplainedVerdict } from './findings';
import { clip } from './messages';

/** Data-parallel wrappers that average gradients across the replicas. */
const DATA_PARALLEL = new Set(['DistributedDataParallel', 'DDP', 'FullyShardedDataParallel', 'FSDP']);

export interface MultiplierContext {
  /** True when a name the class calls is a program function or class that wraps in DDP/FSDP (another file). */
  readonly wrapsDataParallel?: (name: string) => boolean;
  /** True when every definition of a method of this name in the program only combines its arguments. */
  readonly countPreserving?: (name: string) => boolean;
}

interface WrapperChoice {
  readonly property: string;
  /** When the property returns the bare module. */
  readonly bare: Formula;
  readonly wrapperCall: PyNode;
  readonly test: PyNode;
}

export function unreducedWorldMultiplierVerdicts(
  model: FileModel,
  sizes: SizeClassifier,
  context: MultiplierContext = {},
): ExplainedVerdict[] {
  const out: ExplainedVerdict[] = [];
  for (const fn of model.functions) {
    if (!isMethod(fn)) continue;
    for (const call of fn.calls) {
      // Methods that multiply every gradient by their argument (fairseq's optimizer API); select.ts lets them through.
      const name = model.syntax.calleeName(call);
      if (!/^(multiply_grads)$/.test(name)) continue;
      const v = judge(model, sizes, context, fn, call);
      if (v) out.push(v);
    }
  }
  return out;
}

function judge(
  model: FileModel,
  sizes: SizeClassifier,
  context: MultiplierContext,
  fn: FunctionInfo,
  call: PyNode,
): ExplainedVerdict | undefined {
  const s = model.syntax;
  const factor = s.args(call).positional[0];
  const division = factor ? unparenDivision(factor) : undefined;
  if (!division) return undefined;
  const [numerator, denominator] = division;
  if (!isWorldSize(model, sizes, fn, numerator)) return undefined;
  const counted = s.stripWrappers(denominator);
  if (counted.type !== 'identifier') return undefined;
  const conditions = new PathConditions(model, fn.className!);
  if (reducesGradients(model, fn.className!)) return undefined;
  const choices = wrapperChoices(model, conditions, fn, context);
  if (choices.length === 0) return undefined;
  const countName = s.text(counted);
  const walker = new RankLocalWalker(model, conditions, fn, (c) => countPreservingCall(model, c, context));
  const state = walker.stateAt(call);
  const facts = state?.factsOf(countName);
  if (!state || !facts) return undefined;
  const worldText = s.text(numerator).replace(/\s+/g, '');
  const manyRanks = /^self(\.\w+)+$/.test(worldText)
    ? [atom({ kind: 'compare', key: worldText, op: '>', value: 1 })]
    : [];
  for (const fact of facts) {
    if (fact.status !== 'local') continue;
    const bad = and(state.pc, ...choices.map((c) => c.bare), ...manyRanks, fact.when);
    const path = witness(bad);
    if (!path) continue;
    // The flags say which configuration it is; the opaque conditions on the way (a loop ran, a count was positive)
    // only made the path reachable.
    const flags = path.filter((l) => l.atom.kind !== 'opaque');
    return verdict(model, call, numerator, countName, choices, describe(flags.length > 0 ? flags : path));
  }
  return undefined;
}

function verdict(
  model: FileModel,
  call: PyNode,
  numerator: PyNode,
  countName: string,
  choices: readonly WrapperChoice[],
  path: string,
): ExplainedVerdict {
  const s = model.syntax;
  const world = clip(s.text(numerator), 60);
  const properties = choices.map((c) => `\`self.${c.property}\``).join(' and ');
  return {
    node: call,
    message:
      `\`${clip(s.text(call), 80)}\` multiplies the gradients by \`${world}\` over \`${countName}\` on every path, ` +
      `but on the path where ${clip(path, 240)}, ${properties} ${choices.length > 1 ? 'are' : 'is'} the bare ` +
      `module (no data-parallel wrapper averaged the gradients) and \`${countName}\` is this rank's own count ` +
      `(its exchange with the other ranks does not run). There the update uses N× this rank's mean gradient ` +
      `(N: \`${world}\`), so the effective learning rate is N× the configured one. On that path multiply by ` +
      `1 / \`${countName}\` instead.`,
    related: choices.map((c) => ({
      node: c.test,
      message: `\`self.${c.property}\` wraps in \`${clip(s.calleeText(c.wrapperCall), 40)}\` only when this holds`,
    })),
  };
}

/**
 * The world size: what the size classifier calls one, or an attribute whose last name ends in `world_size`
 * (`self.args.distributed_world_size`, which the classifier's exact names leave out).
 */
function isWorldSize(model: FileModel, sizes: SizeClassifier, fn: FunctionInfo, node: PyNode): boolean {
  if (sizes.classify(node, { fn }).kind === 'world') return true;
  const n = model.syntax.stripWrappers(node);
  const last = n.type === 'attribute' ? child(n, 'attribute') : undefined;
  return last !== undefined && /(^|_)world_?size$/i.test(model.syntax.text(last));
}

/** `a / b` (or `a * (1 / b)` is not read): the numerator and the denominator. */
function unparenDivision(node: PyNode): [PyNode, PyNode] | undefined {
  let n = node;
  while (n.type === 'parenthesized_expression' && named(n)[0]) n = named(n)[0];
  if (n.type !== 'binary_operator') return undefined;
  const op = n.children.find((c) => !c.named)?.type;
  const l = child(n, 'left');
  const r = child(n, 'right');
  return op === '/' && l && r ? [l, r] : undefined;
}

/** Text naming a gradient; a gradient's norm (a statistic the ranks compare) is not one. */
const GRADIENT_TEXT = /grad(?!_?norm)/i;

/** True when a method of the class passes a gradient to a collective itself. */
function reducesGradients(model: FileModel, className: string): boolean {
  const s = model.syntax;
  return model.functions.some(
    (f) =>
      f.className === className &&
      f.calls.some((c) => isCollective(model, c) && GRADIENT_TEXT.test(s.text(child(c, 'arguments') ?? c))),
  );
}

/**
 * The `@property` methods of the class that `fn` reads (`self.model`) and that choose between a data-parallel
 * wrapper and the bare module: `if cond: self._w = DDP(self._m) else: self._w = self._m`.
 */
function wrapperChoices(
  model: FileModel,
  conditions: PathConditions,
  fn: FunctionInfo,
  context: MultiplierContext,
): WrapperChoice[] {
  const s = model.syntax;
  const read = new Set<string>();
  visit(fn.node, (n) => {
    if (n.type !== 'attribute') return undefined;
    const object = child(n, 'object');
    const name = child(n, 'attribute');
    if (object && name && s.text(object) === 'self') read.add(s.text(name));
    return undefined;
  });
  const out: WrapperChoice[] = [];
  for (const name of read) {
    const property = conditions.methodNamed(name);
    if (!property || !isProperty(model, property)) continue;
    visit(property.node, (n) => {
      if (n.type !== 'if_statement') return undefined;
      const test = child(n, 'condition');
      const consequence = child(n, 'consequence');
      const otherwise = n.children.find((c) => c.type === 'else_clause');
      const alternative = otherwise ? child(otherwise, 'body') : undefined;
      if (!test || !consequence || !alternative) return undefined;
      const wrapped = [consequence, alternative].map((b) => wrapperAssignment(model, b, context));
      const bare = [consequence, alternative].map((b) => bareAssignment(model, b));
      const c = conditions.formula(test);
      if (wrapped[0] && bare[1]) out.push({ property: name, bare: not(c), wrapperCall: wrapped[0], test });
      else if (wrapped[1] && bare[0]) out.push({ property: name, bare: c, wrapperCall: wrapped[1], test });
      return undefined;
    });
  }
  return out;
}

function isProperty(model: FileModel, fn: FunctionInfo): boolean {
  const decorated = fn.node.parent;
  if (decorated?.type !== 'decorated_definition') return false;
  return decorated.children.some((d) => d.type === 'decorator' && model.syntax.text(d).trim() === '@property');
}

/** The data-parallel wrapper call a block's only assignment stores. */
function wrapperAssignment(model: FileModel, block: PyNode, context: MultiplierContext): PyNode | undefined {
  const value = onlyAssignedValue(block);
  if (!value || value.type !== 'call') return undefined;
  const name = model.syntax.calleeName(value);
  return DATA_PARALLEL.has(name) || context.wrapsDataParallel?.(name) === true ? value : undefined;
}

/** True when a block's only assignment stores a plain name or attribute (the bare module). */
function bareAssignment(model: FileModel, block: PyNode): boolean {
  const value = onlyAssignedValue(block);
  return value !== undefined && (value.type === 'identifier' || value.type === 'attribute');
}

function onlyAssignedValue(block: PyNode): PyNode | undefined {
  const statements = named(block);
  if (statements.length !== 1 || statements[0].type !== 'expression_statement') return undefined;
  const assignment = named(statements[0])[0];
  return assignment?.type === 'assignment' ? child(assignment, 'right') : undefined;
}

/** A call whose result carries only what its arguments carry: every definition in view only combines them. */
function countPreservingCall(model: FileModel, call: PyNode, context: MultiplierContext): boolean {
  const name = model.syntax.calleeName(call);
  if (context.countPreserving) return context.countPreserving(name);
  const defs = model.byName.get(name) ?? [];
  return defs.length > 0 && defs.every((d) => onlyCombinesArguments(model.syntax.text(d.node)));
}

const EXCHANGE_OR_WORLD = /world_size|get_world_size|all_reduce|all_gather|reduce_scatter|\bdist\.|distributed/;

/**
 * A definition (its text, from `def`) whose body is one `return` of an expression that names no collective and no
 * world size: `return sum(sample_sizes)`, `return criterion.__class__.grad_denom(sample_sizes)`. Such a function
 * can only combine what it is given, so a count passed in stays this rank's count.
 */
export function onlyCombinesArguments(definition: string): boolean {
  const lines = definition.split(/\r?\n/);
  const header = lines.findIndex((l) => /\)\s*(->[^:]*)?:\s*(#.*)?$/.test(l));
  if (header < 0) return false;
  const body = lines
    .slice(header + 1)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  // A one-line docstring is allowed before the return.
  const statements = /^("""|'''|"|').*\1$/.test(body[0] ?? '') ? body.slice(1) : body;
  return statements.length === 1 && /^return\s+\S/.test(statements[0]) && !EXCHANGE_OR_WORLD.test(statements[0]);
}
