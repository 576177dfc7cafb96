// NVLSTree's stages take each node's parent and depth in both trees from nvls-tree-shape.ts's treeShapes, which walks the
// nodes by lowest set bit and reads tree 1 through tree 0's relabelling instead of calling binaryTreeParent per
// node and walking to the root: every node count from 2 to 700 must give binaryTreeParent's trees exactly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { treeShapes } from '../../../src/engine/algorithms/nvls-tree-shape';
import { binaryTreeParent } from '../../../src/engine/algorithms/tree';

test('the trees of the NVLSTree stages are binaryTreeParent’s, parents and depths, for 2 to 700 nodes', () => {
  for (let nodes = 2; nodes <= 700; nodes++) {
    const shapes = treeShapes(nodes, 2);
    for (let t = 0; t < 2; t++) {
      for (let node = 0; node < nodes; node++) {
        const parent = binaryTreeParent(node, nodes, t);
        assert.equal(shapes[t].parent[node], parent, `${nodes} nodes, tree ${t}, node ${node}: parent`);
        let depth = 0;
        for (let x = node; binaryTreeParent(x, nodes, t) >= 0; x = binaryTreeParent(x, nodes, t)) depth++;
        assert.equal(shapes[t].depth[node], depth, `${nodes} nodes, tree ${t}, node ${node}: depth`);
      }
    }
  }
});
