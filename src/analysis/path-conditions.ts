// Python conditions as formulas (path-formulas.ts), joined across the methods of a class: a call of a method of the
// same class that takes no argument and only returns an expression (`self._sync_stats()`) stands for that
// expression, so the guards of one method and the wrapper choice of a `@property` can be decided together.
//
// Attribute chains rooted at `self` (`self.args.use_bmuf`, `self.fast_stat_sync`) are flags: the rule that asks
// assumes the configuration they hold does not change within one step. Any other condition (a call, a local name, an
// arithmetic test) is an opaque atom identified by its text, so the same test written twice is the same atom: the
// step's state (`self.get_num_updates()`) is read before the update it guards changes it.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import { and, atom, not, or, FALSE, TRUE, type CompareOp, type Constant, type Formula } from './path-formulas';

const SELF_CHAIN = /^self(\.[A-Za-z_]\w*)+$/;
const MAX_INLINE_DEPTH = 3;

export class PathConditions {
  constructor(
    private readonly model: FileModel,
    private readonly className: string,
  ) {}

  formula(expr: PyNode, depth = 0): Formula {
    const s = this.model.syntax;
    const n = unparen(expr);
    const text = s.text(n).replace(/\s+/g, '');
    if (n.type === 'true') return TRUE;
    if (n.type === 'false') return FALSE;
    if (n.type === 'not_operator') {
      const arg = child(n, 'argument');
      return arg ? not(this.formula(arg, depth)) : opaque(text);
    }
    if (n.type === 'boolean_operator') {
      const l = child(n, 'left');
      const r = child(n, 'right');
      if (!l || !r) return opaque(text);
      const parts = [this.formula(l, depth), this.formula(r, depth)];
      return s.operator(n) === 'and' ? and(...parts) : or(...parts);
    }
    if (n.type === 'comparison_operator') return this.comparison(n, text);
    if ((n.type === 'attribute' || n.type === 'identifier') && SELF_CHAIN.test(text))
      return atom({ kind: 'flag', key: text });
    if (n.type === 'call') {
      const inlined = this.inlined(n, depth);
      if (inlined) return inlined;
    }
    return opaque(text);
  }

  /** The method of this class a call `self.name()` runs, when it has no other argument. */
  method(call: PyNode): FunctionInfo | undefined {
    const s = this.model.syntax;
    const callee = child(call, 'function');
    const args = child(call, 'arguments');
    if (!callee || callee.type !== 'attribute' || (args && named(args).length > 0)) return undefined;
    const object = child(callee, 'object');
    const name = child(callee, 'attribute');
    if (!object || !name || s.text(object) !== 'self') return undefined;
    return this.methodNamed(s.text(name));
  }

  methodNamed(name: string): FunctionInfo | undefined {
    const found = (this.model.byName.get(name) ?? []).filter((f) => f.className === this.className && isMethod(f));
    return found.length === 1 ? found[0] : undefined;
  }

  private inlined(call: PyNode, depth: number): Formula | undefined {
    if (depth >= MAX_INLINE_DEPTH) return undefined;
    const fn = this.method(call);
    const returned = fn ? onlyReturn(fn) : undefined;
    return returned ? this.formula(returned, depth + 1) : undefined;
  }

  private comparison(n: PyNode, text: string): Formula {
    const s = this.model.syntax;
    const parts = named(n);
    const op = n.children.find((c) => !c.named)?.type;
    if (parts.length !== 2 || !op || !isCompareOp(op)) return opaque(text);
    const [l, r] = parts.map(unparen);
    const lc = constant(s, l);
    const rc = constant(s, r);
    const lKey = s.text(l).replace(/\s+/g, '');
    const rKey = s.text(r).replace(/\s+/g, '');
    if (rc !== undefined && lc === undefined && SELF_CHAIN.test(lKey))
      return atom({ kind: 'compare', key: lKey, op, value: rc.value });
    if (lc !== undefined && rc === undefined && SELF_CHAIN.test(rKey))
      return atom({ kind: 'compare', key: rKey, op: flip(op), value: lc.value });
    return opaque(text);
  }
}

/** True for a function defined directly in a class body (decorated or not), not nested in a method. */
export function isMethod(fn: FunctionInfo): boolean {
  let p = fn.node.parent;
  if (p?.type === 'decorated_definition') p = p.parent;
  return p?.type === 'block' && p.parent?.type === 'class_definition';
}

/** The expression a function only returns (a docstring aside), or undefined. */
export function onlyReturn(fn: FunctionInfo): PyNode | undefined {
  const body = child(fn.node, 'body');
  if (!body) return undefined;
  const statements = named(body).filter(
    (st) => !(st.type === 'expression_statement' && named(st)[0]?.type === 'string'),
  );
  if (statements.length !== 1 || statements[0].type !== 'return_statement') return undefined;
  return named(statements[0])[0];
}

function opaque(key: string): Formula {
  return atom({ kind: 'opaque', key });
}

function constant(s: FileModel['syntax'], n: PyNode): { value: Constant } | undefined {
  if (n.type === 'none') return { value: null };
  if (n.type === 'true') return { value: true };
  if (n.type === 'false') return { value: false };
  const num = s.numberValue(n);
  if (num !== undefined) return { value: num };
  const str = n.type === 'string' ? s.stringValue(n) : undefined;
  return str !== undefined ? { value: str } : undefined;
}

function isCompareOp(op: string): op is CompareOp {
  return op === '<' || op === '<=' || op === '>' || op === '>=' || op === '==' || op === '!=';
}

function flip(op: CompareOp): CompareOp {
  const m: Record<CompareOp, CompareOp> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '==': '==', '!=': '!=' };
  return m[op];
}
