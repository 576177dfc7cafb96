// Quick fixes as plain text edits: switch the reduction to an average, divide by the world size, pass the
// averaging flag at the call site, psum -> pmean, replace a wrong divisor, or remove a redundant division.
import { child, named, statementOf, unparen, type PyNode, type Source } from './tree';
import type { FileModel } from './scope';
import type { Reduction } from './reductions';
import type { Decision } from './conditions';
import type { Binding } from './sizes';
import type { Term } from './judge-verdict';
import { EditBuilder } from './edits';
import { defaultBackendIsGloo } from './groups';
import type { Fix } from './types';

export class FixBuilder {
  readonly edits: EditBuilder;
  readonly gloo: boolean;

  constructor(
    private readonly model: FileModel,
    private readonly source: Source,
  ) {
    this.edits = new EditBuilder(source);
    this.gloo = defaultBackendIsGloo(model);
  }

  private text(n: PyNode): string {
    return this.model.syntax.text(n);
  }

  /** The module prefix for torch.distributed calls: the reduction's own (`dist`), else an imported alias. */
  torchPrefix(r?: Reduction): string | undefined {
    const obj = r ? this.model.syntax.calleeObject(r.call) : undefined;
    if (obj && r?.framework === 'torch') return this.text(obj);
    return this.model.torchDistAlias();
  }

  worldExpr(r: Reduction | undefined, framework: string): string | undefined {
    const s = this.model.syntax;
    switch (framework) {
      case 'torch':
      case 'accelerate': {
        const prefix = this.torchPrefix(r?.framework === 'torch' ? r : undefined);
        return prefix ? `${prefix}.get_world_size(${r?.group ?? ''})` : undefined;
      }
      case 'horovod':
        return `${this.model.aliasFor(/horovod/) ?? 'hvd'}.size()`;
      case 'mpi': {
        const obj = r ? s.calleeObject(r.call) : undefined;
        return obj ? `${this.text(obj)}.Get_size()` : undefined;
      }
      case 'jax':
        return r?.group
          ? `jax.lax.psum(1, ${r.group})`
          : this.model.imports.has('jax')
            ? 'jax.device_count()'
            : undefined;
      default:
        return undefined;
    }
  }

