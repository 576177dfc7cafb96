// Orders indices by a Float64Array of times with a radix sort on the numbers' bits. The timeline sorts millions of
// span edges after its first paint, and an index sort with a comparator took seconds there (3.5 s for 1 M spans),
// holding up the first input. The radix sort is stable, as Array.prototype.sort is, so ties keep their input order
// and every caller's result is what the comparator sort gave. Each loop yields between chunks (slices.ts), so the
// sort of a large trace's edges can run in slices between frames.
import { SLICE_CHUNK, finish, type Steps } from '../shared/slices';

const DIGIT_BITS = 11;
const DIGITS = 1 << DIGIT_BITS;
const DIGIT_MASK = DIGITS - 1;
/** The passes over a 64-bit key, least significant digit first: [which word, shift]; the last digits are 10 bits. */
const PASSES: readonly (readonly [0 | 1, number])[] = [
  [0, 0],
  [0, 11],
  [0, 22],
  [1, 0],
  [1, 11],
  [1, 22],
];

/** The indices 0..n-1 ordered by `times` ascending; equal times (−0 and +0 included) keep their index order. */
export function sortIndicesByTime(times: ArrayLike<number>): Uint32Array {
  return finish(sortIndicesByTimeSteps(times));
}

/** sortIndicesByTime as a computation that yields between chunks of its loops. */
export function* sortIndicesByTimeSteps(times: ArrayLike<number>): Steps<Uint32Array> {
  const n = times.length;
  // Each time's bits, turned into an unsigned key that orders as the numbers do: a negative number has all its bits
  // flipped, a positive one only its sign bit. Adding 0 turns −0 into +0, which the comparator sort treats as equal.
  // One number's bits at a time, through a one-element view: a copy of every time would be one more large array.
  const bits = new Float64Array(1);
  const words = new Uint32Array(bits.buffer);
  // The arrays are allocated a few at a time with a yield between: allocating tens of megabytes can start a
  // garbage collection, and one slice should not hold two.
  let keys: [Uint32Array, Uint32Array] = [new Uint32Array(n), new Uint32Array(n)];
  let order = new Uint32Array(n);
  yield;
  for (let from = 0; from < n; from += SLICE_CHUNK) {
    const to = Math.min(n, from + SLICE_CHUNK);
    for (let i = from; i < to; i++) {
      bits[0] = times[i] + 0;
      const high = words[1];
      const negative = high >>> 31 === 1;
      keys[0][i] = negative ? ~words[0] >>> 0 : words[0];
      keys[1][i] = negative ? ~high >>> 0 : (high | 0x80000000) >>> 0;
      order[i] = i;
    }
    yield;
  }
  // The keys travel with their indices, so every pass reads its input in order and writes into few buckets.
  let nextKeys: [Uint32Array, Uint32Array] = [new Uint32Array(n), new Uint32Array(n)];
  let nextOrder = new Uint32Array(n);
  yield;
  const counts = new Uint32Array(DIGITS);
  for (const [word, shift] of PASSES) {
    const key = keys[word];
    counts.fill(0);
    for (let from = 0; from < n; from += SLICE_CHUNK) {
      const to = Math.min(n, from + SLICE_CHUNK);
      for (let i = from; i < to; i++) counts[(key[i] >>> shift) & DIGIT_MASK]++;
      yield;
    }
    // A digit every key shares (the high bits of times in one range) leaves the order as it is.
    if (n === 0 || counts[(key[0] >>> shift) & DIGIT_MASK] === n) continue;
    let total = 0;
    for (let d = 0; d < DIGITS; d++) {
      const c = counts[d];
      counts[d] = total;
      total += c;
    }
    const [low, high] = keys;
    const [nextLow, nextHigh] = nextKeys;
    for (let from = 0; from < n; from += SLICE_CHUNK) {
      const end = Math.min(n, from + SLICE_CHUNK);
      for (let i = from; i < end; i++) {
        const to = counts[(key[i] >>> shift) & DIGIT_MASK]++;
        nextLow[to] = low[i];
        nextHigh[to] = high[i];
        nextOrder[to] = order[i];
      }
      yield;
    }
    [keys, nextKeys] = [nextKeys, keys];
    [order, nextOrder] = [nextOrder, order];
  }
  return order;
}
