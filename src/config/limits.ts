// The one table of limits for every count and size a user can give: flags, config keys in every format, what-ifs
// and sweeps. Each maximum comes from what the engine can hold in memory and time on a laptop (measured, see
// docs/limits.md, which lists this table and is checked against it by test/unit/config/limits.test.ts), and is
// enforced where the value is parsed, with its file:line:col, its key, its value and the limit.

export interface Limit {
  /** Largest accepted value (inclusive). */
  readonly max: number;
  readonly unit: string;
  /** Config keys (any format, compared without case, `-` and `_`) that hold this quantity. */
  readonly keys: readonly string[];
  /** What the maximum protects, for the docs. */
  readonly why: string;
}

const KiB = 1024;
const MiB = 1024 * KiB;

export const LIMITS = {
  nodes: {
    max: 16_384,
    unit: 'nodes',
    keys: ['nodes', 'num_machines', 'nnodes'],
    why: 'the largest clusters users plan (issue 17): 16,384 nodes of 8 GPUs took 13 s and 500 MB on an idle 2-core machine; 32,768 nodes did not finish in 2 minutes',
  },
  gpusPerNode: {
    max: 1024,
    unit: 'GPUs',
    keys: ['gpusPerNode', 'gpus_per_node', 'nproc_per_node'],
    why: 'the largest NVLink/NVSwitch domain the system schema describes',
  },
  ranks: {
    max: 131_072,
    unit: 'ranks',
    keys: ['num_processes', 'world_size'],
    why: 'nodes × GPUs per node: the simulator and the numeric check hold per-rank state; 131,072 ranks is the 13 s case above',
  },
  processes: {
    max: 256,
    unit: 'processes',
    keys: [],
    why: '`run --nproc` starts one Python with torch (about 300 MB) per rank on this machine',
  },
  layers: {
    max: 1024,
    unit: 'layers',
    keys: ['num_hidden_layers', 'n_layer', 'num_layers'],
    why: 'a model at the layer and width limits at once profiles in 1.6 s and 72 MB; published models have under 200 layers',
  },
  width: {
    max: 262_144,
    unit: 'elements',
    keys: ['hidden_size', 'n_embd', 'intermediate_size', 'n_inner', 'd_model', 'ffn_dim'],
    why: 'parameter counts stay exact in a double (12 × width² × layers < 2^53) and the 1.6 s case above holds',
  },
  vocabulary: {
    max: 4 * MiB,
    unit: 'tokens',
    keys: ['vocab_size', 'type_vocab_size'],
    why: 'an embedding of that many rows at the largest width is still an exact parameter count',
  },
  heads: {
    max: 16_384,
    unit: 'heads',
    keys: ['num_attention_heads', 'num_key_value_heads', 'n_head'],
    why: 'heads divide the width',
  },
  experts: {
    max: 4096,
    unit: 'experts',
    keys: ['num_local_experts', 'num_experts_per_tok', 'num_experts'],
    why: 'expert parameters multiply the MLP',
  },
  sequenceLength: {
    max: 4 * MiB,
    unit: 'tokens',
    keys: ['sequence_length', 'seq_len', 'max_position_embeddings', 'n_positions', 'n_ctx', 'max_seq_length'],
    why: 'compute time is linear in it; beyond 4 Mi tokens no model is trained',
  },
  batch: {
    max: 1 * MiB,
    unit: 'samples',
    keys: [
      'micro_batch_size',
      'train_micro_batch_size_per_gpu',
      'per_device_train_batch_size',
      'gradient_accumulation_steps',
    ],
    why: 'step time is linear in it; a million samples per GPU per step is far past any real run',
  },
  globalBatch: {
    max: 2 ** 31,
    unit: 'samples',
    keys: ['train_batch_size', 'global_batch_size'],
    why: 'micro-batch × accumulation × ranks at their limits',
  },
  channels: {
    max: 64,
    unit: 'channels',
    keys: ['nChannels', 'channels', 'minChannels', 'maxChannels', 'nccl_min_nchannels', 'nccl_max_nchannels'],
    why: 'NCCL runs at most 64 channels (MAXCHANNELS)',
  },
  bucketMiB: {
    max: 1 * MiB,
    unit: 'MiB',
    keys: ['bucket_cap_mb'],
    why: "a 1 TiB bucket is larger than any model's gradients",
  },
  bucketElements: {
    max: 2 ** 40,
    unit: 'elements',
    keys: ['reduce_bucket_size', 'allgather_bucket_size', 'stage3_prefetch_bucket_size'],
    why: 'DeepSpeed bucket sizes in elements, at most 1 Ti',
  },
  bytes: {
    max: 2 ** 50,
    unit: 'bytes',
    keys: [],
    why: 'message sizes up to 1 PiB; every size stays an exact integer (below 2^53)',
  },
  sizeCount: {
    max: 64,
    unit: 'sizes',
    keys: [],
    why: '`run` times each size with every algorithm; 64 sizes already take hours on a cluster',
  },
  elements: {
    max: 1 * MiB,
    unit: 'elements',
    keys: [],
    why: '`verify` reduces every element on every rank in software',
  },
  verifyRanks: {
    max: 4096,
    unit: 'ranks',
    keys: [],
    why: '`verify` runs every step of the algorithm on every rank, so its time grows with the square of the ranks: 4,096 ranks take 15 s, 8,192 ranks 68 s, 131,072 ranks did not finish in 10 minutes',
  },
  directWork: {
    max: 2 ** 27,
    unit: 'rank²-elements',
    keys: [],
    why: "`verify --algo direct`: every rank reduces every rank's buffer, so the work is ranks² × elements: 512² × 256 (2^26) took 4.7 s, 1,024² × 1,024 (2^30) 200 s",
  },
  rankElements: {
    max: 16 * MiB,
    unit: 'rank-elements',
    keys: [],
    why: '`verify` ranks × elements: 4,096 × 4,096 takes 17 s and 355 MB',
  },
  iterations: { max: 10_000, unit: 'iterations', keys: [], why: '`run --iters`: each iteration is a real collective' },
  sweepPoints: {
    max: 10_000,
    unit: 'points',
    keys: [],
    why: 'one simulation per point; a table of more rows is not read',
  },
  traceRanks: {
    max: 1024,
    unit: 'ranks',
    keys: [],
    why: 'spans grow with the ranks drawn; the trace file stays under 200,000 spans',
  },
  timeoutSeconds: {
    max: 7 * 24 * 3600,
    unit: 's',
    keys: [],
    why: 'one week; Node timers overflow (and fire at once) past 2^31 - 1 ms, about 24.8 days',
  },
} as const satisfies Record<string, Limit>;

