// Turns verdicts into findings: message with the effective factor, related locations, and quick fixes (a sum's are
// chosen in sum-fixes.ts). Also the file-wide rules: CP005 (learning rate scaled by the world size on top of a sum,
// read by learning-rate-scaling.ts) and CP006 (AVG on gloo, judged by gloo-average.ts).
import type { PyNode, Source } from './tree';
import type { FileModel } from './scope';
import type { SizeClassifier } from './sizes';
import type { Reduction } from './reductions';
import type { Verdict } from './judge-verdict';
import type { ImplicitVerdict } from './implicit';
import { FixBuilder } from './fixes';
import type { AccumulationVerdict } from './accumulation';
import type { TokenWeightingVerdict } from './token-weighting';
import { glooAverages } from './gloo-average';
import { globalBatchNote } from './sharded-loader';
import { clip, doubleMessage, sumEvidence, sumMessage, timesFactor, wrongDivisorMessage } from './messages';
import { ruleInfo } from './rules';
import type { Finding, Fix, RelatedLocation, RuleCode, SourceRange } from './types';
import { findingAtChoice } from './chosen-place';
import { sumNoteAndFixes } from './sum-fixes';
import { learningRateScalings, unscaleLearningRateFix } from './learning-rate-scaling';
import { learningRateOnSumEffect, optimizerAt, restateEffect, type ResolvedOptimizer } from './optimizer-effect';

/** Where a finding is shown, its message, and the evidence at other places. */
export interface ExplainedVerdict {
  readonly node: PyNode;
  readonly message: string;
  /** Evidence in this file (`node`), or in another file of the program (`range` there, and `file`). */
  readonly related: readonly {
    readonly node?: PyNode;
    readonly range?: SourceRange;
    readonly file?: string;
    readonly message: string;
  }[];
}

export class FindingWriter {
  private readonly out: Finding[] = [];
  private readonly fixes: FixBuilder;
  private readonly sums: Verdict[] = [];
  /** Findings shown in another file of the program: where a factor this file applies was chosen. */
  readonly elsewhere: { file: string; finding: Finding }[] = [];

  constructor(
    private readonly model: FileModel,
    private readonly source: Source,
    private readonly sizes: SizeClassifier,
    private readonly worldSize: number | undefined,
    private readonly path?: string,
  ) {
    this.fixes = new FixBuilder(model, source);
  }

  private text(n: PyNode): string {
    return this.model.syntax.text(n);
  }

  private push(
    code: RuleCode,
    node: PyNode,
    message: string,
    fixes: (Fix | undefined)[],
    related: RelatedLocation[] = [],
    step?: PyNode,
  ): void {
    const range = this.source.range(node);
    if (
      this.out.some(
        (f) => f.code === code && f.range.startLine === range.startLine && f.range.startColumn === range.startColumn,
      )
    )
      return;
    this.out.push({
      code,
      severity: ruleInfo(code).severity,
      range,
      // The effect is stated for the optimizer the step applies the gradient with, where the file shows it.
      message: restateEffect(message, optimizerAt(this.model, step ?? node)),
      related,
      fixes: fixes.filter((f): f is Fix => f !== undefined),
    });
  }

