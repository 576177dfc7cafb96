// Reading Python calls and expressions off the copied tree: callee names, positional and keyword arguments,
// product chains (a * b / c) and literal values.
import { child, named, unparen, type PyNode, type Source } from './tree';

export interface CallArgs {
  readonly positional: PyNode[];
  readonly keywords: Map<string, { node: PyNode; value: PyNode }>;
  readonly list: PyNode | undefined;
}

export class Syntax {
  /**
   * Each call's arguments, read once: the rules ask for the same calls' arguments many times over (about 80 call
   * sites), and the lists and maps built for each ask were a large part of a file's analysis. Callers only read
   * what they are given.
   */
  private readonly argsByCall = new Map<PyNode, CallArgs>();

  constructor(readonly source: Source) {}

  text(node: PyNode): string {
    return this.source.textOf(node);
  }

  /** The callee written as a dotted path without spaces ("dist.all_reduce"), or the raw text. */
  calleeText(call: PyNode): string {
    const fn = child(call, 'function');
    return fn ? this.text(fn).replace(/\s+/g, '') : '';
  }

  /** The last name of the callee: `all_reduce` for `torch.distributed.all_reduce(...)`. */
  calleeName(call: PyNode): string {
    const fn = child(call, 'function');
    if (!fn) return '';
    if (fn.type === 'identifier') return this.text(fn);
    if (fn.type === 'attribute') {
      const attr = child(fn, 'attribute');
      return attr ? this.text(attr) : '';
    }
    return '';
  }

  /** The object a method is called on: `dist` for `dist.all_reduce(...)`. */
  calleeObject(call: PyNode): PyNode | undefined {
    const fn = child(call, 'function');
    return fn?.type === 'attribute' ? child(fn, 'object') : undefined;
  }

  args(call: PyNode): CallArgs {
    let read = this.argsByCall.get(call);
    if (!read) {
      read = this.readArgs(call);
      this.argsByCall.set(call, read);
    }
    return read;
  }

  private readArgs(call: PyNode): CallArgs {
    const list = child(call, 'arguments');
    const positional: PyNode[] = [];
    const keywords = new Map<string, { node: PyNode; value: PyNode }>();
    for (const a of list ? named(list) : []) {
      if (a.type === 'keyword_argument') {
        const name = child(a, 'name');
        const value = child(a, 'value');
        if (name && value) keywords.set(this.text(name), { node: a, value });
      } else if (a.type !== 'list_splat' && a.type !== 'dictionary_splat') {
        positional.push(a);
      }
    }
    return { positional, keywords, list };
  }

  /** The argument given by keyword or at a position, the way Python binds it. */
  arg(call: PyNode, keyword: string, position: number): PyNode | undefined {
    const a = this.args(call);
    return a.keywords.get(keyword)?.value ?? (position >= 0 ? a.positional[position] : undefined);
  }

  /** A string literal's value, or undefined. */
  stringValue(node: PyNode | undefined): string | undefined {
    if (!node) return undefined;
    const n = unparen(node);
    if (n.type !== 'string') return undefined;
    const m = /^[rbuRBU]*(['"]{1,3})([\s\S]*)\1$/.exec(this.text(n));
    return m ? m[2] : undefined;
  }

  numberValue(node: PyNode | undefined): number | undefined {
    if (!node) return undefined;
    const n = unparen(node);
    if (n.type === 'integer' || n.type === 'float') {
      const v = Number(
        this.text(n)
          .replace(/_/g, '')
          .replace(/[jJlL]$/, ''),
      );
      return Number.isFinite(v) ? v : undefined;
    }
    if (n.type === 'unary_operator' && this.text(n).startsWith('-')) {
      const inner = child(n, 'argument');
      const v = this.numberValue(inner);
      return v === undefined ? undefined : -v;
    }
    return undefined;
  }

  /** The operator token of a binary_operator / augmented_assignment / comparison. */
  operator(node: PyNode): string {
    const op = child(node, 'operator') ?? node.children.find((c) => !c.named && c.type !== '(' && c.type !== ')');
    return op ? this.text(op) : '';
  }

  /**
   * Splits `a * b / (c * d)` into factors with exponents (+1 multiply, -1 divide). Only `*` and `/` chains are
   * split; anything else is one factor.
   */
  factors(
    node: PyNode,
    sign: 1 | -1 = 1,
    out: { node: PyNode; sign: 1 | -1 }[] = [],
  ): { node: PyNode; sign: 1 | -1 }[] {
    const n = unparen(node);
    if (n.type === 'binary_operator') {
      const op = this.operator(n);
      const left = child(n, 'left');
      const right = child(n, 'right');
      if ((op === '*' || op === '/') && left && right) {
        this.factors(left, sign, out);
        this.factors(right, op === '/' ? (-sign as 1 | -1) : sign, out);
        return out;
      }
    }
    out.push({ node: n, sign });
    return out;
  }

  /** Strips value-preserving wrappers: float(x), int(x), x.item(), torch.tensor(x), parentheses. */
  stripWrappers(node: PyNode): PyNode {
    let n = unparen(node);
    for (let i = 0; i < 6; i++) {
      if (n.type !== 'call') return n;
      const name = this.calleeName(n);
      const callee = this.calleeText(n);
      if (
        [
          'float',
          'int',
          'torch.tensor',
          'torch.as_tensor',
          'np.float32',
          'jnp.float32',
          'tf.cast',
          'math.sqrt',
        ].includes(callee)
      ) {
        if (callee === 'math.sqrt') return n;
        const first = this.args(n).positional[0];
        if (!first) return n;
        n = unparen(first);
      } else if ((name === 'item' || name === 'float' || name === 'cuda' || name === 'to') && this.calleeObject(n)) {
        n = unparen(this.calleeObject(n)!);
      } else {
        return n;
      }
    }
    return n;
  }
}
