// A loss that is a mean over this rank's sequence-parallel slice of the tokens, attached with a gradient of one,
// whose gradient reaches a weight the gradient finalisation sums over the tensor-parallel group (CP001, factor tp).
//
// Under Megatron-style sequence parallelism (SP) each of the tp ranks of a tensor-parallel (TP) group holds 1/tp of
// a micro-batch's tokens between the tensor-parallel regions. A weight applied there (a layernorm, an MoE router) is
// replicated, and its gradient on each rank is only the contribution of that rank's slice to the main loss, so the
// program marks it `setattr(w, 'sequence_parallel', …)` and its finalisation all-reduces the marked weights'
// gradients over the TP group with the default SUM: the marking is the program's own statement that the weight's
// per-rank gradient is a per-slice contribution. A loss that each rank computes as a mean over its own tokens
// (`torch.mean`, `.mean(dim=0)`) and attaches to the graph through an autograd Function whose backward gives it a
// gradient of one is not a contribution: each rank's gradient is already the whole gradient of its slice's mean,
// and the sum makes it Σ_r mean_r = tp × the mean over the micro-batch's tokens. Gathering the slices first
// (`gather_from_sequence_parallel_region`) does not help: the loss is then identical on every rank and the
// gather's backward reduce-scatter sums the tp identical gradients. The loss must be divided by tp (or the mean
// taken over the gathered tokens and divided once).
//
// Reported at the mean (the helper call) when the program shows all of: the marker on a weight of the class or a
// base (not written False), a non-test function that selects the marked parameters and all-reduces their gradients
// over a group named tensor-parallel with no scaling, the loss derived from the weight through the class's
// methods with no other collective on the way, every program definition of the helper a token mean with no group or
// size, and every definition of the autograd Function giving that argument `torch.ones_like(loss)` (times the
// main loss's scale). An attaching method that names any group, size or collective stays silent.
import type { Parser } from 'web-tree-sitter';
import { ruleInfo } from '../rules';
import type { Finding, RelatedLocation } from '../types';
import type { Located } from './expert-facts';
import {
  mayConcernSlices,
  readSliceFacts,
  type AttachedLoss,
  type SliceFacts,
  type SliceMarker,
} from './sequence-parallel-facts';
import { TokenCountLinks } from './token-count-weights';

interface Entry {
  readonly text: string;
  /** The text marks a weight `sequence_parallel` with `setattr`: only such a file can hold a finding. */
  readonly marks: boolean;
  /** The text may select the marked parameters and all-reduce them. */
  readonly maySum: boolean;
  facts?: SliceFacts | null;
}

interface At {
  readonly path: string;
  readonly item: Located;
}

export class SequenceParallelIndex {
  private readonly files = new Map<string, Entry>();
  private readonly counts: TokenCountLinks;

  constructor(private readonly parser: Parser) {
    this.counts = new TokenCountLinks(parser);
  }

