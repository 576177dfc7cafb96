// NCCL_ALGO, NCCL_PROTO and NCCL_NVLS_ENABLE as a run set them (lists, `^` negation, `allreduce:` prefixes), and
// the choice NCCL makes under them: its cost model's fastest allowed (algorithm, protocol) pair.
import {
  NCCL_ALGORITHM_NAMES,
  type Algorithm,
  type CollectiveKind,
  type Dtype,
  type Protocol,
} from './collective-types';
import { ncclPredictedUs } from './nccl-model';
import { autoCandidates } from './select';
import type { System } from './topology/model';

export interface NcclEnvLimits {
  readonly algorithms?: ReadonlySet<Algorithm>;
  readonly protocols?: ReadonlySet<Protocol>;
}

const NCCL_ALGORITHMS: readonly Algorithm[] = Object.values(NCCL_ALGORITHM_NAMES);
const PROTOCOL_NAMES: Record<string, Protocol> = { ll: 'LL', ll128: 'LL128', simple: 'Simple' };

function parseList<T>(value: unknown, names: Record<string, T>, all: readonly T[]): Set<T> | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  // Per-collective form "allreduce:tree,ring;allgather:ring": keep the AllReduce part when there is one.
  let text = value.trim();
  const scoped = text.split(';').find((part) => /^allreduce:/i.test(part.trim()));
  if (scoped) text = scoped.trim().slice('allreduce:'.length);
  else if (text.includes(':')) return undefined;
  const negate = text.startsWith('^');
  const listed = new Set<T>();
  for (const name of (negate ? text.slice(1) : text).split(',')) {
    const known = names[name.trim().toLowerCase()];
    if (known !== undefined) listed.add(known);
  }
  return negate ? new Set(all.filter((x) => !listed.has(x))) : listed;
}

export function ncclEnvLimits(env: unknown): NcclEnvLimits {
  const vars = env && typeof env === 'object' ? (env as Record<string, unknown>) : {};
  let algorithms = parseList(vars.NCCL_ALGO, NCCL_ALGORITHM_NAMES, NCCL_ALGORITHMS);
  if (String(vars.NCCL_NVLS_ENABLE ?? '') === '0') {
    algorithms = new Set([...(algorithms ?? NCCL_ALGORITHMS)].filter((a) => a !== 'nvls' && a !== 'nvlstree'));
  }
  const protocols = parseList(vars.NCCL_PROTO, PROTOCOL_NAMES, ['LL', 'LL128', 'Simple'] as Protocol[]);
  return { algorithms, protocols };
}

/** NCCL's pick under the limits, or undefined when they leave nothing (then NCCL would fall back to its default). */
export function ncclChoiceUnder(
  system: System,
  kind: CollectiveKind,
  bytes: number,
  dtype: Dtype,
  limits: NcclEnvLimits,
): { algorithm: Algorithm; protocol: Protocol } | undefined {
  // NCCL_PROTO enables the protocols it names outright, LL128 included where NCCL's default rule would not.
  const candidates = autoCandidates(system, kind, dtype, { ncclProtoSet: limits.protocols !== undefined }).filter(
    (c) =>
      (!limits.algorithms || limits.algorithms.has(c.algorithm)) &&
      (!limits.protocols || limits.protocols.has(c.protocol)),
  );
  let best: { algorithm: Algorithm; protocol: Protocol } | undefined;
  let bestUs = Infinity;
  for (const candidate of candidates) {
    const us = ncclPredictedUs(system, kind, bytes, candidate.algorithm, candidate.protocol);
    if (us < bestUs) {
      bestUs = us;
      best = candidate;
    }
  }
  return best;
}
