// The (algorithm, protocol) pairs a real NCCL run may have taken at a size. NCCL ranks candidates with its cost
// model over figures from its own topology search (channel counts, per-channel bandwidths, path types), which a
// system description gives only roughly; a pair the model rates within a few per cent of its choice can win on
// the real machine. `compare` asks whether a measurement is normal for any of them before flagging it.
import type { Algorithm, CollectiveKind, Dtype, Protocol } from './collective-types';
import { ncclPredictedUs } from './nccl-model';
import { autoCandidates } from './select';
import type { System } from './topology/model';
import { asMicros, type Bytes, type Micros } from './units';

export interface NearChoice {
  readonly algorithm: Algorithm;
  readonly protocol: Protocol;
  /** NCCL's predicted time for the pair, µs. */
  readonly ncclUs: Micros;
}

/** NCCL's choice first, then every other pair its model rates within `factor` of it, fastest first. */
export function nearTiedChoices(
  system: System,
  kind: CollectiveKind,
  bytes: Bytes,
  dtype: Dtype,
  factor: number,
): NearChoice[] {
  const rated = autoCandidates(system, kind, dtype)
    .map((c, order) => ({ ...c, ncclUs: ncclPredictedUs(system, kind, bytes, c.algorithm, c.protocol), order }))
    .filter((c) => Number.isFinite(c.ncclUs))
    // Ties keep NCCL's enumeration order, as its strict minimum does.
    .sort((a, b) => a.ncclUs - b.ncclUs || a.order - b.order);
  if (rated.length === 0) return [];
  const best = rated[0].ncclUs;
  return rated
    .filter((c) => c.ncclUs <= best * factor)
    .map(({ algorithm, protocol, ncclUs }) => ({ algorithm, protocol, ncclUs: asMicros(ncclUs) }));
}
