// Orders indices by a Float64Array of times with a radix sort on the numbers' bits. The timeline sorts millions of
// span edges after its first paint, and an index sort with a comparator took seconds there (3.5 s for 1 M spans),
// holding up the first input. The radix sort is stable, as Array.prototype.sort is, so ties keep their input order
// and every caller's result is what the comparator sort gave. Each loop looks at the slice clock between groups of
// elements and yields when it is due (slices.ts), so the sort of a large trace's edges runs in slices between
// frames; no step of it grows with the number of times.
import { CLOCK_CHECK_ELEMENTS, UNSLICED, finish, type SliceClock, type Steps } from '../shared/slices';

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

/** The sort's arrays: keys as two 32-bit words per time (low, high) and the indices they travel with. */
interface Keyed {
  readonly low: Uint32Array;
  readonly high: Uint32Array;
  readonly order: Uint32Array;
}

const keyed = (n: number): Keyed => ({ low: new Uint32Array(n), high: new Uint32Array(n), order: new Uint32Array(n) });

/** The first n elements of a Keyed's arrays, as views. */
const viewOf = (arrays: Keyed, n: number): Keyed => ({
  low: arrays.low.subarray(0, n),
  high: arrays.high.subarray(0, n),
  order: arrays.order.subarray(0, n),
});

/**
 * Arrays a caller that sorts many times in a row (one rank's edges after another's) hands to each sort, so that the
 * sorts allocate nothing: allocating and dropping megabytes rank after rank sets off garbage collections, each a
 * pause. The order a sort returns is a view into them, valid until the next sort that uses them.
 */
export interface SortScratch {
  readonly first: Keyed;
  readonly second: Keyed;
}

export function sortScratch(capacity: number): SortScratch {
  return { first: keyed(capacity), second: keyed(capacity) };
}

// The loops are plain functions over a range of elements, called group by group from the generator: V8 optimises a
// plain function's loop while it runs, and a generator's only between resumptions, so a long loop inside the
// generator would run unoptimised (and box every number it computes, garbage for the collector to sweep).

/** Reads times [from, to) into keys that order as the numbers do, each with its index. */
function writeKeys(
  times: ArrayLike<number>,
  into: Keyed,
  bits: Float64Array,
  words: Uint32Array,
  from: number,
  to: number,
): void {
  for (let i = from; i < to; i++) {
    // A negative number has all its bits flipped, a positive one only its sign bit. Adding 0 turns −0 into +0,
    // which the comparator sort treats as equal.
    bits[0] = times[i] + 0;
    const high = words[1];
    const negative = high >>> 31 === 1;
    into.low[i] = negative ? ~words[0] >>> 0 : words[0];
    into.high[i] = negative ? ~high >>> 0 : (high | 0x80000000) >>> 0;
    into.order[i] = i;
  }
}

function countDigits(key: Uint32Array, shift: number, counts: Uint32Array, from: number, to: number): void {
  for (let i = from; i < to; i++) counts[(key[i] >>> shift) & DIGIT_MASK]++;
}

/** Moves elements [from, to) to the positions `counts` gives their digit (counts holds each digit's next slot). */
function scatter(
  source: Keyed,
  target: Keyed,
  key: Uint32Array,
  shift: number,
  counts: Uint32Array,
  from: number,
  to: number,
): void {
  for (let i = from; i < to; i++) {
    const slot = counts[(key[i] >>> shift) & DIGIT_MASK]++;
    target.low[slot] = source.low[i];
    target.high[slot] = source.high[i];
    target.order[slot] = source.order[i];
  }
}

/** sortIndicesByTime as a computation that yields whenever `clock` is due. */
export function* sortIndicesByTimeSteps(
  times: ArrayLike<number>,
  clock: SliceClock = UNSLICED,
  scratch?: SortScratch,
): Steps<Uint32Array> {
  const n = times.length;
  // One number's bits at a time, through a one-element view: a copy of every time would be one more large array.
  const bits = new Float64Array(1);
  const words = new Uint32Array(bits.buffer);
  // The arrays are allocated a few at a time with a look at the clock between: allocating tens of megabytes can
  // start a garbage collection, and one slice should not hold two.
  let current = scratch ? viewOf(scratch.first, n) : keyed(n);
  yield;
  for (let from = 0; from < n; from += CLOCK_CHECK_ELEMENTS) {
    writeKeys(times, current, bits, words, from, Math.min(n, from + CLOCK_CHECK_ELEMENTS));
    if (clock.due()) yield;
  }
  // The keys travel with their indices, so every pass reads its input in order and writes into few buckets.
  let next = scratch ? viewOf(scratch.second, n) : keyed(n);
  yield;
  const counts = new Uint32Array(DIGITS);
  for (const [word, shift] of PASSES) {
    const key = word === 0 ? current.low : current.high;
    counts.fill(0);
    for (let from = 0; from < n; from += CLOCK_CHECK_ELEMENTS) {
      countDigits(key, shift, counts, from, Math.min(n, from + CLOCK_CHECK_ELEMENTS));
      if (clock.due()) yield;
    }
    // A digit every key shares (the high bits of times in one range) leaves the order as it is.
    if (n === 0 || counts[(key[0] >>> shift) & DIGIT_MASK] === n) continue;
    let total = 0;
    for (let d = 0; d < DIGITS; d++) {
      const c = counts[d];
      counts[d] = total;
      total += c;
    }
    for (let from = 0; from < n; from += CLOCK_CHECK_ELEMENTS) {
      scatter(current, next, key, shift, counts, from, Math.min(n, from + CLOCK_CHECK_ELEMENTS));
      if (clock.due()) yield;
    }
    [current, next] = [next, current];
  }
  return current.order;
}
