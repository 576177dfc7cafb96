// Flags shared by `simulate` and `sweep`: system scaling, algorithm, protocol, dtype and op, their option-table
// entries, and the help text
// that lists the GPU catalogue and the presets.
import {
  ALGORITHMS,
  DTYPES,
  GPU_CATALOGUE,
  PRESETS,
  PROTOCOLS,
  type Algorithm,
  type Dtype,
  type Protocol,
  type ReduceOp,
} from '../engine/index';
import { choiceFlag, flagValue, positiveIntegerFlag } from './flag-values';
import type { SystemScaling } from './load-system';
import type { OptionSpec } from './options';

/** --system and the flags that scale it, shared by simulate, sweep, compare and calibrate. */
export function systemOptions(systemHelp: string, required: boolean): OptionSpec[] {
  return [
    { name: 'system', value: 'preset|file', help: systemHelp, ...(required ? { required } : {}) },
    { name: 'nodes', value: 'n', help: 'Scale the system to n nodes' },
    { name: 'gpus-per-node', value: 'g', help: 'Use g GPUs in each node' },
    {
      name: 'nccl',
      value: 'version',
      help: "Choose algorithms as this NCCL release does (e.g. 2.26.2; default: the system file's, else 2.30)",
    },
  ];
}

export const SYSTEM_HELP = 'A preset name (see below) or a YAML/JSON system file (see docs/system-files.md)';

export const ALGO_OPTION: OptionSpec = {
  name: 'algo',
  value: 'name',
  help: `auto | ${ALGORITHMS.join(' | ')}`,
  default: 'auto',
};
export const PROTO_OPTION: OptionSpec = {
  name: 'proto',
  value: 'name',
  help: `auto | ${PROTOCOLS.join(' | ')}`,
  default: 'auto',
};
export const DTYPE_OPTION: OptionSpec = { name: 'dtype', value: 'type', help: DTYPES.join(' | '), default: 'fp32' };

const DTYPE_ALIASES: Record<string, Dtype> = {
  float: 'fp32',
  float32: 'fp32',
  half: 'fp16',
  float16: 'fp16',
  bfloat16: 'bf16',
};
const OPS: readonly ReduceOp[] = ['sum', 'avg', 'premulsum'];
export const OP_OPTION: OptionSpec = { name: 'op', value: 'op', help: OPS.join(' | '), default: 'sum' };

export function scalingFlags(flags: Map<string, string[]>): SystemScaling {
  const nodes = flagValue(flags, 'nodes');
  const gpusPerNode = flagValue(flags, 'gpus-per-node');
  const nccl = flagValue(flags, 'nccl');
  return {
    ...(nccl !== undefined ? { ncclVersion: nccl } : {}),
    ...(nodes !== undefined ? { nodes: positiveIntegerFlag('nodes', nodes, 'nodes') } : {}),
    ...(gpusPerNode !== undefined
      ? { gpusPerNode: positiveIntegerFlag('gpus-per-node', gpusPerNode, 'gpusPerNode') }
      : {}),
  };
}

export interface CollectiveOptions {
  algorithm?: Algorithm | 'auto';
  protocol?: Protocol | 'auto';
  dtype?: Dtype;
  op?: ReduceOp;
}

/** Reads --algo, --proto, --dtype and --op where given; absent flags stay absent so the engine's defaults apply. */
export function collectiveOptions(flags: Map<string, string[]>): CollectiveOptions {
  const options: CollectiveOptions = {};
  const algo = flagValue(flags, 'algo');
  if (algo !== undefined) options.algorithm = choiceFlag<Algorithm | 'auto'>('algo', algo, ['auto', ...ALGORITHMS]);
  const proto = flagValue(flags, 'proto');
  if (proto !== undefined) options.protocol = choiceFlag<Protocol | 'auto'>('proto', proto, ['auto', ...PROTOCOLS]);
  const dtype = flagValue(flags, 'dtype');
  if (dtype !== undefined) options.dtype = choiceFlag('dtype', dtype, DTYPES, DTYPE_ALIASES);
  const op = flagValue(flags, 'op');
  if (op !== undefined) options.op = choiceFlag('op', op, OPS);
  return options;
}

/** Lists the GPU catalogue and the presets, for `--help`. */
export function catalogueHelp(): string {
  const gpus = GPU_CATALOGUE.map((g) => g.name).join(', ');
  const presets = Object.entries(PRESETS).map(
    ([name, spec]) => `  ${name.padEnd(16)} ${spec.nodes} × ${spec.gpusPerNode} ${spec.gpu}, ${spec.intraNode}`,
  );
  return [`GPUs (system file 'gpu:', case-insensitive): ${gpus}`, '', 'Presets (scale with --nodes):', ...presets].join(
    '\n',
  );
}
