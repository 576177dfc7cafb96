// Reads one schedule construction (`ScheduleGPipe(stage, n, loss_fn=…)`): how it sets `scale_grads`, its
// micro-batch count and the loss wrapper it is given (pipeline-facts.ts collects them).
import { child, named, type PyNode, type Source } from '../tree';
import type { Construction, GradScaling } from './pipeline-fact-types';

/** The construction `call` of schedule `callee` with arguments `args`, inside function `fn`. */
export function readConstruction(source: Source, call: PyNode, callee: string, args: PyNode, fn: string): Construction {
  const compactText = (n: PyNode) => source.textOf(n).replace(/\s+/g, '');
  let scaling: GradScaling = 'default';
  let microbatches: string | undefined;
  let lossWrapper: Construction['lossWrapper'];
  const positional = named(args).filter((a) => a.type !== 'keyword_argument');
  for (const a of named(args)) {
    if (a.type === 'dictionary_splat') scaling = 'unknown';
    if (a.type !== 'keyword_argument') continue;
    const key = compactText(child(a, 'name') ?? a);
    const value = child(a, 'value');
    if (key === 'scale_grads' && value)
      scaling = compactText(value) === 'True' ? 'true' : compactText(value) === 'False' ? 'false' : 'unknown';
    if (key === 'n_microbatches' && value) microbatches = source.textOf(value);
    if (key === 'loss_fn' && value?.type === 'call') lossWrapper = lossWrapperCall(source, value);
  }
  if (microbatches === undefined && positional[1]) microbatches = source.textOf(positional[1]);
  const statement = call.parent?.type === 'assignment' ? call.parent : undefined;
  const left = statement ? child(statement, 'left') : undefined;
  return {
    range: source.range(call),
    line: source.lineOf(call),
    callee,
    scaling,
    microbatches,
    lossWrapper,
    fn,
    variable: left && child(statement!, 'right') === call ? compactText(left) : undefined,
  };
}

function lossWrapperCall(source: Source, call: PyNode): Construction['lossWrapper'] {
  const compactText = (n: PyNode) => source.textOf(n).replace(/\s+/g, '');
  const callee = child(call, 'function');
  const args = child(call, 'arguments');
  if (callee?.type !== 'identifier' || !args) return undefined;
  const items = named(args);
  if (items.some((a) => a.type !== 'identifier' && a.type !== 'attribute' && a.type !== 'integer')) return undefined;
  return { callee: compactText(callee), args: items.map((a) => compactText(a)), range: source.range(call) };
}
