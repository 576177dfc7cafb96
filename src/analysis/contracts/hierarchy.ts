// The classes of the program that reach transformers' `Trainer` through bases the workspace defines. A library
// contract is judged only for such a class: where a base is neither the Trainer nor a class of the workspace
// (a trl trainer, a project outside the tree), code the analysis cannot read may choose the scaling.
import type { ClassFacts, FileClasses } from './trainer-classes';

/** The bases that are transformers' Trainer, as the imports name them. */
const TRAINER_ROOTS = new Set([
  'transformers.Trainer',
  'transformers.trainer.Trainer',
  'transformers.Seq2SeqTrainer',
  'transformers.trainer_seq2seq.Seq2SeqTrainer',
]);

/** A class of the program, with the file that defines it. */
export interface Located {
  readonly path: string;
  readonly facts: ClassFacts;
}

export interface TrainerHierarchy {
  readonly classes: readonly Located[];
  /** The workspace ancestors of a class up to the Trainer; undefined when it does not provably reach it. */
  ancestorsOf(c: Located): readonly Located[] | undefined;
  /** The classes whose ancestors include `c`. */
  descendantsOf(c: Located): readonly Located[];
}

export function trainerHierarchy(
  files: ReadonlyMap<string, FileClasses>,
  resolve: (from: string, module: string) => string | undefined,
): TrainerHierarchy {
  const all: Located[] = [];
  for (const [path, file] of files) for (const facts of file.classes) all.push({ path, facts });
  const byFile = new Map<string, Map<string, Located>>();
  for (const c of all) {
    const m = byFile.get(c.path) ?? new Map<string, Located>();
    byFile.set(c.path, m.set(c.facts.name, c));
  }
  const resolveBase = (c: Located, base: string): Located | 'trainer' | undefined => {
    if (TRAINER_ROOTS.has(base)) return 'trainer';
    const local = byFile.get(c.path)?.get(base);
    if (local) return local;
    const cut = base.lastIndexOf('.');
    if (cut < 0) return undefined;
    const file = resolve(c.path, base.slice(0, cut));
    return file ? byFile.get(file)?.get(base.slice(cut + 1)) : undefined;
  };
  // Undefined when a base is neither a workspace class nor the Trainer (unknown code may choose the scaling), or
  // the chain does not reach the Trainer.
  const chain = (c: Located, seen = new Set<Located>()): Located[] | undefined => {
    if (seen.has(c)) return undefined;
    seen.add(c);
    let reaches = false;
    const out: Located[] = [];
    for (const base of c.facts.bases) {
      const r = resolveBase(c, base);
      if (r === undefined) return undefined;
      if (r === 'trainer') {
        reaches = true;
        continue;
      }
      const up = chain(r, seen);
      if (!up) return undefined;
      reaches = true;
      out.push(r, ...up);
    }
    return reaches ? out : undefined;
  };
  const ancestors = new Map<Located, Located[] | undefined>();
  for (const c of all) ancestors.set(c, chain(c));
  return {
    classes: all,
    ancestorsOf: (c) => ancestors.get(c),
    descendantsOf: (c) => all.filter((d) => ancestors.get(d)?.includes(c)),
  };
}
