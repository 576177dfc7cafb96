// compare judges each size against the model's uncertainty at that size (MODEL_UNCERTAINTY_BANDS) and says which
// part would explain a flagged run: a synthetic 4-node run whose NIC runs at half its rate from 64 MiB is flagged
// there and blamed on the NIC; one inside the band is not flagged. (On two nodes a half-rate NIC under NVLSTree
// runs as fast as a healthy ring there, so the verdict could rightly name the algorithm instead.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  presetSystem,
  resolveSystem,
  simulateCollective,
  type SystemSpec,
  asGBps,
  asBytes,
} from '../../../src/engine/index';
import { compareMeasurement } from '../../../src/native/compare';
import { MODEL_UNCERTAINTY_BANDS, flagRatioFor, uncertaintyBand } from '../../../src/native/compare-bands';
import { explainFlagged } from '../../../src/native/compare-verdict';
import type { Measurement } from '../../../src/native/import/model';
import { syntheticRun } from './fixtures/synthetic-run';

const MiB = 1 << 20;
const fourNodes: SystemSpec = { ...presetSystem('dgx-h100', { nodes: 4 })!, ncclVersion: '2.26.2' };
const healthy = resolveSystem(fourNodes);
const nicGBps = healthy.topology.links
  .filter((l) => l.kind === 'network')
  .reduce((m, l) => Math.min(m, l.GBps), Infinity);
const halfNic = resolveSystem({ ...fourNodes, overrides: { nicGBps: asGBps(nicGBps / 2) } });
const sizes = Array.from({ length: 14 }, (_, i) => 2 ** (i + 17)); // 128 KiB to 1 GiB

function measured(timeUs: (bytes: number) => number): Measurement {
  return syntheticRun(healthy.ranks, 4, sizes, timeUs, '2.26.2');
}

test('the bands cover every size once for single nodes of each fabric and for several nodes; mid sizes are the widest across nodes', () => {
  for (const [multiNode, fabric] of [
    [false, 'nvlink'],
    [false, 'pcie'],
    [true, 'nvlink'],
    [true, 'pcie'],
  ] as const) {
    const bands = MODEL_UNCERTAINTY_BANDS.filter(
      (b) => b.multiNode === multiNode && (b.fabric === undefined || b.fabric === fabric),
    );
    for (const bytes of [1, MiB - 1, MiB, 64 * MiB, 2 ** 40])
      assert.equal(bands.filter((b) => bytes >= b.minBytes && bytes < b.maxBytes).length, 1);
  }
  // A PCIe or bridged node rests on constants one run each supports, so unseen ones are less certain at large sizes.
  assert.ok(uncertaintyBand(512 * MiB, 1, 'nvlink-bridge').bound > uncertaintyBand(512 * MiB, 1, 'nvswitch').bound);
  assert.ok(uncertaintyBand(8 * MiB, 4).bound > uncertaintyBand(512 * MiB, 4).bound);
  assert.ok(uncertaintyBand(256 * 1024, 1).bound > uncertaintyBand(512 * MiB, 1).bound);
});

test('a run within the band is not flagged', () => {
  // Each size slower than the model by 90 % of its band's bound: within what healthy runs have shown.
  const run = measured(
    (bytes) =>
      simulateCollective(healthy, { bytes: asBytes(bytes) }).timeUs / (1 - 0.9 * uncertaintyBand(bytes, 4).bound),
  );
  const result = compareMeasurement(run, healthy);
  assert.equal(
    result.flagged,
    0,
    result.rows.map((r) => `${r.bytes}: ${r.ratio.toFixed(2)} / ${r.threshold.toFixed(2)}`).join(', '),
  );
  assert.equal(explainFlagged(run, healthy, result), undefined);
});

test('a run slowed at large sizes by a NIC at half its rate is flagged there and the verdict names the NIC', () => {
  const run = measured(
    (bytes) => simulateCollective(bytes >= 64 * MiB ? halfNic : healthy, { bytes: asBytes(bytes) }).timeUs,
  );
  const result = compareMeasurement(run, healthy);
  const flagged = result.rows.filter((r) => r.flagged).map((r) => r.bytes);
  assert.ok(flagged.length > 0 && flagged.every((b) => b >= 64 * MiB), `flagged ${flagged.join(', ')}`);
  assert.ok(flagged.includes(1024 * MiB));
  for (const r of result.rows) if (r.bytes >= 64 * MiB) assert.equal(r.threshold, flagRatioFor(r.bytes, 4));
  const verdict = explainFlagged(run, healthy, result)!;
  assert.equal(verdict.cause, 'hardware');
  assert.equal(verdict.part, 'NIC', verdict.sentence);
  assert.match(verdict.sentence, /NIC/);
});
