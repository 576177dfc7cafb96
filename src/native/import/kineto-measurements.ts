// The measurements a Kineto trace gives (kineto.ts): one per collective, each message size at its median kernel time.
import { rowFromTime, type CollectiveName, type Measurement, type MeasurementRow } from './model';
import type { NcclKernel } from './kineto-events';

/** One measurement per collective: each size's median kernel time. */
export function toMeasurements(kernels: NcclKernel[], worldSize: number, info: Record<string, unknown>): Measurement[] {
  const byCollective = new Map<CollectiveName, Map<number, number[]>>();
  for (const k of kernels) {
    if (k.bytes === undefined || k.durationUs <= 0) continue;
    const sizes = byCollective.get(k.collective) ?? new Map<number, number[]>();
    byCollective.set(k.collective, sizes);
    // Push, not spread: a long run repeats one bucket size hundreds of thousands of times, and copying the list
    // on every kernel made importing such a trace quadratic.
    const times = sizes.get(k.bytes);
    if (times) times.push(k.durationUs);
    else sizes.set(k.bytes, [k.durationUs]);
  }
  // Each collective's group size, from its first kernel that names one, found in one pass: looking it up per
  // size row scanned every kernel when no kernel had the field (kernels × sizes).
  const groupSizes = new Map<CollectiveName, number>();
  for (const k of kernels) if (k.groupSize && !groupSizes.has(k.collective)) groupSizes.set(k.collective, k.groupSize);
  const ranksOf = (c: CollectiveName): number => groupSizes.get(c) ?? worldSize;
  const all: CollectiveName[] = [...new Set(kernels.map((k) => k.collective))];
  return all.map((collective) => {
    const sizes = byCollective.get(collective) ?? new Map<number, number[]>();
    const rows: MeasurementRow[] = [...sizes]
      .sort((a, b) => a[0] - b[0])
      .map(([bytes, times]) => {
        const sorted = [...times].sort((a, b) => a - b);
        return {
          ...rowFromTime(bytes, sorted[Math.floor(sorted.length / 2)], collective, ranksOf(collective)),
          calls: times.length,
        };
      });
    const of = kernels.filter((k) => k.collective === collective);
    return {
      kind: 'kineto' as const,
      collective,
      ranks: ranksOf(collective),
      rows,
      meta: {
        kernels: of.length,
        algorithms: [...new Set(of.map((k) => k.algorithm ?? '?'))],
        protocols: [...new Set(of.map((k) => k.protocol ?? '?'))],
        rank: kernels[0]?.rank ?? 0,
        ...(typeof info.nccl_version === 'string' ? { ncclVersion: info.nccl_version } : {}),
        ...(typeof info.backend === 'string' ? { backend: info.backend } : {}),
      },
    };
  });
}
