// CP001 for a sum of per-rank means: each rank divides its loss by a count of its own micro-batch (its tokens, its
// sentences), computed from the batch on that rank and never reduced across ranks, and the gradients are then summed
// over all ranks by a helper whose rescale the caller sets to 1. Each rank's gradient is already a mean, so the sum
// is N means where one was meant: OpenNMT-py before 7ebf112, which fixed it by normalising with the count gathered
// over all ranks. A normaliser the analysis cannot prove local (a parameter, a count gathered or reduced anywhere
// in the function, a name of unknown origin) keeps the rule silent, as does a rescale that is not literally 1.
import { child, hasSplat, unparen, visit, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { UpdateFinder } from './updates';
import { COLLECTIVE, divisorOf, type LossNormaliserSummary, type RescaleHelperSummary } from './local-normaliser';
import { clip, timesFactor } from './messages';
import type { ExplainedVerdict } from './findings';

/** What the program knows of the other files' helpers, for one file. */
export interface NormaliserIndex {
  /** The rescaling reduction a call reaches through this file's imports, if it is one. */
  rescaleHelper(call: PyNode, model: FileModel): RescaleHelperSummary | undefined;
  /** Every loss normaliser of the program with this name (methods are matched by name). */
  lossNormalisers(name: string): readonly LossNormaliserSummary[];
}

/** A finding of this rule, shown as every explained finding is (findings.ts). */
export type LocalNormaliserVerdict = ExplainedVerdict;

/** Methods of a count's expression that keep it this rank's own: tensor views, comparisons and counts. */
const COUNT_END = /^(sum|numel|size|count_nonzero|nelement)$/;
const COUNT_FIELD = /^(batch_size|num_tokens|ntokens|n_tokens|num_words|n_words|nsentences|num_sentences)$/;
const MAX_DEPTH = 4;

export function localNormaliserVerdicts(
  model: FileModel,
  updates: UpdateFinder,
  index: NormaliserIndex,
  worldSize: number | undefined,
): LocalNormaliserVerdict[] {
  const s = model.syntax;
  const out: LocalNormaliserVerdict[] = [];
  for (const fn of model.functions) {
    for (const call of fn.calls) {
      const helper = index.rescaleHelper(call, model);
      if (!helper) continue;
      const args = s.args(call);
      const list = child(call, 'arguments');
      if (hasSplat(list)) continue;
      const denom = args.keywords.get(helper.denomParam)?.value ?? args.positional[helper.denomIndex];
      const tensors = args.keywords.get(helper.tensorsParam)?.value ?? args.positional[helper.tensorsIndex];
      if (!denom || !tensors || s.numberValue(s.stripWrappers(denom)) !== 1) continue;
      if (!holdsGradients(model, fn, tensors)) continue;
      const losses = lossCalls(model, fn, index).filter((l) => l.call.start < call.start);
      // Every backward pass before the sum must show its normaliser; one that does not may be normalised globally.
      if (losses.length === 0 || losses.some((l) => !l.normaliser)) continue;
      const proofs = losses.map((l) => ({ ...l, proof: localCount(model, fn, l.normaliser!, l.call, 0) }));
      if (proofs.some((p) => !p.proof)) continue;
      const update = updates.find([fn]);
      if (!update || update.node.start < call.start) continue;
      const first = proofs[0];
      const loop = enclosingLoop(first.call, fn);
      const perMicroBatch = loop
        ? ` (and the backward runs once per micro-batch of \`${clip(s.text(loop), 30)}\`, so their means add up too)`
        : '';
      const message =
        `\`${helper.name}\` (${helper.path}:${helper.range.startLine + 1}) sums the gradients in \`${clip(s.text(tensors), 30)}\` over all ranks (the default group) ` +
        `and divides them by \`${s.text(denom)}\`; the loss behind them was divided by \`${clip(s.text(first.normaliser!), 30)}\`, ` +
        `a count of this rank's own micro-batch that is never reduced across ranks, so each rank's gradients are a mean ` +
        `and the sum adds ${worldSize ?? 'N'} of them${perMicroBatch}. ${update.what[0].toUpperCase()}${update.what.slice(1)}. ` +
        `The effective learning rate is ${timesFactor(1, worldSize)} the configured one; normalise by the count summed over all ranks, or divide by the world size.`;
      out.push({
        node: call,
        message,
        related: [
          ...first.proof!.map((n) => ({ node: n, message: "the normaliser counts this rank's micro-batch only" })),
          first.summary
            ? {
                file: first.summary.path,
                range: first.summary.range,
                message: `\`${first.summary.name}\` divides the loss by \`${first.summary.param}\` and runs backward`,
              }
            : { node: first.call, message: 'the loss is divided by the normaliser here and backward runs' },
          {
            file: helper.path,
            range: helper.range,
            message: `\`${helper.name}\` sums here with \`${helper.reducer}\`, then divides by \`${helper.denomParam}\``,
          },
          { node: update.node, message: update.what },
        ],
      });
    }
  }
  return out;
}

/** The tensors are gradients: `p.grad` written in the argument, or in what the name was assigned. */
function holdsGradients(model: FileModel, fn: FunctionInfo, tensors: PyNode): boolean {
  const s = model.syntax;
  const grad = (n: PyNode) => /\.grad\b/.test(s.text(n));
  if (grad(tensors)) return true;
  const t = unparen(tensors);
  if (t.type !== 'identifier') return false;
  const values = assignedValues(model, fn, s.text(t));
  return values.length > 0 && values.every(grad);
}

interface LossCall {
  readonly call: PyNode;
  /** What the loss is divided by before backward; undefined when the backward shows no single divisor. */
  readonly normaliser?: PyNode;
  /** The loss normaliser of another file the call reaches; undefined for a backward written here. */
  readonly summary?: LossNormaliserSummary;
}

/**
 * The backward passes of the function: its own (`loss.div(n).backward()`, `torch.autograd.backward(loss / n)`)
 * and its calls to a loss normaliser that every definition of that name in the program agrees on.
 */
function lossCalls(model: FileModel, fn: FunctionInfo, index: NormaliserIndex): LossCall[] {
  const s = model.syntax;
  const out: LossCall[] = [];
  for (const call of fn.calls) {
    const name = s.calleeName(call);
    const args = s.args(call);
    if (name === 'backward') {
      const obj = s.calleeObject(call);
      const loss = obj && args.positional.length === 0 ? obj : args.positional[0];
      out.push({ call, normaliser: loss ? divisorOf(model, fn, unparen(loss), call.start) : undefined });
      continue;
    }
    const summaries = index.lossNormalisers(name);
    if (summaries.length === 0) continue;
    const first = summaries[0];
    const method = child(call, 'function')?.type === 'attribute';
    const list = child(call, 'arguments');
    const agree = summaries.every((x) => x.index === first.index && x.param === first.param && x.isMethod === method);
    const hidden = hasSplat(list);
    const normaliser =
      agree && !hidden ? (args.keywords.get(first.param)?.value ?? args.positional[first.index]) : undefined;
    out.push({ call, normaliser, summary: first });
  }
  return out;
}

/**
 * The nodes that prove `node` is a count of this rank's micro-batch, or undefined. A name must be a local of the
 * function (not a parameter), every value it is assigned must be such a count, and no collective in the function
 * may take it; an expression must be a count (`.sum()`, `.numel()`, `.size(0)`, `len(...)`, `.batch_size`) of
 * the variable of a loop around the loss's call (the micro-batch), with no collective anywhere in it.
 */
function localCount(
  model: FileModel,
  fn: FunctionInfo,
  node: PyNode,
  site: PyNode,
  depth: number,
): PyNode[] | undefined {
  const s = model.syntax;
  if (depth > MAX_DEPTH) return undefined;
  const n = s.stripWrappers(node);
  if (n.type === 'identifier') {
    const name = s.text(n);
    if (fn.params.some((p) => p.name === name) || passedToCollective(model, fn, name)) return undefined;
    const values = assignedValues(model, fn, name);
    if (values.length === 0 || reassignedOtherwise(model, fn, name)) return undefined;
    const proofs = values.map((v) => localCount(model, fn, v, site, depth + 1));
    if (proofs.some((p) => !p)) return undefined;
    return proofs.flatMap((p) => p!);
  }
  let collective = false;
  visit(n, (c) => {
    if (c.type === 'call' && COLLECTIVE.test(s.calleeName(c))) collective = true;
    return !collective;
  });
  if (collective) return undefined;
  const root = countRoot(model, n);
  if (!root) return undefined;
  const loopVars = loopsAround(site, fn).flatMap((l) => loopTargets(model, l));
  return loopVars.includes(s.text(root)) ? [n] : undefined;
}

/** The variable a count is taken of: `batch` in `batch.tgt[1:].ne(pad).sum()`, `len(batch)` or `batch.batch_size`. */
function countRoot(model: FileModel, n: PyNode): PyNode | undefined {
  const s = model.syntax;
  let cur = unparen(n);
  if (cur.type === 'call' && s.calleeText(cur) === 'len') {
    const inner = s.args(cur).positional[0];
    return inner ? rootOf(model, inner) : undefined;
  }
  if (cur.type === 'attribute') {
    const attr = child(cur, 'attribute');
    if (!attr || !COUNT_FIELD.test(s.text(attr))) return undefined;
    return rootOf(model, child(cur, 'object') ?? cur);
  }
  if (cur.type === 'call' && COUNT_END.test(s.calleeName(cur)) && s.calleeObject(cur)) {
    cur = s.calleeObject(cur)!;
    return rootOf(model, cur);
  }
  return undefined;
}

function rootOf(model: FileModel, n: PyNode): PyNode | undefined {
  const s = model.syntax;
  let cur = unparen(n);
  for (let i = 0; i < 20; i++) {
    if (cur.type === 'identifier') return cur;
    if (cur.type === 'attribute') cur = unparen(child(cur, 'object') ?? cur);
    else if (cur.type === 'subscript') cur = unparen(child(cur, 'value') ?? cur);
    else if (cur.type === 'call' && s.calleeObject(cur) && !COLLECTIVE.test(s.calleeName(cur)))
      cur = unparen(s.calleeObject(cur)!);
    else return undefined;
  }
  return undefined;
}

function loopsAround(node: PyNode, fn: FunctionInfo): PyNode[] {
  const out: PyNode[] = [];
  for (let p = node.parent; p && p !== fn.node; p = p.parent) if (p.type === 'for_statement') out.push(p);
  return out;
}

function enclosingLoop(node: PyNode, fn: FunctionInfo): PyNode | undefined {
  const loops = loopsAround(node, fn);
  return loops.length > 0 ? (child(loops[loops.length - 1], 'right') ?? undefined) : undefined;
}

function loopTargets(model: FileModel, loop: PyNode): string[] {
  const left = child(loop, 'left');
  if (!left) return [];
  const out: string[] = [];
  visit(left, (c) => {
    if (c.type === 'identifier') out.push(model.syntax.text(c));
  });
  return out;
}

function assignedValues(model: FileModel, fn: FunctionInfo, name: string): PyNode[] {
  const out: PyNode[] = [];
  for (const a of fn.assignments) {
    if (a.type !== 'assignment') continue;
    const left = child(a, 'left');
    const right = child(a, 'right');
    if (left && right && unparen(left).type === 'identifier' && model.syntax.text(left) === name) out.push(right);
  }
  return out;
}

/** Written by `+=`, a tuple target, a `for` target or a `with ... as`: values the rule does not follow. */
function reassignedOtherwise(model: FileModel, fn: FunctionInfo, name: string): boolean {
  let other = false;
  visit(fn.node, (c) => {
    if (other) return false;
    if (c !== fn.node && c.type === 'function_definition') return false;
    if (
      c.type === 'augmented_assignment' ||
      (c.type === 'assignment' && unparen(child(c, 'left') ?? c).type !== 'identifier')
    ) {
      const left = child(c, 'left');
      if (left && namesIn(model, left).includes(name)) other = true;
    } else if (c.type === 'for_statement' || c.type === 'as_pattern' || /^(global|nonlocal)_statement$/.test(c.type)) {
      const target = c.type === 'for_statement' ? child(c, 'left') : c.type === 'as_pattern' ? child(c, 'alias') : c;
      if (target && namesIn(model, target).includes(name)) other = true;
    }
    return true;
  });
  return other;
}

function namesIn(model: FileModel, n: PyNode): string[] {
  const out: string[] = [];
  visit(n, (c) => {
    if (c.type === 'identifier') out.push(model.syntax.text(c));
  });
  return out;
}

/** The name is an argument of a collective anywhere in the function: gathered, reduced or broadcast. */
function passedToCollective(model: FileModel, fn: FunctionInfo, name: string): boolean {
  const s = model.syntax;
  return fn.calls.some((call) => {
    if (!COLLECTIVE.test(s.calleeName(call))) return false;
    const list = child(call, 'arguments');
    return !!list && namesIn(model, list).includes(name);
  });
}
