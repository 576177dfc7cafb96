// From text to the copied module tree: which statements to parse (select.ts), the parse under a time budget, and
// what happens when tree-sitter reports an error. A statement that does not parse is parsed again after the
// rewrites of repair.ts (valid Python that tree-sitter-python misreads); one that still fails is left out and
// named, so the rest of the file is analysed from a tree without error-recovery guesses in it.
import type { Node, Parser, Range, Tree } from 'web-tree-sitter';
import { copyModule, Source, type PyNode } from './tree';
import { repairKnownGaps } from './repair';
import { selectUnits, splitTopLevel, type Unit } from './select';
import type { Unanalysed } from './types';

export interface ParsedModule {
  readonly module: PyNode;
  readonly source: Source;
  readonly unanalysed: Unanalysed[];
}

/** Above this size only the relevant top-level statements are parsed (tree-sitter's included ranges). */
export const SPLIT_ABOVE_CHARS = 20_000;

export function parseModule(
  parser: Parser,
  text: string,
  budgetMs: number,
  splitAbove: number,
): ParsedModule | Unanalysed {
  let units: Unit[] | undefined;
  if (text.length > splitAbove) {
    const all = splitTopLevel(text);
    const keep = selectUnits(text, all);
    units = all.filter((_, i) => keep[i]);
  }
  return parseUnits(parser, text, budgetMs, units);
}

/**
 * Parses only the given top-level statements (splitTopLevel), or the whole text when `units` is undefined; the nodes
 * keep their offsets in the whole text.
 */
export function parseUnits(
  parser: Parser,
  text: string,
  budgetMs: number,
  units: readonly Unit[] | undefined,
): ParsedModule | Unanalysed {
  const deadline = Date.now() + budgetMs;
  const source = new Source(text);
  const module: PyNode = {
    type: 'module',
    named: true,
    field: null,
    start: 0,
    end: text.length,
    children: [],
    parent: null,
  };
  if (units?.length === 0) return { module, source, unanalysed: [] };
  const timedOut: Unanalysed = {
    reason: 'parse-budget',
    whole: true,
    message: `parsing took longer than ${budgetMs} ms; skipped`,
  };
  const parse = (input: string, ranges: readonly Unit[] | undefined): Tree | undefined => {
    // A cancelled parse is resumed by the next parse() call unless the parser is reset, so always start fresh.
    parser.reset();
    const tree =
      parser.parse(input, null, {
        includedRanges: ranges ? toRanges(source, ranges) : undefined,
        progressCallback: () => Date.now() > deadline,
      }) ?? undefined;
    if (!tree) parser.reset();
    return tree;
  };
  let tree = parse(text, units);
  if (!tree) return timedOut;
  const unanalysed: Unanalysed[] = [];
  if (tree.rootNode.hasError) {
    tree.delete();
    const split = splitErrors(parse, text, units ?? splitTopLevel(text));
    if (!split) return timedOut;
    if (split.bad.length > 0) unanalysed.push(syntaxErrors(split.bad, source));
    if (split.good.length === 0) return { module, source, unanalysed };
    tree = parse(split.text, split.good);
    if (!tree) return timedOut;
  }
  try {
    const { truncated } = copyModule(tree, parser.language!, module);
    if (truncated)
      unanalysed.push({
        reason: 'too-deep',
        whole: false,
        message: 'some expressions are nested too deeply to analyse; they were skipped',
      });
    return { module, source, unanalysed };
  } finally {
    tree.delete();
  }
}

interface BadUnit {
  readonly unit: Unit;
  /** Where tree-sitter first reported the error (an offset). */
  readonly at: number;
}

/**
 * Parses each statement on its own, so an error cannot spill into its neighbours through error recovery: those
 * that parse as written or after repairKnownGaps are kept (the repaired text replaces theirs), the others are
 * returned as bad. Only files whose whole parse has an error come here.
 */
function splitErrors(
  parse: (input: string, ranges: readonly Unit[]) => Tree | undefined,
  text: string,
  units: readonly Unit[],
): { text: string; good: Unit[]; bad: BadUnit[] } | undefined {
  let repaired = text;
  const good: Unit[] = [];
  const bad: BadUnit[] = [];
  for (const unit of units) {
    const tree = parse(text, [unit]);
    if (!tree) return undefined;
    const error = firstError(tree);
    tree.delete();
    if (error === undefined) {
      good.push(unit);
      continue;
    }
    const attempt = repairKnownGaps(text, unit.start, unit.end);
    const again = attempt === text ? undefined : parse(attempt, [unit]);
    if (again && !again.rootNode.hasError) {
      repaired = repaired.slice(0, unit.start) + attempt.slice(unit.start, unit.end) + repaired.slice(unit.end);
      good.push(unit);
    } else {
      bad.push({ unit, at: error });
    }
    again?.delete();
  }
  return { text: repaired, good, bad };
}

/** The offset of the first ERROR or MISSING node, or undefined when the tree has none. */
function firstError(tree: Tree): number | undefined {
  let node: Node | null = tree.rootNode;
  if (!node.hasError) return undefined;
  for (;;) {
    const next: Node | undefined = node.children.find((c): c is Node => c !== null && (c.hasError || c.isMissing));
    if (!next) return node.startIndex;
    if (next.isError || next.isMissing) return next.startIndex;
    node = next;
  }
}

function syntaxErrors(bad: readonly BadUnit[], source: Source): Unanalysed {
  const line = (offset: number) => source.position(offset).line + 1;
  const lastLine = (u: Unit) => line(Math.max(u.start, u.end - 1));
  const spans = bad.map((b) =>
    line(b.unit.start) === lastLine(b.unit) ? `${line(b.unit.start)}` : `${line(b.unit.start)}-${lastLine(b.unit)}`,
  );
  const shown =
    spans.length > 3 ? `${spans.slice(0, 3).join(', ')} and ${spans.length - 3} more statements` : spans.join(', ');
  const first = source.position(bad[0].at).line;
  const at =
    bad.length === 1
      ? `line ${first + 1}`
      : `lines ${bad
          .map((b) => line(b.at))
          .slice(0, 3)
          .join(', ')}${bad.length > 3 ? ', ...' : ''}`;
  return {
    reason: 'syntax-error',
    whole: false,
    line: first,
    message: `syntax error at ${at}: lines ${shown} not analysed; findings come from the rest of the file`,
  };
}

function toRanges(source: Source, units: readonly Unit[]): Range[] {
  return units.map((u) => {
    const a = source.position(u.start);
    const b = source.position(u.end);
    return {
      startIndex: u.start,
      endIndex: u.end,
      startPosition: { row: a.line, column: a.column },
      endPosition: { row: b.line, column: b.column },
    };
  });
}
