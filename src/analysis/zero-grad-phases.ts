// Guards of an accumulation loop read as residues of one counter modulo the micro-step count, so two guards can be
// proven to fire on the same iteration: `(i + d) % K == c` fires when `i ≡ c - d`, and `v == c` for a counter the
// loop draws from `cycle(range(a, a + K))` fires when `v ≡ c`, because K consecutive values have K distinct residues.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel } from './scope';
import { ACCUMULATION_NAME } from './accumulation-syntax';

/** A guard `counter ≡ residue (mod count)`, read from `(i + d) % K == c` or from `v == c` for a cycling counter. */
export interface Phase {
  readonly counter: string;
  readonly count: string;
  readonly residue: number;
}

export function samePhase(a: Phase, b: Phase): boolean {
  return a.counter === b.counter && a.count === b.count && a.residue === b.residue;
}

export class CounterPhases {
  constructor(private readonly model: FileModel) {}

  private text(n: PyNode): string {
    return this.model.syntax.text(n).replace(/\s+/g, '');
  }

  /**
   * A guard as a residue of a counter: `(i + d) % K == c` gives `i ≡ c - d`; `v == c` where the loop draws `v` from
   * `cycle(range(a, a + K))` gives `v ≡ c`, because K consecutive values have K distinct residues.
   */
  phase(condition: PyNode, loop: PyNode): Phase | undefined {
    const cmp = unparen(condition);
    if (cmp.type !== 'comparison_operator') return undefined;
    const operators = cmp.children.filter((c) => !c.named);
    const sides = named(cmp);
    if (operators.length !== 1 || operators[0].type !== '==' || sides.length !== 2) return undefined;
    const s = this.model.syntax;
    const literal = sides.findIndex((n) => n.type === 'integer');
    if (literal < 0) return undefined;
    const c = s.numberValue(sides[literal]);
    const other = unparen(sides[1 - literal]);
    if (c === undefined) return undefined;
    if (other.type === 'identifier') {
      const count = this.cycleCount(loop, s.text(other));
      return count ? { counter: s.text(other), count, residue: c } : undefined;
    }
    if (other.type !== 'binary_operator' || s.operator(other) !== '%') return undefined;
    const right = child(other, 'right');
    const shifted = this.shifted(unparen(child(other, 'left')!));
    if (!right || !shifted || !ACCUMULATION_NAME.test(s.text(right))) return undefined;
    return { counter: shifted.counter, count: this.text(right), residue: c - shifted.offset };
  }

  /** `i`, `i + 1`, `i - 1` (integer offsets only). */
  private shifted(n: PyNode): { counter: string; offset: number } | undefined {
    const s = this.model.syntax;
    if (n.type === 'identifier') return { counter: s.text(n), offset: 0 };
    if (n.type !== 'binary_operator' || !['+', '-'].includes(s.operator(n))) return undefined;
    const left = child(n, 'left');
    const right = child(n, 'right');
    const d = s.numberValue(right);
    if (left?.type !== 'identifier' || right?.type !== 'integer' || d === undefined) return undefined;
    return { counter: s.text(left), offset: s.operator(n) === '+' ? d : -d };
  }

  /** K where the loop draws `name` from `zip(..., cycle(range(K)), ...)` or `cycle(range(a, K + a))`. */
  private cycleCount(loop: PyNode, name: string): string | undefined {
    const s = this.model.syntax;
    const left = child(loop, 'left');
    const right = child(loop, 'right');
    if (!left || !right || loop.type !== 'for_statement') return undefined;
    const targets = named(unparen(left)).map((t) => s.text(t));
    const zip = unparen(right);
    if (zip.type !== 'call' || s.calleeName(zip) !== 'zip') return undefined;
    const index = targets.indexOf(name);
    const source = index >= 0 ? s.args(zip).positional[index] : undefined;
    const cycle = source && unparen(source);
    if (cycle?.type !== 'call' || s.calleeName(cycle) !== 'cycle') return undefined;
    const range = s.args(cycle).positional[0];
    if (range?.type !== 'call' || s.calleeName(range) !== 'range') return undefined;
    const bounds = s.args(range).positional;
    if (bounds.length === 1) return this.text(bounds[0]);
    if (bounds.length !== 2) return undefined;
    const start = s.numberValue(bounds[0]);
    if (bounds[0].type !== 'integer' || start === undefined) return undefined;
    const end = unparen(bounds[1]);
    if (start === 0) return this.text(end);
    if (end.type !== 'binary_operator' || s.operator(end) !== '+') return undefined;
    const [a, b] = [child(end, 'left')!, child(end, 'right')!];
    if (s.numberValue(b) === start && b.type === 'integer') return this.text(a);
    if (s.numberValue(a) === start && a.type === 'integer') return this.text(b);
    return undefined;
  }
}
