// The rule catalogue. Codes are the public interface (settings, ignore comments, SARIF rule ids): never renumber.
import type { RuleCode, Severity } from './types';

export interface RuleInfo {
  readonly code: RuleCode;
  /** A short kebab-case name, used in SARIF and the docs. */
  readonly name: string;
  readonly title: string;
  readonly severity: Severity;
  /** One sentence for tooltips and `--help`. */
  readonly summary: string;
}

export const RULES: readonly RuleInfo[] = [
  {
    code: 'CP001',
    name: 'gradient-sum-not-averaged',
    title: 'Gradients summed and not averaged',
    severity: 'error',
    summary:
      'Gradients are summed across ranks and never divided by the world size, so the effective learning rate grows with the number of ranks.',
  },
  {
    code: 'CP002',
    name: 'gradient-averaged-twice',
    title: 'Gradients averaged twice',
    severity: 'error',
    summary:
      'Gradients are divided by the world size twice (for example by hand on top of DDP), so the effective learning rate shrinks with the number of ranks.',
  },
  {
    code: 'CP003',
    name: 'wrong-gradient-divisor',
    title: 'Wrong divisor',
    severity: 'error',
    summary:
      'Summed gradients are divided by the local GPU count, a hard-coded number or the batch size instead of the size of the group that reduced them.',
  },
  {
    code: 'CP004',
    name: 'psum-instead-of-pmean',
    title: 'psum where pmean was meant',
    severity: 'error',
    summary: 'JAX lax.psum of gradients inside pmap/shard_map sums over the devices; lax.pmean averages.',
  },
  {
    code: 'CP005',
    name: 'linear-lr-scaling-on-sum',
    title: 'Linear-scaled learning rate on top of a sum',
    severity: 'warning',
    summary: 'The learning rate is multiplied by the world size while the gradients are summed, an N² effect.',
  },
  {
    code: 'CP006',
    name: 'reduceop-avg-on-gloo',
    title: 'ReduceOp.AVG on gloo',
    severity: 'warning',
    summary: 'ReduceOp.AVG is implemented only by NCCL; gloo rejects it, so the job fails on CPU or gloo runs.',
  },
  {
    code: 'CP007',
    name: 'deepspeed-predivide-settings',
    title: 'DeepSpeed pre-divide settings',
    severity: 'warning',
    summary:
      'gradient_predivide_factor and prescale_gradients combinations that change or silently ignore the gradient scale.',
  },
  {
    code: 'CP008',
    name: 'gradient-accumulation-not-averaged',
    title: 'Accumulated gradients not averaged',
    severity: 'error',
    summary:
      'Backward runs on K micro-batches before each optimizer step and the loss is not divided by K, so the accumulated gradient, and the effective learning rate, is K times too large.',
  },
];

export const RULE_CODES: readonly RuleCode[] = RULES.map((r) => r.code);

export function ruleInfo(code: RuleCode): RuleInfo {
  const rule = RULES.find((r) => r.code === code);
  if (!rule) throw new Error(`unknown rule ${code}`);
  return rule;
}

export function isRuleCode(text: string): text is RuleCode {
  return (RULE_CODES as readonly string[]).includes(text);
}
