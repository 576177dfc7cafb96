// Whether a named dimension of a device mesh spans the whole job. `mesh["dp"]`, `mesh.get_group("dp")` and
// `mesh["dp"].get_group()` name the data-parallel replicas, but the default group (`dist.get_world_size()`) counts
// the same ranks only when the mesh has no other dimension of more than one rank. torch's
// `init_device_mesh(device_type, mesh_shape, *, mesh_dim_names)` lays out `prod(mesh_shape)` ranks, and a mesh may not
// be larger than the default group (torch/distributed/device_mesh.py raises "Mesh should not be bigger than default
// world size"), so a mesh with another dimension whose size is not 1 (a number above 1, or a size the code does not
// fix) makes the named dimension a proper sub-group of the world. A one-dimensional mesh, or one whose other
// dimensions are all written as 1, leaves nothing proven smaller; a mesh whose construction is not in view
// (a parameter, `DeviceMesh(...)` built from a tensor, a shape held in a variable) proves nothing either way.
import { child, named, unparen, type PyNode } from './tree';
import type { FileModel, FunctionInfo } from './scope';
import type { Env } from './sizes';

/** Where a mesh dimension stands against the default group: the same ranks, a proper sub-group, or not known. */
export type MeshSpan = 'world' | 'smaller' | 'unknown';

interface MeshShape {
  readonly names: readonly string[];
  /** One entry per dimension: its size where a literal integer gives it, undefined where the code computes it. */
  readonly sizes: readonly (number | undefined)[];
}

const MAX_DEPTH = 6;

/** The span of dimension `dim` of the mesh written `meshNode` (`mesh`, `self.device_mesh`). */
export function meshDimensionSpan(model: FileModel, meshNode: PyNode, dim: string, env: Env): MeshSpan {
  const shape = meshShapeOf(model, meshNode, env, 0);
  if (!shape || !shape.names.includes(dim)) return 'unknown';
  const others = shape.sizes.filter((_, i) => shape.names[i] !== dim);
  return others.some((size) => size !== 1) ? 'smaller' : 'world';
}

function meshShapeOf(model: FileModel, node: PyNode, env: Env, depth: number): MeshShape | undefined {
  if (depth > MAX_DEPTH) return undefined;
  const s = model.syntax;
  const n = unparen(node);
  if (n.type === 'call') return s.calleeName(n) === 'init_device_mesh' ? initDeviceMeshShape(model, n) : undefined;
  const text = s.text(n).replace(/\s+/g, '');
  let values: { node: PyNode; env: Env }[];
  if (n.type === 'identifier') {
    const binding = env.bindings?.get(text);
    if (binding) return meshShapeOf(model, binding.node, binding.env, depth + 1);
    if (env.fn.params.some((p) => p.name === text)) return undefined;
    const local = assignedIn(model, env.fn, text);
    const moduleFn = model.functions[0];
    values = (local.length > 0 ? local.map((v) => ({ node: v, env })) : []).concat(
      local.length === 0 ? assignedIn(model, moduleFn, text).map((v) => ({ node: v, env: { fn: moduleFn } })) : [],
    );
  } else if (n.type === 'attribute') {
    values = model.valuesSeenBy(text, env.fn).map((v) => ({ node: v.value, env: { fn: v.fn } }));
  } else {
    return undefined;
  }
  // Every value the name is given must build the same shape; one unread value leaves the shape unknown.
  const shapes = values.map((v) => meshShapeOf(model, v.node, v.env, depth + 1));
  if (shapes.length === 0 || shapes.some((sh) => !sh)) return undefined;
  const first = shapes[0]!;
  return shapes.every((sh) => sameShape(sh!, first)) ? first : undefined;
}

/** `init_device_mesh("cuda", (dp, tp), mesh_dim_names=("dp", "tp"))`: names and sizes written as tuples or lists. */
function initDeviceMeshShape(model: FileModel, call: PyNode): MeshShape | undefined {
  const s = model.syntax;
  const shapeNode = s.arg(call, 'mesh_shape', 1);
  const namesNode = s.arg(call, 'mesh_dim_names', -1);
  const shapeItems = shapeNode && sequenceItems(shapeNode);
  const nameItems = namesNode && sequenceItems(namesNode);
  if (!shapeItems || !nameItems || shapeItems.length !== nameItems.length) return undefined;
  const names = nameItems.map((item) => s.stringValue(item));
  if (names.some((name) => name === undefined)) return undefined;
  const sizes = shapeItems.map((item) => {
    const value = s.numberValue(item);
    return value !== undefined && Number.isInteger(value) ? value : undefined;
  });
  return { names: names as string[], sizes };
}

/** The items of a tuple or list display; undefined for anything else (a name, a starred item, a comprehension). */
function sequenceItems(node: PyNode): PyNode[] | undefined {
  const n = unparen(node);
  if (n.type !== 'tuple' && n.type !== 'list') return undefined;
  const items = named(n).filter((c) => c.type !== 'comment');
  return items.some((c) => c.type === 'list_splat' || c.type === 'parenthesized_list_splat') ? undefined : items;
}

function assignedIn(model: FileModel, fn: FunctionInfo, name: string): PyNode[] {
  const out: PyNode[] = [];
  for (const a of fn.assignments) {
    if (a.type !== 'assignment') continue;
    const left = child(a, 'left');
    const right = child(a, 'right');
    if (left && right && left.type === 'identifier' && model.syntax.text(left) === name) out.push(right);
  }
  return out;
}

function sameShape(a: MeshShape, b: MeshShape): boolean {
  return (
    a.names.length === b.names.length && a.names.every((name, i) => name === b.names[i] && a.sizes[i] === b.sizes[i])
  );
}

/**
 * One key for the spellings of a mesh dimension's group: `mesh["dp"]`, `mesh["dp"].get_group()`,
 * `mesh.get_group("dp")` and `mesh.get_group(mesh_dim="dp")` are all `mesh|dp`. Undefined for anything else.
 */
export function meshDimensionKey(model: FileModel, node: PyNode | undefined): string | undefined {
  if (!node) return undefined;
  const s = model.syntax;
  const n = unparen(node);
  const compact = (m: PyNode) => s.text(m).replace(/\s+/g, '');
  if (n.type === 'subscript') {
    const dim = s.stringValue(child(n, 'subscript'));
    const mesh = child(n, 'value');
    return dim !== undefined && mesh ? `${compact(mesh)}|${dim}` : undefined;
  }
  if (n.type !== 'call' || s.calleeName(n) !== 'get_group') return undefined;
  const obj = s.calleeObject(n);
  const dim = s.stringValue(s.arg(n, 'mesh_dim', 0));
  if (!obj) return undefined;
  if (dim !== undefined) return `${compact(obj)}|${dim}`;
  return s.args(n).positional.length === 0 && s.args(n).keywords.size === 0 ? meshDimensionKey(model, obj) : undefined;
}
