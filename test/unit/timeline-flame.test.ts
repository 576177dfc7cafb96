// The flame graph of a selected range: spans merged by their nesting path, clipped to the range, widths adding up
// (a parent holds its children) and the root equal to the busy time the name table's self column sums to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rangeAggregate } from '../../webview/timeline/aggregate';
import { flameDepth, rangeFlame, type FlameNode } from '../../webview/timeline/flame';
import { stepModel } from './timeline-step-model';

/** The graph as indented lines: name total/self×spans. */
function lines(node: FlameNode, indent = ''): string[] {
  return node.children.flatMap((c) => [
    `${indent}${c.name} ${c.totalUs}/${c.selfUs}×${c.spans.length}`,
    ...lines(c, indent + '  '),
  ]);
}

test('spans merge by their stack of names, widest first, over every counted lane', () => {
  const root = rangeFlame(stepModel(), 0, 100);
  assert.equal(root.totalUs, 175);
  assert.deepEqual(lines(root), [
    'step 100/30×1',
    '  backward 50/30×1',
    '    layer 20/20×2',
    '  optimizer 20/20×1',
    'allreduce 50/0×1',
    '  exchange 25/25×1',
    '  reduce 25/25×1',
    // Rank 1's layer has no parent: a stack of its own, not merged with the layers inside the backward pass.
    'layer 25/25×1',
  ]);
  assert.equal(flameDepth(root), 3);
});

test('a range clips every span; a span only touching it is not in it', () => {
  assert.deepEqual(lines(rangeFlame(stepModel(), 25, 45)), [
    'step 20/0×1',
    '  backward 20/10×1',
    '    layer 10/10×2',
    'allreduce 15/0×1',
    '  exchange 15/15×1',
  ]);
  const empty = rangeFlame(stepModel(), 100, 120);
  assert.equal(empty.children.length, 0);
  assert.equal(empty.totalUs, 0);
});

test("property: parents hold their children, the root is the table's busy time, names sum to the table", () => {
  const model = stepModel();
  const check = (node: FlameNode, where: string): void => {
    const children = node.children.reduce((sum, c) => sum + c.totalUs, 0);
    assert.ok(node.totalUs >= children - 1e-9, `${where} ${node.name}: ${node.totalUs} < ${children}`);
    if (node !== root) assert.ok(Math.abs(node.totalUs - node.selfUs - children) < 1e-9, `${where} ${node.name} self`);
    for (const c of node.children) check(c, where);
  };
  let root: FlameNode;
  for (let from = 0; from < 100; from += 7) {
    for (let to = from + 1; to <= 110; to += 13) {
      root = rangeFlame(model, from, to);
      const where = `${from}..${to}`;
      check(root, where);
      const table = rangeAggregate(model, from, to);
      const busy = table.reduce((sum, a) => sum + a.selfUs, 0);
      assert.ok(Math.abs(root.totalUs - busy) < 1e-9, `${where}: root ${root.totalUs} vs busy ${busy}`);
      const byName = new Map<string, number>();
      const walk = (n: FlameNode): void => {
        for (const c of n.children) {
          byName.set(c.name, (byName.get(c.name) ?? 0) + c.totalUs);
          walk(c);
        }
      };
      walk(root);
      for (const row of table) assert.ok(Math.abs((byName.get(row.name) ?? -1) - row.totalUs) < 1e-9, row.name);
    }
  }
});
