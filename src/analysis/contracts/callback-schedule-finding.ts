// Words the CP008 finding of the callback schedule contract (callback-schedule.ts): the message naming the callback,
// the schedule and the micro-batch setting, and the evidence chain from the callback's call to the optimizer step.
// It is apart from the contract because wording a proven schedule is a separate job from proving it.
import type { PyNode } from '../tree';
import type { Finding, RelatedLocation } from '../types';
import { ruleInfo } from '../rules';
import type { Counted, Located } from './callback-counts';
import { effectAtStep } from './contract-effect';

/** A schedule read from a function: backward runs K times on the callback's losses, then one optimizer step. */
export interface Schedule {
  readonly fn: Located;
  /** The parameter that holds the callback. */
  readonly param: string;
  /** The micro-batch count's name in the schedule, and what it is read from (`args.num_microbatches`). */
  readonly count: string;
  readonly setting: string;
  readonly counted: Counted;
  readonly step: PyNode;
}

export function scheduleFinding(
  schedule: Schedule,
  callback: Located,
  call: PyNode,
  loss: { statement: PyNode; normaliser: string },
): Finding {
  const { source } = callback.file;
  const where = (at: Located, n: PyNode) => `${at.path}:${at.file.source.lineOf(n) + 1}`;
  const s = schedule.fn;
  const k = `\`${schedule.setting}\``;
  const message =
    `\`${callback.name}\`'s loss is a mean over its own micro-batch (${loss.normaliser}), and \`${s.name}\` ` +
    `(${where(s, s.def)}), which receives it as \`${schedule.param}\`, runs backward on ${k} such losses before one ` +
    `optimizer step; nothing divides by ${k}, so the step applies the sum of the micro-batch means, ${k}× the ` +
    `mean over the batch, and the effective learning rate is ${k}× the configured one. Divide the loss by ${k}.`;
  const link = (at: Located, n: PyNode, text: string): RelatedLocation => ({
    range: at.file.source.range(n),
    message: text,
    ...(at.path === callback.path ? {} : { file: at.path }),
  });
  const backwards = [...new Map(schedule.counted.backwards.map((b) => [b.node, b])).values()];
  const related: RelatedLocation[] = [
    link(callback, call, `\`${callback.name}\` is passed as the training callback here`),
    ...backwards.slice(0, 3).map((b) => link(b.at, b.node, `backward runs on a loss \`${callback.name}\` returned`)),
    link(s, schedule.step, `one optimizer step after ${k} backward passes`),
  ];
  return {
    code: 'CP008',
    severity: ruleInfo('CP008').severity,
    range: source.range(loss.statement),
    // The step is the schedule's: the optimizer it applies the gradient with decides what the factor does.
    message: effectAtStep(message, s.file.module, s.file.source, schedule.step),
    related,
    fixes: [],
  };
}
