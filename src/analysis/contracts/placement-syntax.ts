// Small syntax readers shared by the DTensor contracts of a whole program (backward-placements.ts,
// token-dispatch.ts, mesh-dims.ts): the names a file imports, the torch placement a call constructs, and the
// placement lists torch code writes (`[Partial("avg")] * mesh.ndim`, `(Replicate(),)`).
import { child, childrenOf, named, unparen, visit, type PyNode, type Source } from '../tree';
import type { Located } from './expert-facts';

const PLACEMENT =
  /^torch\.distributed\.(_tensor|tensor)(\.placement_types|\._dtensor_spec)?\.(Partial|Replicate|Shard)$/;

export type PlacementKind = 'Partial' | 'Replicate' | 'Shard';

export class FileSyntax {
  /** Local name → the fully qualified name it was imported as (`Partial` → `torch.distributed.tensor.Partial`). */
  readonly imports = new Map<string, string>();

  constructor(
    readonly module: PyNode,
    readonly source: Source,
  ) {
    visit(module, (n) => {
      if (n.type === 'function_definition' || n.type === 'class_definition') return true;
      if (n.type === 'import_from_statement') {
        const from = this.text(child(n, 'module_name') ?? n);
        for (const item of childrenOf(n, 'name')) {
          const name = item.type === 'aliased_import' ? child(item, 'name') : item;
          const alias = item.type === 'aliased_import' ? child(item, 'alias') : item;
          if (name && alias) this.imports.set(this.text(alias), `${from}.${this.text(name)}`);
        }
        return false;
      }
      if (n.type === 'import_statement') {
        for (const item of childrenOf(n, 'name')) {
          const name = item.type === 'aliased_import' ? child(item, 'name') : item;
          const alias = item.type === 'aliased_import' ? child(item, 'alias') : undefined;
          if (name) this.imports.set(this.text(alias ?? name).split('.')[0], alias ? this.text(name) : '');
        }
        return false;
      }
      return true;
    });
  }

  text(n: PyNode): string {
    return this.source.textOf(n).replace(/\s+/g, '');
  }

  located(n: PyNode): Located {
    return { range: this.source.range(n), line: this.source.lineOf(n), text: this.source.textOf(n) };
  }

  /** The fully qualified name a dotted text stands for, following the file's imports. */
  qualified(text: string): string {
    const [head, ...rest] = text.split('.');
    const module = this.imports.get(head);
    if (module === undefined) return text;
    return module === '' ? text : [module, ...rest].join('.');
  }

  callee(call: PyNode): string {
    return this.text(child(call, 'function') ?? call);
  }

  /** Positional arguments and keyword arguments of a call. */
  args(call: PyNode): { positional: PyNode[]; keywords: Map<string, PyNode> } {
    const list = child(call, 'arguments');
    const positional: PyNode[] = [];
    const keywords = new Map<string, PyNode>();
    for (const a of list ? named(list) : []) {
      if (a.type === 'keyword_argument') {
        const key = child(a, 'name');
        const value = child(a, 'value');
        if (key && value) keywords.set(this.text(key), value);
      } else positional.push(a);
    }
    return { positional, keywords };
  }

  /** The argument at a positional index or by keyword. */
  arg(call: PyNode, index: number, keyword: string): PyNode | undefined {
    const a = this.args(call);
    return a.keywords.get(keyword) ?? a.positional[index];
  }

  /** The torch placement a call constructs (`Partial(reduce_op="avg")`), with its written reduce op. */
  placement(node: PyNode | undefined): { kind: PlacementKind; op?: string; call: PyNode } | undefined {
    if (!node) return undefined;
    const call = unparen(node);
    if (call.type !== 'call') return undefined;
    const full = this.qualified(this.callee(call));
    const match = PLACEMENT.exec(full);
    if (!match) return undefined;
    const kind = match[3] as PlacementKind;
    if (kind !== 'Partial') return { kind, call };
    const opNode = this.arg(call, 0, 'reduce_op');
    // A reduce op the code computes is not read: `op` stays undefined and no rule reads it as an average.
    const op = opNode ? stringValue(this.source.textOf(opNode)) : 'sum';
    return op === undefined ? { kind, call } : { kind, op, call };
  }

  /**
   * The one placement every dimension of a list gets: `[P] * n`, `n * [P]`, `[P]` or `(P,)`; with `repeat`, the
   * factor (`mesh.ndim`) when the list is multiplied. A list of several placements, or one the code computes, is not
   * read.
   */
  uniformPlacement(
    node: PyNode | undefined,
  ): { kind: PlacementKind; op?: string; call: PyNode; repeat?: PyNode } | undefined {
    if (!node) return undefined;
    const n = unparen(node);
    if (n.type === 'binary_operator') {
      const op = n.children.find((c) => c.field === 'operator');
      if (!op || this.source.textOf(op) !== '*') return undefined;
      const left = child(n, 'left');
      const right = child(n, 'right');
      if (!left || !right) return undefined;
      const list = unparen(left).type === 'list' || unparen(left).type === 'tuple' ? left : right;
      const repeat = list === left ? right : left;
      const one = this.uniformPlacement(list);
      return one && !one.repeat ? { ...one, repeat } : undefined;
    }
    if (n.type !== 'list' && n.type !== 'tuple') return undefined;
    const items = named(n);
    return items.length === 1 ? this.placement(items[0]) : undefined;
  }
}

/** The value of a plain string literal (`"avg"`, `'sum'`), or undefined for anything else. */
export function stringValue(text: string): string | undefined {
  const match = /^(['"])([A-Za-z_]*)\1$/.exec(text.trim());
  return match ? match[2] : undefined;
}

/** The function or class definition that directly encloses a node. */
export function enclosingDefinition(
  node: PyNode,
  type: 'function_definition' | 'class_definition',
): PyNode | undefined {
  for (let p = node.parent; p; p = p.parent) if (p.type === type) return p;
  return undefined;
}

/** The names of a function's parameters, in order (`self` included). */
export function parameterNames(fn: PyNode, syntax: FileSyntax): string[] {
  const list = child(fn, 'parameters');
  if (!list) return [];
  return named(list).map((p) => {
    const name = p.type === 'identifier' ? p : (child(p, 'name') ?? named(p)[0]);
    return name ? syntax.text(name) : '';
  });
}
