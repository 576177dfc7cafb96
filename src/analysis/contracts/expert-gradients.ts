// Megatron's expert-parallel gradients that nothing divides. Under expert parallelism the MoE layer dispatches every
// rank's tokens over the expert-parallel group to the rank that holds their expert (an all-to-all, or in the early
// SwitchMLP an all-gather whose backward is a reduce-scatter SUM), so an expert weight's gradient is the sum of the
// contributions of every rank of that group, each the gradient of a loss averaged over that rank's own tokens. Dense
// gradients are averaged over the data-parallel group; the expert ones must be divided too, or they are |EP| times
// too large. Megatron marks the expert weights with `allreduce=False` and its data-parallel wrapper keeps their
// `main_grad` out of the averaged buffers (before 3373641 in a list of its own that nothing divided).
//
// CP001 is reported at the append that collects those gradients when the program shows all of: the marker set from
// an expert flag (the contract: `allreduce` is false exactly for expert-parallel weights), a collective that moves
// tokens over a group named expert-parallel (the dispatch), `main_grad` accumulating the backward's `.grad` (it is
// the gradient the optimizer reads), the list used only to be zeroed, and no function of the program that selects
// parameters by that attribute scaling, dividing or averaging anything. Any doubt keeps it silent.
import type { Parser } from 'web-tree-sitter';
import { ruleInfo } from '../rules';
import type { Finding, RelatedLocation } from '../types';
import {
  mayConcernExperts,
  readExpertFacts,
  type ExpertFacts,
  type ExpertGradList,
  type Located,
} from './expert-facts';
import { mayScaleExpertGradients, readGradientScalings, type GradientScaling } from './expert-grad-scalers';
import { expertDoubleScaleFindings } from './expert-double-scale';

interface Entry {
  readonly text: string;
  readonly relevant: boolean;
  /** The text selects parameters by the attribute (`getattr(p, 'allreduce', …)`): only then can a site exist. */
  readonly selects: boolean;
  facts?: ExpertFacts | null;
  /** Gradient scalers applied to marked weights: read only where the file also defines an autograd function. */
  scalings?: readonly GradientScaling[];
}

export class ExpertIndex {
  private readonly files = new Map<string, Entry>();

  constructor(private readonly parser: Parser) {}

