// The radix index sort the counter tracks use must give exactly what the stable comparator sort gave, ties in input
// order included, on every kind of time a trace can hold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sortIndicesByTime } from '../../webview/timeline/sort-by-time';

function comparatorOrder(times: readonly number[]): number[] {
  return [...times.keys()].sort((a, b) => times[a] - times[b]);
}

/** A small seeded generator, so a failure names inputs that can be reproduced. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

test('equals the stable comparator sort on random times with ties, negatives, zeros of both signs and infinities', () => {
  for (let seed = 1; seed <= 40; seed++) {
    const random = generator(seed);
    const n = 1 + Math.floor(random() * 3000);
    const pool = [0, -0, Infinity, -Infinity, 1e-300, -1e-300, 5e-324, 1.5, -1.5, 2 ** 52, -(2 ** 40)];
    const times = Array.from({ length: n }, () => {
      const r = random();
      if (r < 0.2) return pool[Math.floor(random() * pool.length)];
      if (r < 0.5) return Math.round(random() * 50) * 0.25; // many exact ties, as span edges on one clock have
      return (random() - 0.3) * 10 ** Math.floor(random() * 12);
    });
    assert.deepEqual([...sortIndicesByTime(times)], comparatorOrder(times), `seed ${seed}, ${n} times`);
  }
});

test('an empty input gives an empty order, and a sorted input keeps its order', () => {
  assert.deepEqual([...sortIndicesByTime([])], []);
  assert.deepEqual([...sortIndicesByTime([1, 2, 2, 3])], [0, 1, 2, 3]);
  assert.deepEqual([...sortIndicesByTime([3, 2, 2, 1])], [3, 1, 2, 0]);
});