  addVerdict(v: Verdict | ImplicitVerdict): void {
    const r = v.fact?.reduction;
    const related: RelatedLocation[] = [];
    if (r && v.location !== r.call && !isInside(v.location, r.call))
      related.push({
        range: this.source.range(r.call),
        message: `the reduction (\`${clip(this.model.syntax.calleeText(r.call), 40)}\`)`,
      });
    // The evidence chain ends where the scaled gradients reach the parameters.
    if (v.update) related.push({ range: this.source.range(v.update.node), message: v.update.what });
    switch (v.code) {
      case 'CP001':
      case 'CP004': {
        if (this.learningRateDivided()) return;
        this.sums.push(v);
        let message = sumMessage(v.exponent, this.worldSize);
        if (r && r.framework !== 'jax')
          message = `${sumEvidence(this.text(r.output ?? r.tensor), this.model.syntax.calleeText(r.call), v.group?.evidence, v.update?.what, r.via)} The effective learning rate is ${timesFactor(v.exponent, this.worldSize)} the configured one.`;
        if (r?.via) {
          // The helper's own edits live in another file: say where it sums, and leave the fix to the reader.
          related.push({
            file: r.via.path,
            range: r.via.range,
            message: `\`${r.via.name}\` sums here with \`${r.via.reducer}\` and does not divide`,
          });
          this.push(v.code, v.location, message, [], related, v.update?.node);
          return;
        }
        if (v.code === 'CP004') {
          const axis = r?.group ? `the ${r.group} axis` : 'the mapped axis';
          message = `lax.psum sums the gradients over ${axis} (${this.worldSize ?? 'N'} devices) and nothing divides them: the effective learning rate is ${timesFactor(v.exponent, this.worldSize)} the configured one.`;
        }
        const { note, fixes } = sumNoteAndFixes(this.model, this.source, this.fixes, v, related);
        message += note;
        this.push(v.code, v.location, message, fixes, related, v.update?.node);
        return;
      }
      case 'CP002': {
        const iv = v as ImplicitVerdict;
        const why = v.why;
        const fix = v.term
          ? this.fixes.removeTermFix(
              v.term,
              iv.reducer
                ? 'Remove the redundant averaging (the wrapper already averages)'
                : 'Remove the redundant division',
            )
          : undefined;
        const globalBatch = v.term?.size.kind === 'global-count' ? globalBatchNote(this.model, v.term.node) : undefined;
        const double = doubleMessage(v.exponent, this.worldSize, why);
        this.push(
          'CP002',
          v.location,
          globalBatch ? `${double} ${globalBatch}` : double,
          [fix],
          related,
          v.update?.node,
        );
        return;
      }
      case 'CP003': {
        const t = v.term!;
        // A model-parallel group's divisor: the rule words it, and no quick fix is offered, since the right size
        // is a product of parallel dimensions the edit cannot name for every framework.
        if ((v as Verdict).message) {
          const { origin, chosenFactor } = v as Verdict;
          if (origin) this.pushAtChoice(v as Verdict & { origin: object }, related, chosenFactor ?? 'factor');
          else this.push('CP003', v.location, (v as Verdict).message!, [], related, v.update?.node);
          return;
        }
        const groupNote =
          r?.group && t.size.kind === 'world'
            ? `(the reduction ran over ${r.group}, the divisor is the size of ${t.size.group ?? 'the default group'})`
            : undefined;
        const message = wrongDivisorMessage(t.size, this.text(t.node), groupNote, this.worldSize);
        this.push(
          'CP003',
          v.location,
          message,
          [this.fixes.replaceDivisorFix(t, r, r?.framework ?? 'torch')],
          related,
          v.update?.node,
        );
        return;
      }
    }
  }

  private lrDividedCache: boolean | undefined;
  private learningRateDivided(): boolean {
    this.lrDividedCache ??= learningRateScalings(this.model, this.sizes).some((x) => x.sign === -1);
    return this.lrDividedCache;
  }

  addLearningRateFindings(): void {
    if (this.sums.length === 0) return;
    for (const scaling of learningRateScalings(this.model, this.sizes).filter((x) => x.sign === 1)) {
      const related = this.sums.map((v) => ({
        range: this.source.range(v.location),
        message: 'the gradients are summed here',
      }));
      // The summed gradients' steps resolve the optimizer: the learning rate's own statement may be far from them.
      const opt = this.sumsOptimizer() ?? optimizerAt(this.model, scaling.factor);
      const effect = learningRateOnSumEffect(timesFactor(1, this.worldSize), timesFactor(2, this.worldSize), opt);
      const message = `The learning rate is scaled by the world size (\`${this.text(scaling.factor)}\`) while the gradients are also summed over ranks: ${effect}.`;
      const fix = unscaleLearningRateFix(this.model, this.fixes.edits, scaling);
      this.push('CP005', scaling.factor, message, [fix], related);
    }
  }

  /** The optimizer every summed gradient's update reaches, when they all resolve to the same one. */
  private sumsOptimizer(): ResolvedOptimizer | undefined {
    const opts = this.sums.map((v) => optimizerAt(this.model, v.update?.node ?? v.location));
    const first = opts[0];
    return first && opts.every((o) => o?.name === first.name && o.adaptive === first.adaptive) ? first : undefined;
  }

