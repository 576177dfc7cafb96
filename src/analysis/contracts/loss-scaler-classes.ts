// Autograd loss scalers, read from one file's syntax tree: a `torch.autograd.Function` whose `forward(ctx, output,
// loss)` saves the loss and returns the activation unchanged, and whose `backward` returns the loss's gradient
// multiplied by a class attribute (`torch.ones_like(loss) * Scaler.main_loss_backward_scale`). Attaching a loss to an
// activation this way adds it to the graph of whatever the activation reaches, and the gradient it receives in
// backward is that attribute, not the gradient of the loss that runs backward: a training loop that accumulates K
// micro-batches must set the attribute itself (Megatron's `MoEAuxLossAutoScaler`, `MTPLossAutoScaler`,
// `DSAIndexerLossAutoScaler`). Only the exact shape is read: the attribute written nowhere in the class but in its
// default, a lazy default of one in `backward`, and setters that store their parameter.
import type { Parser } from 'web-tree-sitter';
import { parseModule } from '../parse';
import { child, named, unparen, visit, type PyNode, type Source } from '../tree';
import type { SourceRange } from '../types';

export interface ScalerClass {
  readonly name: string;
  /** The class attribute `backward` multiplies the loss's gradient by. */
  readonly attribute: string;
  /** Static methods that store their parameter in the attribute (`set_loss_scale`). */
  readonly setters: readonly string[];
  /** The scale before any setter runs is one: a class default of 1, or None with `backward` setting 1. */
  readonly defaultOne: boolean;
  readonly range: SourceRange;
  /** The multiplication in `backward`. */
  readonly scaleRange: SourceRange;
}

const PARSE_BUDGET_MS = 5_000;
const FUNCTION_BASE = /^(torch\.autograd\.|autograd\.)?Function$/;

/** Files worth parsing for scalers: they define a class on an autograd `Function` with a `backward`. */
export function mayDefineScaler(text: string): boolean {
  return /\bclass\s+\w+\s*\([^)]*Function\s*\)\s*:/.test(text) && /def\s+backward\s*\(/.test(text);
}

