// compare's uncertainty bands are the worst leave-one-out shortfall of the healthy published runs in each band,
// widened by LOO_MARGIN: this re-derives them from ../shared so a model change that moves the worst unseen row
// also has to move the band.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { ROOT } from './run-cli';
import { loadDatasets } from '../../../src/cli/commands/validate';
import { leaveOneOut } from '../../../src/native/loo-refit';
import { LOO_MARGIN, MODEL_UNCERTAINTY_BANDS, fabricClassOf } from '../../../src/native/compare-bands';
import { needShared } from '../requirements';

const SHARED = resolve(ROOT, '..', 'shared', 'calibration');
const SYSTEMS = join(ROOT, 'calibration', 'systems');
const skip = needShared(join(SHARED, 'nccl-tests'), 'the calibration datasets');

test(
  'each band is the worst healthy leave-one-out shortfall in it plus the stated margin, rounded up to 1 %',
  { skip },
  () => {
    const datasets = loadDatasets(SHARED, SYSTEMS);
    const loo = leaveOneOut(datasets);
    const worst = MODEL_UNCERTAINTY_BANDS.map(() => 0);
    datasets.forEach((d, i) => {
      if (d.dataset.suspect === true) return;
      for (const row of loo[i].leaveOneOut.rows) {
        const band = MODEL_UNCERTAINTY_BANDS.findIndex(
          (b) =>
            b.multiNode === d.spec.nodes > 1 &&
            (b.fabric === undefined || b.fabric === fabricClassOf(d.spec.intraNode)) &&
            row.bytes >= b.minBytes &&
            row.bytes < b.maxBytes,
        );
        worst[band] = Math.max(worst[band], 1 - row.busbwGBps / row.simulatedBusbwGBps);
      }
    });
    MODEL_UNCERTAINTY_BANDS.forEach((band, i) => {
      const derived = Math.ceil(100 * (1 - (1 - worst[i]) * (1 - LOO_MARGIN)) - 1e-9) / 100;
      const name = `${band.multiNode ? 'multi-node' : `one ${band.fabric} node`} ${band.minBytes}-${band.maxBytes} B`;
      assert.ok(worst[i] > 0, `${name}: no healthy row falls short of the model here`);
      // The single-node NVLink large band also holds the 2-GPU A100 NCCL_DEBUG log (17 %), below its derived bound.
      assert.equal(band.bound, derived, `${name}: worst leave-one-out shortfall ${(100 * worst[i]).toFixed(1)} %`);
    });
  },
);