  addGlooFindings(reductions: readonly Reduction[]): void {
    for (const { reduction: r, value } of glooAverages(this.model, reductions)) {
      const fixes: Fix[] = [];
      const divide = this.fixes.divideFix(r);
      if (divide)
        fixes.push({
          title: `Use ReduceOp.SUM and ${divide.title.toLowerCase()}`,
          edits: [this.fixes.edits.replace(value, this.text(value).replace('AVG', 'SUM')), ...divide.edits],
        });
      this.push(
        'CP006',
        value,
        'ReduceOp.AVG is implemented only by NCCL: with the gloo backend this all-reduce raises (or, on some versions, is not averaged). Sum and divide by the world size instead.',
        fixes,
      );
    }
  }

  /** CP008: the loss of K accumulated micro-batches is not divided by K. */
  addAccumulation(v: AccumulationVerdict): void {
    const count = v.countText ?? this.text(v.count);
    const loss = this.text(v.loss);
    const message = `backward() runs on \`${count}\` micro-batches before each optimizer step and \`${loss}\` is not divided by \`${count}\`: the accumulated gradient is their sum, so the effective learning rate is \`${count}\`× the configured one.`;
    const related: RelatedLocation[] = [
      { range: this.source.range(v.evidence), message: `one optimizer step per \`${count}\` micro-batches` },
      ...(v.related ?? []).map((r) => ({ range: this.source.range(r.node), message: r.message })),
      { range: this.source.range(v.step), message: 'the step applies the summed gradients' },
    ];
    if (v.fixable === false) {
      this.push('CP008', v.site.call, message, [], related, v.step);
      return;
    }
    // `loss.backward()` needs parentheses around the division; an argument (`scaler.scale(loss)`) does not.
    const divided = v.loss.parent?.type === 'attribute' ? `(${loss} / ${count})` : `${loss} / ${count}`;
    const fix: Fix = { title: `Divide the loss by ${count}`, edits: [this.fixes.edits.replace(v.loss, divided)] };
    this.push('CP008', v.site.call, message, [fix], related, v.step);
  }

  /** CP003, token weighting: per-micro-batch token means averaged with equal weights (token-weighting.ts). */
  addTokenWeighting(v: TokenWeightingVerdict): void {
    const before = this.out.length;
    this.addExplained('CP003', v);
    // The engine-window hint (token-engine-window.ts), when asked for, is a warning: its size depends on the data.
    if (v.severity && this.out.length > before) this.out[before] = { ...this.out[before], severity: v.severity };
  }

  /** A factor chosen elsewhere (a constructor argument's origin) is reported where it was chosen (chosen-place.ts). */
  private pushAtChoice(
    v: Verdict & Required<Pick<Verdict, 'origin'>>,
    related: RelatedLocation[],
    factor: string,
  ): void {
    const placed = findingAtChoice({
      path: this.path,
      origin: v.origin,
      factor,
      applied: this.source.range(v.location),
      message: restateEffect(v.message!, optimizerAt(this.model, v.update?.node ?? v.location)),
      related,
      finding: { code: v.code, severity: v.severity ?? ruleInfo(v.code).severity, fixes: [] },
    });
    const same = (f: Finding) =>
      f.code === placed.finding.code &&
      f.range.startLine === placed.finding.range.startLine &&
      f.range.startColumn === placed.finding.range.startColumn;
    if (!placed.file) {
      if (!this.out.some(same)) this.out.push(placed.finding);
    } else if (!this.elsewhere.some((e) => e.file === placed.file && same(e.finding))) {
      this.elsewhere.push({ file: placed.file, finding: placed.finding });
    }
  }

  /** A finding whose rule wrote its message and evidence itself (`zero_grad` cutting the window short, ...). */
  addExplained(code: RuleCode, v: ExplainedVerdict): void {
    // A sum is compensated where the file divides the learning rate by the world size, as for addVerdict's CP001.
    if (code === 'CP001' && this.learningRateDivided()) return;
    const related: RelatedLocation[] = v.related.flatMap((r) =>
      r.node
        ? [{ range: this.source.range(r.node), message: r.message }]
        : r.range
          ? [{ range: r.range, message: r.message, ...(r.file ? { file: r.file } : {}) }]
          : [],
    );
    this.push(code, v.node, v.message, [], related);
  }

  findings(): Finding[] {
    return this.out
      .slice()
      .sort(
        (a, b) =>
          a.range.startLine - b.range.startLine ||
          a.range.startColumn - b.range.startColumn ||
          a.code.localeCompare(b.code),
      );
  }
}

function isInside(node: PyNode, container: PyNode): boolean {
  return node.start >= container.start && node.end <= container.end;
}