export function readScalerClasses(parser: Parser, text: string): ScalerClass[] {
  if (!mayDefineScaler(text)) return [];
  // A bare `Function` base counts only where the file imports it from torch.autograd.
  const bareFunction = /from\s+torch\.autograd(\.function)?\s+import\s+[^\n]*\bFunction\b/.test(text);
  const out: ScalerClass[] = [];
  // Only the top-level classes on a `Function` are parsed, each alone: files that define autograd functions are
  // often long (kernels, fused layers), and the class is all the shape needs.
  for (const header of text.matchAll(/^class\s+\w+\s*\([^)]*Function\s*\)\s*:/gm)) {
    const start = header.index;
    const next = /\n(?=[^\s#])/g;
    next.lastIndex = start + header[0].length;
    const end = next.exec(text)?.index ?? text.length;
    const parsed = parseModule(parser, text.slice(start, end), PARSE_BUDGET_MS, Number.POSITIVE_INFINITY);
    if (!('module' in parsed)) continue;
    const lines = text.slice(0, start).split('\n').length - 1;
    for (const cls of named(parsed.module)) {
      const scaler = cls.type === 'class_definition' ? readClass(cls, parsed.source, bareFunction) : undefined;
      if (scaler)
        out.push({ ...scaler, range: shifted(scaler.range, lines), scaleRange: shifted(scaler.scaleRange, lines) });
    }
  }
  return out;
}

/** A range read in a class's own text, placed at the class's line in the file (the class starts at column 0). */
function shifted(range: SourceRange, lines: number): SourceRange {
  return { ...range, startLine: range.startLine + lines, endLine: range.endLine + lines };
}

function readClass(cls: PyNode, source: Source, bareFunction: boolean): ScalerClass | undefined {
  const nameNode = child(cls, 'name');
  const bases = child(cls, 'superclasses');
  const body = child(cls, 'body');
  if (!nameNode || !bases || !body) return undefined;
  const baseTexts = named(bases).map((b) => compact(source, b));
  if (!baseTexts.some((b) => FUNCTION_BASE.test(b) && (b !== 'Function' || bareFunction))) return undefined;
  const name = source.textOf(nameNode);
  const methods = new Map<string, PyNode>();
  const fields = new Map<string, PyNode>();
  for (const statement of named(body)) {
    const def = statement.type === 'decorated_definition' ? child(statement, 'definition') : statement;
    if (def?.type === 'function_definition') {
      const methodName = child(def, 'name');
      if (methodName) methods.set(source.textOf(methodName), def);
      continue;
    }
    const a = statement.type === 'expression_statement' ? named(statement)[0] : undefined;
    const left = a?.type === 'assignment' ? child(a, 'left') : undefined;
    const right = a ? child(a, 'right') : undefined;
    if (left?.type === 'identifier' && right) fields.set(source.textOf(left), right);
  }
  const forward = methods.get('forward');
  const backward = methods.get('backward');
  if (!forward || !backward || !returnsActivation(forward, source)) return undefined;
  const scale = backwardScale(backward, name, source);
  if (!scale) return undefined;
  const classDefault = fields.get(scale.attribute);
  if (!classDefault) return undefined;
  const qualified = `${name}.${scale.attribute}`;
  const setters: string[] = [];
  let lazyOne = false;
  for (const [methodName, def] of methods) {
    const writes = attributeWrites(def, qualified, source);
    if (writes.length === 0) continue;
    // A forward that sets the scale from its arguments is set on every `apply`: not the shape read here.
    if (def === forward) return undefined;
    if (def === backward) {
      // `if Scaler.scale is None: Scaler.scale = torch.tensor(1.0, …)` is the lazy default; nothing else may write.
      if (!writes.every((w) => w.kind === 'assign' && isOne(w.value, source))) return undefined;
      lazyOne = true;
      continue;
    }
    const parameters = parameterNames(def, source);
    if (!writes.every((w) => w.value.type === 'identifier' && parameters.includes(source.textOf(w.value))))
      return undefined;
    setters.push(methodName);
  }
  const defaultText = compact(source, classDefault);
  return {
    name,
    attribute: scale.attribute,
    setters,
    defaultOne: isOne(classDefault, source) || (defaultText === 'None' && lazyOne),
    range: source.range(nameNode),
    scaleRange: scale.range,
  };
}

/** `forward(ctx, output, loss, …)` returns `output`, a parameter, unchanged: the loss rides on the activation. */
function returnsActivation(def: PyNode, source: Source): boolean {
  const parameters = parameterNames(def, source);
  if (parameters.length < 3) return false;
  const returns: PyNode[] = [];
  visit(child(def, 'body') ?? def, (n) => {
    if (n.type === 'function_definition' || n.type === 'class_definition') return false;
    if (n.type === 'return_statement') returns.push(n);
    return true;
  });
  return (
    returns.length > 0 &&
    returns.every((r) => {
      const value = named(r)[0];
      return value !== undefined && unparen(value).type === 'identifier' && source.textOf(value) === parameters[1];
    })
  );
}

/**
 * The attribute of `cls` that a returned gradient is multiplied by: `return grad_output, scaled` with `scaled =
 * torch.ones_like(loss) * s` and `s = Scaler.attribute` (or the product written in the return).
 */
function backwardScale(
  def: PyNode,
  cls: string,
  source: Source,
): { attribute: string; range: SourceRange } | undefined {
  const body = child(def, 'body');
  if (!body) return undefined;
  const locals = new Map<string, PyNode[]>();
  const returns: PyNode[] = [];
  visit(body, (n) => {
    if (n.type === 'function_definition' || n.type === 'class_definition') return false;
    if (n.type === 'return_statement') returns.push(n);
    const left = n.type === 'assignment' ? child(n, 'left') : undefined;
    const right = n.type === 'assignment' ? child(n, 'right') : undefined;
    if (left?.type === 'identifier' && right) {
      const list = locals.get(source.textOf(left)) ?? [];
      locals.set(source.textOf(left), [...list, right]);
    }
    return true;
  });
  // A local counts only when it is assigned once: anything else may mean another value reaches the return.
  const resolve = (n: PyNode, depth: number): PyNode => {
    const u = unparen(n);
    const values = u.type === 'identifier' ? locals.get(source.textOf(u)) : undefined;
    return values?.length === 1 && depth < 3 ? resolve(values[0], depth + 1) : u;
  };
  const attributeOf = (n: PyNode): string | undefined => {
    const r = resolve(n, 0);
    if (r.type !== 'attribute') return undefined;
    const object = child(r, 'object');
    const attribute = child(r, 'attribute');
    return object && attribute && source.textOf(object) === cls ? source.textOf(attribute) : undefined;
  };
  for (const ret of returns) {
    const value = named(ret)[0];
    if (!value) continue;
    const v = unparen(value);
    const items = v.type === 'expression_list' || v.type === 'tuple' ? named(v) : [v];
    for (const item of items) {
      const product = resolve(item, 0);
      if (product.type !== 'binary_operator' || operator(product, source) !== '*') continue;
      for (const side of [child(product, 'left'), child(product, 'right')]) {
        const attribute = side ? attributeOf(side) : undefined;
        if (attribute) return { attribute, range: source.range(product) };
      }
    }
  }
  return undefined;
}

interface Write {
  readonly kind: 'assign' | 'copy';
  readonly value: PyNode;
}

/** `Scaler.attribute = v` and `Scaler.attribute.copy_(v)` in a method; any other call on it is a write of unknown value. */
function attributeWrites(def: PyNode, qualified: string, source: Source): Write[] {
  const out: Write[] = [];
  visit(def, (n) => {
    if (n.type === 'assignment' || n.type === 'augmented_assignment') {
      const left = child(n, 'left');
      const right = child(n, 'right');
      if (left && compact(source, left) === qualified)
        out.push({ kind: n.type === 'assignment' && right ? 'assign' : 'copy', value: right ?? n });
    }
    if (n.type === 'call') {
      const callee = child(n, 'function');
      const text = callee ? compact(source, callee) : '';
      if (text.startsWith(`${qualified}.`) && !/\.(item|size|numel|dim|detach|clone|to)$/.test(text)) {
        const arg = named(child(n, 'arguments') ?? n)[0];
        // Only `copy_(parameter)` stores a value a caller chose; `mul_`, `fill_`… are not a setter's shape.
        out.push({ kind: 'copy', value: text.endsWith('.copy_') && arg ? arg : n });
      }
    }
    return true;
  });
  return out;
}

function parameterNames(def: PyNode, source: Source): string[] {
  const parameters = child(def, 'parameters');
  if (!parameters) return [];
  return named(parameters).map((p) => {
    const n = p.type === 'identifier' ? p : (child(p, 'name') ?? named(p)[0]);
    return n ? source.textOf(n) : '';
  });
}

/** `1`, `1.0`, `torch.tensor(1.0, device=…)`, `torch.ones(1)`: a scale of one. */
function isOne(n: PyNode, source: Source): boolean {
  const v = unparen(n);
  if (v.type === 'integer' || v.type === 'float') return Number(source.textOf(v)) === 1;
  if (v.type !== 'call') return false;
  const callee = compact(source, child(v, 'function') ?? v);
  const first = named(child(v, 'arguments') ?? v)[0];
  if (!first || (first.type !== 'integer' && first.type !== 'float') || Number(source.textOf(first)) !== 1)
    return false;
  return callee === 'torch.tensor' || callee === 'torch.ones';
}

export function operator(n: PyNode, source: Source): string {
  const op = child(n, 'operator') ?? n.children.find((c) => !c.named);
  return op ? source.textOf(op) : '';
}

export function compact(source: Source, n: PyNode): string {
  return source.textOf(n).replace(/\s+/g, '');
}
