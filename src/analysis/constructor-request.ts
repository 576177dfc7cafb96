// What a method asks of its class's constructor: the `__init__` parameter whose value it needs, and what the
// argument passed there denotes. group-sizes.ts asks (through a ConstructorArgument callback) and
// class-summaries.ts answers from the construction sites, so the shapes live here, below both.
import { child, type PyNode } from './tree';
import type { FunctionInfo, FileModel } from './scope';
import type { Dims } from './dims';
import type { SourceRange } from './types';

/** A place in one of the program's files; `file` is absent while the place is in the file that reads it. */
export interface ProgramPlace {
  readonly file?: string;
  readonly range: SourceRange;
  /** The statement or call as written, clipped, for messages. */
  readonly text: string;
  /** The `if` tests the place runs under in its function, with the branch taken (flag-choice.ts). */
  readonly under?: readonly BranchTest[];
}

/** `if self.cfg.flag:` (holds: true) or its `else:` (holds: false), the test as written without spaces. */
export interface BranchTest {
  readonly test: string;
  readonly holds: boolean;
}

/**
 * Where a value passed to a constructor was chosen (the assignment that picked it, or the argument itself when it
 * is written there), with the construction sites it was then passed through, the first site first: the place a user
 * fixes a wrong factor is where it was chosen, not where the object that received it applies it.
 */
export interface ValueOrigin extends ProgramPlace {
  readonly through: readonly ProgramPlace[];
}

/** What an argument denotes, when the file that passes it can name it. */
export interface ArgumentDenotation {
  /** The parallel dimensions of the process group the argument is. */
  readonly group?: Dims;
  /** The parallel dimensions of the size (or the product of sizes) the argument is. */
  readonly size?: Dims;
  /** The parallel dimensions of every group in the dict of process groups the argument is. */
  readonly groupDict?: Dims;
  /**
   * What each construction site of the class passes, in the same order for every parameter of the class, when
   * every site names it: a class built twice (a buffer for the dense gradients and one for the expert gradients)
   * keeps each object's group and factor together, even where the sites disagree.
   */
  readonly bySite?: readonly {
    readonly group?: Dims;
    readonly size?: Dims;
    readonly groupDict?: Dims;
    readonly origin?: ValueOrigin;
    /** A function's site read with a call in view: it may name nothing, and then builds nothing judged here. */
    readonly perCall?: boolean;
  }[];
  /** Where the value every site passes was chosen, when they all pass one chosen at the same place. */
  readonly origin?: ValueOrigin;
  /**
   * A list written at the site whose every element is built there (`[Bucket(grads, factor)]`): each element's class
   * and what its arguments denote, so a method that reads an attribute of the list's elements can be answered.
   */
  readonly elements?: readonly ElementSite[];
}

/** One element of a list argument, built at the site: its class as the site names it, and its arguments. */
export interface ElementSite {
  readonly module?: string;
  readonly name: string;
  readonly positional: readonly (ArgumentDenotation | undefined)[];
  readonly keywords: ReadonlyMap<string, ArgumentDenotation | undefined>;
}

/** A node of the file being read as a place (the program names its file when it links the sites). */
export function placeOf(model: FileModel, node: PyNode): ProgramPlace {
  const text = model.syntax.text(node).replace(/\s+/g, ' ').trim();
  const place = { range: model.syntax.source.range(node), text: text.length > 60 ? `${text.slice(0, 59)}…` : text };
  const under = branchTests(model, node);
  return under.length > 0 ? { ...place, under } : place;
}

/** The tests of the `if` statements (without `elif`) that enclose a node in its function, innermost first. */
export function branchTests(model: FileModel, node: PyNode): BranchTest[] {
  const out: BranchTest[] = [];
  for (let n: PyNode | null = node; n && n.parent; n = n.parent) {
    const p = n.parent;
    if (p.type === 'function_definition' || p.type === 'class_definition') break;
    const statement = p.type === 'else_clause' ? p.parent : p;
    if (statement?.type !== 'if_statement' || statement.children.some((c) => c.type === 'elif_clause')) continue;
    const condition = child(statement, 'condition');
    if (!condition || (p === statement && n.field !== 'consequence')) continue;
    out.push({ test: model.syntax.text(condition).replace(/\s+/g, ''), holds: p === statement });
  }
  return out;
}

/** A constructor parameter whose value a method of the class needs. */
export interface ConstructorRequest {
  readonly className: string;
  readonly param: string;
  /** Its position among the call's arguments; undefined when it can only be passed by keyword. */
  readonly position: number | undefined;
  /**
   * The parameter is a list, and what is asked is the constructor parameter of its elements' class that an attribute
   * of the elements holds (`for bucket in self.buckets: bucket.gradient_scaling_factor`).
   */
  readonly element?: Omit<ConstructorRequest, 'element'>;
}

export type ConstructorArgument = (request: ConstructorRequest) => ArgumentDenotation | undefined;

/** The request for the `__init__` parameter `param` of `init`'s class. */
export function constructorRequest(
  model: FileModel,
  init: FunctionInfo,
  param: string,
): ConstructorRequest | undefined {
  if (!init.className || init.enclosing?.node.type !== 'module') return undefined;
  const params = model.callableParams(init);
  const position = params.findIndex((p) => p.name === param);
  if (position < 0) return undefined;
  return { className: init.className, param, position: keywordOnlyFrom(init) > position ? position : undefined };
}

/** The position of the first keyword-only parameter (after `*` or `*args`), among the callable parameters. */
function keywordOnlyFrom(init: FunctionInfo): number {
  const list = child(init.node, 'parameters');
  let position = -1;
  for (const p of list?.children ?? []) {
    if (p.type === 'list_splat_pattern' || p.type === 'keyword_separator' || p.type === 'dictionary_splat_pattern')
      return Math.max(0, position);
    if (p.type === 'identifier' || p.type.endsWith('parameter')) position++;
  }
  return Number.POSITIVE_INFINITY;
}
