// Definitions of a name anywhere in the program, read from the texts (most files are never parsed): the lines of
// `def name(` or `class name` and the indented lines below it. The path-sensitive multiplier rule asks two
// questions of them (unreduced-world-multiplier.ts): whether a wrapper a class calls is the program's own helper
// around DDP/FSDP (fairseq's `DistributedFairseqModel`), and whether every definition of a method a count passes
// through only combines its arguments (`grad_denom`). A name defined nowhere in the program answers "no" to both.
import { onlyCombinesArguments } from './unreduced-world-multiplier';

/** The answers one pass took, by `wraps:name` or `count:name`: the pass is re-run when one of them changes. */
export type DefinitionLookups = Map<string, boolean>;

const DATA_PARALLEL_WRAPPER = /\b(DistributedDataParallel|FullyShardedDataParallel)\b/;

export class ProgramDefinitions {
  private readonly wraps = new Map<string, boolean>();
  private readonly preserves = new Map<string, boolean>();

  constructor(private readonly texts: () => Iterable<string>) {}

  /** True when some definition of `name` in the program mentions DDP or FSDP in its body. */
  wrapsDataParallel(name: string): boolean {
    let known = this.wraps.get(name);
    if (known === undefined) {
      known = this.definitions(name, 'def|class').some((d) => DATA_PARALLEL_WRAPPER.test(d));
      this.wraps.set(name, known);
    }
    return known;
  }

  /** True when the program defines functions of this name and each only returns a combination of its arguments. */
  countPreserving(name: string): boolean {
    let known = this.preserves.get(name);
    if (known === undefined) {
      const defs = this.definitions(name, 'def');
      known = defs.length > 0 && defs.every(onlyCombinesArguments);
      this.preserves.set(name, known);
    }
    return known;
  }

  /** The two questions for a pass, noting every answer in `lookups`. */
  recording(lookups: DefinitionLookups): {
    wrapsDataParallel: (name: string) => boolean;
    countPreserving: (name: string) => boolean;
  } {
    const note = (key: string, answer: boolean) => (lookups.set(key, answer), answer);
    return {
      wrapsDataParallel: (name) => note(`wraps:${name}`, this.wrapsDataParallel(name)),
      countPreserving: (name) => note(`count:${name}`, this.countPreserving(name)),
    };
  }

  /** True when every answer a pass took is still the program's answer. */
  stillHolds(lookups: DefinitionLookups): boolean {
    for (const [key, answer] of lookups) {
      const [question, name] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
      const now = question === 'wraps' ? this.wrapsDataParallel(name) : this.countPreserving(name);
      if (now !== answer) return false;
    }
    return true;
  }

  /**
   * Forgets the answers a change of one file's text can have moved: those for the names the text contains before or
   * after the change (`undefined`: the file was added or removed). A definition is only read from a text that
   * contains its name, so the other answers hold.
   */
  changed(before: string | undefined, after: string | undefined): void {
    for (const answers of [this.wraps, this.preserves])
      for (const name of answers.keys()) if (before?.includes(name) || after?.includes(name)) answers.delete(name);
  }

  private definitions(name: string, keyword: string): string[] {
    if (!/^\w+$/.test(name)) return [];
    const start = new RegExp(`^([ \\t]*)(?:async\\s+)?(?:${keyword})\\s+${name}\\b`, 'gm');
    const out: string[] = [];
    for (const text of this.texts()) {
      if (!text.includes(name)) continue;
      for (const m of text.matchAll(start)) out.push(blockAt(text, m.index, m[1].length));
    }
    return out;
  }
}

/** The definition starting at `offset` with its header's indentation: every line below indented further. */
function blockAt(text: string, offset: number, indent: number): string {
  const lines = text.slice(offset).split('\n');
  const out = [lines[0]];
  let open = bracketDepth(lines[0]);
  for (const line of lines.slice(1)) {
    const trimmed = line.trim();
    const depth = line.length - line.trimStart().length;
    if (open <= 0 && trimmed !== '' && depth <= indent) break;
    out.push(line);
    open += bracketDepth(line);
  }
  return out.join('\n');
}

function bracketDepth(line: string): number {
  let d = 0;
  for (const c of line.replace(/#.*$/, '')) {
    if (c === '(' || c === '[' || c === '{') d++;
    else if (c === ')' || c === ']' || c === '}') d--;
  }
  return d;
}
