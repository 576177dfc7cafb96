// Within an edited rail, the tree's rounds are one component over every node; the two-level shortcut
// (sim/two-level.ts) solves it on the flows the edit slows and one stand-in for the rest. On random edited systems
// (node counts, a NIC, leaf or spine link slower or faster, oversubscribed networks or not), every round's result
// must be the unreduced solver's bit for bit: the component solver as it was before the shortcut, on the same flows.
// A traced run cannot serve as the reference here: it goes through the same solver.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asBytes, resolveSystem, simulateCollective } from '../../../src/engine/index';
import { ComponentSolver } from '../../../src/engine/sim/components';
import type { FlowSet, RoundResult } from '../../../src/engine/sim/maxmin';
import { ComponentSolverBefore } from './support/components-before';
import { type Edit, lastNicEdit, leaving, nodeLinkEdit, sharedLinks, withLinks } from './support/edited-systems';
import { random, pick } from './support/random';

const EDITS: readonly Edit[] = [
  lastNicEdit("one degraded NIC link of the last node (the benchmark's edit)"),
  nodeLinkEdit('one link of a random node slower or faster', [0.25, 0.5, 0.9, 1.5], leaving),
  {
    name: 'one leaf or spine link slower or faster',
    apply(system, next) {
      const shared = sharedLinks(system);
      if (shared.length === 0) return system;
      const link = pick(next, shared);
      const factor = pick(next, [0.25, 0.5, 1.5]);
      return withLinks(system, (i) => (i === link ? factor : undefined));
    },
  },
];

/** Runs `body` with every solve checked against the solver before the shortcut; returns the shortcut's answers. */
function comparingSolves(where: string, body: () => void): number {
  const solve = Object.getOwnPropertyDescriptor(ComponentSolver.prototype, 'solve')!.value as (
    this: ComponentSolver,
    flows: FlowSet,
  ) => RoundResult;
  const references = new WeakMap<ComponentSolver, ComponentSolverBefore>();
  const solvers = new Set<ComponentSolver>();
  ComponentSolver.prototype.solve = function (this: ComponentSolver, flows: FlowSet): RoundResult {
    const result = solve.call(this, flows);
    const own = this as unknown as { capacityGBps: (r: number) => number; localId: Int32Array };
    let reference = references.get(this);
    if (!reference) references.set(this, (reference = new ComponentSolverBefore(own.capacityGBps, own.localId.length)));
    solvers.add(this);
    const expected = reference.solve(flows);
    assert.equal(result.durationUs, expected.durationUs, `${where}: a round's duration`);
    assert.deepEqual(result.finishUs, expected.finishUs, `${where}: a round's finish times`);
    return result;
  };
  try {
    body();
  } finally {
    ComponentSolver.prototype.solve = solve;
  }
  let answers = 0;
  for (const solver of solvers) answers += solver.twoLevelAnswers;
  return answers;
}

test("an edited rail solved in two levels gives the unreduced solver's rounds bit for bit", () => {
  let answered = 0;
  let compared = 0;
  for (let seed = 1; seed <= 36; seed++) {
    const next = random(17100 + seed);
    const nodes = pick(next, [24, 33, 64, 100, 130]);
    const gpusPerNode = pick(next, [2, 4, 8]);
    const system = resolveSystem({
      gpu: 'H100-SXM',
      nodes,
      gpusPerNode,
      intraNode: 'nvswitch',
      nic: { gbps: pick(next, [200, 400]), perNode: gpusPerNode },
      network: { nodesPerLeaf: pick(next, [2, 4, 32]), oversubscription: pick(next, [1, 1, 2]) },
    });
    const edit = EDITS[seed % EDITS.length];
    const edited = edit.apply(system, next);
    const bytes = asBytes(pick(next, [64 << 20, 1 << 30]));
    for (const algorithm of ['nvlstree', 'tree', 'auto'] as const) {
      const where = `seed ${17100 + seed} (${system.label}, ${edit.name}, ${algorithm})`;
      const got = comparingSolves(where, () => {
        simulateCollective(edited, { bytes, algorithm, ...(algorithm === 'auto' ? {} : { protocol: 'Simple' }) });
      });
      answered += got;
      compared++;
    }
  }
  assert.equal(compared, 108);
  // The shortcut must have answered somewhere, or this compares the filling with itself.
  assert.ok(answered >= 20, `the shortcut answered ${answered} components`);
});
