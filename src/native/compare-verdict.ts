// The verdict of a flagged comparison: which part of the system would explain the sizes `compare` flagged. It
// reuses calibrate's bounded relaxation (calibrate.ts, calibrate-bounds.ts): the part whose release below its
// healthy bound explains the flagged sizes best is the one named. Kept apart from compare.ts because calibrate
// imports compare, and because the fit costs seconds that the editor's quick comparison does not spend.
import {
  formatBytes,
  NCCL_ALGORITHM_NAMES,
  type Algorithm,
  type Protocol,
  type SystemSpec,
  asBytes,
} from '../engine/index';
import { calibrateSystem, partClause } from './calibrate';
import { simulateIfRunnable, type CompareResult } from './compare';
import { uncertaintyBand } from './compare-bands';
import { achieved, asResolved, collectiveKindOf, dtypeOf, usableRows, withMeasuredNccl } from './compare-inputs';
import type { Measurement } from './import/model';
import type { System } from '../engine/index';

export interface CompareVerdict {
  /** What kind of cause: a hardware part below its healthy bound, NCCL's algorithm choice, or nothing found. */
  readonly cause: 'hardware' | 'algorithm' | 'unknown';
  /** The part as a user names it ("NIC", "GPU-to-NIC PCIe path", "NVLink", "algorithm NCCL chose"); absent when unknown. */
  readonly part?: string;
  /** The fitted override (calibrate's name) for a hardware cause, or the pair the flagged sizes are normal for. */
  readonly parameter?: string;
  readonly pair?: { readonly algorithm: Algorithm; readonly protocol: Protocol };
  /** One sentence for the user. */
  readonly sentence: string;
}

const ALGORITHMS: readonly Algorithm[] = Object.values(NCCL_ALGORITHM_NAMES);
const PROTOCOLS: readonly Protocol[] = ['LL', 'LL128', 'Simple'];

/** What a slow GPU-to-NIC hop usually means in practice, so the sentence points at something a user can check. */
const PART_HINTS: Readonly<Record<string, string>> = {
  'GPU-to-NIC PCIe path': ' (GPUDirect RDMA missing or off, or the NIC behind another PCIe switch or socket)',
  NIC: ' (a port trained below its rate, a congested or mis-routed fabric, or a NIC shared between GPUs)',
};

/**
 * Parts in series (a GPU's PCIe hop to its NIC and the NIC itself) explain a slow network equally well, and which
 * wins calibrate's coarse scan is then chance. Among the parts within this share of the best one's gain, the one
 * that needs the smallest departure from its healthy bound is the more plausible fault, so it is named.
 */
const NEAR_EQUAL_GAIN = 0.9;

function mostPlausible<P extends { gain: number; wanted: number; bound: number }>(parts: readonly P[]): P | undefined {
  if (parts.length === 0) return undefined;
  const close = parts.filter((p) => p.gain >= NEAR_EQUAL_GAIN * parts[0].gain);
  return close.reduce((a, b) => (b.wanted / b.bound > a.wanted / a.bound ? b : a));
}

/** Undefined when nothing is flagged; else the part that would explain the flagged sizes, in one sentence. */
export function explainFlagged(
  measurement: Measurement,
  spec: SystemSpec | System,
  result: CompareResult,
): CompareVerdict | undefined {
  const flagged = result.rows.filter((r) => r.flagged);
  if (flagged.length === 0) return undefined;
  const sizes =
    flagged.length === 1
      ? formatBytes(asBytes(flagged[0].bytes))
      : `${formatBytes(asBytes(flagged[0].bytes))}–${formatBytes(asBytes(flagged[flagged.length - 1].bytes))}`;
  const system = withMeasuredNccl(asResolved(spec), measurement);
  const kind = collectiveKindOf(measurement);
  // A pair other than the one judged against that the flagged sizes all match within the model's uncertainty
  // (both ways: a run faster than a slow pair is not normal for it) says NCCL chose otherwise than its model.
  const byBytes = new Map(usableRows(measurement).map((row) => [row.bytes, row]));
  for (const algorithm of ALGORITHMS) {
    for (const protocol of PROTOCOLS) {
      const fits = flagged.every((r) => {
        // A pair NCCL's own log or NCCL_ALGO fixed is what ran; no other pair explains it.
        if (r.chosenBy !== 'model' || (r.algorithm === algorithm && r.protocol === protocol)) return false;
        const row = byBytes.get(asBytes(r.bytes));
        const simulated =
          row &&
          simulateIfRunnable(system, { kind, bytes: asBytes(r.bytes), dtype: dtypeOf(row), algorithm, protocol });
        if (!row || !simulated) return false;
        const ratio = simulated.timeUs / achieved(row).timeUs;
        const bound = uncertaintyBand(r.bytes, system.nodes, system.spec.intraNode).bound;
        return ratio >= 1 - bound && ratio <= 1 + bound;
      });
      if (fits) {
        return {
          cause: 'algorithm',
          part: 'algorithm NCCL chose',
          pair: { algorithm, protocol },
          sentence: `The flagged sizes (${sizes}) are normal for ${algorithm}/${protocol}: the algorithm NCCL chose there, not the hardware, explains the gap (set NCCL_ALGO/NCCL_PROTO or check NCCL_DEBUG=INFO's tuning lines).`,
        };
      }
    }
  }
  const fit = calibrateSystem(measurement, system.spec, { minBytes: flagged[0].bytes });
  const top = mostPlausible(fit.unexplained?.parts ?? []);
  if (top) {
    const others = fit.unexplained!.parts.filter((p) => p !== top).map((p) => `the ${p.part}`);
    return {
      cause: 'hardware',
      part: top.part,
      parameter: top.name,
      sentence: `The flagged sizes (${sizes}) point at the ${top.part}${PART_HINTS[top.part] ?? ''}: ${partClause(top)}${others.length > 0 ? `; or else ${others.join(', ')}` : ''}.`,
    };
  }
  if (!fit.unexplained) {
    // The bounded fit explains the sizes: a healthy system at the slow end of its box, most moved part first.
    const moved = Object.entries(fit.parameters)
      .filter(([, v]) => v && v.to < v.from)
      .sort((a, b) => a[1]!.to / a[1]!.from - b[1]!.to / b[1]!.from)[0];
    const bound = moved ? fit.bounds[moved[0] as keyof typeof fit.bounds] : undefined;
    if (moved && bound) {
      return {
        cause: 'hardware',
        part: bound.part,
        parameter: moved[0],
        sentence: `The flagged sizes (${sizes}) fit a system whose ${bound.part} runs at ${Number(moved[1]!.to.toPrecision(3))} GB/s, inside its healthy range but below what the system file describes: check the ${bound.part}.`,
      };
    }
  }
  return {
    cause: 'unknown',
    sentence: `No single part below its healthy bound and no other algorithm explains the flagged sizes (${sizes}); the model itself may be what is wrong there.`,
  };
}
