// A loss scaler left at its default among siblings the program scales (CP008). An autograd loss scaler attaches an
// auxiliary loss to an activation and hands that loss, in backward, a gradient equal to a class attribute
// (loss-scaler-classes.ts). A pipeline schedule that runs backward once per micro-batch sets that attribute to
// `loss_scale / num_microbatches` for each scaler, so the auxiliary gradients are averaged over the window as the
// main loss is. Reported where a function sets the scales of some scalers to a value divided by a micro-batch count,
// that function runs (in its own file, directly or through the functions that call it) inside a loop whose body runs
// backward, and another scaler of the same shape has a default scale of one, is applied to an activation that its
// function returns, and is named nowhere outside test code but in imports, its own class, `apply` and reads of its
// scale: no setter call, no write, no alias; and the loss it attaches names no micro-batch count (a loss divided by
// the window's count already is averaged at a scale of one). Its loss's gradient is then the sum over the window's micro-batches,
// K times the mean its siblings get (Megatron's DSA indexer loss, fixed in ec97c85).
import type { Parser } from 'web-tree-sitter';
import type { Finding, RelatedLocation } from '../types';
import { ruleInfo } from '../rules';
import { mayDefineScaler, readScalerClasses, type ScalerClass } from './loss-scaler-classes';
import { readMentions, type FunctionCalls, type Mention, type MentionFacts } from './loss-scaler-mentions';

interface Entry {
  readonly text: string;
  /** Read once per text: the editor asks for the contracts' findings on every edit. */
  readonly mayDefine: boolean;
  classes?: readonly ScalerClass[];
  mentions?: { readonly key: string; readonly facts: MentionFacts | undefined };
  /** Whether the text names one of the scalers, for the scalers' names joined (`key`). */
  names?: { readonly key: string; readonly hit: boolean };
}

interface Located<T> {
  readonly path: string;
  readonly item: T;
}

/** How many calls up a setter's function is followed to the loop that runs backward. */
const CALL_DEPTH = 4;

export class LossScalerIndex {
  private readonly files = new Map<string, Entry>();

  constructor(private readonly parser: Parser) {}

  setFile(path: string, text: string): void {
    if (this.files.get(path)?.text !== text) this.files.set(path, { text, mayDefine: mayDefineScaler(text) });
  }

  removeFile(path: string): void {
    this.files.delete(path);
  }

  /** CP008 findings of scalers whose scale no code sets while a backward loop sets their siblings', by file. */
  findings(wanted: ReadonlySet<string>, isTest: (path: string) => boolean): Map<string, Finding[]> {
    const out = new Map<string, Finding[]>();
    const classes = this.scalerClasses(isTest);
    if (classes.size < 2 || ![...classes.values()].some((c) => c.item.defaultOne)) return out;
    const scalers = new Map([...classes].map(([name, c]) => [name, c.item]));
    const key = [...scalers.keys()].sort().join(',');
    const pattern = new RegExp(`\\b(${[...scalers.keys()].join('|')})\\b`);
    const facts = new Map<string, MentionFacts>();
    for (const [path, entry] of this.files) {
      if (entry.names?.key !== key) entry.names = { key, hit: pattern.test(entry.text) };
      if (isTest(path) || !entry.names.hit) continue;
      const read = this.mentionsOf(entry, key, scalers);
      // A file that names a scaler but cannot be read may set its scale: nothing is proven.
      if (!read) return out;
      facts.set(path, read);
    }
    const mentions = [...facts].flatMap(([path, f]) => f.mentions.map((item) => ({ path, item })));
    const unset = [...classes.values()].filter((c) => isUnset(c.item, mentions));
    if (unset.length === 0) return out;
    for (const group of setterGroups(mentions, facts)) {
      for (const scaler of unset) {
        const siblings = group.filter((m) => m.item.name !== scaler.item.name);
        if (siblings.length === 0) continue;
        const at = siblings[siblings.length - 1];
        if (!wanted.has(at.path)) continue;
        out.set(at.path, [...(out.get(at.path) ?? []), finding(scaler, siblings, mentions)]);
      }
    }
    return out;
  }

  /** The scaler classes outside test code, by name; a name defined twice is left out (which one runs is unknown). */
  private scalerClasses(isTest: (path: string) => boolean): Map<string, Located<ScalerClass>> {
    const byName = new Map<string, Located<ScalerClass>[]>();
    for (const [path, entry] of this.files) {
      if (!entry.mayDefine || isTest(path)) continue;
      if (entry.classes === undefined) {
        try {
          entry.classes = readScalerClasses(this.parser, entry.text);
        } catch {
          entry.classes = [];
        }
      }
      for (const item of entry.classes) byName.set(item.name, [...(byName.get(item.name) ?? []), { path, item }]);
    }
    const out = new Map<string, Located<ScalerClass>>();
    for (const [name, list] of byName) if (list.length === 1) out.set(name, list[0]);
    return out;
  }

