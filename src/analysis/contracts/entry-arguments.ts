// The values an entry script's command line hands its training code when it is run without flags: the defaults of
// its argparse parser (`parser.add_argument("--train.batch_size", type=int, default=128)`). A value is read from the
// namespace `parser.parse_args()` returns, followed through the frames that pass it on (the script's main block calls
// `train(args)`, which hands `args` to a helper and a constructor), and through a one-argument helper that rebuilds
// the namespace from its entries (`hierarchize(args)` reads `vars(args)` to nest the dotted names, so `--train.
// batch_size` is read as `args.train.batch_size`). An argument the parser does not define is absent, so
// `getattr(args.train, "dynamic_batch_enable", False)` is its default, False. Nothing is decided where the script
// builds more than one parser, has sub-commands or `set_defaults`, assigns the attribute after parsing, or gives a
// default that is not a literal: the reading is only as good as the script's own text.
import { child, hasSplat, unparen, type PyNode } from '../tree';
import type { Syntax } from '../syntax';
import { resolved, type CallReader, type Value } from './bound-values';
import type { ProgramModels } from './program-models';

/** A literal default: a number, a boolean, a string, or None (null). */
export type Literal = number | boolean | string | null;
/** What a dotted destination holds: a literal, `absent` (not defined), or undefined (not decided). */
type Entry = Literal | 'absent' | undefined;

/**
 * What makes the namespace hold more than the file's `add_argument` defaults: defaults set later, sub-commands,
 * attributes set by name, the namespace's dictionary updated (a config file merged in), and a parser that inherits
 * arguments from parents or changes every default (`ArgumentParser(parents=[...])`, `argument_default=`).
 */
const OTHER_SOURCES =
  /\b(set_defaults|add_subparsers|parse_known_args|parse_intermixed_args|setattr)\s*\(|__dict__\s*\.\s*update|vars\([^)]*\)\s*\.\s*update|\b(parents|argument_default)\s*=/;
/** How deep the reader re-enters itself (a value read through a guard read through a value...). */
const MAX_DEPTH = 12;

export class EntryArguments implements CallReader {
  private readonly parsers = new Map<string, Map<string, Literal | undefined> | undefined>();
  private depth = 0;
  /** The entry scripts whose defaults a reading used. */
  readonly used = new Set<string>();

  constructor(private readonly models: ProgramModels) {}

  /** The literal an expression stands for: a literal, a namespace's argument, `getattr(ns, "x", default)`. */
  literal(value: Value): number | boolean | null | undefined {
    if (this.depth > MAX_DEPTH) return undefined;
    this.depth++;
    try {
      const v = this.read(value);
      return typeof v === 'string' ? undefined : v;
    } finally {
      this.depth--;
    }
  }

  private read(value: Value): Literal | undefined {
    const r = resolved(value, 0, this);
    if (!r) return undefined;
    const s = r.frame.at.model.syntax;
    const n = unparen(r.node);
    const own = literalOf(s, n);
    if (own !== undefined) return own;
    if (n.type === 'binary_operator') return arithmetic(s.operator(n), ...this.operands(n, r));
    if (n.type === 'attribute') {
      const found = this.entry(r);
      return found === 'absent' ? undefined : found;
    }
    if (n.type !== 'call' || child(n, 'function')?.type !== 'identifier') return undefined;
    const args = s.args(n);
    if (s.calleeName(n) === 'int' && args.positional.length === 1 && args.keywords.size === 0) {
      const v = this.read({ node: args.positional[0], frame: r.frame });
      return typeof v === 'number' ? Math.trunc(v) : undefined;
    }
    const [object, attr, fallback] = args.positional;
    const name = s.stringValue(attr);
    if (s.calleeName(n) !== 'getattr' || !object || name === undefined || args.keywords.size > 0) return undefined;
    const found = this.entry({ node: object, frame: r.frame }, name);
    if (found !== 'absent') return found;
    return fallback ? this.read({ node: fallback, frame: r.frame }) : undefined;
  }

  private operands(n: PyNode, r: Value): [Literal | undefined, Literal | undefined] {
    const side = (field: string) => {
      const node = child(n, field);
      return node ? this.read({ node, frame: r.frame }) : undefined;
    };
    return [side('left'), side('right')];
  }

  /** The argument an attribute chain of a parsed namespace names (`args.train.batch_size`), with `last` appended. */
  private entry(value: Value, last?: string): Entry {
    const path = this.namespacePath(value, 0);
    if (!path) return undefined;
    const parser = this.parserOf(path.file);
    if (!parser) return undefined;
    const dest = [...path.names, ...(last === undefined ? [] : [last])].join('.');
    if (dest === '' || this.assignedAfterParsing(path.file, dest)) return undefined;
    this.used.add(path.file);
    if (parser.has(dest)) return parser.get(dest);
    // `args.train` is a namespace of nested arguments, not a literal; an argument nobody defines is absent.
    return [...parser.keys()].some((k) => k.startsWith(`${dest}.`)) ? undefined : 'absent';
  }

