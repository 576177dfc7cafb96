// The fuzz plan keeps CI at or above the promised number of generated inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CI_MINIMUM_INPUTS, FUZZ_PLAN, plannedTotal } from './plan';

test(`CI fuzzes at least ${CI_MINIMUM_INPUTS} inputs across the formats`, () => {
  console.log(`fuzz plan: ${plannedTotal()} inputs in CI across ${Object.keys(FUZZ_PLAN).length} targets`);
  assert.ok(plannedTotal() >= CI_MINIMUM_INPUTS, `the plan has ${plannedTotal()} inputs`);
  for (const [target, runs] of Object.entries(FUZZ_PLAN)) assert.ok(runs > 0 && Number.isInteger(runs), target);
});