  setFile(path: string, text: string): void {
    if (this.files.get(path)?.text === text) return;
    const relevant = mayConcernExperts(text);
    this.files.set(path, { text, relevant, selects: relevant && /getattr\([^)]*['"]allreduce['"]/.test(text) });
  }

  removeFile(path: string): void {
    this.files.delete(path);
  }

  /** CP001 findings of expert-parallel gradients collected apart from the averaged ones and never divided. */
  findings(wanted: ReadonlySet<string>, isTest: (path: string) => boolean): Map<string, Finding[]> {
    // Only a program that selects parameters by the attribute can have a site; most parse nothing here.
    if (![...this.files.values()].some((e) => e.selects)) return new Map();
    const facts = new Map<string, ExpertFacts>();
    for (const [path, entry] of this.files) {
      if (!entry.relevant) continue;
      const f = this.factsOf(entry);
      if (f) facts.set(path, f);
    }
    const texts = new Map([...this.files].map(([path, e]) => [path, e.text]));
    const found = expertGradientFindings(facts, texts, wanted, isTest);
    const scalings = new Map<string, readonly GradientScaling[]>();
    for (const [path, entry] of this.files) {
      const list = entry.relevant ? this.scalingsOf(entry) : [];
      if (list.length > 0) scalings.set(path, list);
    }
    if (scalings.size === 0) return found;
    const elsewhere = (path: string, list: ExpertGradList) => usedElsewhere(path, list, texts);
    for (const [path, list] of expertDoubleScaleFindings(facts, scalings, elsewhere, wanted, isTest))
      found.set(path, [...(found.get(path) ?? []), ...list]);
    return found;
  }

  private scalingsOf(entry: Entry): readonly GradientScaling[] {
    if (entry.scalings === undefined) {
      try {
        entry.scalings = mayScaleExpertGradients(entry.text) ? readGradientScalings(this.parser, entry.text) : [];
      } catch {
        entry.scalings = [];
      }
    }
    return entry.scalings;
  }

  private factsOf(entry: Entry): ExpertFacts | undefined {
    if (entry.facts === undefined) {
      try {
        entry.facts = readExpertFacts(this.parser, entry.text) ?? null;
      } catch {
        entry.facts = null;
      }
    }
    return entry.facts ?? undefined;
  }
}

interface At {
  readonly path: string;
  readonly item: Located;
}

export function expertGradientFindings(
  facts: ReadonlyMap<string, ExpertFacts>,
  texts: ReadonlyMap<string, string>,
  wanted: ReadonlySet<string>,
  isTest: (path: string) => boolean,
): Map<string, Finding[]> {
  const all = <T>(pick: (f: ExpertFacts) => readonly T[]) =>
    [...facts].flatMap(([path, f]) => pick(f).map((item) => ({ path, item })));
  // Test code builds toy markers and dispatches of its own; only the program's code proves the contract.
  const markers = all((f) => f.markers).filter((m) => !isTest(m.path)) as At[];
  const dispatches = all((f) => f.dispatches).filter((d) => !isTest(d.path)) as At[];
  const scalings = all((f) => f.scalings) as At[];
  const out = new Map<string, Finding[]>();
  if (markers.length === 0 || dispatches.length === 0 || scalings.length > 0) return out;
  for (const [path, f] of facts) {
    if (!wanted.has(path) || isTest(path)) continue;
    for (const list of f.lists) {
      if (list.otherUses.length > 0 || list.scaledInBlock) continue;
      if (list.field === 'main_grad' && !f.accumulatesMainGrad) continue;
      if (usedElsewhere(path, list, texts)) continue;
      const found = finding(path, list, markers[0], dispatches[0]);
      out.set(path, [...(out.get(path) ?? []), found]);
    }
  }
  return out;
}

/**
 * The list is named outside its class: another file, another object's attribute, a subclass or a `getattr` may scale
 * it. Counted in the text, so a comment that names it also keeps the rule silent.
 */
function usedElsewhere(path: string, list: ExpertGradList, texts: ReadonlyMap<string, string>): boolean {
  const attribute = new RegExp(`\\.${list.list}\\b|['"]${list.list}['"]`, 'g');
  for (const [other, text] of texts) {
    const count = text.match(attribute)?.length ?? 0;
    if (other === path ? count > list.mentions : count > 0) return true;
  }
  return false;
}

function finding(path: string, list: ExpertGradList, marker: At, dispatch: At): Finding {
  const at = (where: At, message: string): RelatedLocation => ({
    range: where.item.range,
    message,
    ...(where.path === path ? {} : { file: where.path }),
  });
  const message =
    `The gradients of the expert-parallel parameters (\`allreduce=False\`) are collected here into \`self.${list.list}\`, apart from the data-parallel gradient buffers, and nothing divides them: ` +
    `the MoE layer dispatches every rank's tokens over the expert-parallel group, so each expert's gradient is the sum of the contributions of the |EP| ranks of that group, each already a mean over that rank's own tokens. ` +
    `They are |EP|× (the expert-parallel size) the mean over those ranks' tokens, and more if they are also summed over the expert-data-parallel group: ` +
    `the experts' effective learning rate is that many times the configured one. Divide them by the data-parallel size after the gradient synchronisation.`;
  const related = [
    at(marker, 'expert-parallel weights are marked `allreduce=False` here'),
    at(dispatch, 'the tokens are moved over an expert-parallel group here: the backward sums the ranks’ contributions'),
  ];
  return {
    code: 'CP001',
    severity: ruleInfo('CP001').severity,
    range: list.site.range,
    message,
    related,
    fixes: [],
  };
}