  /** The entry script whose parsed namespace the value's chain starts from, and the attribute names after it. */
  private namespacePath(value: Value, depth: number): { file: string; names: string[] } | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const s = value.frame.at.model.syntax;
    const names: string[] = [];
    let n = unparen(value.node);
    while (n.type === 'attribute' && !/^self\.\w+$/.test(s.text(n))) {
      const attr = child(n, 'attribute');
      const object = child(n, 'object');
      if (!attr || !object) return undefined;
      names.unshift(s.text(attr));
      n = unparen(object);
    }
    const r = resolved({ node: n, frame: value.frame }, 0, this);
    const rn = r && unparen(r.node);
    if (!r || !rn) return undefined;
    if (rn.type === 'attribute' && rn !== n) {
      const outer = this.namespacePath(r, depth + 1);
      return outer && { file: outer.file, names: [...outer.names, ...names] };
    }
    const file = rn.type === 'call' ? this.parsedIn(r, depth) : undefined;
    return file === undefined ? undefined : { file, names };
  }

  /** The file whose parser made the namespace a call returns: `parser.parse_args()`, or a helper rebuilding it. */
  private parsedIn(call: Value, depth: number): string | undefined {
    if (depth > MAX_DEPTH) return undefined;
    const s = call.frame.at.model.syntax;
    const n = unparen(call.node);
    const args = s.args(n);
    const bare = args.positional.length === 0 && args.keywords.size === 0 && !hasSplat(args.list);
    if (s.calleeName(n) === 'parse_args' && s.calleeObject(n) && bare)
      return this.parserOf(call.frame.at.path) ? call.frame.at.path : undefined;
    const callee = child(n, 'function');
    if (callee?.type !== 'identifier' || args.positional.length !== 1 || args.keywords.size > 0) return undefined;
    const helper = this.models.functionNamed(call.frame.at.path, s.text(callee));
    const param = helper?.fn.params[0]?.name;
    // The helper rebuilds the namespace from its entries: `vars(args)` or `args.__dict__`.
    const body = helper && helper.model.syntax.text(helper.fn.node);
    if (!param || !body || !new RegExp(`vars\\(\\s*${param}\\s*\\)|\\b${param}\\.__dict__`).test(body))
      return undefined;
    const inner = resolved({ node: args.positional[0], frame: call.frame }, 0, this);
    return inner && unparen(inner.node).type === 'call' ? this.parsedIn(inner, depth + 1) : undefined;
  }

  /** The file assigns the argument after parsing (`args.train.batch_size = ...`): its default is not what is read. */
  private assignedAfterParsing(file: string, dest: string): boolean {
    const last = dest.split('.').pop() ?? dest;
    const model = this.models.modelOf(file);
    if (!model) return true;
    const s = model.syntax;
    return model.functions.some((fn) =>
      fn.assignments.some((a) => {
        const left = child(a, 'left');
        return !!left && unparen(left).type === 'attribute' && s.text(unparen(left)).endsWith(`.${last}`);
      }),
    );
  }

  /** The file's one argparse parser: each destination's default (undefined where it is not a literal). */
  private parserOf(file: string): Map<string, Literal | undefined> | undefined {
    if (this.parsers.has(file)) return this.parsers.get(file);
    const text = this.models.text(file) ?? '';
    const model = this.models.modelOf(file);
    const one = (text.match(/\bArgumentParser\s*\(/g) ?? []).length === 1;
    const parser = model && one && !OTHER_SOURCES.test(text) ? readParser(model.syntax, model.functions) : undefined;
    this.parsers.set(file, parser);
    return parser;
  }
}

function readParser(
  s: Syntax,
  functions: readonly { calls: PyNode[] }[],
): Map<string, Literal | undefined> | undefined {
  const out = new Map<string, Literal | undefined>();
  const seen = new Set<string>();
  for (const fn of functions)
    for (const call of fn.calls) {
      if (s.calleeName(call) !== 'add_argument') continue;
      const args = s.args(call);
      const options = args.positional.map((a) => s.stringValue(a));
      const splat = hasSplat(args.list);
      if (options.some((o) => o === undefined) || options.length === 0 || splat) return undefined;
      const flags = options as string[];
      const explicit = args.keywords.get('dest')?.value;
      const long = flags.find((o) => o.startsWith('--')) ?? flags.find((o) => o.startsWith('-'));
      const dest = explicit ? s.stringValue(explicit) : long ? long.replace(/^-+/, '').replace(/-/g, '_') : flags[0];
      if (dest === undefined) return undefined;
      const action = s.stringValue(args.keywords.get('action')?.value);
      const given = args.keywords.get('default')?.value;
      const value = given
        ? literalOf(s, unparen(given))
        : action === 'store_true'
          ? false
          : action === 'store_false'
            ? true
            : null;
      // Two arguments writing one destination (`--x` and `--no_x`): the default depends on their order.
      out.set(dest, seen.has(dest) ? undefined : value);
      seen.add(dest);
    }
  return out;
}

/** Integer arithmetic on two decided numbers, as Python computes it. */
function arithmetic(op: string, a: Literal | undefined, b: Literal | undefined): number | undefined {
  if (typeof a !== 'number' || typeof b !== 'number') return undefined;
  if (op === '*') return a * b;
  if (op === '+') return a + b;
  if (op === '-') return a - b;
  return op === '//' && b !== 0 ? Math.floor(a / b) : undefined;
}

/** A literal's value: numbers, booleans, strings, None (null); undefined for anything else. */
function literalOf(s: Syntax, n: PyNode): Literal | undefined {
  if (n.type === 'true' || n.type === 'false') return n.type === 'true';
  if (n.type === 'none') return null;
  const number = s.numberValue(n);
  if (number !== undefined) return number;
  return s.stringValue(n);
}
