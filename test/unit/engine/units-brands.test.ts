// The unit brands are checked by the typechecker, not at run time: each `@ts-expect-error` line below must fail to
// compile, and `npm run lint` (tsc over test/) fails when one of them compiles, i.e. when a brand stops separating
// its unit from the others or from plain numbers. The tests at the bottom check that the constructors change nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allReduceBusbwGBps,
  asBytes,
  asGBps,
  asMicros,
  formatBytes,
  formatMicros,
  simulateCollective,
  type Bytes,
  type CollectiveRequest,
  type GBps,
  type Micros,
} from '../../../src/engine/index';

const size: Bytes = asBytes(1024);
const duration: Micros = asMicros(12.5);
const bandwidth: GBps = asGBps(300);

// A unit is never another unit.
// @ts-expect-error A duration is not a size.
const durationAsSize: Bytes = duration;
// @ts-expect-error A size is not a duration.
const sizeAsDuration: Micros = size;
// @ts-expect-error A bandwidth is not a duration.
const bandwidthAsDuration: Micros = bandwidth;
// @ts-expect-error A size is not a bandwidth.
const sizeAsBandwidth: GBps = size;

// A plain number becomes a unit only through its constructor.
// @ts-expect-error A literal is not a size.
const literalSize: Bytes = 1024;
// @ts-expect-error Arithmetic on a unit gives a plain number.
const sum: Micros = duration + duration;

// The public surface carries the brands: requests, formatters and formulas reject the wrong unit.
// @ts-expect-error A request's size cannot be a duration.
const request: CollectiveRequest = { bytes: duration };
// @ts-expect-error formatBytes takes a size.
formatBytes(duration);
// @ts-expect-error formatMicros takes a duration.
formatMicros(size);
// @ts-expect-error The busbw formula takes (bytes, µs), not (µs, bytes).
allReduceBusbwGBps(duration, size, 8);

// A unit still reads as a number: a wider `number` accepts every one of them.
const widened: number[] = [size, duration, bandwidth];

test('the unit constructors return the number they were given', () => {
  for (const value of [0, 1, 0.1, 1e-9, 2 ** 40, -3]) {
    assert.equal(asBytes(value), value);
    assert.equal(asMicros(value), value);
    assert.equal(asGBps(value), value);
  }
  assert.deepEqual(widened, [1024, 12.5, 300]);
  // The ill-typed values above exist only for the typechecker; at run time they are the numbers they hold.
  assert.deepEqual(
    [durationAsSize, sizeAsDuration, bandwidthAsDuration, sizeAsBandwidth, literalSize, sum],
    [12.5, 1024, 300, 1024, 1024, 25],
  );
  assert.equal(request.bytes, 12.5);
});

test('a branded request simulates like the plain number it wraps', () => {
  const result = simulateCollective(
    { gpu: 'H100-SXM', nodes: 1, gpusPerNode: 8, intraNode: 'nvswitch' },
    { bytes: asBytes(1 << 20) },
  );
  assert.equal(result.bytes, 1 << 20);
  assert.ok(result.timeUs > 0);
});