  private mentionsOf(entry: Entry, key: string, scalers: ReadonlyMap<string, ScalerClass>): MentionFacts | undefined {
    if (entry.mentions?.key !== key) {
      let facts: MentionFacts | undefined;
      try {
        facts = readMentions(this.parser, entry.text, scalers);
      } catch {
        facts = undefined;
      }
      entry.mentions = { key, facts };
    }
    return entry.mentions.facts;
  }
}

/** A scale of one that nothing sets, on a loss that is attached to an activation leaving its function. */
function isUnset(scaler: ScalerClass, mentions: readonly Located<Mention>[]): boolean {
  if (!scaler.defaultOne || scaler.setters.length === 0) return false;
  const own = mentions.filter((m) => m.item.name === scaler.name);
  if (own.some((m) => m.item.kind === 'setter' || m.item.kind === 'other')) return false;
  const applied = own.filter((m) => m.item.kind === 'apply');
  return applied.some((m) => m.item.flows === true) && !applied.some((m) => m.item.countedLoss === true);
}

/**
 * Setter calls given a value divided by a micro-batch count, grouped by their top-level function, where that function
 * runs in a loop whose body runs backward; in source order.
 */
function setterGroups(
  mentions: readonly Located<Mention>[],
  facts: ReadonlyMap<string, MentionFacts>,
): Located<Mention>[][] {
  const groups = new Map<string, Located<Mention>[]>();
  for (const m of mentions) {
    if (m.item.kind !== 'setter' || !m.item.divisor || !m.item.fn || m.item.fn.includes('.')) continue;
    const k = `${m.path}\u0000${m.item.fn}`;
    groups.set(k, [...(groups.get(k) ?? []), m]);
  }
  return [...groups.values()]
    .filter((g) => runsInBackwardLoop(facts.get(g[0].path)!.functions, g[0].item.fn!))
    .map((g) => [...g].sort((a, b) => a.item.line - b.item.line));
}

/** The function, or one that calls it (up the calls of its file), is called in a loop whose body runs backward. */
function runsInBackwardLoop(functions: ReadonlyMap<string, FunctionCalls>, fn: string): boolean {
  let frontier = new Set([fn]);
  const seen = new Set([fn]);
  for (let depth = 0; depth < CALL_DEPTH && frontier.size > 0; depth++) {
    const next = new Set<string>();
    for (const [name, f] of functions) {
      if (f.loops.some((l) => l.backward && [...frontier].some((c) => l.calls.has(c)))) return true;
      if (!seen.has(name) && [...frontier].some((c) => f.calls.has(c))) next.add(name);
    }
    for (const n of next) seen.add(n);
    frontier = next;
  }
  return false;
}

function finding(
  scaler: Located<ScalerClass>,
  siblings: readonly Located<Mention>[],
  mentions: readonly Located<Mention>[],
): Finding {
  const at = siblings[siblings.length - 1];
  const name = scaler.item.name;
  const divisor = at.item.divisor!;
  const names = [...new Set(siblings.map((s) => `\`${s.item.name}\``))];
  const scale = `\`${name}.${scaler.item.attribute}\``;
  const message =
    `\`${at.item.fn}\` sets the loss scale of ${names.join(' and ')} to a value divided by \`${divisor}\`, and it runs in a loop that runs backward once per micro-batch, ` +
    `but nothing sets \`${name}\`'s: its backward multiplies the gradient of the loss it attaches by ${scale}, which stays at its default of one, ` +
    `so that loss's gradient is summed over the \`${divisor}\` micro-batches instead of averaged, \`${divisor}\`× what its siblings get. ` +
    `Call \`${name}.${scaler.item.setters[0]}(… / ${divisor})\` here as for the others.`;
  const link = (path: string, range: Finding['range'], text: string): RelatedLocation => ({
    range,
    message: text,
    ...(path === at.path ? {} : { file: path }),
  });
  const apply = mentions.find((m) => m.item.name === name && m.item.kind === 'apply' && m.item.flows);
  const related: RelatedLocation[] = [
    link(scaler.path, scaler.item.scaleRange, `the gradient of ${name}'s loss is multiplied by ${scale}`),
    ...(apply ? [link(apply.path, apply.item.range, `the loss is attached to an activation that is returned`)] : []),
    ...siblings
      .slice(0, -1)
      .map((s) => link(s.path, s.item.range, `\`${s.item.name}\`'s scale is divided by \`${s.item.divisor}\``)),
  ];
  return { code: 'CP008', severity: ruleInfo('CP008').severity, range: at.item.range, message, related, fixes: [] };
}
