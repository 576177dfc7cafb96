// A count-weighted attached loss under per-token loss normalisation (CP003): the loss L is one rank's share of a sum
// over a group g (its coefficient divided by g's size), and it is attached multiplied by n, the count of this
// rank's sequence-parallel slice of the tokens, on the path chosen by a flag F; under F the finaliser divides every
// gradient by N, the count summed over the micro-batches and a group D of data-parallel ranks.
//
// The weight n / N is a token-weighted average: the marked weight's gradient is summed over the tp ranks (fact 1 of
// sequence-parallel-slice.ts) and over D (the finaliser divides by the count summed over D, which is the program's
// statement that the gradients are summed there too), and the slices' counts n add up over the tp ranks, the
// micro-batches and D to N (the slices partition the tokens the main loss counts). So every rank's L enters with
// weight n / N, the weights add up to one, and the result is the (token-weighted) mean of L over all those ranks:
// the count weighting already averages over tp × D. The coefficient's division by |g| is a second average over g,
// and the loss's gradient is 1/|g| of what the coefficient asks (Megatron 591605e: g = tp_cp, D = dp_cp, so
// 1/(tp × cp); the fix multiplies the attached value by `self.tp_cp_group.size()`).
//
// Silent when g names ranks outside tp and D (the weighting does not average over them), when the attached value
// has any other factor, when the count is not a slice's rows, when no finaliser of the program divides by a count
// handed to it under the same flag, or when any fact of sequence-parallel-slice.ts's proof is missing.
import type { Parser } from 'web-tree-sitter';
import { ruleInfo } from '../rules';
import type { Finding, RelatedLocation } from '../types';
import type { Located } from './expert-facts';
import type { CountWeightedLoss, RankAxis } from './sequence-parallel-counts';
import {
  mayConcernCounts,
  readCountFacts,
  storedFunctions,
  type CountFacts,
  type CountFinaliser,
  type CountHandoff,
} from './token-count-finaliser';

export interface At {
  readonly path: string;
  readonly item: Located;
}

/** The facts of sequence-parallel-slice.ts this finding rests on as well. */
export interface SliceProof {
  readonly marker: At;
  readonly sum: At;
  readonly scaler: At;
  readonly helper: At;
}

interface Entry {
  readonly text: string;
  facts?: CountFacts | null;
  stored?: Map<string, string>;
}

export class TokenCountLinks {
  private readonly files = new Map<string, Entry>();

  constructor(private readonly parser: Parser) {}

  /** CP003 for one count-weighted attachment, or undefined when the program does not prove the weight. */
  finding(
    path: string,
    attach: CountWeightedLoss,
    program: readonly (readonly [string, string])[],
    proof: SliceProof,
  ): Finding | undefined {
    const finalisers: { path: string; item: CountFinaliser }[] = [];
    const handoffs: { path: string; item: CountHandoff }[] = [];
    const stored = new Map<string, string>();
    for (const [p, text] of program) {
      const entry = this.entry(p, text);
      for (const [k, v] of entry.stored!) stored.set(k, v);
      for (const item of entry.facts?.finalisers ?? []) finalisers.push({ path: p, item });
      for (const item of entry.facts?.handoffs ?? []) handoffs.push({ path: p, item });
    }
    for (const f of finalisers) {
      const handoff = handoffs.find(
        (h) =>
          h.item.flag === attach.flag &&
          h.item.position === f.item.position &&
          (h.item.callee === f.item.name || stored.get(h.item.callee) === f.item.name),
      );
      if (!handoff) continue;
      const averaged = new Set<RankAxis>(['tp', ...f.item.axes]);
      if (!attach.divisor.axes.every((a) => averaged.has(a))) continue;
      return finding(path, attach, proof, f, handoff);
    }
    return undefined;
  }

  private entry(path: string, text: string): Entry {
    let entry = this.files.get(path);
    if (entry?.text !== text) {
      entry = { text, stored: storedFunctions(text) };
      this.files.set(path, entry);
    }
    if (entry.facts === undefined) {
      try {
        entry.facts = mayConcernCounts(text) ? (readCountFacts(this.parser, text) ?? null) : null;
      } catch {
        entry.facts = null;
      }
    }
    return entry;
  }

  removeFile(path: string): void {
    this.files.delete(path);
  }
}

function finding(
  path: string,
  attach: CountWeightedLoss,
  proof: SliceProof,
  finaliser: { path: string; item: CountFinaliser },
  handoff: { path: string; item: CountHandoff },
): Finding {
  const at = (where: At, message: string): RelatedLocation => ({
    range: where.item.range,
    message,
    ...(where.path === path ? {} : { file: where.path }),
  });
  const sizes = attach.divisor.axes.join(' × ');
  const over = ['tp', ...finaliser.item.axes.filter((a) => a !== 'tp')].join(' × ');
  const message =
    `\`${attach.loss}\` (from \`${attach.helper}\`, a mean over this rank's tokens) has its coefficient divided by the size of \`${attach.divisor.written}\` (${sizes}), the form of a share in a sum over those ranks, ` +
    `and is attached by \`${attach.scaler}\` multiplied by \`${attach.count.text.replace(/\s+/g, ' ')}\`, the count of this rank's sequence-parallel slice of the tokens, when \`${attach.flag}\` is set. ` +
    `Under that flag \`${finaliser.item.name}\` divides every gradient by the token count summed over the micro-batches and the ${finaliser.item.axes.join(' × ')} ranks, and the weight \`self.${proof.marker.item.text.match(/self\.(\w+)/)?.[1] ?? 'weight'}\` is summed over the tensor-parallel ranks: the slices' counts add up to that count, ` +
    `so the count weighting already averages the loss over the ${over} ranks, and the division by the group's size averages it a second time. ` +
    `The loss's gradient is 1/(${sizes}) of what its coefficient asks. Multiply the attached value by the group's size as well (\`* ${attach.divisor.written}.size()\`), or leave the coefficient undivided on this path.`;
  const related = [
    at(proof.marker, 'the weight is marked `sequence_parallel` here: its input is this rank’s slice of the tokens'),
    at(proof.sum, 'the gradients of the marked weights are summed over the tensor-parallel group here'),
    at(proof.helper, 'a mean over the tokens of its first argument'),
    { range: attach.divisor.at.range, message: `the coefficient is divided by the size of ${sizes} here` },
    { range: attach.count.range, message: 'the count of this rank’s slice of the tokens' },
    at(proof.scaler, 'this autograd Function gives the attached value a gradient of one (times the main loss’s scale)'),
    at(
      { path: finaliser.path, item: finaliser.item.reduce },
      `the token count is summed over the ${finaliser.item.axes.join(' × ')} ranks here`,
    ),
    at({ path: finaliser.path, item: finaliser.item.scale }, 'every gradient is divided by that count here'),
    at(
      { path: handoff.path, item: handoff.item.at },
      `the count is handed to the finaliser when \`${attach.flag}\` is set`,
    ),
  ];
  return {
    code: 'CP003',
    severity: ruleInfo('CP003').severity,
    range: attach.product.range,
    message,
    related,
    fixes: [],
  };
}
