// Zooming a range's flame graph: a clicked node takes the whole width with its callers above it and its callees
// scaled to it, a click on the focus or on a caller zooms back out, and stacks deeper than the drawn levels are
// drawn once zoomed into.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rangeFlame, type FlameNode } from '../../webview/timeline/flame';
import { FLAME_ROW_PX, layoutFlame, type FlameRect } from '../../webview/timeline/flame-view';
import { flamePath, focusAfterClick } from '../../webview/timeline/flame-zoom';
import { stepModel } from './timeline-step-model';

const WIDTH_PX = 700;

/** The drawn rectangles as "name level x+width", the root named "(root)". */
function drawn(rects: readonly FlameRect[]): string[] {
  return rects.map(
    (r) => `${r.node.name || '(root)'} ${r.yPx / FLAME_ROW_PX} ${Math.round(r.xPx)}+${Math.round(r.widthPx)}`,
  );
}

function child(node: FlameNode, name: string): FlameNode {
  const found = node.children.find((c) => c.name === name);
  assert.ok(found, `${node.name || '(root)'} has a child ${name}`);
  return found;
}

test('zoomed into a node, its callers and it span the width and its callees are scaled to it', () => {
  const root = rangeFlame(stepModel(), 0, 100);
  const step = child(root, 'step');
  const backward = child(step, 'backward');
  // Not zoomed: 175 µs of busy time over 700 px, 4 px per µs.
  assert.deepEqual(drawn(layoutFlame(root, WIDTH_PX)).slice(0, 5), [
    '(root) 0 0+700',
    'step 1 0+400',
    'backward 2 0+200',
    'layer 3 0+80',
    'optimizer 2 200+80',
  ]);
  // Zoomed into the backward pass (50 µs): 14 px per µs, and nothing of the other stacks is drawn.
  assert.deepEqual(drawn(layoutFlame(root, WIDTH_PX, backward)), [
    '(root) 0 0+700',
    'step 1 0+700',
    'backward 2 0+700',
    'layer 3 0+280',
  ]);
  assert.deepEqual(
    flamePath(root, backward).map((n) => n.name),
    ['', 'step', 'backward'],
  );
});

test('a click zooms into a node; the focus or a caller above it zooms back out', () => {
  const root = rangeFlame(stepModel(), 0, 100);
  const step = child(root, 'step');
  const backward = child(step, 'backward');
  const layer = child(backward, 'layer');
  assert.equal(focusAfterClick(root, root, backward), backward, 'into a node');
  assert.equal(focusAfterClick(root, backward, layer), layer, 'further in');
  assert.equal(focusAfterClick(root, backward, backward), step, 'the focus again: one level out');
  assert.equal(focusAfterClick(root, layer, step), step, 'a caller drawn above: back to it');
  assert.equal(focusAfterClick(root, layer, root), root, 'the root: not zoomed');
  assert.equal(focusAfterClick(root, step, step), root, 'an outermost stack clicked again: not zoomed');
  assert.equal(focusAfterClick(root, backward, undefined), backward, 'a click on nothing keeps the focus');
});

test('a stack deeper than the drawn levels is drawn to its end once zoomed into', () => {
  // A chain of 24 nested calls, each half of its caller.
  const root: FlameNode = { name: '', totalUs: 0, selfUs: 0, spans: [], phase: 0, children: [] };
  let at = root;
  for (let depth = 1; depth <= 24; depth++) {
    const node: FlameNode = {
      name: `f${depth}`,
      totalUs: 2 ** (25 - depth),
      selfUs: 0,
      spans: [],
      phase: 0,
      children: [],
    };
    at.children.push(node);
    at = node;
  }
  root.totalUs = root.children[0].totalUs;
  const deepest = (rects: readonly FlameRect[]): number => Math.max(...rects.map((r) => r.yPx / FLAME_ROW_PX));
  assert.equal(deepest(layoutFlame(root, WIDTH_PX)), 15, 'cut at 16 levels');
  let f10 = root;
  for (let i = 0; i < 10; i++) f10 = f10.children[0];
  const zoomed = layoutFlame(root, WIDTH_PX, f10);
  assert.equal(deepest(zoomed), 24, 'every level below f10 drawn');
  const f11 = zoomed.find((r) => r.node.name === 'f11')!;
  assert.equal(f11.widthPx, WIDTH_PX / 2, 'f11 is half of f10, which takes the width');
});
