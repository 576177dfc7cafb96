// Follows tensors inside one function: which names refer to the same gradients (loop variables over
// model.parameters(), flattened buckets and their unflattened views, tree_map lambdas, MPI receive buffers),
// and every multiplication or division applied to them (x /= n, x.div_(n), torch._foreach_div_, x * (1 / n)).
import { child, named, statementOf, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { Reduction, ReductionFinder, ImplicitReducer } from './reductions';
import { isGradientName, UnionFind } from './aliases';

export { isGradientName, NOT_GRADIENT } from './aliases';

export interface Factor {
  readonly node: PyNode;
  readonly sign: 1 | -1;
}

export interface ScaleOp {
  readonly key: string;
  readonly factors: Factor[];
  /** The operation (binary operator, augmented assignment or call) and its statement, for fixes. */
  readonly node: PyNode;
  readonly statement: PyNode;
}

const VIEW_METHODS = new Set([
  'data',
  'view',
  'view_as',
  'reshape',
  'float',
  'half',
  'bfloat16',
  'double',
  'contiguous',
  'flatten',
  'to',
  'cuda',
  'cpu',
  'numpy',
  'type',
  'squeeze',
  'unsqueeze',
  'ravel',
  'div_',
  'mul_',
  'add_',
  'narrow',
  'values',
]);
const FLATTENERS = new Set([
  'cat',
  'concat',
  'concatenate',
  'stack',
  '_flatten_dense_tensors',
  'flatten_dense_tensors',
  'parameters_to_vector',
  '_unflatten_dense_tensors',
  'unflatten_dense_tensors',
  'vector_to_parameters',
  'list',
  'tuple',
  'ravel_pytree',
  'tree_leaves',
  'split',
]);
/** Calls that apply a function to every leaf (`jax.tree.map`, trax's `nested_map`, Python's `map`). */
const TREE_MAPS = new Set([
  'tree_map',
  'map_structure',
  'tree_multimap',
  'map',
  'nested_map',
  'nested_map_multiarg',
  'tree_map_with_path',
]);
const GRAD_PRODUCERS = /^(grad|gradient|gradients|compute_gradients|value_and_grad)$/;

export class FunctionFlow {
  private readonly aliases = new UnionFind();
  readonly reductions: Reduction[] = [];
  readonly implicit: ImplicitReducer[] = [];
  readonly scaleOps: ScaleOp[] = [];
  /** Keys assigned from autograd.grad / tape.gradient / jax.grad(...)(...). */
  readonly gradKeys = new Set<string>();
  readonly returnKeys: string[] = [];

  constructor(
    readonly fn: FunctionInfo,
    private readonly model: FileModel,
    finder: ReductionFinder,
    private readonly helperReturnArg: (call: PyNode) => PyNode | undefined,
    /**
     * Also follow tensors into the lists built from them (`bucket.append(t)`) and out of unpacked containers
     * (`dtype, bucket = pair`). Only the model-parallel divisor rule reads such flows: it speaks only when the group
     * and the divisor are both named, while a plain "nothing divides" claim over a list of slices handed to code
     * out of view would be a guess.
     */
    private readonly containers = false,
  ) {
    const paramNames = fn.params.map((p) => p.name);
    for (const n of fn.nodes) {
      if (n.type !== 'call') continue;
      const r = finder.find(n, paramNames);
      if (r) this.reductions.push(r);
      const imp = finder.implicit(n, paramNames);
      if (imp) this.implicit.push(imp);
    }
    for (let pass = 0; pass < 2; pass++) for (const n of fn.nodes) this.linkAliases(n);
    for (const n of fn.nodes) this.collectScaleOp(n);
    for (const n of fn.nodes) {
      if (n.type === 'return_statement') {
        const value = named(n)[0];
        const key = value ? this.keyOf(value) : undefined;
        if (key) this.returnKeys.push(this.find(key));
      }
    }
  }

  find(key: string): string {
    return this.aliases.find(key);
  }

  members(key: string): string[] {
    return this.aliases.members(key);
  }

  same(a: string | undefined, b: string | undefined): boolean {
    return a !== undefined && b !== undefined && this.find(a) === this.find(b);
  }

  private text(n: PyNode): string {
    return this.model.syntax.text(n).replace(/\s+/g, '');
  }

  /** The alias key of a tensor expression: the root variable after views, flattening and `.data`. */
  keyOf(expr: PyNode, depth = 0): string | undefined {
    if (depth > 12) return undefined;
    const s = this.model.syntax;
    const n = unparen(expr);
    switch (n.type) {
      case 'identifier':
        return this.find(s.text(n));
      case 'attribute': {
        const attr = s.text(child(n, 'attribute') ?? n);
        const obj = child(n, 'object');
        if (!obj) return undefined;
        if (attr === 'data' || attr === 'T') return this.keyOf(obj, depth + 1);
        if (attr === 'grad' || attr === 'main_grad' || attr === 'grads') {
          const base = this.keyOf(obj, depth + 1);
          return base === undefined ? undefined : this.find(`${base}.grad`);
        }
        return this.find(`@${this.text(n)}`);
      }
      case 'subscript': {
        const value = child(n, 'value');
        return value ? this.keyOf(value, depth + 1) : undefined;
      }
      case 'call': {
        const name = s.calleeName(n);
        const obj = s.calleeObject(n);
        const args = s.args(n).positional;
        // `self.flatten(bucket)`, `self.unflatten(flat, bucket)`: a helper method given the tensors, not a view of the
        // object it is called on.
        if (/^(un)?flatten$/.test(name) && args[0] && s.numberValue(args[0]) === undefined)
          return this.keyOf(args[0], depth + 1);
        if (obj && VIEW_METHODS.has(name)) return this.keyOf(obj, depth + 1);
        if (name === 'buffer' || name === 'get_tensor') return this.find(`@${this.text(n)}`);
        if (FLATTENERS.has(name) && args[0]) return this.keyOf(args[0], depth + 1);
        if (TREE_MAPS.has(name) && args[1]) return this.keyOf(args[1], depth + 1);
        const r = this.reductions.find((x) => x.call === n);
        if (r) return this.keyOf(r.tensor, depth + 1);
        const returned = this.helperReturnArg(n);
        if (returned) return this.keyOf(returned, depth + 1);
        if (name === 'parameters' || name === 'named_parameters')
          return this.find(`#${obj ? this.text(obj) : ''}.parameters()`);
        return this.find(`#${this.text(n)}`);
      }
      case 'list_comprehension':
      case 'generator_expression':
      case 'set_comprehension': {
        const body = child(n, 'body');
        return body ? this.keyOf(body, depth + 1) : undefined;
      }
      case 'list':
      case 'tuple':
      case 'expression_list': {
        const first = named(n)[0];
        return first ? this.keyOf(first, depth + 1) : undefined;
      }
      case 'conditional_expression': {
        const first = named(n)[0];
        return first ? this.keyOf(first, depth + 1) : undefined;
      }
      case 'binary_operator': {
        const factors = s.factors(n);
        const tensor = factors.find((f) => f.sign === 1 && s.numberValue(f.node) === undefined);
        return tensor ? this.keyOf(tensor.node, depth + 1) : undefined;
      }
      default:
        return undefined;
    }
  }

  private unionExpr(target: PyNode, value: PyNode): void {
    const t = unparen(target);
    const v = unparen(value);
    if (
      (t.type === 'pattern_list' || t.type === 'tuple_pattern' || t.type === 'tuple') &&
      (v.type === 'tuple' || v.type === 'expression_list')
    ) {
      const ts = named(t);
      const vs = named(v);
      ts.forEach((x, i) => vs[i] && this.unionExpr(x, vs[i]));
      return;
    }
    if (t.type === 'pattern_list' || t.type === 'tuple_pattern' || t.type === 'tuple' || t.type === 'list_pattern') {
      if (!this.containers) return;
      // `dtype, bucket = pair` unpacks a container of tensors, and `a, b = split(grads)` the parts a helper of
      // this file makes of its argument: each name may be those tensors. A call whose result is not its argument
      // (`loss, grads = step(x)`) is left apart.
      const fromContainer =
        v.type === 'identifier' ||
        v.type === 'subscript' ||
        (v.type === 'call' && this.helperReturnArg(v) !== undefined);
      const b = fromContainer ? this.keyOf(v) : undefined;
      if (b === undefined) return;
      for (const part of named(t)) if (part.type === 'identifier') this.aliases.union(this.model.syntax.text(part), b);
      return;
    }
    const a = this.keyOf(t);
    const b = this.keyOf(v);
    if (a !== undefined && b !== undefined) this.aliases.union(a, b);
  }

  /** `for a, b in zip(x, y)`, `for name, p in m.named_parameters()`, `for i, g in enumerate(grads)`. */
  private bindLoop(left: PyNode, right: PyNode): void {
    const s = this.model.syntax;
    const l = unparen(left);
    const r = unparen(right);
    const targets = l.type === 'pattern_list' || l.type === 'tuple_pattern' || l.type === 'tuple' ? named(l) : [l];
    if (r.type === 'call') {
      const name = s.calleeName(r);
      const args = s.args(r).positional;
      if (name === 'zip' && targets.length > 1) {
        targets.forEach((t, i) => args[i] && this.unionLoopVar(t, args[i]));
        return;
      }
      if (name === 'enumerate' && targets.length === 2 && args[0]) return this.unionLoopVar(targets[1], args[0]);
      if ((name === 'named_parameters' || name === 'items') && targets.length === 2)
        return this.unionLoopVar(targets[1], r);
    }
    if (targets.length === 1) this.unionLoopVar(targets[0], r);
  }

  private unionLoopVar(target: PyNode, iterable: PyNode): void {
    if (target.type !== 'identifier') return;
    const k = this.keyOf(iterable);
    if (k !== undefined) this.aliases.union(this.model.syntax.text(target), k);
  }

  private linkAliases(n: PyNode): void {
    const s = this.model.syntax;
    if (n.type === 'assignment') {
      const left = child(n, 'left');
      const right = child(n, 'right');
      if (!left || !right) return;
      this.unionExpr(left, right);
      this.markGradients(left, right);
    } else if (n.type === 'for_statement' || n.type === 'for_in_clause') {
      const left = child(n, 'left');
      const right = child(n, 'right');
      if (left && right) this.bindLoop(left, right);
    } else if (n.type === 'call') {
      const name = s.calleeName(n);
      const obj = s.calleeObject(n);
      const args = s.args(n).positional;
      if ((name === 'copy_' || name === 'set_') && obj && args[0]) this.unionExpr(obj, args[0]);
      // `bucket.append(t)`, `buckets.append((dtype, bucket))`: a list built from tensors holds them.
      if (this.containers && (name === 'append' || name === 'extend') && obj && args[0]) {
        const value = unparen(args[0]);
        for (const part of value.type === 'tuple' || value.type === 'list' ? named(value) : [value])
          this.unionExpr(obj, part);
      }
      if (TREE_MAPS.has(name) && args[0]?.type === 'lambda') {
        const params = child(args[0], 'parameters');
        (params ? named(params) : []).forEach((p, i) => args[i + 1] && this.unionLoopVar(p, args[i + 1]));
      }
      const r = this.reductions.find((x) => x.call === n);
      if (r?.output) this.unionExpr(r.output, r.tensor);
    }
  }

  private markGradients(left: PyNode, right: PyNode): void {
    const s = this.model.syntax;
    const r = unparen(right);
    if (r.type !== 'call') return;
    const fnNode = child(r, 'function');
    const inner = fnNode?.type === 'call' ? fnNode : r;
    const name = s.calleeName(inner);
    if (!GRAD_PRODUCERS.test(name)) return;
    if (name === 'grad' && inner === r && !/autograd|torch/.test(s.calleeText(r))) return;
    const l = unparen(left);
    let target = l;
    if (l.type === 'pattern_list' || l.type === 'tuple_pattern' || l.type === 'tuple') {
      const parts = named(l);
      const hasAux = s.args(inner).keywords.has('has_aux');
      target = name === 'value_and_grad' ? parts[parts.length - 1] : hasAux ? parts[0] : l;
    }
    const key = target ? this.keyOf(target) : undefined;
    if (key !== undefined) this.gradKeys.add(this.find(key));
  }

  private collectScaleOp(n: PyNode): void {
    const s = this.model.syntax;
    if (n.type === 'augmented_assignment') {
      const op = s.operator(n);
      const left = child(n, 'left');
      const right = child(n, 'right');
      if ((op === '/=' || op === '*=') && left && right) {
        const key = this.keyOf(left);
        if (key !== undefined)
          this.scaleOps.push({
            key,
            factors: s.factors(right, op === '/=' ? -1 : 1),
            node: n,
            statement: statementOf(n),
          });
      }
      return;
    }
    if (n.type === 'binary_operator') {
      const op = s.operator(n);
      if (op !== '*' && op !== '/') return;
      const parent = n.parent && n.parent.type === 'parenthesized_expression' ? n.parent.parent : n.parent;
      if (parent?.type === 'binary_operator' && (s.operator(parent) === '*' || s.operator(parent) === '/')) return;
      // Each multiplied factor may be the tensor (`scale * summed / n`): record the operation for every one of
      // them, with the other factors as its terms, so whichever is the reduced tensor sees the whole product.
      const factors = s.factors(n);
      factors.forEach((f, index) => {
        if (f.sign !== 1 || s.numberValue(f.node) !== undefined) return;
        const key = this.keyOf(f.node);
        if (key === undefined) return;
        this.scaleOps.push({ key, factors: factors.filter((_, i) => i !== index), node: n, statement: statementOf(n) });
      });
      return;
    }
    if (n.type !== 'call') return;
    const name = s.calleeName(n);
    const obj = s.calleeObject(n);
    const args = s.args(n).positional;
    const divide = /^(div_|div|true_divide_|true_divide|divide|truediv|_foreach_div_|_foreach_div)$/.test(name);
    const multiply = /^(mul_|mul|multiply|_foreach_mul_|_foreach_mul)$/.test(name);
    if (!divide && !multiply) return;
    const objText = obj ? s.text(obj) : '';
    const functional = !obj || /^(torch|np|numpy|tf|tf\.math|jnp|math)$/.test(objText);
    const [tensor, by] = functional ? [args[0], args[1]] : [obj, args[0]];
    if (!tensor || !by) return;
    const key = this.keyOf(tensor);
    if (key !== undefined)
      this.scaleOps.push({ key, factors: s.factors(by, divide ? -1 : 1), node: n, statement: statementOf(n) });
  }

  /** True when the key's alias group holds gradients. */
  isGradientKey(key: string): boolean {
    const root = this.find(key);
    if (this.gradKeys.has(root)) return true;
    return this.members(key).some((m) => {
      if (m.startsWith('#')) return false;
      const name = m.replace(/^@/, '').replace(/requires_grad/g, '');
      return /\.grad$/.test(name) || isGradientName(name.split('.').pop() ?? name);
    });
  }
}