  /** Switches a summing reduction to its averaging form. */
  averageFix(r: Reduction): Fix | undefined {
    const e = this.edits;
    const value = r.op.valueNode ? unparen(r.op.valueNode) : undefined;
    const list = child(r.call, 'arguments');
    switch (r.framework) {
      case 'torch': {
        const note = this.gloo ? ' (note: gloo does not implement AVG; prefer dividing by the world size there)' : '';
        if (value && /SUM/.test(this.text(value)))
          return {
            title: `Use ReduceOp.AVG${note}`,
            edits: [e.replace(value, this.text(value).replace('SUM', 'AVG'))],
          };
        const prefix = this.torchPrefix(r);
        if (!value && list && prefix)
          return { title: `Use ReduceOp.AVG${note}`, edits: [e.addKeyword(list, `op=${prefix}.ReduceOp.AVG`)] };
        return undefined;
      }
      case 'horovod': {
        const hvd = this.model.aliasFor(/horovod/) ?? 'hvd';
        const arg = r.op.argNode;
        if (arg?.type === 'keyword_argument' && value) {
          const name = this.text(child(arg, 'name') ?? arg);
          return name === 'average'
            ? { title: 'Use average=True', edits: [e.replace(value, 'True')] }
            : { title: `Use op=${hvd}.Average`, edits: [e.replace(value, `${hvd}.Average`)] };
        }
        return undefined;
      }
      case 'accelerate':
        if (value) return { title: "Use reduction='mean'", edits: [e.replace(value, "'mean'")] };
        return list ? { title: "Use reduction='mean'", edits: [e.addKeyword(list, "reduction='mean'")] } : undefined;
      case 'tf':
        if (value && /SUM/.test(this.text(value)))
          return { title: 'Use ReduceOp.MEAN', edits: [e.replace(value, this.text(value).replace('SUM', 'MEAN'))] };
        if (value && /['"]sum['"]/.test(this.text(value)))
          return { title: "Use 'mean'", edits: [e.replace(value, this.text(value).replace('sum', 'mean'))] };
        return undefined;
      case 'jax':
        return this.pmeanFix(r);
      default:
        return undefined;
    }
  }

  pmeanFix(r: Reduction): Fix | undefined {
    const fnNode = child(r.call, 'function');
    if (!fnNode) return undefined;
    if (fnNode.type === 'attribute') {
      const attr = child(fnNode, 'attribute');
      return attr ? { title: 'Use pmean instead of psum', edits: [this.edits.replace(attr, 'pmean')] } : undefined;
    }
    if (this.model.imports.has('pmean'))
      return { title: 'Use pmean instead of psum', edits: [this.edits.replace(fnNode, 'pmean')] };
    if (this.model.imports.has('jax'))
      return { title: 'Use jax.lax.pmean instead of psum', edits: [this.edits.replace(fnNode, 'jax.lax.pmean')] };
    return undefined;
  }

  /** Divides the reduced tensor by the world size right after an in-place reduction, or divides the result. */
  divideFix(r: Reduction): Fix | undefined {
    if (r.asyncOp) return undefined;
    // A DTensor redistribution returns a new tensor and its mesh is not a process group: no edit is offered.
    if (/^(full_tensor|redistribute)$/.test(this.model.syntax.calleeName(r.call))) return undefined;
    const world = this.worldExpr(r, r.framework);
    if (!world) return undefined;
    const stmt = statementOf(r.call);
    const inPlace =
      stmt.type === 'expression_statement' &&
      named(stmt)[0] === r.call &&
      (stmt.parent?.type === 'block' || stmt.parent?.type === 'module');
    if (inPlace && (r.framework === 'torch' || r.framework === 'mpi')) {
      const target = r.output ?? r.tensor;
      const code = r.framework === 'mpi' ? `${this.text(target)} /= ${world}` : `${this.text(target)}.div_(${world})`;
      return { title: `Divide by ${world}`, edits: [this.edits.insertStatementAfter(stmt, code)] };
    }
    const returnsResult = r.framework !== 'torch' && (r.framework !== 'mpi' || !r.output);
    if (!inPlace && returnsResult) {
      return {
        title: `Divide the result by ${world}`,
        edits: [this.edits.replace(r.call, `${this.text(r.call)} / ${world}`)],
      };
    }
    return undefined;
  }

  /** Makes a call site choose averaging: pass the flag value the guarded division needs, or an averaging op. */
  callSiteFix(call: PyNode, binding: Binding, value: string, what: string): Fix | undefined {
    const list = child(call, 'arguments');
    if (!list) return undefined;
    if (!binding.isDefault)
      return { title: `Pass ${binding.param}=${value} (${what})`, edits: [this.edits.replace(binding.node, value)] };
    return {
      title: `Pass ${binding.param}=${value} (${what})`,
      edits: [this.edits.addKeyword(list, `${binding.param}=${value}`)],
    };
  }

  /** The value that makes a failed guard (`if _type == 'avg'`) hold. */
  guardValue(decision: Decision): string | undefined {
    const g = decision.guard;
    if (!g) return undefined;
    const test = unparen(g.test);
    if (test.type === 'identifier' || test.type === 'attribute') return g.expect ? 'True' : 'False';
    if (test.type === 'not_operator') return g.expect ? 'False' : 'True';
    if (test.type !== 'comparison_operator') return undefined;
    const parts = named(test);
    const op = test.children
      .filter((c) => !c.named)
      .map((c) => this.text(c))
      .join(' ');
    const other = parts[1];
    if (!other) return undefined;
    if ((op === '==' || op === 'is') && g.expect) return this.text(other);
    if ((op === '!=' || op === 'is not') && !g.expect) return this.text(other);
    if (op === 'in' && g.expect && (other.type === 'tuple' || other.type === 'list')) {
      const first = named(other)[0];
      return first ? this.text(first) : undefined;
    }
    return undefined;
  }

  /** The averaging op to pass for an `op` parameter. */
  averagingOpText(r: Reduction): string | undefined {
    if (r.framework === 'torch') {
      const prefix = this.torchPrefix(r);
      return prefix ? `${prefix}.ReduceOp.AVG` : undefined;
    }
    if (r.framework === 'horovod') return `${this.model.aliasFor(/horovod/) ?? 'hvd'}.Average`;
    return undefined;
  }

  /** Removes one division (a redundant average): the factor, the statement, or the call-site argument. */
  removeTermFix(term: Term, title: string): Fix | undefined {
    const e = this.edits;
    if (term.binding) return { title, edits: [e.replace(term.binding.node, '1')] };
    const op = term.op;
    if (op && op.factors.length === 1 && (op.node.type === 'augmented_assignment' || op.node.type === 'call')) {
      const stmt = op.statement;
      if (stmt.type === 'expression_statement' && named(stmt)[0] === op.node)
        return { title, edits: [e.deleteStatement(stmt)] };
      if (op.node.type === 'call' && unparen(op.node) === op.node) {
        const obj = this.model.syntax.calleeObject(op.node);
        const name = this.model.syntax.calleeName(op.node);
        if (obj && /^(div|mul)$/.test(name)) return { title, edits: [e.replace(op.node, this.text(obj))] };
      }
    }
    if (
      term.node.type === 'call' &&
      (term.viaCall || /^(allreduce|allreduce_)$/.test(this.model.syntax.calleeName(term.node)))
    ) {
      // A differentiable averaging all-reduce of the loss: keep its argument.
      const inner = this.model.syntax.args(term.node).positional[0];
      if (!inner) return undefined;
      const stmt = statementOf(term.node);
      const assign = named(stmt)[0];
      if (
        assign?.type === 'assignment' &&
        child(assign, 'right') === term.node &&
        this.text(child(assign, 'left') ?? assign) === this.text(inner)
      )
        return { title, edits: [e.deleteStatement(stmt)] };
      return { title, edits: [e.replace(term.node, this.text(inner))] };
    }
    let host: PyNode | null = term.node;
    while (host && host.parent && host.parent.type === 'parenthesized_expression') host = host.parent;
    const bin = host?.parent;
    if (!bin || bin.type !== 'binary_operator' || child(bin, 'right') !== host) return undefined;
    const left = child(bin, 'left');
    if (!left) return undefined;
    const stmt = statementOf(bin);
    const assign = named(stmt)[0];
    if (assign?.type === 'assignment' && child(assign, 'right') === bin) {
      const target = child(assign, 'left');
      if (target && this.text(target).replace(/\s+/g, '') === this.text(left).replace(/\s+/g, ''))
        return { title, edits: [e.deleteStatement(stmt)] };
    }
    return { title, edits: [e.replace(bin, this.text(left))] };
  }

  /** Replaces a wrong divisor by the world size. */
  replaceDivisorFix(term: Term, r: Reduction | undefined, framework: string): Fix | undefined {
    const world = this.worldExpr(r, framework);
    if (!world) return undefined;
    return {
      title: `Divide by ${world} instead`,
      edits: [this.edits.replace(term.binding ? term.binding.node : term.node, world)],
    };
  }
}
