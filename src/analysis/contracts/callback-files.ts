// One file as the micro-batch schedule contract reads it (callback-schedule.ts): its top-level functions, the names
// it imports from other modules, and the calls at module level (the training script's `pretrain(…, forward_step)`).
// With these, a function passed as an argument is followed to the parameter it binds, and a call to the function
// that parameter holds, across files.
import type { Parser } from 'web-tree-sitter';
import { parseUnits } from '../parse';
import { splitTopLevel } from '../select';
import { child, named, visit, type PyNode, type Source } from '../tree';

export interface CallbackFile {
  readonly source: Source;
  readonly module: PyNode;
  /** Top-level functions by name; a name defined twice is left out (which one runs is unknown). */
  readonly functions: ReadonlyMap<string, PyNode>;
  /** `from M import name as local`: local name → the module as written and the imported name. */
  readonly imports: ReadonlyMap<string, { readonly module: string; readonly name: string }>;
  /** Calls made outside every function and class (the script's entry, also under `if __name__ == …`). */
  readonly moduleCalls: readonly PyNode[];
  /** The text of the top-level classes left unparsed: a reader of calls must treat calls written there as unknown. */
  readonly unparsedText: string;
}

const PARSE_BUDGET_MS = 5_000;

/**
 * A class's body holds nothing this contract reads (only top-level functions, imports and calls outside classes), so
 * the top-level classes are not parsed: in training scripts they are most of the text (models, datasets).
 */
export function readCallbackFile(parser: Parser, text: string): CallbackFile | undefined {
  const units = unitsOutsideClasses(text);
  const parsed = parseUnits(parser, text, PARSE_BUDGET_MS, units);
  if (!('module' in parsed)) return undefined;
  const { module, source } = parsed;
  const functions = new Map<string, PyNode>();
  const twice = new Set<string>();
  const imports = new Map<string, { module: string; name: string }>();
  const moduleCalls: PyNode[] = [];
  visit(module, (n) => {
    if (n.type === 'function_definition') {
      const top = n.parent?.type === 'decorated_definition' ? n.parent.parent : n.parent;
      if (top?.type === 'module') {
        const name = source.textOf(child(n, 'name') ?? n);
        if (functions.has(name)) twice.add(name);
        functions.set(name, n);
      }
      return false;
    }
    if (n.type === 'class_definition' || n.type === 'lambda') return false;
    if (n.type === 'import_from_statement') {
      const from = child(n, 'module_name');
      for (const item of n.children.filter((c) => c.field === 'name')) {
        const name = item.type === 'aliased_import' ? child(item, 'name') : item;
        const alias = item.type === 'aliased_import' ? child(item, 'alias') : item;
        if (from && name && alias)
          imports.set(source.textOf(alias), { module: source.textOf(from), name: source.textOf(name) });
      }
      return false;
    }
    if (n.type === 'call') moduleCalls.push(n);
    return true;
  });
  for (const name of twice) functions.delete(name);
  return { source, module, functions, imports, moduleCalls, unparsedText: unparsedText(text, units) };
}

/** The text outside the kept units (the classes' text), empty when the whole text was parsed. */
function unparsedText(text: string, kept: ReturnType<typeof splitTopLevel> | undefined): string {
  if (!kept) return '';
  let out = '';
  let at = 0;
  for (const unit of kept) {
    out += text.slice(at, unit.start);
    at = unit.end;
  }
  return out + text.slice(at);
}

/**
 * The top-level statements other than undecorated class definitions; undefined (the whole text) when there is no such
 * class. A decorated class is kept: its decorator may span lines, and reading where the class starts is not worth it.
 */
function unitsOutsideClasses(text: string): ReturnType<typeof splitTopLevel> | undefined {
  if (!/^class\s/m.test(text)) return undefined;
  const units = splitTopLevel(text);
  const kept = units.filter((u) => !isClassUnit(text, u));
  return kept.length === units.length ? undefined : kept;
}

