// Whether two places in one function can both run on one execution: a division in the `else` branch of the `if`
// that holds the reduction, or after a `return` that follows it, does not scale what that reduction produced.
import { ancestors, named, type PyNode } from './tree';

const BRANCH_CLAUSES = new Set([
  'block',
  'elif_clause',
  'else_clause',
  'except_clause',
  'except_group_clause',
  'case_clause',
]);
const EXITS = new Set(['return_statement', 'raise_statement']);

export function onSamePath(anchor: PyNode, other: PyNode): boolean {
  const above = new Set(ancestors(anchor));
  above.add(anchor);
  let common: PyNode | null = other;
  let otherChild: PyNode | undefined;
  while (common && !above.has(common)) {
    otherChild = common;
    common = common.parent;
  }
  if (!common) return true;
  const anchorChild = anchor === common ? undefined : [anchor, ...ancestors(anchor)].find((n) => n.parent === common);
  // Different clauses of one `if`/`try`/`match`: never both on one path.
  if (
    (common.type === 'if_statement' || common.type === 'try_statement' || common.type === 'match_statement') &&
    anchorChild &&
    otherChild &&
    anchorChild !== otherChild &&
    BRANCH_CLAUSES.has(anchorChild.type) &&
    BRANCH_CLAUSES.has(otherChild.type)
  ) {
    return false;
  }
  if (other.start < anchor.start) return true;
  // A `return` or `raise` after the anchor, in a block around it that the other place lies beyond, ends the path.
  for (let n: PyNode | null = anchor; n && n !== common; n = n.parent) {
    const block = n.parent;
    if (!block || (block.type !== 'block' && block.type !== 'module')) continue;
    for (const stmt of named(block)) {
      if (stmt.start > n.start && stmt.end <= other.start && EXITS.has(stmt.type)) return false;
    }
  }
  return true;
}
