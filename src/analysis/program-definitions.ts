// Definitions of a name anywhere in the program, read from the texts (most files are never parsed): the lines of
// `def name(` or `class name` and the indented lines below it. The path-sensitive multiplier rule asks two
// questions of them (unreduced-world-multiplier.ts): whether a wrapper a class calls is the program's own helper
// around DDP/FSDP (fairseq's `DistributedFairseqModel`), and whether every definition of a method a count passes
// through only combines its arguments (`grad_denom`). A name defined nowhere in the program answers "no" to both.
// Two more questions go to the library contracts (contracts/), which read the program's files across imports: what
// the program passes to a callable parameter (the accumulation rule), and whether an optimizer wrapper's step path
// divides the gradients it reduces by a batch given at construction (the sum rule). Every answer is recorded, so a
// cached pass is re-run when the program's answer changes.
import { onlyCombinesArguments } from './unreduced-world-multiplier';
import type { CallbackLoss } from './contracts/callback-arguments';

/** The questions the library contracts answer for single-file passes; a file analysed alone has none. */
export interface ContractQuestions {
  /** What the program passes to parameter `param` of the top-level function `fn` of `path` (callback-arguments.ts). */
  callbackLoss(path: string, fn: string, param: string, counts: ReadonlySet<string>): CallbackLoss;
  /** The step path of class `cls` of `path` reduces in `method` and divides by a constructed batch (optimizer-wrappers.ts). */
  stepDividesByConstructedBatch(path: string, cls: string, method: string): boolean;
}

/**
 * The answers one pass took, by `wraps:name`, `count:name`, `callback:[path, fn, param, counts]` or
 * `stepdiv:[path, cls, method]`: the pass is re-run when one of them changes.
 */
export type DefinitionLookups = Map<string, boolean | CallbackLoss>;

const DATA_PARALLEL_WRAPPER = /\b(DistributedDataParallel|FullyShardedDataParallel)\b/;

export class ProgramDefinitions {
  private readonly wraps = new Map<string, boolean>();
  private readonly preserves = new Map<string, boolean>();
  /** The contracts' answers by the lookup key without its question. */
  private readonly contractAnswers = new Map<string, boolean | CallbackLoss>();

  constructor(
    private readonly texts: () => Iterable<string>,
    private readonly contracts?: ContractQuestions,
  ) {}

  /** The contracts' answer to `callback` or `stepdiv` for the JSON-encoded arguments `key`. */
  private contractAnswer(question: string, key: string): boolean | CallbackLoss {
    const cacheKey = `${question}:${key}`;
    let known = this.contractAnswers.get(cacheKey);
    if (known === undefined) {
      const args = JSON.parse(key) as string[];
      if (question === 'callback') {
        known = this.contracts?.callbackLoss(args[0], args[1], args[2], new Set(args.slice(3))) ?? 'not-callback';
      } else known = this.contracts?.stepDividesByConstructedBatch(args[0], args[1], args[2]) ?? false;
      this.contractAnswers.set(cacheKey, known);
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

  /** The questions for a pass over the file `path`, noting every answer in `lookups`. */
  recording(
    lookups: DefinitionLookups,
    path: string,
  ): {
    wrapsDataParallel: (name: string) => boolean;
    countPreserving: (name: string) => boolean;
    callbackLoss: (fn: string, param: string, counts: ReadonlySet<string>) => CallbackLoss;
    stepDividesByConstructedBatch: (cls: string, method: string) => boolean;
  } {
    const note = <T extends boolean | CallbackLoss>(key: string, answer: T) => (lookups.set(key, answer), answer);
    const ask = (question: string, args: string[]) => {
      const key = JSON.stringify(args);
      return note(`${question}:${key}`, this.contractAnswer(question, key));
    };
    return {
      wrapsDataParallel: (name) => note(`wraps:${name}`, this.wrapsDataParallel(name)),
      countPreserving: (name) => note(`count:${name}`, this.countPreserving(name)),
      callbackLoss: (fn, param, counts) => ask('callback', [path, fn, param, ...[...counts].sort()]) as CallbackLoss,
      stepDividesByConstructedBatch: (cls, method) => ask('stepdiv', [path, cls, method]) === true,
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
            : this.contractAnswer(question, name);
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
    // The contracts' answers read other files' callbacks and steps, so any change can move them.
    this.contractAnswers.clear();
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
