// Reads where a file scales its learning rate by the world size (`lr=args.lr * hvd.size()`, `lr /= world_size`),
// and builds the edit that removes such a scaling. It is apart from findings.ts because it is a reader of the file,
// not a writer of findings: the writer uses a division here to excuse a sum (CP001) and a product to report CP005.
import { child, type PyNode } from './tree';
import type { FileModel } from './scope';
import type { SizeClassifier } from './sizes';
import type { EditBuilder } from './edits';
import type { Fix } from './types';

const LR_NAME = /(^|[._])(lr|learning_rate|base_lr|max_lr|init_lr|lr0)$/i;

/** A statement that multiplies (`sign` 1) or divides (`sign` -1) a learning rate by a world-size `factor`. */
export interface LearningRateScaling {
  readonly node: PyNode;
  readonly factor: PyNode;
  readonly sign: 1 | -1;
}

/** Products that scale a learning rate: `lr=args.lr * hvd.size()`, `base_lr * world_size`, `lr *= ws`. */
export function learningRateScalings(model: FileModel, sizes: SizeClassifier): LearningRateScaling[] {
  const s = model.syntax;
  const text = (n: PyNode) => s.text(n);
  const out: LearningRateScaling[] = [];
  for (const fn of model.functions) {
    for (const n of fn.nodes) {
      let value: PyNode | undefined;
      let sign: 1 | -1 = 1;
      if (n.type === 'keyword_argument' && LR_NAME.test(text(child(n, 'name') ?? n))) value = child(n, 'value');
      else if (n.type === 'pair' && LR_NAME.test(s.stringValue(child(n, 'key')) ?? '')) value = child(n, 'value');
      else if (n.type === 'assignment' && LR_NAME.test(text(child(n, 'left') ?? n).replace(/\s+/g, '')))
        value = child(n, 'right');
      else if (n.type === 'augmented_assignment' && LR_NAME.test(text(child(n, 'left') ?? n).replace(/\s+/g, ''))) {
        value = child(n, 'right');
        sign = s.operator(n) === '/=' ? -1 : s.operator(n) === '*=' ? 1 : (0 as 1);
        if (!sign) continue;
      }
      if (!value) continue;
      for (const f of s.factors(value, sign)) {
        if (sizes.classify(f.node, { fn }).kind === 'world') out.push({ node: n, factor: f.node, sign: f.sign });
      }
    }
  }
  return out;
}

/** The edit that drops a world-size scaling of the learning rate, where its shape allows one. */
export function unscaleLearningRateFix(
  model: FileModel,
  edits: EditBuilder,
  scaling: LearningRateScaling,
): Fix | undefined {
  let host: PyNode | null = scaling.factor;
  while (host?.parent?.type === 'parenthesized_expression') host = host.parent;
  const bin = host?.parent;
  if (bin?.type === 'binary_operator' && model.syntax.operator(bin) === '*') {
    const other = child(bin, 'left') === host ? child(bin, 'right') : child(bin, 'left');
    if (other)
      return {
        title: 'Do not scale the learning rate (the summed gradients already scale the step)',
        edits: [edits.replace(bin, model.syntax.text(other))],
      };
  } else if (scaling.node.type === 'augmented_assignment') {
    return {
      title: 'Do not scale the learning rate (the summed gradients already scale the step)',
      edits: [edits.deleteStatement(scaling.node.parent ?? scaling.node)],
    };
  }
  return undefined;
}
