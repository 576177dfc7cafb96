// What a Trainer subclass's own `training_step` does to the loss before its backward. The Trainer calls
// `training_step` once per micro-batch of an accumulation window, so a division there is the window's scaling.
// Read from the syntax tree of the method alone (cached per file with the class facts, see trainer-classes.ts).
import { child, named, unparen, visit, type PyNode, type Source } from '../tree';
import type { SourceRange } from '../types';

/** The configured window size: the Trainer's argument, not the size of the window being run. */
const CONFIGURED_WINDOW = 'self.args.gradient_accumulation_steps';

export interface WindowDivision {
  /** The statement that divides the loss by the configured window size. */
  readonly range: SourceRange;
  /** The name of the loss, as the method spells it. */
  readonly loss: string;
  /** The divisor as written (`self.args.gradient_accumulation_steps`). */
  readonly divisor: string;
  /** The backward that reads the divided loss. */
  readonly backward: SourceRange;
}

interface Event {
  readonly name: string;
  readonly start: number;
  readonly division?: PyNode;
}

/**
 * The division of the loss by `self.args.gradient_accumulation_steps` that the method's backward reads:
 * `loss = loss / self.args.gradient_accumulation_steps` (or `loss /= …`), then `self.accelerator.backward(loss)`
 * or `loss.backward()`, with no other assignment to the name between them in the text. A backward inside a loop
 * of the method is not counted: the method then runs micro-batches of its own, and the Trainer's window is not
 * what the division is about.
 */
export function readWindowDivision(fn: PyNode, source: Source): WindowDivision | undefined {
  const body = child(fn, 'body');
  if (!body) return undefined;
  const events: Event[] = [];
  const backwards: { name: string; node: PyNode }[] = [];
  visit(body, (n) => {
    if (n.type === 'function_definition' || n.type === 'class_definition' || n.type === 'lambda') return false;
    if (n.type === 'assignment' || n.type === 'augmented_assignment') {
      const left = child(n, 'left');
      if (left?.type === 'identifier') {
        const name = source.textOf(left);
        events.push({ name, start: n.start, division: dividesByWindow(n, name, source) ? n : undefined });
      }
    }
    if (n.type === 'call') {
      const name = backwardOf(n, source);
      if (name && !insideLoop(n, body)) backwards.push({ name, node: n });
    }
    return true;
  });
  for (const b of backwards) {
    const last = events.filter((e) => e.name === b.name && e.start < b.node.start).pop();
    if (!last?.division) continue;
    return {
      range: source.range(last.division),
      loss: b.name,
      divisor: CONFIGURED_WINDOW,
      backward: source.range(b.node),
    };
  }
  return undefined;
}

/** `name = name / self.args.gradient_accumulation_steps` or `name /= self.args.gradient_accumulation_steps`. */
function dividesByWindow(n: PyNode, name: string, source: Source): boolean {
  const right = child(n, 'right');
  if (!right) return false;
  const isWindow = (node: PyNode | undefined) =>
    node !== undefined && source.textOf(unparen(node)).replace(/\s+/g, '') === CONFIGURED_WINDOW;
  if (n.type === 'augmented_assignment') {
    const op = child(n, 'operator');
    return op !== undefined && source.textOf(op) === '/=' && isWindow(right);
  }
  const value = unparen(right);
  if (value.type !== 'binary_operator') return false;
  const op = child(value, 'operator');
  const dividend = child(value, 'left');
  return (
    op !== undefined &&
    source.textOf(op) === '/' &&
    dividend !== undefined &&
    source.textOf(unparen(dividend)) === name &&
    isWindow(child(value, 'right'))
  );
}

/** The loss a backward call runs on: `x.backward()` or `self.accelerator.backward(x, …)`, `x` a plain name. */
function backwardOf(call: PyNode, source: Source): string | undefined {
  const callee = child(call, 'function');
  if (callee?.type !== 'attribute') return undefined;
  const attr = child(callee, 'attribute');
  if (!attr || source.textOf(attr) !== 'backward') return undefined;
  const object = child(callee, 'object');
  const args = child(call, 'arguments');
  const first = args ? named(args)[0] : undefined;
  if (first?.type === 'identifier') return source.textOf(first);
  if (!first && object?.type === 'identifier') return source.textOf(object);
  return undefined;
}

function insideLoop(node: PyNode, body: PyNode): boolean {
  for (let p = node.parent; p && p !== body; p = p.parent)
    if (p.type === 'for_statement' || p.type === 'while_statement') return true;
  return false;
}
