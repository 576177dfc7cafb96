// The TP sum of the marked weights' gradients written as one loop over (list, op) pairs, the form Megatron's
// `_allreduce_non_tensor_model_parallel_grads` has had since 2025:
//
//     elif config.sequence_parallel and getattr(param, "sequence_parallel", False):
//         grads_sum.append(grad.data)
//     …
//     for params, grads, all_reduce_op in zip([params_sum, params_avg], [grads_sum, grads_avg],
//                                             [torch.distributed.ReduceOp.SUM, torch.distributed.ReduceOp.AVG]):
//         coalesced = _flatten_dense_tensors(grads)
//         torch.distributed.all_reduce(coalesced, op=all_reduce_op, group=tp_group)
//
// sequence-parallel-facts.ts reads the direct form (no `op=`, nothing scaled in the function); this reads the zip:
// a list that receives gradients only in branches selected by the marker is paired, position by position, with
// `ReduceOp.SUM` in a `zip` of list literals, and the loop all-reduces the paired list (or one flattening of it) over
// a group named tensor-parallel with the paired op, and scales nothing in its body. A list also filled outside the
// marked branches, an op that is not SUM at that position, or a loop that divides leaves the function out.
import { child, named, unparen, visit, type PyNode, type Source } from '../tree';

const MARKED = /['"]sequence_parallel['"]|\.sequence_parallel\b/;
const TP_GROUP = /tensor_model_parallel_group|tensor_parallel_group|\btp_group\b|get_tp_group/;

export function sumsMarkedThroughZip(source: Source, fn: PyNode): boolean {
  const text = (n: PyNode) => source.textOf(n).replace(/\s+/g, '');
  const marked = markedGradientLists(fn, text);
  if (marked.size === 0) return false;
  let sums = false;
  visit(child(fn, 'body')!, (n) => {
    if (sums || n.type !== 'for_statement') return;
    const right = unparen(child(n, 'right')!);
    if (right.type !== 'call' || text(child(right, 'function')!) !== 'zip') return;
    const lists = named(child(right, 'arguments')!).map(unparen);
    const left = unparen(child(n, 'left')!);
    const targets = left.type === 'pattern_list' || left.type === 'tuple_pattern' ? named(left).map(text) : [];
    if (lists.length !== targets.length || lists.some((l) => l.type !== 'list')) return;
    const items = lists.map((l) => named(l).map(text));
    const opAt = items.findIndex((l) => l.some((x) => /ReduceOp\.(SUM|AVG)$/.test(x)));
    if (opAt < 0) return;
    for (const [k, list] of items.entries()) {
      const i = list.findIndex((x) => marked.has(x));
      if (k === opAt || i < 0 || !/ReduceOp\.SUM$/.test(items[opAt][i] ?? '')) continue;
      if (loopSums(child(n, 'body')!, targets[k], targets[opAt], text)) sums = true;
    }
  });
  return sums;
}

/** Lists appended to only inside (possibly nested in) branches whose condition reads the marker, with a gradient each time. */
function markedGradientLists(fn: PyNode, text: (n: PyNode) => string): Set<string> {
  const inMarked = new Set<string>();
  const elsewhere = new Set<string>();
  visit(child(fn, 'body')!, (n) => {
    if (n.type !== 'call') return;
    const append = /^(\w+)\.append$/.exec(text(child(n, 'function')!));
    if (!append) return;
    const arg = named(child(n, 'arguments')!)[0];
    const gradient = arg !== undefined && /grad/.test(text(arg));
    (gradient && underMarkedBranch(n, fn, text) ? inMarked : elsewhere).add(append[1]);
  });
  return new Set([...inMarked].filter((l) => !elsewhere.has(l)));
}

function underMarkedBranch(n: PyNode, fn: PyNode, text: (n: PyNode) => string): boolean {
  for (let p = n.parent; p && p !== fn; p = p.parent) {
    if (p.type !== 'block') continue;
    const clause = p.parent;
    const consequence =
      (clause?.type === 'if_statement' || clause?.type === 'elif_clause') && child(clause, 'consequence') === p;
    if (consequence && MARKED.test(text(child(clause, 'condition')!))) return true;
  }
  return false;
}

/** The loop body all-reduces the list (or one flattening of it) over the TP group with the paired op, unscaled. */
function loopSums(body: PyNode, list: string, op: string, text: (n: PyNode) => string): boolean {
  const written = text(body);
  if (/\/|\bdiv_?\(|\bmul_?\(|\bscale\w*\(|\bmean\(/.test(written)) return false;
  const reduced = new Set([list]);
  visit(body, (n) => {
    if (n.type !== 'assignment') return;
    const right = child(n, 'right');
    const flat = right && /^\w*flatten\w*\((\w+)\)$/.exec(text(right));
    if (flat && reduced.has(flat[1])) reduced.add(text(child(n, 'left')!));
  });
  let sums = false;
  visit(body, (n) => {
    if (n.type !== 'call' || !/(?:^|\.)all_reduce$/.test(text(child(n, 'function')!))) return;
    const args = named(child(n, 'arguments')!);
    const keyword = (k: string) => {
      const a = args.find((x) => x.type === 'keyword_argument' && text(child(x, 'name')!) === k);
      return a ? text(child(a, 'value')!) : undefined;
    };
    if (args[0] && reduced.has(text(args[0])) && keyword('op') === op && TP_GROUP.test(keyword('group') ?? ''))
      sums = true;
  });
  return sums;
}
