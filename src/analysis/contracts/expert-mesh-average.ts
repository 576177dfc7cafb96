// Expert gradients averaged over a mesh smaller than the data-parallel one (CP003). A function that averages a
// module's gradients over the mesh it is given in the backward (backward-placements.ts) is applied twice by one
// function of the program: to a sub-module of every layer (`block.moe.experts`) with one mesh, and to the whole
// model with another. Both meshes are selected by dimension names from one built mesh (mesh-dims.ts). The
// sub-module's inputs come through a token dispatch over a third mesh selected the same way (token-dispatch.ts): its
// backward sums into the sub-module's gradient the contributions of the tokens of every rank of that mesh. When the
// dimensions the model's mesh holds beyond the sub-module's are exactly dispatch-mesh dimensions, the sub-module's
// gradient is a sum over those ranks divided only by its own mesh: the dispatch mesh's size times what the rest of
// the model gets. Every step is read from written code; a step that is not (a mesh a parameter brings, a plan from
// elsewhere, a branch that cannot be decided) keeps the rule silent.
import { child, unparen, type PyNode } from '../tree';
import { guardsOf, Known, type Cond } from './branch-guards';
import { reachingValue } from './branch-values';
import type { BackwardAverager } from './backward-placements';
import { selectionLists, type DimEntry } from './mesh-dims';
import type { FileSyntax } from './placement-syntax';
import { dispatchOf, loopOver } from './expert-mesh-dispatch';
import type { LocatedStyle, ProgramFacts } from './expert-mesh-types';
import { compare } from './expert-mesh-compare';
import type { StyleApplication } from './token-dispatch';

export interface ExpertMeshProof {
  readonly averager: { path: string; item: BackwardAverager };
  readonly expertWrap: PyNode;
  readonly modelWrap: PyNode;
  readonly expertMesh: string;
  readonly modelMesh: string;
  readonly dispatchMesh: string;
  /** The dimensions the model's mesh holds beyond the experts' (all of them dispatch-mesh dimensions). */
  readonly extra: readonly DimEntry[];
  /** Dispatch-mesh dimensions outside the data-parallel mesh, with the branch that adds each. */
  readonly outside: readonly DimEntry[];
  /** The branch of the model's mesh the proof holds for. */
  readonly branch: readonly Cond[];
  readonly application: { path: string; item: StyleApplication };
  readonly dispatch: LocatedStyle;
}

/** The proofs in one function `fn` of the file `syntax` that calls the averager `averager` (by `name`). */
export function proveExpertMeshAverage(
  syntax: FileSyntax,
  fn: PyNode,
  name: string,
  averager: { path: string; item: BackwardAverager },
  program: ProgramFacts,
): ExpertMeshProof[] {
  const wraps = wrapsIn(syntax, fn, name);
  const model = wraps.find((w) => w.target.type === 'identifier');
  if (!model) return [];
  const out: ExpertMeshProof[] = [];
  for (const expert of wraps) {
    const loop = loopOver(syntax, expert.target, model.text);
    if (!loop) continue;
    const known = new Known(guardsOf(syntax, expert.statement, fn));
    const meshOf = (call: PyNode) => syntax.arg(call, averager.item.meshIndex, averager.item.meshParam);
    const expertMesh = meshOf(expert.call);
    const modelMesh = meshOf(model.call);
    if (!expertMesh || !modelMesh) continue;
    const expertSel = selection(syntax, fn, expertMesh, expert.call);
    const modelSel = selection(syntax, fn, modelMesh, model.call);
    if (!expertSel || !modelSel || expertSel.base !== modelSel.base) continue;
    const dispatch = dispatchOf(syntax, fn, known, model.text, loop.path, program);
    if (!dispatch) continue;
    const dispatchSel = selection(syntax, fn, dispatch.mesh, dispatch.mesh);
    if (!dispatchSel || dispatchSel.base !== expertSel.base || dispatchSel.lists.length !== 1) continue;
    const found = compare(known, expertSel.lists, modelSel.lists, dispatchSel.lists[0].entries, program.builders);
    if (!found) continue;
    out.push({
      averager,
      expertWrap: expert.call,
      modelWrap: model.call,
      expertMesh: syntax.source.textOf(expertMesh),
      modelMesh: syntax.source.textOf(modelMesh),
      dispatchMesh: syntax.source.textOf(dispatch.mesh),
      extra: found.extra,
      outside: found.outside,
      branch: found.branch,
      application: dispatch.application,
      dispatch: dispatch.style,
    });
  }
  return out;
}

interface Wrap {
  readonly statement: PyNode;
  readonly call: PyNode;
  readonly target: PyNode;
  readonly text: string;
}

/** `target = name(target, …)` statements of `fn`: the module wrapped and rebound. */
function wrapsIn(syntax: FileSyntax, fn: PyNode, name: string): Wrap[] {
  const out: Wrap[] = [];
  const stack: PyNode[] = [...fn.children];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'function_definition' || n.type === 'class_definition') continue;
    stack.push(...n.children);
    if (n.type !== 'assignment') continue;
    const left = child(n, 'left');
    const right = child(n, 'right');
    if (!left || !right || right.type !== 'call' || syntax.callee(right) !== name) continue;
    const first = syntax.args(right).positional[0];
    if (!first || syntax.text(first) !== syntax.text(left)) continue;
    out.push({ statement: n, call: right, target: left, text: syntax.text(left) });
  }
  return out;
}

/** A mesh argument as a selection from a built mesh: the mesh's name and the name lists. */
function selection(syntax: FileSyntax, fn: PyNode, mesh: PyNode, at: PyNode) {
  let value = unparen(mesh);
  if (value.type === 'identifier') {
    const reached = reachingValue(syntax, fn, syntax.text(value), at);
    if (!reached) return undefined;
    value = unparen(reached);
  }
  if (value.type !== 'subscript') return undefined;
  const base = child(value, 'value');
  const lists = selectionLists(syntax, fn, value);
  return base?.type === 'identifier' && lists ? { base: syntax.text(base), lists } : undefined;
}
