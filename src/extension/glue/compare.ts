// "Is my bandwidth normal?": each measured size against the model's busbw at that size (log-interpolated between
// swept sizes). A size is flagged below 70 % of what the model expects, as the measured-vs-model issue asks.
import type { SweepRow } from '../../engine/index';

export const FLAG_RATIO = 0.7;

export interface ComparedRow {
  readonly bytes: number;
  readonly measuredBusbwGBps: number;
  readonly expectedBusbwGBps: number;
  readonly ratio: number;
  readonly flagged: boolean;
}

/** The model's busbw at `bytes`, interpolated in log(size); clamped to the sweep's ends. */
export function expectedBusbwAt(model: readonly SweepRow[], bytes: number): number {
  if (model.length === 0) return 0;
  if (bytes <= model[0].bytes) return model[0].busbwGBps;
  for (let i = 1; i < model.length; i++) {
    if (model[i].bytes >= bytes) {
      const a = model[i - 1];
      const b = model[i];
      const t = (Math.log(bytes) - Math.log(a.bytes)) / (Math.log(b.bytes) - Math.log(a.bytes));
      return a.busbwGBps + t * (b.busbwGBps - a.busbwGBps);
    }
  }
  return model[model.length - 1].busbwGBps;
}

export function compareMeasured(rows: readonly { bytes: number; busbwGBps: number }[], model: readonly SweepRow[], minBytes = 0): ComparedRow[] {
  return rows
    .filter((r) => r.bytes > 0 && r.bytes >= minBytes)
    .map((r) => {
      const expected = expectedBusbwAt(model, r.bytes);
      const ratio = expected > 0 ? r.busbwGBps / expected : 1;
      return { bytes: r.bytes, measuredBusbwGBps: r.busbwGBps, expectedBusbwGBps: expected, ratio, flagged: expected > 0 && ratio < FLAG_RATIO };
    });
}
