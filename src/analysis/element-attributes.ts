// An attribute read from the elements of a list the object was built with: Megatron's bucket group scales each
// bucket by its own factor (`for bucket in self.buckets: bucket.grad_data *= bucket.gradient_scaling_factor`), and
// the group was built with `buckets: List[_ParamAndGradBucket]`. The attribute is the element class's constructor
// parameter that `__init__` stores in it, and what it denotes is what the construction sites of the outer class put
// in the list (class-links.ts reads the elements built at each site). Every step must be proven: the list is the
// constructor's argument, never grown or replaced after; the loop variable is not rebound; the annotation names a
// class of this file; and that class stores the attribute from a parameter, and nothing else in the file writes it.
import { child, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { Env } from './sizes';
import { constructorRequest, type ConstructorRequest } from './constructor-request';
import { builtElementParam, classInit, related, storedParameter } from './built-elements';
import { elementsArgument, type PassedArgument } from './listed-elements';

/** `List[C]`, `list[C]`, `Sequence[C]`, `Iterable[C]`, `Tuple[C, ...]`, with or without `typing.`. */
const LIST_OF = /^(?:typing\.)?(?:List|list|Sequence|Iterable|Tuple|tuple)\[(\w+)(?:,\.\.\.)?\]$/;

/**
 * The request for what the sites of the enclosing class pass for an element attribute read as `x.attr`, where `x`
 * is the variable of a `for x in self.items:` loop around the read; undefined when any step is not proven.
 */
export function elementRequest(
  model: FileModel,
  n: PyNode,
  env: Env,
): { init: FunctionInfo; request: ConstructorRequest } | { bound: PassedArgument; callSite?: PyNode } | undefined {
  const s = model.syntax;
  const object = child(n, 'object');
  const attribute = child(n, 'attribute');
  if (n.type !== 'attribute' || object?.type !== 'identifier' || !attribute) return undefined;
  const variable = s.text(object);
  const items = loopIterable(model, n, variable);
  if (!items || items.type !== 'attribute' || !/^self\.\w+$/.test(s.text(items))) return undefined;
  if (env.fn.assignments.some((a) => targetText(model, a) === variable)) return undefined;
  // The list is the constructor's argument, stored once and never grown, replaced or written through; or the
  // object builds it itself in `__init__` (built-elements.ts), and the attribute is one of its own parameters.
  const stored = model.valuesSeenBy(s.text(items), env.fn);
  const init = stored[0]?.fn;
  if (init?.name === '__init__' && stored.length === 1 && stored[0].value.type === 'list') {
    const own = builtElementParam(model, init, s.text(items), s.text(attribute));
    const request = own ? constructorRequest(model, init, own) : undefined;
    return request ? { init, request } : undefined;
  }
  const param = stored.length === 1 && stored[0].value.type === 'identifier' ? s.text(stored[0].value) : undefined;
  if (!init || init.name !== '__init__' || !param || rebinds(model, init, param)) return undefined;
  if (mutated(model, s.text(items), undefined, init.className) || mutated(model, param, init)) return undefined;
  // An object built in view, with the list it was given: its elements' attribute is what they were built with.
  const given = env.instance?.get(param);
  const bound =
    given && !given.isDefault ? elementsArgument(model, given.node, given.env, s.text(attribute)) : undefined;
  if (bound) return { bound, callSite: given?.callSite };
  const elementClass = listElementClass(model, init, param);
  const elementInit = elementClass ? classInit(model, elementClass) : undefined;
  const elementParam = elementInit ? storedParameter(model, elementInit, s.text(attribute)) : undefined;
  if (!elementInit || !elementParam) return undefined;
  const outer = constructorRequest(model, init, param);
  const element = constructorRequest(model, elementInit, elementParam);
  return outer && element ? { init, request: { ...outer, element } } : undefined;
}

/** A parameter the constructor rebinds (`if group is None: group = ...`) is not what the callers passed. */
export function rebinds(model: FileModel, init: FunctionInfo, param: string): boolean {
  return init.assignments.some((a) => targetText(model, a) === param);
}

function targetText(model: FileModel, assignment: PyNode): string | undefined {
  const left = child(assignment, 'left');
  return left?.type === 'identifier' ? model.syntax.text(left) : undefined;
}

/** The iterable of the innermost `for <variable> in <iterable>:` whose body holds the node, in its function. */
function loopIterable(model: FileModel, n: PyNode, variable: string): PyNode | undefined {
  for (let at: PyNode | null = n; at && at.parent; at = at.parent) {
    const p: PyNode = at.parent;
    if (p.type === 'function_definition' || p.type === 'class_definition') return undefined;
    if (p.type !== 'for_statement' || at.field !== 'body') continue;
    const left = child(p, 'left');
    if (left?.type === 'identifier' && model.syntax.text(left) === variable) return child(p, 'right') ?? undefined;
  }
  return undefined;
}

/**
 * The list is grown, emptied or written through (`.append(`, `+=`, `[i] =`), in the function, or in the methods
 * that may run on an object of `owner` (a buffer's own `self.buckets` in another class of the file is another list).
 */
function mutated(model: FileModel, text: string, fn?: FunctionInfo, owner?: string): boolean {
  const name = text.replace(/\./g, '\\.');
  const change = new RegExp(
    `(?<![\\w.])${name}\\s*(?:\\.\\s*(?:append|extend|insert|pop|remove|clear)\\s*\\(|\\+=|\\[[^\\]]*\\]\\s*=(?!=))`,
  );
  if (fn) return change.test(model.syntax.text(fn.node));
  if (!owner) return change.test(model.syntax.source.text);
  return model.functions.some(
    (f) =>
      f.node.type === 'function_definition' &&
      (!f.className || related(model, f.className, owner)) &&
      change.test(model.syntax.text(f.node)),
  );
}

/** The class a constructor parameter's annotation says its list holds. */
function listElementClass(model: FileModel, init: FunctionInfo, param: string): string | undefined {
  const node = init.params.find((p) => p.name === param)?.node;
  const type = node ? child(node, 'type') : undefined;
  return type ? LIST_OF.exec(model.syntax.text(type).replace(/\s+/g, ''))?.[1] : undefined;
}
