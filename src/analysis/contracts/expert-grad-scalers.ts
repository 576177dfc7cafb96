// Gradient scalers applied to Megatron's expert weights, read from one file's syntax tree. A gradient scaler is a
// `torch.autograd.Function` whose `forward(ctx, x, scale)` stores the scale on `ctx` and returns `x` unchanged, and
// whose `backward(ctx, grad)` returns `grad * ctx.scale`: applied to a weight, it multiplies that weight's gradient by
// the scale and changes nothing else. The facts are where a module applies such a scaler to one of its own weights
// that carries the expert marker (`setattr(self.w, 'allreduce', <expert flag>)`), with a scale of one over the size
// of a parallel group (`1 / get_…_world_size()`), and uses the result (a scaler whose result is dropped records no
// autograd node). expert-gradients.ts judges them against the data-parallel wrapper's own division.
import type { Parser } from 'web-tree-sitter';
import { parseModule } from '../parse';
import { child, named, unparen, visit, type PyNode, type Source } from '../tree';
import type { Located } from './expert-facts';
import { compact, mayDefineScaler, operator } from './loss-scaler-classes';

export interface GradientScaling {
  /** The module class whose weight is scaled. */
  readonly cls: string;
  readonly weight: string;
  readonly scaler: string;
  /** The scale as written, `1 / parallel_state.get_tensor_and_expert_parallel_world_size()`. */
  readonly scale: string;
  /** The group whose size divides, as its getter names it (`tensor_and_expert_parallel`). */
  readonly group: string;
  /** The call that applies the scaler to the weight (or the method that does). */
  readonly site: Located;
  readonly scaleAt: Located;
  readonly backwardAt: Located;
  readonly marker: Located;
}

interface Scaler {
  readonly name: string;
  readonly product: PyNode;
}

interface Scale {
  readonly scale: string;
  readonly group: string;
  readonly at: PyNode;
}

interface Applied {
  readonly scaler: Scaler;
  readonly scale: Scale | undefined;
}

const PARSE_BUDGET_MS = 5_000;
const FUNCTION_BASE = /^(torch\.autograd\.|autograd\.)?Function$/;
/** A getter of a parallel group's size: `get_tensor_and_expert_parallel_world_size`, `get_data_parallel_world_size`. */
const GROUP_SIZE = /(?:^|\.)get_(\w+?)_world_size\(\)$/;

