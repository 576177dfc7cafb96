// The conditions under which a statement of a function runs, as far as its enclosing `if`/`elif`/`else` say, and a
// three-valued evaluation of a condition under facts known true or false. The DTensor contracts use it to pair the
// values a name may hold (a mesh chosen per branch, a plan chosen per branch) with the branch that chose them, and to
// read only the branches a caller's own condition allows. Conditions are compared by their text, white space
// removed: two different texts are two unknown facts, so nothing is concluded from a condition it cannot read.
import { child, named, unparen, type PyNode } from '../tree';
import type { FileSyntax } from './placement-syntax';

export type Cond =
  | { readonly atom: string }
  | { readonly and: readonly Cond[] }
  | { readonly or: readonly Cond[] }
  | { readonly not: Cond };

export function condOf(syntax: FileSyntax, node: PyNode): Cond {
  const n = unparen(node);
  if (n.type === 'boolean_operator') {
    const op = n.children.find((c) => c.field === 'operator');
    const parts = [child(n, 'left'), child(n, 'right')].filter((c): c is PyNode => c !== undefined);
    const kind = op && syntax.source.textOf(op) === 'and' ? 'and' : 'or';
    const flat = parts.map((p) => condOf(syntax, p)).flatMap((c) => (kind in c ? (c as never)[kind] : [c]));
    return kind === 'and' ? { and: flat } : { or: flat };
  }
  if (n.type === 'not_operator') {
    const argument = child(n, 'argument');
    if (argument) return { not: condOf(syntax, argument) };
  }
  return { atom: syntax.text(n) };
}

/** The conditions that hold where `node` runs, up to (not including) `stop`: one per enclosing branch. */
export function guardsOf(syntax: FileSyntax, node: PyNode, stop: PyNode): Cond[] {
  const out: Cond[] = [];
  for (let n: PyNode | null = node; n && n !== stop; n = n.parent) {
    const up = n.parent;
    if (n.type !== 'block' || !up) continue;
    if (up.type === 'if_statement' && n.field === 'consequence') {
      const c = child(up, 'condition');
      if (c) out.push(condOf(syntax, c));
    } else if (up.type === 'elif_clause' || up.type === 'else_clause') {
      const statement = up.parent;
      if (!statement || statement.type !== 'if_statement') continue;
      // Every earlier test of the chain failed; an `elif`'s own test holds.
      for (const clause of [statement, ...named(statement).filter((c) => c.type === 'elif_clause')]) {
        if (clause === up) break;
        const c = child(clause, 'condition');
        if (c) out.push({ not: condOf(syntax, c) });
      }
      const own = up.type === 'elif_clause' ? child(up, 'condition') : undefined;
      if (own) out.push(condOf(syntax, own));
    }
  }
  return out;
}

/** Facts known: atoms true and atoms false (`x is None` false means `x is not None` true, and back). */
export class Known {
  private readonly truths = new Map<string, boolean>();

  constructor(guards: readonly Cond[] = []) {
    for (const g of guards) this.assume(g, true);
  }

  with(guards: readonly Cond[]): Known {
    const next = new Known();
    for (const [atom, value] of this.truths) next.truths.set(atom, value);
    for (const g of guards) next.assume(g, true);
    return next;
  }

  private assume(c: Cond, value: boolean): void {
    if ('atom' in c) {
      this.truths.set(c.atom, value);
      const flipped = flipNone(c.atom);
      if (flipped) this.truths.set(flipped, !value);
    } else if ('not' in c) this.assume(c.not, !value);
    else if ('and' in c && value) c.and.forEach((p) => this.assume(p, true));
    else if ('or' in c && !value) c.or.forEach((p) => this.assume(p, false));
    else this.truths.set(JSON.stringify(c), value);
  }

  /** true, false, or undefined when the facts do not decide it. */
  value(c: Cond): boolean | undefined {
    if ('atom' in c) return this.truths.get(c.atom);
    const whole = this.truths.get(JSON.stringify(c));
    if (whole !== undefined) return whole;
    if ('not' in c) {
      const v = this.value(c.not);
      return v === undefined ? undefined : !v;
    }
    const values = ('and' in c ? c.and : c.or).map((p) => this.value(p));
    if ('and' in c) return values.includes(false) ? false : values.every((v) => v === true) ? true : undefined;
    return values.includes(true) ? true : values.every((v) => v === false) ? false : undefined;
  }

  /** Every guard holds (undefined when one is not decided). */
  all(guards: readonly Cond[]): boolean | undefined {
    const values = guards.map((g) => this.value(g));
    return values.includes(false) ? false : values.every((v) => v === true) ? true : undefined;
  }
}

function flipNone(atom: string): string | undefined {
  if (atom.endsWith('isnotNone')) return `${atom.slice(0, -'isnotNone'.length)}isNone`;
  if (atom.endsWith('isNone')) return `${atom.slice(0, -'isNone'.length)}isnotNone`;
  return undefined;
}
