// The values a local may hold at a use, read from the function's statements: the one assignment that reaches the use
// along the blocks that enclose it, and the per-branch pairs of two locals set together (a plan and its mesh chosen
// by one `if`/`elif`/`else` chain). An assignment overwritten in every branch of a later exhaustive chain is not a
// value the use can see. Anything else (an assignment inside a loop or a `with` before the use, a name bound by
// other statements) leaves the value unknown.
import { child, named, type PyNode } from '../tree';
import { guardsOf, type Cond } from './branch-guards';
import type { FileSyntax } from './placement-syntax';

/** The assignments a statement makes to plain names: name → value (element-wise for `a, b = x, y`). */
function assignmentsOf(syntax: FileSyntax, statement: PyNode): Map<string, PyNode> {
  const out = new Map<string, PyNode>();
  const assignment = statement.type === 'expression_statement' ? named(statement)[0] : undefined;
  if (assignment?.type !== 'assignment') return out;
  const left = child(assignment, 'left');
  const right = child(assignment, 'right');
  if (!left || !right) return out;
  if (left.type === 'pattern_list' || left.type === 'tuple_pattern') {
    const targets = named(left);
    const values = right.type === 'expression_list' || right.type === 'tuple' ? named(right) : [];
    if (values.length === targets.length) targets.forEach((t, i) => out.set(syntax.text(t), values[i]));
  } else if (left.type === 'identifier') out.set(syntax.text(left), right);
  return out;
}

/** Whether a compound statement may bind `name` anywhere inside. */
function mayBind(syntax: FileSyntax, statement: PyNode, name: string): boolean {
  const pattern = new RegExp(`(^|[^\\w.])${name}(\\s*(:[^=]*)?=[^=]|\\s*,|\\s+in\\b)`);
  return pattern.test(syntax.source.textOf(statement));
}

/** The value of `name` that reaches `at` inside `fn`, when one assignment before it in an enclosing block decides it. */
export function reachingValue(syntax: FileSyntax, fn: PyNode, name: string, at: PyNode): PyNode | undefined {
  let inner: PyNode = at;
  for (let block = at.parent; block && block !== fn; inner = block, block = block.parent) {
    if (block.type !== 'block') continue;
    const statements = named(block);
    const index = statements.findIndex((s) => s.start <= inner.start && inner.end <= s.end);
    for (let i = index - 1; i >= 0; i--) {
      const s = statements[i];
      const value = assignmentsOf(syntax, s).get(name);
      if (value) return value;
      if (s.type !== 'expression_statement' && mayBind(syntax, s, name)) return undefined;
    }
  }
  return undefined;
}

/** A later `if`/`elif`/`else` chain in the same block assigns `name` in every branch. */
function overwrittenLater(syntax: FileSyntax, statement: PyNode, name: string): boolean {
  const block = statement.parent;
  if (!block) return false;
  const after = named(block).filter((s) => s.start > statement.start);
  return after.some((s) => {
    if (s.type !== 'if_statement') return false;
    const branches = [s, ...named(s).filter((c) => c.type === 'elif_clause' || c.type === 'else_clause')];
    if (!branches.some((b) => b.type === 'else_clause')) return false;
    return branches.every((b) => {
      const body = b.type === 'else_clause' ? (child(b, 'body') ?? named(b)[0]) : child(b, 'consequence');
      return body !== undefined && named(body).some((st) => assignmentsOf(syntax, st).has(name));
    });
  });
}

export interface PairedValues {
  readonly first: PyNode;
  readonly second: PyNode;
  readonly guards: readonly Cond[];
}

/**
 * The pairs of values two locals are given in the same block of `fn`, each with the branch that chose it; only
 * assignments a later exhaustive chain does not overwrite. Undefined when one assignment of `first` has no partner.
 */
export function pairedValues(
  syntax: FileSyntax,
  fn: PyNode,
  first: string,
  second: string,
): PairedValues[] | undefined {
  const out: PairedValues[] = [];
  let unpaired = false;
  const visitBlock = (block: PyNode) => {
    const statements = named(block);
    statements.forEach((s, i) => {
      const firstValue = assignmentsOf(syntax, s).get(first);
      if (firstValue && !overwrittenLater(syntax, s, first)) {
        const partner = statements
          .slice(0, i + 1)
          .reverse()
          .map((t) => assignmentsOf(syntax, t).get(second))
          .find((v) => v !== undefined);
        const after = statements
          .slice(i + 1)
          .map((t) => assignmentsOf(syntax, t).get(second))
          .find((v) => v !== undefined);
        const mesh = after ?? partner;
        if (mesh) out.push({ first: firstValue, second: mesh, guards: guardsOf(syntax, s, fn) });
        else unpaired = true;
      }
    });
  };
  const stack: PyNode[] = [fn];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n !== fn && (n.type === 'function_definition' || n.type === 'class_definition')) continue;
    if (n.type === 'block') visitBlock(n);
    stack.push(...n.children);
  }
  return unpaired || out.length === 0 ? undefined : out;
}