function isClassUnit(text: string, unit: { start: number; end: number }): boolean {
  return /^class\s/.test(text.slice(unit.start, unit.end).replace(/^(?:[ \t]*#[^\n]*\n)*/, ''));
}

/**
 * The top-level classes that readCallbackFile left unparsed, parsed on their own (their nodes keep their offsets in
 * the whole text), for a reader that found a name it follows called in them. Undefined when they do not parse.
 */
export function readClassUnits(parser: Parser, text: string): PyNode | undefined {
  const classes = splitTopLevel(text).filter((u) => isClassUnit(text, u));
  const parsed = parseUnits(parser, text, PARSE_BUDGET_MS, classes);
  return 'module' in parsed && parsed.unanalysed.length === 0 ? parsed.module : undefined;
}

/** The parameters a caller's arguments bind, in order; undefined past `*args`/`**kwargs` (positions are unknown). */
export function parameterNames(def: PyNode, source: Source): (string | undefined)[] {
  const params = child(def, 'parameters');
  if (!params) return [];
  return named(params).map((p) => {
    if (p.type === 'identifier') return source.textOf(p);
    if (p.type === 'default_parameter' || p.type === 'typed_default_parameter')
      return source.textOf(child(p, 'name') ?? p);
    if (p.type === 'typed_parameter') {
      const id = named(p).find((c) => c.type === 'identifier');
      return id ? source.textOf(id) : undefined;
    }
    return undefined;
  });
}

/** The argument nodes of a call, positional (in order) and by keyword; undefined when a `*`/`**` splat is passed. */
export function callArguments(
  call: PyNode,
  source: Source,
): { positional: PyNode[]; keywords: Map<string, PyNode> } | undefined {
  const list = child(call, 'arguments');
  if (!list || list.type !== 'argument_list') return undefined;
  const positional: PyNode[] = [];
  const keywords = new Map<string, PyNode>();
  for (const a of named(list)) {
    if (a.type === 'list_splat' || a.type === 'dictionary_splat') return undefined;
    if (a.type === 'keyword_argument') {
      const name = child(a, 'name');
      const value = child(a, 'value');
      if (name && value) keywords.set(source.textOf(name), value);
    } else positional.push(a);
  }
  return { positional, keywords };
}

/**
 * Which of the callee's parameters each bare name among the call's arguments binds (name → parameter names); a
 * bare name passed where the parameter cannot be told (past a splat, an unknown keyword) binds `undefined`.
 */
export function boundParameters(
  call: PyNode,
  def: PyNode,
  calleeSource: Source,
  callerSource: Source,
): Map<string, (string | undefined)[]> | undefined {
  const args = callArguments(call, callerSource);
  if (!args) return undefined;
  const params = parameterNames(def, calleeSource);
  const out = new Map<string, (string | undefined)[]>();
  const add = (arg: PyNode, param: string | undefined) => {
    if (arg.type !== 'identifier') return;
    const name = callerSource.textOf(arg);
    out.set(name, [...(out.get(name) ?? []), param]);
  };
  args.positional.forEach((a, i) => add(a, params[i]));
  for (const [keyword, value] of args.keywords) add(value, params.includes(keyword) ? keyword : undefined);
  return out;
}

/** The statements of a function's body and everything under them, without nested functions, classes and lambdas. */
export function visitBody(def: PyNode, enter: (n: PyNode) => boolean | void): void {
  const body = child(def, 'body');
  if (!body) return;
  visit(body, (n) => {
    if (n.type === 'function_definition' || n.type === 'class_definition' || n.type === 'lambda') return false;
    return enter(n);
  });
}

/** Every assignment target name of a function, with the node that assigns it (for loops and `with … as` included). */
export function assignedNames(def: PyNode, source: Source): Map<string, PyNode[]> {
  const out = new Map<string, PyNode[]>();
  const add = (target: PyNode, at: PyNode) =>
    visit(target, (t) => {
      if (t.type === 'identifier') out.set(source.textOf(t), [...(out.get(source.textOf(t)) ?? []), at]);
      return t.type !== 'attribute' && t.type !== 'subscript';
    });
  visitBody(def, (n) => {
    if (n.type === 'assignment' || n.type === 'augmented_assignment') {
      const left = child(n, 'left');
      if (left) add(left, n);
    } else if (n.type === 'for_statement' || n.type === 'for_in_clause') {
      const left = child(n, 'left');
      if (left) add(left, n);
    } else if (n.type === 'as_pattern' || n.type === 'named_expression') {
      const target = child(n, 'alias') ?? child(n, 'name');
      if (target) add(target, n);
    }
    return true;
  });
  return out;
}