export type LimitName = keyof typeof LIMITS;

const normalise = (key: string): string => key.toLowerCase().replace(/[-_]/g, '');
const BY_KEY = new Map<string, LimitName>();
for (const [name, limit] of Object.entries(LIMITS) as [LimitName, Limit][])
  for (const key of limit.keys) BY_KEY.set(normalise(key), name);

/** The limit a config key (or what-if key) is held to, if any. */
export function limitForKey(key: string): LimitName | undefined {
  return BY_KEY.get(normalise(key));
}

/**
 * Why `value` breaks limit `name`, or undefined when it is within it. `label` is how the value was given (a key,
 * a flag), so the message names it: "nodes = 100000 is over the limit of 8192 nodes (docs/limits.md)".
 */
export function limitProblem(
  name: LimitName,
  label: string,
  value: number,
  shown: string = String(value),
): string | undefined {
  const limit: Limit = LIMITS[name];
  if (Number.isNaN(value)) return `${label} is not a number`;
  if (!Number.isFinite(value))
    return `${label} = ${shown} is not finite; the limit is ${limit.max.toLocaleString('en-US')} ${limit.unit} (docs/limits.md)`;
  if (value > limit.max)
    return `${label} = ${shown} is over the limit of ${limit.max.toLocaleString('en-US')} ${limit.unit} (docs/limits.md)`;
  return undefined;
}

/** Every number under a limited key in a parsed config, with its path, that breaks its limit. */
export function limitViolations(
  value: unknown,
  path: readonly (string | number)[] = [],
): { path: (string | number)[]; message: string }[] {
  const found: { path: (string | number)[]; message: string }[] = [];
  const walk = (node: unknown, at: (string | number)[], depth: number): void => {
    if (depth > 64 || node === null || typeof node !== 'object') return;
    const entries: [string | number, unknown][] = Array.isArray(node)
      ? node.map((v, i) => [i, v])
      : Object.entries(node);
    for (const [key, child] of entries) {
      const here = [...at, key];
      const name = typeof key === 'string' ? limitForKey(key) : undefined;
      if (name && typeof child === 'number') {
        const problem = limitProblem(name, String(key), child);
        if (problem) found.push({ path: here, message: problem });
      } else walk(child, here, depth + 1);
    }
  };
  walk(value, [...path], 0);
  return found;
}
