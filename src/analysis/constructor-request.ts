// What a method asks of its class's constructor: the `__init__` parameter whose value it needs, and what the
// argument passed there denotes. group-sizes.ts asks (through a ConstructorArgument callback) and
// class-summaries.ts answers from the construction sites, so the shapes live here, below both.
import { child } from './tree';
import type { FunctionInfo, FileModel } from './scope';
import type { Dims } from './dims';

/** What an argument denotes, when the file that passes it can name it. */
export interface ArgumentDenotation {
  /** The parallel dimensions of the process group the argument is. */
  readonly group?: Dims;
  /** The parallel dimensions of the size (or the product of sizes) the argument is. */
  readonly size?: Dims;
  /**
   * What each construction site of the class passes, in the same order for every parameter of the class, when
   * every site names it: a class built twice (a buffer for the dense gradients and one for the expert gradients)
   * keeps each object's group and factor together, even where the sites disagree.
   */
  readonly bySite?: readonly { readonly group?: Dims; readonly size?: Dims }[];
}

/** A constructor parameter whose value a method of the class needs. */
export interface ConstructorRequest {
  readonly className: string;
  readonly param: string;
  /** Its position among the call's arguments; undefined when it can only be passed by keyword. */
  readonly position: number | undefined;
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