/** Files worth parsing: they mark weights by the `allreduce` attribute and define an autograd function. */
export function mayScaleExpertGradients(text: string): boolean {
  return /['"]allreduce['"]/.test(text) && mayDefineScaler(text);
}

export function readGradientScalings(parser: Parser, text: string): GradientScaling[] {
  if (!mayScaleExpertGradients(text)) return [];
  const parsed = parseModule(parser, text, PARSE_BUDGET_MS, Number.POSITIVE_INFINITY);
  if (!('module' in parsed)) return [];
  const source = parsed.source;
  const at = (n: PyNode): Located => ({ range: source.range(n), line: source.lineOf(n), text: source.textOf(n) });
  const classes = named(parsed.module).filter((n) => n.type === 'class_definition');
  // The callables that apply a scaler: `Scaler.apply`, and a module-level name assigned it once.
  const scalers = new Map<string, Scaler>();
  for (const cls of classes) {
    const found = scalerClass(cls, source);
    if (found) scalers.set(`${found.name}.apply`, found);
  }
  if (scalers.size === 0) return [];
  const assigned = new Map<string, PyNode[]>();
  for (const statement of named(parsed.module)) {
    const a = statement.type === 'expression_statement' ? named(statement)[0] : undefined;
    const left = a?.type === 'assignment' ? child(a, 'left') : undefined;
    const right = a ? child(a, 'right') : undefined;
    if (left?.type === 'identifier' && right) {
      const name = source.textOf(left);
      assigned.set(name, [...(assigned.get(name) ?? []), right]);
    }
  }
  for (const [name, values] of assigned) {
    const target = values.length === 1 ? scalers.get(compact(source, values[0])) : undefined;
    if (target) scalers.set(name, target);
    else scalers.delete(name);
  }
  const out: GradientScaling[] = [];
  for (const cls of classes) out.push(...new ModuleReader(cls, source, scalers, at).read());
  return out;
}

/** `forward(ctx, x, scale)` storing `ctx.<a> = scale` and returning `x`; `backward(ctx, g)` returning `g * ctx.<a>`. */
function scalerClass(cls: PyNode, source: Source): Scaler | undefined {
  const bases = child(cls, 'superclasses');
  const body = child(cls, 'body');
  const name = child(cls, 'name');
  if (!bases || !body || !name || !named(bases).some((b) => FUNCTION_BASE.test(compact(source, b)))) return undefined;
  const methods = new Map<string, PyNode>();
  for (const statement of named(body)) {
    const def = statement.type === 'decorated_definition' ? child(statement, 'definition') : statement;
    const methodName = def?.type === 'function_definition' ? child(def, 'name') : undefined;
    if (def && methodName) methods.set(source.textOf(methodName), def);
  }
  const forward = methods.get('forward');
  const backward = methods.get('backward');
  if (!forward || !backward) return undefined;
  const fp = parameterNames(forward, source);
  const bp = parameterNames(backward, source);
  if (fp.length !== 3 || bp.length !== 2) return undefined;
  // The stored attribute: written once in forward, from the scale parameter, and nowhere else in the class.
  const writes: { attribute: string; value: string }[] = [];
  visit(body, (n) => {
    const left = n.type === 'assignment' || n.type === 'augmented_assignment' ? child(n, 'left') : undefined;
    const m = left ? /^ctx\.(\w+)$/.exec(compact(source, left)) : null;
    if (m) writes.push({ attribute: m[1], value: n.type === 'assignment' ? compact(source, child(n, 'right')!) : '' });
  });
  if (writes.length !== 1 || writes[0].value !== fp[2]) return undefined;
  if (!returnsAll(forward, source, (v) => compact(source, v) === fp[1])) return undefined;
  // Every return of backward is `(g * ctx.<a>, None)`: the input's gradient scaled, none for the scale.
  let product: PyNode | undefined;
  const scaled = (v: PyNode): boolean => {
    const items = v.type === 'expression_list' || v.type === 'tuple' ? named(v) : [];
    if (items.length !== 2 || compact(source, items[1]) !== 'None') return false;
    const p = unparen(items[0]);
    if (p.type !== 'binary_operator' || operator(p, source) !== '*') return false;
    const sides = [child(p, 'left'), child(p, 'right')].map((s) => (s ? compact(source, s) : ''));
    const ok = sides.includes(bp[1]) && sides.includes(`ctx.${writes[0].attribute}`);
    if (ok) product = p;
    return ok;
  };
  if (!returnsAll(backward, source, scaled) || !product) return undefined;
  return { name: source.textOf(name), product };
}

function returnsAll(def: PyNode, source: Source, ok: (value: PyNode) => boolean): boolean {
  let count = 0;
  let all = true;
  visit(child(def, 'body') ?? def, (n) => {
    if (n.type === 'function_definition' || n.type === 'class_definition' || n.type === 'lambda') return false;
    if (n.type !== 'return_statement') return undefined;
    count++;
    const value = named(n)[0];
    if (!value || !ok(unparen(value))) all = false;
    return false;
  });
  return count > 0 && all;
}

function parameterNames(def: PyNode, source: Source): string[] {
  const parameters = child(def, 'parameters');
  if (!parameters) return [];
  return named(parameters).map((p) => source.textOf(p.type === 'identifier' ? p : (child(p, 'name') ?? p)));
}

class ModuleReader {
  private readonly body: PyNode | undefined;
  private readonly name: string;

  constructor(
    cls: PyNode,
    private readonly source: Source,
    private readonly scalers: ReadonlyMap<string, Scaler>,
    private readonly at: (n: PyNode) => Located,
  ) {
    this.body = child(cls, 'body');
    this.name = source.textOf(child(cls, 'name') ?? cls);
  }

  read(): GradientScaling[] {
    if (!this.body) return [];
    const markers = new Map<string, PyNode>();
    const writes = new Map<string, PyNode[]>();
    const calls: PyNode[] = [];
    visit(this.body, (n) => {
      if (n.type === 'class_definition') return false;
      if (n.type === 'call') calls.push(n);
      const left = n.type === 'assignment' || n.type === 'augmented_assignment' ? child(n, 'left') : undefined;
      const m = left ? /^self\.(\w+)$/.exec(compact(this.source, left)) : null;
      if (m) writes.set(m[1], [...(writes.get(m[1]) ?? []), n]);
      return undefined;
    });
    for (const call of calls) {
      const args = named(child(call, 'arguments') ?? call);
      const callee = compact(this.source, child(call, 'function') ?? call);
      if (callee !== 'setattr' || args.length !== 3 || !/^['"]allreduce['"]$/.test(compact(this.source, args[1])))
        continue;
      const weight = /^self\.(\w+)$/.exec(compact(this.source, args[0]));
      // The marker's value names the expert flag: the attribute is false for expert-parallel weights.
      if (weight && /expert/i.test(compact(this.source, args[2]))) markers.set(weight[1], call);
    }
    if (markers.size === 0) return [];
    const scaleOf = (n: PyNode): Scale | undefined => {
      const text = compact(this.source, n);
      const attribute = /^self\.(\w+)$/.exec(text);
      if (!attribute) {
        const inline = inverseGroupSize(n, this.source);
        return inline && { ...inline, at: n };
      }
      // Written once in the class, as one over a group's size: the scale every call reads.
      const w = writes.get(attribute[1]) ?? [];
      const right = w.length === 1 && w[0].type === 'assignment' ? child(w[0], 'right') : undefined;
      const inverse = right ? inverseGroupSize(right, this.source) : undefined;
      return inverse && { ...inverse, at: w[0] };
    };
    const methods = this.scalingMethods(scaleOf);
    const out: GradientScaling[] = [];
    for (const call of calls) {
      if (call.parent?.type === 'expression_statement') continue;
      const callee = compact(this.source, child(call, 'function') ?? call);
      const args = named(child(call, 'arguments') ?? call);
      const weight = args.length > 0 ? /^self\.(\w+)$/.exec(compact(this.source, args[0])) : null;
      const marker = weight ? markers.get(weight[1]) : undefined;
      if (!weight || !marker) continue;
      const method = /^self\.(\w+)$/.exec(callee);
      const applied =
        method && args.length === 1
          ? methods.get(method[1])
          : this.scalers.has(callee) && args.length === 2
            ? { scaler: this.scalers.get(callee)!, scale: scaleOf(args[1]) }
            : undefined;
      if (!applied?.scale) continue;
      out.push({
        cls: this.name,
        weight: weight[1],
        scaler: applied.scaler.name,
        scale: applied.scale.scale,
        group: applied.scale.group,
        site: this.at(call),
        scaleAt: this.at(applied.scale.at),
        backwardAt: this.at(applied.scaler.product),
        marker: this.at(marker),
      });
    }
    return out;
  }

  /**
   * Methods `m(self, w)` whose every return is `scaler(w, <scale>)`, or `w` under `if <scale> is None:` (a guard the
   * scale written once as one over a group's size never takes).
   */
  private scalingMethods(scaleOf: (n: PyNode) => Scale | undefined): Map<string, Applied> {
    const out = new Map<string, Applied>();
    for (const statement of named(this.body!)) {
      if (statement.type !== 'function_definition') continue;
      const parameters = parameterNames(statement, this.source);
      if (parameters.length !== 2 || parameters[0] !== 'self') continue;
      const scaled: { applied: Applied; argument: string }[] = [];
      const guards: string[] = [];
      const ok = returnsAll(statement, this.source, (v) => {
        if (compact(this.source, v) === parameters[1]) {
          const guard = this.noneGuard(v);
          if (guard) guards.push(guard);
          return guard !== undefined;
        }
        const callee = v.type === 'call' ? compact(this.source, child(v, 'function') ?? v) : '';
        const args = v.type === 'call' ? named(child(v, 'arguments') ?? v) : [];
        const scaler = this.scalers.get(callee);
        if (!scaler || args.length !== 2 || compact(this.source, args[0]) !== parameters[1]) return false;
        const scale = scaleOf(args[1]);
        if (scale) scaled.push({ applied: { scaler, scale }, argument: compact(this.source, args[1]) });
        return scale !== undefined;
      });
      const arguments_ = new Set(scaled.map((s) => s.argument));
      const name = child(statement, 'name');
      if (!ok || !name || scaled.length === 0 || arguments_.size !== 1) continue;
      if (guards.some((g) => !arguments_.has(g))) continue;
      out.set(this.source.textOf(name), scaled[0].applied);
    }
    return out;
  }

  /** `return w` as the whole body of `if <x> is None:`: the guarded `<x>`. */
  private noneGuard(value: PyNode): string | undefined {
    const statement = value.parent;
    const block = statement?.parent;
    const guard = block?.parent;
    if (guard?.type !== 'if_statement' || child(guard, 'consequence') !== block) return undefined;
    if (child(guard, 'alternative')) return undefined;
    const m = /^(.+)isNone$/.exec(compact(this.source, child(guard, 'condition') ?? guard));
    return m ? m[1] : undefined;
  }
}

/** `1 / get_…_world_size()` (or `1.0 / …`): one over the size of the group the getter names. */
function inverseGroupSize(n: PyNode, source: Source): { scale: string; group: string } | undefined {
  const v = unparen(n);
  if (v.type !== 'binary_operator' || operator(v, source) !== '/') return undefined;
  const left = child(v, 'left');
  const right = child(v, 'right');
  if (!left || !right || Number(compact(source, left)) !== 1) return undefined;
  const m = GROUP_SIZE.exec(compact(source, unparen(right)));
  return m ? { scale: source.textOf(v), group: m[1] } : undefined;
}
