// Relations between the sizes of a model-parallel framework's groups, which the named dimensions alone do not
// state. Megatron-LM's `initialize_model_parallel` splits the ranks of one pipeline stage twice: as
// tp × cp × dp for the dense layers and as etp × ep × edp for the experts (`expert_data_parallel_size =
// decoder_world_size // (expert_tensor_parallel_size × expert_model_parallel_size × pipeline_model_parallel_size)`),
// so edp × ep × etp = dp × cp × tp, where the expert tensor-parallel size etp defaults to tp but may be set apart.
// DeepSpeed's expert groups satisfy the same relation with etp = tp and cp = 1 (edp × ep = dp).
import { multiplyDims, type Dims } from './group-sizes';

/** edp × ep × etp / (dp × cp × tp) = 1. */
const EXPERT_SPLIT: Dims = new Map([
  ['edp', 1],
  ['ep', 1],
  ['etp', 1],
  ['dp', -1],
  ['cp', -1],
  ['tp', -1],
]);

/**
 * The factor with the expert-data-parallel size written through the others (edp = dp × cp × tp / (ep × etp)), so
 * that a product that is 1 under the relation reads as 1; unchanged when it does not name edp.
 */
export function withoutExpertDataParallel(factor: Dims): Map<string, number> {
  const e = factor.get('edp') ?? 0;
  if (e === 0) return new Map(factor);
  const out = new Map<string, number>();
  for (const [d, x] of EXPERT_SPLIT) out.set(d, -e * x);
  return multiplyDims(factor, out);
}

/**
 * True for the quotient of the expert and the dense tensor-parallel sizes (etp/tp or a power of it): 1 at the
 * default, and not 1 wherever the two are set apart.
 */
export function isExpertTensorRatio(factor: Dims): boolean {
  const etp = factor.get('etp') ?? 0;
  return factor.size === 2 && etp !== 0 && factor.get('tp') === -etp;
}
