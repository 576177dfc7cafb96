// Reads a `for … in range(n)` loop that runs a pipeline step several times before one optimizer step
// (pipeline-facts.ts collects them; pipeline-schedules.ts judges them).
import { child, named, visit, type PyNode, type Source } from '../tree';
import type { AccumulationLoop } from './pipeline-fact-types';

/** The loop, when its body neither clears the gradients nor steps an optimizer and an optimizer step follows it. */
export function readAccumulationLoop(
  source: Source,
  loop: PyNode,
  cls: string | undefined,
  fn: string,
  fnBody: PyNode,
): AccumulationLoop | undefined {
  const compactText = (n: PyNode) => source.textOf(n).replace(/\s+/g, '');
  const right = child(loop, 'right');
  const body = child(loop, 'body');
  if (!right || !body || right.type !== 'call' || compactText(child(right, 'function') ?? right) !== 'range')
    return undefined;
  const args = named(child(right, 'arguments') ?? right);
  // `range(n)` only: a start and stop (`range(1, k)`) or a literal count of one or none proves no repetition.
  if (args.length !== 1 || (args[0].type === 'integer' && Number(compactText(args[0])) <= 1)) return undefined;
  const calls = new Set<string>();
  const steps = new Set<string>();
  let clears = false;
  visit(body, (n) => {
    if (n.type !== 'call') return true;
    const callee = child(n, 'function');
    if (!callee) return true;
    const text = compactText(callee);
    if (/(^|\.)zero_grad$/.test(text)) clears = true;
    if (/\.step$/.test(text)) {
      const receiver = text.slice(0, -'.step'.length);
      if (isOptimizer(receiver)) clears = true;
      steps.add(receiver);
    }
    calls.add(text.replace(/^self\./, 'self.'));
    return true;
  });
  if (clears) return undefined;
  let optimizerStep: AccumulationLoop['optimizerStep'];
  visit(fnBody, (n) => {
    if (optimizerStep || n.start < loop.end) return n.end > loop.end && !optimizerStep;
    const callee = n.type === 'call' ? child(n, 'function') : undefined;
    const text = callee ? compactText(callee) : '';
    if (/\.step$/.test(text) && isOptimizer(text.slice(0, -'.step'.length)))
      optimizerStep = { range: source.range(n), line: source.lineOf(n), text: source.textOf(n) };
    return !optimizerStep;
  });
  if (!optimizerStep) return undefined;
  return {
    cls,
    fn,
    count: source.textOf(args[0]),
    range: source.range(child(loop, 'left') ?? loop),
    line: source.lineOf(loop),
    calls,
    steps,
    optimizerStep,
  };
}

/** `optimizer`, `self.optimizers`, `opt`: the receiver of an optimizer's `.step()`. */
function isOptimizer(receiver: string): boolean {
  return /(^|\.)(optim\w*|opt)$/i.test(receiver);
}
