// An edited system at 131,072 GPUs packs NVLSTree stages with hundreds of thousands of phase runs; joining them
// must not pass them as call arguments (the degraded-link bench threw "Maximum call stack size exceeded").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { concatPacked, type PackedFlows, type PhaseRun } from '../../../src/engine/sim/packed';
import { allocateFlowSet } from '../../../src/engine/sim/maxmin';

function part(flows: number, phase: PhaseRun['phase']): PackedFlows {
  const set = allocateFlowSet(flows, flows);
  for (let f = 0; f < flows; f++) {
    set.bytes[f] = 1;
    set.weight[f] = 1;
    set.capRate[f] = 1;
    set.start[f] = f;
    set.resource[f] = f;
    set.coefficient[f] = 1;
  }
  set.start[flows] = flows;
  // One run per flow, as a builder that cannot merge neighbouring terms writes them.
  const runs = Array.from({ length: flows }, (_, i) => ({ phase, term: i, count: 1 }));
  return { set, runs, maxReduceBytes: flows };
}

test('concatPacked joins parts with hundreds of thousands of phase runs, in order', () => {
  const joined = concatPacked([part(300_000, 'exchange'), part(200_000, 'broadcast')]);
  assert.equal(joined.set.count, 500_000);
  assert.equal(joined.runs.length, 500_000);
  assert.equal(joined.runs[299_999].phase, 'exchange');
  assert.equal(joined.runs[300_000].phase, 'broadcast');
  assert.equal(joined.set.start[500_000], 500_000);
  assert.equal(joined.maxReduceBytes, 300_000);
});