  setFile(path: string, text: string): void {
    if (this.files.get(path)?.text === text) return;
    this.files.set(path, {
      text,
      marks: /setattr\([^)]*['"]sequence_parallel['"]/.test(text),
      maySum: /sequence_parallel/.test(text) && /all_reduce/.test(text),
    });
  }

  removeFile(path: string): void {
    this.files.delete(path);
    this.counts.removeFile(path);
  }

  /** CP001 at per-slice means attached to the graph whose weight's gradient is summed over the TP group. */
  findings(wanted: ReadonlySet<string>, isTest: (path: string) => boolean): Map<string, Finding[]> {
    const out = new Map<string, Finding[]>();
    const program = [...this.files].filter(([path]) => !isTest(path));
    // Most programs mark nothing: then no file is parsed here.
    if (!program.some(([, e]) => e.marks) || !program.some(([, e]) => e.maySum)) return out;
    const sums: At[] = program
      .filter(([, e]) => e.maySum)
      .flatMap(([path, e]) => (this.factsOf(e)?.sums ?? []).map((item) => ({ path, item })));
    if (sums.length === 0) return out;
    for (const [path, entry] of program) {
      if (!entry.marks || !wanted.has(path)) continue;
      const facts = this.factsOf(entry);
      for (const attach of facts?.attaches ?? []) {
        const scaler = this.unitScaler(attach, isTest);
        const helper = attach.helper === undefined ? undefined : this.tokenMean(attach.helper, isTest);
        if (!scaler || (attach.helper !== undefined && !helper)) continue;
        const marker = facts!.markers.find((m) => attach.weights.includes(m.attribute)) ?? facts!.markers[0];
        const found = finding(path, attach, { path, item: marker }, sums[0], scaler, helper);
        out.set(path, [...(out.get(path) ?? []), found]);
      }
      // The per-token-loss form: the loss attached times this rank's token count (token-count-weights.ts).
      for (const attach of facts?.countAttaches ?? []) {
        const scaler = this.unitScaler(attach, isTest);
        const helper = this.tokenMean(attach.helper, isTest);
        const marker = facts!.markers.find((m) => attach.weights.includes(m.attribute)) ?? facts!.markers[0];
        if (!scaler || !helper) continue;
        const texts = program.map(([p, e]) => [p, e.text] as const);
        const proof = { marker: { path, item: marker }, sum: sums[0], scaler, helper };
        const found = this.counts.finding(path, attach, texts, proof);
        if (found) out.set(path, [...(out.get(path) ?? []), found]);
      }
    }
    return out;
  }

  /** Every program definition of the scaler class gives the loss's position a unit gradient. */
  private unitScaler(
    attach: Pick<AttachedLoss, 'scaler' | 'position'>,
    isTest: (path: string) => boolean,
  ): At | undefined {
    const defines = new RegExp(`^class\\s+${attach.scaler}\\b`, 'm');
    const defs = this.definitions(defines, isTest);
    if (defs.length === 0) return undefined;
    const ok = defs.every(([, f]) => f?.unitScalers.get(attach.scaler)?.includes(attach.position) === true);
    return ok
      ? { path: defs[0][0], item: locatedIn(defs[0][1]!, this.files.get(defs[0][0])!.text, defines) }
      : undefined;
  }

  /** Every program definition of a top-level function of this name returns a mean over its first argument's tokens. */
  private tokenMean(name: string, isTest: (path: string) => boolean): At | undefined {
    const defines = new RegExp(`^def\\s+${name}\\s*\\(`, 'm');
    const defs = this.definitions(defines, isTest);
    if (defs.length === 0 || !defs.every(([, f]) => f?.tokenMeans.has(name) === true)) return undefined;
    return { path: defs[0][0], item: locatedIn(defs[0][1]!, this.files.get(defs[0][0])!.text, defines) };
  }

  private definitions(defines: RegExp, isTest: (path: string) => boolean): [string, SliceFacts | undefined][] {
    return [...this.files]
      .filter(([path, e]) => !isTest(path) && defines.test(e.text))
      .map(([path, e]) => [path, this.factsOf(e)]);
  }

  private factsOf(entry: Entry): SliceFacts | undefined {
    if (entry.facts === undefined) {
      try {
        entry.facts = mayConcernSlices(entry.text) ? (readSliceFacts(this.parser, entry.text) ?? null) : null;
      } catch {
        entry.facts = null;
      }
    }
    return entry.facts ?? undefined;
  }
}

/** The line of a definition found by its header pattern, for a related location. */
function locatedIn(_facts: SliceFacts, text: string, defines: RegExp): Located {
  const offset = text.search(defines);
  const line = text.slice(0, offset).split('\n').length - 1;
  const header = text.slice(offset).split('\n')[0];
  return {
    range: { startLine: line, startColumn: 0, endLine: line, endColumn: header.length },
    line,
    text: header,
  };
}

function finding(
  path: string,
  attach: AttachedLoss,
  marker: { path: string; item: SliceMarker },
  sum: At,
  scaler: At,
  helper?: At,
): Finding {
  const at = (where: At, message: string): RelatedLocation => ({
    range: where.item.range,
    message,
    ...(where.path === path ? {} : { file: where.path }),
  });
  const mean = attach.helper
    ? `, from \`${attach.helper}\` (a mean over the tokens of its first argument),`
    : ', a mean over the tokens,';
  const message =
    `\`${attach.loss}\`${mean} is computed, with sequence parallelism on (the value the weight's marker is given), by each tensor-parallel rank from the output of \`self.${marker.item.attribute}\` on its own sequence-parallel slice of the tokens, and attached to the graph by \`${attach.scaler}\` with a gradient of one. ` +
    `That weight is marked \`sequence_parallel\`, so its gradient is summed over the tensor-parallel group: the sum is right for the main loss, whose per-rank gradients are the slices' contributions, but this loss's gradient on each rank is already the whole gradient of its slice's mean, ` +
    `so the weight receives tp× (the tensor-parallel size) the gradient of the mean over the micro-batch's tokens, and the loss's coefficient is effectively tp times the configured one. Divide the loss (or its coefficient) by the tensor-parallel world size.`;
  const related = [
    at(marker, 'the weight is marked `sequence_parallel` here'),
    at(sum, 'the gradients of the marked weights are summed over the tensor-parallel group here'),
    at(scaler, 'this autograd Function gives the attached loss a gradient of one (times the main loss’s scale)'),
    ...(helper ? [at(helper, 'a mean over the tokens of its first argument, with no group or size')] : []),
    { range: attach.attach.range, message: 'the loss is attached to the graph here' },
  ];
  return {
    code: 'CP001',
    severity: ruleInfo('CP001').severity,
    range: attach.mean.range,
    message,
    related,
    fixes: [],
  };
}
