// Comparison of simulated results to rounding, for reductions that are exact in real arithmetic but fill a round's
// groups on their own where the unreduced run fills them inside one larger component (see algorithms/ring-edited.ts).
import assert from 'node:assert/strict';

/** Every field alike, numbers to 1e-12 of their size (a few units in the last place of a double). */
export function assertClose(actual: unknown, expected: unknown, where: string): void {
  if (typeof actual === 'number' && typeof expected === 'number') {
    const tolerance = 1e-12 * Math.max(Math.abs(actual), Math.abs(expected));
    assert.ok(Math.abs(actual - expected) <= tolerance, `${where}: ${actual} against ${expected}`);
  } else if (typeof actual === 'object' && actual !== null && typeof expected === 'object' && expected !== null) {
    assert.deepEqual(Object.keys(actual).sort(), Object.keys(expected).sort(), where);
    for (const key of Object.keys(actual))
      assertClose(
        (actual as Record<string, unknown>)[key],
        (expected as Record<string, unknown>)[key],
        `${where} ${key}`,
      );
  } else assert.equal(actual, expected, where);
}
