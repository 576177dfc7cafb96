// What a training script's `forward_step` callback returns as its loss (callback-schedule.ts): the first element of
// the tuple it returns (`return loss, {'lm loss': …}`; a bare return is the activation a middle pipeline stage hands
// on). The loss counts as a mean over its own micro-batch when it is divided by a count of a value the callback itself
// computes (`/ loss_mask.sum()`, `.numel()`, `len(…)`, `.size(…)`), is a `.mean()`, or is a cross-entropy with the
// default reduction, or a sum of such means. A division by a global count (an argument, an attribute) or a sum is not
// a mean of the micro-batch, and proves nothing.
import { ancestors, child, named, statementOf, unparen, visit, type PyNode, type Source } from '../tree';
import { ACCUMULATION_NAME } from '../accumulation-syntax';
import { assignedNames, visitBody } from './callback-files';
import { compact, operator } from './loss-scaler-classes';

export interface MeanLoss {
  /** The statement that computes the loss (where a division by the micro-batch count belongs). */
  readonly statement: PyNode;
  /** How it is normalised, in words for the message (divided by `loss_mask.sum()`, a `.mean()`). */
  readonly normaliser: string;
}

const COUNT_METHOD = /^(sum|numel|size|count_nonzero)$/;
const MEAN_LOSS = /^(torch\.nn\.functional\.|F\.|nn\.functional\.)?(cross_entropy|nll_loss|mse_loss|l1_loss)$/;
const MEAN_MODULE = /^(torch\.nn\.|nn\.)?(CrossEntropyLoss|NLLLoss|MSELoss|L1Loss)$/;

/**
 * The callback's loss when every tuple it returns starts with a mean over its micro-batch; otherwise undefined. With
 * `bare`, a return of a single value is read as the loss too (a loss function handed to a schedule that runs backward
 * on what it returns); without, a bare return is a middle pipeline stage's activation and proves nothing.
 */
export function meanLoss(def: PyNode, source: Source, bare = false): MeanLoss | undefined {
  const assigned = assignedNames(def, source);
  const firsts: PyNode[] = [];
  let empty = false;
  visitBody(def, (n) => {
    if (n.type !== 'return_statement') return true;
    const value = named(n)[0];
    if (value?.type === 'expression_list') firsts.push(named(value)[0]);
    else if (bare && value) firsts.push(value);
    else if (bare) empty = true;
    return false;
  });
  if (firsts.length === 0 || empty) return undefined;
  let found: MeanLoss | undefined;
  for (const first of firsts) {
    const mean = meanOf(first, first, 0);
    if (!mean) return undefined;
    found ??= mean;
  }
  return found;

  function meanOf(e: PyNode, use: PyNode, depth: number): MeanLoss | undefined {
    if (depth > 8) return undefined;
    const n = unparen(e);
    const at = (normaliser: string): MeanLoss => ({ statement: statementOf(n), normaliser });
    if (n.type === 'identifier') {
      const value = valueAt(source.textOf(n), use);
      return value && meanOf(value, value, depth + 1);
    }
    if (n.type === 'binary_operator') {
      const left = child(n, 'left');
      const right = child(n, 'right');
      if (!left || !right) return undefined;
      if (operator(n, source) === '/')
        return localCount(right) ? at(`divided by \`${compact(source, right)}\``) : undefined;
      if (operator(n, source) === '+') {
        const a = meanOf(left, use, depth + 1);
        return a && meanOf(right, use, depth + 1) ? at(a.normaliser) : undefined;
      }
      return undefined;
    }
    if (n.type !== 'call') return undefined;
    const callee = child(n, 'function');
    if (!callee) return undefined;
    const text = compact(source, callee);
    if (hasKeyword(n, 'reduction', source)) return undefined;
    if (text === 'torch.mean' || /\.mean$/.test(text)) return at(`a \`${text}\``);
    if (MEAN_LOSS.test(text)) return at(`\`${text}\` with its default mean reduction`);
    if (callee.type === 'call' && MEAN_MODULE.test(compact(source, child(callee, 'function') ?? callee)))
      return hasKeyword(callee, 'reduction', source)
        ? undefined
        : at(`\`${compact(source, child(callee, 'function')!)}\` with its default mean reduction`);
    // `loss.float()`: the same mean in another precision.
    const object = callee.type === 'attribute' ? child(callee, 'object') : undefined;
    if (object && /\.(float|double|half|bfloat16|contiguous|squeeze)$/.test(text))
      return meanOf(object, use, depth + 1);
    return undefined;
  }

  /** `x.sum()`, `torch.sum(x)`, `x.numel()`, `len(x)`, `x.size(0)` of a name the callback assigns itself. */
  function localCount(e: PyNode): boolean {
    const n = unparen(e);
    if (n.type !== 'call') return false;
    const callee = child(n, 'function');
    const args = named(child(n, 'arguments') ?? n);
    let subject: PyNode | undefined;
    if (callee?.type === 'attribute' && COUNT_METHOD.test(source.textOf(child(callee, 'attribute') ?? callee)))
      subject = child(callee, 'object');
    else if (callee && /^(len|torch\.sum|torch\.count_nonzero)$/.test(compact(source, callee))) subject = args[0];
    while (subject && (subject.type === 'call' || subject.type === 'attribute')) {
      const inner = subject.type === 'call' ? child(subject, 'function') : child(subject, 'object');
      subject = inner;
    }
    return subject?.type === 'identifier' && assigned.has(source.textOf(subject));
  }

  /** The value of a name at a use: its last assignment before it, when every assignment encloses the use's block. */
  function valueAt(name: string, use: PyNode): PyNode | undefined {
    const nodes = assigned.get(name) ?? [];
    const up = new Set(ancestors(use));
    if (nodes.some((a) => a.type !== 'assignment' || !up.has(statementOf(a).parent!))) return undefined;
    const before = nodes.filter((a) => a.end <= use.start).sort((a, b) => a.start - b.start);
    const last = before[before.length - 1];
    return last && child(last, 'left')?.type === 'identifier' ? child(last, 'right') : undefined;
  }
}

/** A function names a micro-batch count (or the given name) in a division or a `div`/`mul` call's argument. */
export function dividesByCount(def: PyNode, source: Source, names: ReadonlySet<string>): boolean {
  let found = false;
  const counted = (n: PyNode | undefined) => {
    let hit = false;
    if (n)
      visit(n, (m) => {
        const name = m.type === 'identifier' ? source.textOf(m) : undefined;
        if (name && (ACCUMULATION_NAME.test(name) || names.has(name))) hit = true;
        return !hit;
      });
    return hit;
  };
  visitBody(def, (n) => {
    if (n.type === 'binary_operator' && operator(n, source) === '/' && counted(child(n, 'right'))) found = true;
    if (n.type === 'augmented_assignment' && /^[/*]=$/.test(operator(n, source)) && counted(child(n, 'right')))
      found = true;
    if (n.type === 'call' && /\.(div_?|mul_?|scale\w*)$/.test(compact(source, child(n, 'function') ?? n)))
      found ||= counted(child(n, 'arguments'));
    return !found;
  });
  return found;
}

function hasKeyword(call: PyNode, name: string, source: Source): boolean {
  const args = child(call, 'arguments');
  return (
    !!args && named(args).some((a) => a.type === 'keyword_argument' && source.textOf(child(a, 'name') ?? a) === name)
  );
}
