// Links the program's rescaling reductions and loss normalisers (local-normaliser.ts) to the files that call them.
// A rescaling helper is reached through the caller's imports (`from m import f`, `import m as x`, or a dotted
// `pkg.sub.mod.f(...)` under `import pkg...`); a loss normaliser is a method called on an object whose class the
// caller does not name, so it is matched by name, and only when every definition of that name in the program's
// texts is a loss normaliser dividing by the same parameter.
import { child, type PyNode } from './tree';
import type { FileModel } from './scope';
import { importedCallee } from './summaries';
import type { FileNormalisers, LossNormaliserSummary, RescaleHelperSummary } from './local-normaliser';
import type { NormaliserIndex } from './local-normaliser-rule';

export interface NormaliserLinks {
  /** The files that call a rescaling reduction of the program. */
  readonly involved: ReadonlySet<string>;
  indexFor(path: string): NormaliserIndex;
}

export interface NormaliserHost {
  text(path: string): string;
  normalisers(path: string): FileNormalisers;
  /** Parses a file the prefilter skipped (its summaries are then complete). */
  parse(path: string): unknown;
  resolve(from: string, module: string): string | undefined;
  /** Kept by the caller between links: what each file's text was found to define and mention, per set of names. */
  readonly scans: Map<string, TextScan>;
}

export interface TextScan {
  readonly text: string;
  readonly key: string;
  readonly defined: ReadonlyMap<string, number>;
  readonly mentions: boolean;
}

const NONE: NormaliserLinks = {
  involved: new Set(),
  indexFor: () => ({ rescaleHelper: () => undefined, lossNormalisers: () => [] }),
};

export function linkNormalisers(paths: readonly string[], host: NormaliserHost): NormaliserLinks {
  const rescale = new Map<string, Map<string, RescaleHelperSummary>>();
  const losses = new Map<string, LossNormaliserSummary[]>();
  for (const path of paths) {
    const n = host.normalisers(path);
    if (n.rescale.length > 0) rescale.set(path, new Map(n.rescale.map((r) => [r.name, r])));
    for (const l of n.losses) losses.set(l.name, [...(losses.get(l.name) ?? []), l]);
  }
  if (rescale.size === 0) return NONE;
  // A name defined more often than it is summarised has a definition that does something else: no match. One
  // pattern per set of names reads each text once, and a text read before with the same names is not read again
  // (the editor links on every edit).
  const names = new Set([...rescale.values()].flatMap((m) => [...m.keys()]));
  const key = `${[...losses.keys()].sort().join('|')}/${[...names].sort().join('|')}`;
  const def = new RegExp(`\\bdef\\s+(${[...losses.keys()].join('|') || '(?!)'})\\s*\\(`, 'g');
  const mention = new RegExp(`\\b(?:${[...names].join('|')})\\s*\\(`);
  const defined = new Map<string, number>();
  const involved = new Set<string>();
  for (const path of paths) {
    const text = host.text(path);
    let scan = host.scans.get(path);
    if (!scan || scan.text !== text || scan.key !== key) {
      const found = new Map<string, number>();
      if (losses.size > 0) for (const m of text.matchAll(def)) found.set(m[1], (found.get(m[1]) ?? 0) + 1);
      scan = { text, key, defined: found, mentions: mention.test(text) };
      host.scans.set(path, scan);
    }
    for (const [name, n] of scan.defined) defined.set(name, (defined.get(name) ?? 0) + n);
    if (scan.mentions) involved.add(path);
  }
  for (const [name, list] of losses) if (defined.get(name) !== list.length) losses.delete(name);
  for (const path of involved) host.parse(path);
  return {
    involved,
    indexFor: (path) => ({
      rescaleHelper: (call, model) => {
        const callee = importedCallee(model, call) ?? dottedCallee(model, call);
        const target = callee ? host.resolve(path, callee.module) : undefined;
        return target && target !== path ? rescale.get(target)?.get(callee!.name) : undefined;
      },
      lossNormalisers: (name) => losses.get(name) ?? [],
    }),
  };
}

/** `pkg.sub.mod.f(...)` where the file has `import pkg...`: module `pkg.sub.mod`, name `f`. */
function dottedCallee(model: FileModel, call: PyNode): { module: string; name: string } | undefined {
  const fnNode = child(call, 'function');
  const obj = fnNode?.type === 'attribute' ? child(fnNode, 'object') : undefined;
  const attr = fnNode?.type === 'attribute' ? child(fnNode, 'attribute') : undefined;
  if (!obj || !attr || obj.type !== 'attribute') return undefined;
  const dotted = model.syntax.text(obj).replace(/\s+/g, '');
  if (!/^[A-Za-z_][\w.]*$/.test(dotted)) return undefined;
  const root = dotted.split('.')[0];
  const imported = [...model.imports].some(([alias, module]) => alias === module && module.split('.')[0] === root);
  return imported ? { module: dotted, name: model.syntax.text(attr) } : undefined;
}
