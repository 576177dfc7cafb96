// DTensor redistribution as a reduction. `DTensor.from_local(t, mesh, [Partial(op)])` declares that every rank of
// `mesh` holds a partial value of one tensor; turning it into a `Replicate()` or `Shard(d)` tensor (by
// `.redistribute(mesh, [Replicate()])`, or `.full_tensor()`) runs the all-reduce or reduce-scatter that combines
// the partial values with `op` ("sum" by default, "avg" divides by the mesh's size). So the call that redistributes
// is a reduction of `t` over the mesh, and the rules read it like `dist.all_reduce(t, op, group=mesh_group)`.
//
// Only a one-dimensional placement list is read: over several mesh dimensions the reduction runs over a product of
// groups (data-parallel replicas with other dimensions), and no single group decides its scale. A `Partial`
// subclass (torchtitan's `_ScaledPartial`, which divides by a factor of its own before summing) is not `Partial`,
// and neither is a placement list the code computes: both are left unread, so the rules stay silent on them.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel } from './scope';

/** What a redistribution reduces, read like a collective call's arguments; reductions.ts makes it a `Reduction`. */
export interface MeshReduction {
  readonly call: PyNode;
  readonly op: { readonly kind: 'sum' | 'avg' | 'other'; readonly valueNode?: PyNode; readonly argNode?: PyNode };
  readonly tensor: PyNode;
  /** The mesh (or mesh dimension) the partial values live on: the reduction's group. */
  readonly mesh: PyNode;
  readonly asyncOp: boolean;
}

const DTENSOR_MODULE = /^torch\.distributed\.(_tensor|tensor)(\.api|\._api)?\.DTensor$/;
const PLACEMENT_MODULE =
  /^torch\.distributed\.(_tensor|tensor)(\.placement_types|\._dtensor_spec)?\.(_?Partial|Replicate|Shard)$/;

/** The fully qualified name a callee text stands for, following the file's imports (`Partial` → `torch...Partial`). */
function qualified(model: FileModel, text: string): string {
  const [head, ...rest] = text.replace(/\s+/g, '').split('.');
  const module = model.moduleOf(head);
  return module === undefined ? text : [module, ...rest].join('.');
}

/** The placement a one-element placement list holds (`[Partial("avg")]`, `(Replicate(),)`), when it is written. */
function soleTorchPlacement(
  model: FileModel,
  list: PyNode | undefined,
): { kind: 'Partial' | 'Replicate' | 'Shard'; call: PyNode } | undefined {
  if (!list) return undefined;
  const l = unparen(list);
  if (l.type !== 'list' && l.type !== 'tuple') return undefined;
  const items = named(l).filter((n) => n.type !== 'comment');
  if (items.length !== 1 || items[0].type !== 'call') return undefined;
  const full = qualified(model, model.syntax.calleeText(items[0]));
  if (!PLACEMENT_MODULE.test(full)) return undefined;
  const name = full.split('.').pop() ?? '';
  return { kind: name.endsWith('Partial') ? 'Partial' : (name as 'Replicate' | 'Shard'), call: items[0] };
}

/** `DTensor.from_local(...)` as written at `node`, or as the one value a local of the same function was given. */
function fromLocalCall(model: FileModel, node: PyNode | undefined, site: PyNode): PyNode | undefined {
  if (!node) return undefined;
  const n = unparen(node);
  if (n.type === 'call') {
    const s = model.syntax;
    if (s.calleeName(n) !== 'from_local') return undefined;
    const obj = s.calleeObject(n);
    return obj && DTENSOR_MODULE.test(qualified(model, s.text(obj))) ? n : undefined;
  }
  if (n.type !== 'identifier') return undefined;
  const values = model.assignedValues.get(model.syntax.text(n)) ?? [];
  const fn = model.enclosingFunction(site);
  if (values.length !== 1 || !fn || values[0].fn !== fn) return undefined;
  return values[0].value.type === 'call' ? fromLocalCall(model, values[0].value, site) : undefined;
}

/**
 * Whether the redistributed value is written back over the tensor it was made from (`p.grad = d.redistribute(...)`,
 * `.to_local()` allowed, or `p.grad.copy_(d.full_tensor())`). Unlike `dist.all_reduce`, a redistribution leaves its
 * input as it was: a result kept in another name (to log a norm) does not change the gradient the step applies.
 */
function writtenBack(model: FileModel, call: PyNode, tensor: PyNode): boolean {
  const s = model.syntax;
  const text = (n: PyNode) => s.text(n).replace(/\s+/g, '');
  let value: PyNode = call;
  for (;;) {
    const up = value.parent;
    if (up?.type === 'parenthesized_expression') value = up;
    else if (up?.type === 'attribute' && up.parent?.type === 'call' && s.calleeName(up.parent) === 'to_local')
      value = up.parent;
    else break;
  }
  const parent = value.parent;
  if (parent?.type === 'assignment') {
    const left = child(parent, 'left');
    return left !== undefined && child(parent, 'right') === value && text(left) === text(tensor);
  }
  if (parent?.type === 'argument_list' && parent.parent?.type === 'call' && s.calleeName(parent.parent) === 'copy_') {
    const target = s.calleeObject(parent.parent);
    return target !== undefined && text(target) === text(tensor);
  }
  return false;
}

/** The reduction a DTensor's `full_tensor()` or `redistribute(...)` runs, when its partial placement is written. */
export function dtensorReduction(model: FileModel, call: PyNode): MeshReduction | undefined {
  const s = model.syntax;
  const name = s.calleeName(call);
  if (name !== 'full_tensor' && name !== 'redistribute') return undefined;
  const source = fromLocalCall(model, s.calleeObject(call), call);
  if (!source) return undefined;
  const from = s.args(source);
  const tensor = from.keywords.get('local_tensor')?.value ?? from.positional[0];
  const mesh = from.keywords.get('device_mesh')?.value ?? from.positional[1];
  const partial = soleTorchPlacement(model, from.keywords.get('placements')?.value ?? from.positional[2]);
  if (!tensor || !mesh || partial?.kind !== 'Partial' || !writtenBack(model, call, tensor)) return undefined;
  const args = s.args(call);
  if (name === 'redistribute') {
    // The target must be written and leave the partial state; a different mesh is not read.
    const target = soleTorchPlacement(model, args.keywords.get('placements')?.value ?? args.positional[1]);
    if (!target || target.kind === 'Partial') return undefined;
    const targetMesh = args.keywords.get('device_mesh')?.value ?? args.positional[0];
    if (targetMesh && s.text(targetMesh).replace(/\s+/g, '') !== s.text(mesh).replace(/\s+/g, '')) return undefined;
  }
  const opArg = s.args(partial.call).keywords.get('reduce_op')?.value ?? s.args(partial.call).positional[0];
  const written = opArg ? s.stringValue(opArg) : 'sum';
  // Partial's reduce_op names a c10d operation: "sum" and "avg" are the two that scale; max, min and the rest
  // are other operations, and an op the code computes is not read.
  if (written === undefined) return undefined;
  const kind: MeshReduction['op']['kind'] = written === 'sum' ? 'sum' : written === 'avg' ? 'avg' : 'other';
  const asyncArg = args.keywords.get('async_op')?.value;
  return {
    call,
    op: opArg ? { kind, valueNode: opArg, argNode: opArg } : { kind },
    tensor,
    mesh,
    asyncOp: asyncArg !== undefined && s.text(asyncArg) === 'True',
  };
}
