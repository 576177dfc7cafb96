// Definitions of a name anywhere in the program, read from the texts (most files are never parsed): the lines of
// `def name(` or `class name` and the indented lines below it. The path-sensitive multiplier rule asks two
// questions of them (unreduced-world-multiplier.ts): whether a wrapper a class calls is the program's own helper
// around DDP/FSDP (fairseq's `DistributedFairseqModel`), and whether every definition of a method a count passes
// through only combines its arguments (`grad_denom`). A name defined nowhere in the program answers "no" to both.
import { onlyCombinesArguments } from './unreduced-world-multiplier';
import type { CallbackLoss } from './contracts/callback-arguments';

/** The callback contract's answer for a callable parameter (contracts/callback-arguments.ts). */
export type CallbackQuestion = (path: string, fn: string, param: string, counts: ReadonlySet<string>) => CallbackLoss;

/**
 * The answers one pass took, by `wraps:name`, `count:name` or `callback:[path, fn, param, counts]`: the pass is re-run
 * when one of them changes.
 */
export type DefinitionLookups = Map<string, boolean | CallbackLoss>;

const DATA_PARALLEL_WRAPPER = /\b(DistributedDataParallel|FullyShardedDataParallel)\b/;

export class ProgramDefinitions {
  private readonly wraps = new Map<string, boolean>();
  private readonly preserves = new Map<string, boolean>();

  private readonly callbacks = new Map<string, CallbackLoss>();

  constructor(
    private readonly texts: () => Iterable<string>,
    private readonly callbackQuestion?: CallbackQuestion,
  ) {}

  /**
   * What the program passes to parameter `param` of the top-level function `fn` of `path`; `not-callback` without a
   * contract index (a file analysed alone).
   */
  callbackLoss(key: string): CallbackLoss {
    let known = this.callbacks.get(key);
    if (known === undefined) {
      const [path, fn, param, counts] = JSON.parse(key) as [string, string, string, string[]];
      known = this.callbackQuestion?.(path, fn, param, new Set(counts)) ?? 'not-callback';
      this.callbacks.set(key, known);
    }
    return known;
  }

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

  /** The three questions for a pass over the file `path`, noting every answer in `lookups`. */
  recording(
    lookups: DefinitionLookups,
    path: string,
  ): {
    wrapsDataParallel: (name: string) => boolean;
    countPreserving: (name: string) => boolean;
    callbackLoss: (fn: string, param: string, counts: ReadonlySet<string>) => CallbackLoss;
  } {
    const note = <T extends boolean | CallbackLoss>(key: string, answer: T) => (lookups.set(key, answer), answer);
    return {
      wrapsDataParallel: (name) => note(`wraps:${name}`, this.wrapsDataParallel(name)),
      countPreserving: (name) => note(`count:${name}`, this.countPreserving(name)),
      callbackLoss: (fn, param, counts) => {
        const key = `callback:${JSON.stringify([path, fn, param, [...counts].sort()])}`;
        return note(key, this.callbackLoss(key.slice('callback:'.length)));
      },
    };
  }

  /** True when every answer a pass took is still the program's answer. */
  stillHolds(lookups: DefinitionLookups): boolean {
    for (const [key, answer] of lookups) {
      const [question, name] = [key.slice(0, key.indexOf(':')), key.slice(key.indexOf(':') + 1)];
      const now =
        question === 'wraps'
          ? this.wrapsDataParallel(name)
          : question === 'count'
            ? this.countPreserving(name)
            : this.callbackLoss(name);
      if (now !== answer) return false;
    }
    return true;
  }

  /** Forgets the answers: a file of the program changed. */
  clear(): void {
    this.wraps.clear();
    this.preserves.clear();
    this.callbacks.clear();
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
