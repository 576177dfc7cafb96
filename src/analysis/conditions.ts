// Decides `if` conditions that depend only on a parameter whose value is known at a call site or from its
// default (`if _type == 'avg':` with `_type='sum'`), or on a constructor flag (`if self.gradient_average:`).
// Anything else is undecided, and undecided branches are assumed to run.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { Binding, Env } from './sizes';

export type Literal = string | number | boolean | null;

export interface Decision {
  readonly value: boolean;
  /** The binding that decided it, so a finding can point at the call site that chose the value. */
  readonly binding?: Binding;
  /** The guard that failed and the outcome the guarded code needs, for a fix that flips it. */
  readonly guard?: { readonly test: PyNode; readonly expect: boolean };
}

/** Conditions guarding a node inside its function: each with the polarity the node needs. */
export function guardsOf(node: PyNode, fn: FunctionInfo): { test: PyNode; expect: boolean }[] {
  const out: { test: PyNode; expect: boolean }[] = [];
  let prev: PyNode = node;
  for (let p = node.parent; p && p !== fn.node; prev = p, p = p.parent) {
    if (p.type === 'if_statement') {
      const test = child(p, 'condition');
      if (!test || prev === test) continue;
      const inConsequence = prev === child(p, 'consequence');
      out.push({ test, expect: inConsequence });
      if (!inConsequence && prev.type === 'elif_clause') {
        const elifTest = child(prev, 'condition');
        if (elifTest && !isAncestor(elifTest, node)) out.push({ test: elifTest, expect: true });
      }
    }
  }
  return out;
}

function isAncestor(a: PyNode, b: PyNode): boolean {
  for (let n: PyNode | null = b; n; n = n.parent) if (n === a) return true;
  return false;
}

export class ConditionEvaluator {
  constructor(private readonly model: FileModel) {}

  /** Returns the first guard known to be false, or undefined when every guard holds or is undecided. */
  failingGuard(node: PyNode, env: Env): Decision | undefined {
    for (const g of guardsOf(node, env.fn)) {
      const d = this.evaluate(g.test, env);
      if (d && d.value !== g.expect) return { value: false, binding: d.binding, guard: g };
    }
    return undefined;
  }

  evaluate(expr: PyNode, env: Env): Decision | undefined {
    const s = this.model.syntax;
    const n = unparen(expr);
    if (n.type === 'not_operator') {
      const inner = child(n, 'argument');
      const d = inner ? this.evaluate(inner, env) : undefined;
      return d ? { value: !d.value, binding: d.binding } : undefined;
    }
    if (n.type === 'boolean_operator') {
      const op = s.operator(n);
      const l = child(n, 'left');
      const r = child(n, 'right');
      const a = l ? this.evaluate(l, env) : undefined;
      const b = r ? this.evaluate(r, env) : undefined;
      if (op === 'and') {
        if (a && !a.value) return a;
        if (b && !b.value) return b;
        return a && b ? { value: true, binding: a.binding ?? b.binding } : undefined;
      }
      if (a?.value) return a;
      if (b?.value) return b;
      return a && b ? { value: false, binding: a.binding ?? b.binding } : undefined;
    }
    if (n.type === 'comparison_operator') {
      const parts = named(n);
      if (parts.length !== 2) return undefined;
      const op = n.children
        .filter((c) => !c.named)
        .map((c) => s.text(c))
        .join(' ');
      const a = this.valueOf(parts[0], env);
      const b = op.includes('in') ? this.listOf(parts[1]) : this.valueOf(parts[1], env);
      if (!a || !b) return undefined;
      const binding = a.binding ?? (b as { binding?: Binding }).binding;
      if (op === 'in' || op === 'not in') {
        const found = (b as { list: Literal[] }).list.includes(a.value);
        return { value: op === 'in' ? found : !found, binding };
      }
      const bv = (b as { value: Literal }).value;
      if (op === '==' || op === 'is') return { value: a.value === bv, binding };
      if (op === '!=' || op === 'is not') return { value: a.value !== bv, binding };
      if (typeof a.value === 'number' && typeof bv === 'number') {
        if (op === '>') return { value: a.value > bv, binding };
        if (op === '<') return { value: a.value < bv, binding };
        if (op === '>=') return { value: a.value >= bv, binding };
        if (op === '<=') return { value: a.value <= bv, binding };
      }
      return undefined;
    }
    const v = this.valueOf(n, env);
    return v ? { value: Boolean(v.value), binding: v.binding } : undefined;
  }

  private listOf(node: PyNode): { list: Literal[]; binding?: Binding } | undefined {
    const n = unparen(node);
    if (n.type !== 'tuple' && n.type !== 'list' && n.type !== 'set') return undefined;
    const values = named(n).map((c) => this.literal(c));
    return values.every((v) => v !== undefined) ? { list: values as Literal[] } : undefined;
  }

  literal(node: PyNode): Literal | undefined {
    const s = this.model.syntax;
    const n = unparen(node);
    const str = s.stringValue(n);
    if (str !== undefined) return str;
    const num = s.numberValue(n);
    if (num !== undefined) return num;
    if (n.type === 'true') return true;
    if (n.type === 'false') return false;
    if (n.type === 'none') return null;
    return undefined;
  }

  /** The literal value of an expression: a literal, a bound parameter, or `self.flag` set from a default. */
  valueOf(node: PyNode, env: Env, depth = 0): { value: Literal; binding?: Binding } | undefined {
    const s = this.model.syntax;
    const n = unparen(node);
    const lit = this.literal(n);
    if (lit !== undefined) return { value: lit };
    if (depth > 3) return undefined;
    if (n.type === 'identifier') {
      const binding = env.bindings?.get(s.text(n));
      if (!binding) return undefined;
      const inner = this.valueOf(binding.node, binding.env, depth + 1);
      return inner ? { value: inner.value, binding: inner.binding ?? binding } : undefined;
    }
    if (n.type === 'attribute' && /^self\./.test(s.text(n))) {
      const values = this.model.assignedValues.get(s.text(n).replace(/\s+/g, '')) ?? [];
      if (values.length !== 1) return undefined;
      const { value, fn } = values[0];
      const direct = this.literal(value);
      if (direct !== undefined) return { value: direct };
      if (unparen(value).type === 'identifier') {
        const param = fn.params.find((p) => p.name === s.text(unparen(value)));
        const given = fn.name === '__init__' && param ? env.instance?.get(param.name) : undefined;
        if (given) {
          const inner = this.valueOf(given.node, given.env, depth + 1);
          if (inner) return { value: inner.value, binding: inner.binding ?? given };
        }
        if (param?.defaultValue) {
          const d = this.literal(param.defaultValue);
          if (d !== undefined) return { value: d };
        }
      }
    }
    return undefined;
  }
}
