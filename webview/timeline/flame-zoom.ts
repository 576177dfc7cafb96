// Zooming the flame graph of a range, as Speedscope's and Brendan Gregg's flame graphs do: a click on a node makes it
// the graph's focus, drawn across the whole width with its callers above it (also full width, as a trail back) and
// its callees scaled to it; a click on one of those callers, or on the focus itself, zooms back out. Pure: the view
// (flame-view.ts) keeps the focus and draws it.
import type { FlameNode } from './flame';

/** The nodes from the root down to `node`, both included; just the root when `node` is not in the graph. */
export function flamePath(root: FlameNode, node: FlameNode): FlameNode[] {
  const walk = (at: FlameNode): FlameNode[] | undefined => {
    if (at === node) return [at];
    for (const child of at.children) {
      const below = walk(child);
      if (below) return [at, ...below];
    }
    return undefined;
  };
  return walk(root) ?? [root];
}

/**
 * The focus after a click on `clicked` while `focus` is zoomed into: a node below the focus becomes the focus; the
 * focus itself zooms out one level, to its caller; a caller drawn above the focus (the root included) becomes the
 * focus again. A click on nothing keeps the focus.
 */
export function focusAfterClick(root: FlameNode, focus: FlameNode, clicked: FlameNode | undefined): FlameNode {
  if (!clicked) return focus;
  if (clicked !== focus) return clicked;
  const path = flamePath(root, focus);
  return path.length > 1 ? path[path.length - 2] : root;
}
