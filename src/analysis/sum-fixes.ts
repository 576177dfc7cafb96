// The wording that follows a CP001/CP004 sum's message and the quick fixes it offers, by how the sum came about: a
// pmean for JAX, a call site that skips the division or passes a summing op, a reduction to average or divide,
// Horovod's op argument, or a tf.distribute strategy's per-replica mean. It is apart from findings.ts because it
// chooses among the fixes of one rule; the writer there states the sum and records the finding.
import { child, type PyNode, type Source } from './tree';
import type { FileModel } from './scope';
import type { Verdict } from './judge-verdict';
import type { ImplicitVerdict } from './implicit';
import type { FixBuilder } from './fixes';
import type { Fix, RelatedLocation } from './types';

/**
 * The sentence to append to the sum's message and the fixes to offer, best first. Where a guard skips the division,
 * it is added to `related`.
 */
export function sumNoteAndFixes(
  model: FileModel,
  source: Source,
  fixes: FixBuilder,
  v: Verdict | ImplicitVerdict,
  related: RelatedLocation[],
): { note: string; fixes: (Fix | undefined)[] } {
  const r = v.fact?.reduction;
  const iv = v as ImplicitVerdict;
  const text = (n: PyNode) => model.syntax.text(n);
  let note = '';
  const out: (Fix | undefined)[] = [];
  if (v.code === 'CP004' && r) {
    note += ' Use lax.pmean to average.';
    out.push(fixes.pmeanFix(r));
  } else if (v.defeated?.binding?.callSite) {
    const value = fixes.guardValue(v.defeated);
    const b = v.defeated.binding;
    note += ` This call uses ${b.isDefault ? 'the default' : 'the value'} ${b.param}=${text(b.node)}, which skips the division by the world size.`;
    if (value) out.push(fixes.callSiteFix(b.callSite!, b, value, 'average'));
    if (r)
      related.push({
        range: source.range(v.defeated.guard!.test),
        message: 'the division only runs when this holds',
      });
  } else if (v.opBinding?.callSite && r) {
    const op = fixes.averagingOpText(r);
    note += ` This call ${v.opBinding.isDefault ? 'relies on the default' : 'passes'} ${v.opBinding.param}=${text(v.opBinding.node)}.`;
    if (op) out.push(fixes.callSiteFix(v.opBinding.callSite, v.opBinding, op, 'average'));
  } else if (r) {
    if (fixes.gloo) out.push(fixes.divideFix(r), fixes.averageFix(r));
    else out.push(fixes.averageFix(r), fixes.divideFix(r));
  } else if (iv.reducer) {
    note += ` \`${text(iv.reducer.op.argNode ?? iv.reducer.call)}\` makes Horovod sum them.`;
    const value = iv.reducer.op.valueNode;
    const arg = iv.reducer.op.argNode;
    const hvd = model.aliasFor(/horovod/) ?? 'hvd';
    if (value && arg?.type === 'keyword_argument') {
      const isAverage = text(child(arg, 'name') ?? arg) === 'average';
      out.push({
        title: isAverage ? 'Use average=True' : `Use op=${hvd}.Average`,
        edits: [fixes.edits.replace(value, isAverage ? 'True' : `${hvd}.Average`)],
      });
    }
  } else if (iv.meanNode && iv.strategyName) {
    note += ` ${iv.strategyName} sums the replicas' gradients of this per-replica mean loss: divide it by ${iv.strategyName}.num_replicas_in_sync or use tf.nn.compute_average_loss with the global batch size.`;
    out.push({
      title: `Divide the loss by ${iv.strategyName}.num_replicas_in_sync`,
      edits: [fixes.edits.replace(iv.meanNode, `(${text(iv.meanNode)} / ${iv.strategyName}.num_replicas_in_sync)`)],
    });
  }
  return { note, fixes: out };
}
