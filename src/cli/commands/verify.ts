// `verify`: reduces synthetic gradients numerically in the chosen algorithm's order and dtype, and reports what
// nccl-tests' correctness check would: the largest error, #wrong, and any overflow. Exit 1 when something is wrong.
import {
  ALGORITHMS,
  DTYPES,
  FORMATS,
  NumericOptionError,
  reduceNumerically,
  type NumericReductionResult,
  type ReduceOp,
} from '../../engine/index';
import { UsageError, defineCommand, noPositionals, type CliCommand } from '../command';
import { choiceFlag, enforceLimit, flagValue, numberFlag, positiveIntegerFlag, requiredFlag } from '../flag-values';

const OPS: readonly ReduceOp[] = ['sum', 'avg', 'premulsum'];

/** The `--json` shape: the result without the buffers. */
export function verifyJson(result: NumericReductionResult): object {
  const { outputs: _outputs, reference: _reference, ...summary } = result;
  return {
    ...summary,
    maxFinite: FORMATS[result.dtype].maxFinite,
    pass: result.overflow === null && result.wrong === 0,
  };
}

function readable(value: number): string {
  return Number.isInteger(value) && Math.abs(value) < 1e7 ? String(value) : value.toPrecision(6);
}

export function formatVerify(result: NumericReductionResult, magnitude: number, seed: number): string {
  const maxFinite = FORMATS[result.dtype].maxFinite;
  const lines = [
    `# collective-profiler verify: AllReduce ${result.op} of ${result.elements} ${result.dtype} elements on ${result.ranks} ranks, ` +
      `${result.algorithm} (${result.channels} channel${result.channels === 1 ? '' : 's'}, ${result.gpusPerNode} GPUs per node), magnitude ${magnitude}, seed ${seed}`,
    `  max abs error     ${readable(result.maxAbsError)}${result.overflow === null ? '' : ' (over the elements that did not overflow)'}`,
    `  max rel error     ${readable(result.maxRelError)}`,
    `  #wrong            ${result.wrong} of ${result.elements}`,
    `  overflow          ${result.overflow === null ? 'none' : `${result.overflow.count} elements, first at index ${result.overflow.firstIndex}${result.overflow.inInputs > 0 ? ` (${result.overflow.inInputs} already in the inputs)` : ''}`}`,
    `  largest |sum|     ${readable(result.maxSummedMagnitude)} before any scaling (${result.dtype} holds up to ${readable(maxFinite)})`,
    `  ranks identical   ${result.allRanksIdentical ? 'yes' : 'no: ranks hold different results'}`,
  ];
  if (
    (result.algorithm === 'nvls' || result.algorithm === 'nvlstree') &&
    (result.op !== 'sum' || result.dtype.startsWith('fp8'))
  ) {
    lines.push(
      `  note              NCCL runs NVLS only for sum on fp32/fp16/bf16; it would pick ring or tree for this ${result.op} in ${result.dtype}`,
    );
  }
  if (result.overflow !== null && result.overflow.inInputs === result.overflow.count) {
    lines.push(
      `FAIL: the inputs themselves do not fit ${result.dtype} (or float32, where the gradients come from); no order of reduction can help: lower --magnitude or use a wider dtype.`,
    );
  } else if (result.overflow !== null) {
    lines.push(
      result.op === 'sum'
        ? `FAIL: the ${result.dtype} sum overflows; divide before reducing (--op avg or premulsum, as NCCL's ncclAvg does) or reduce in bf16/fp32.`
        : `FAIL: the ${result.dtype} reduction overflows even after scaling; reduce in a wider dtype.`,
    );
  } else if (result.wrong > 0) {
    lines.push(`FAIL: ${result.wrong} elements are beyond the rounding error bound.`);
  } else {
    lines.push('PASS: every element within the rounding error bound, no overflow.');
  }
  return lines.join('\n');
}

export const verifyCommand: CliCommand = defineCommand({
  name: 'verify',
  summary: 'Reduce synthetic gradients in a dtype and algorithm order; report max error, #wrong and overflow',
  description: [
    "Runs the AllReduce on real buffers, one per rank, in the algorithm's order of operations and in the dtype",
    '(fp16, bf16 and fp8 rounding emulated), and checks it against a float64 reference. Exit 1 on overflow or #wrong > 0.',
  ],
  options: [
    { name: 'ranks', value: 'n', help: 'Number of ranks', required: true },
    { name: 'dtype', value: 'type', help: DTYPES.join(' | '), default: 'fp32' },
    {
      name: 'op',
      value: 'op',
      help: "sum | avg | premulsum; avg is NCCL's ncclAvg (inputs × 1/N, then sum)",
      default: 'sum',
    },
    { name: 'scalar', value: 'x', help: "premulsum's scalar", default: '1/N, the pre-divided sum' },
    { name: 'algo', value: 'name', help: ALGORITHMS.join(' | '), default: 'ring' },
    { name: 'elements', value: 'n', help: 'Elements per rank', default: '4096' },
    {
      name: 'magnitude',
      value: 'x',
      help: "RMS of each rank's gradient elements (1e2: loss-scaled fp16 gradients)",
      default: '1e2',
    },
    { name: 'correlation', value: 'c', help: 'Share of the gradient common to all ranks, 0..1', default: '0.5' },
    {
      name: 'gpus-per-node',
      value: 'g',
      help: 'Node size for tree, nvlstree and hierarchical',
      default: 'the largest divisor of N up to 8',
    },
    { name: 'channels', value: 'c', help: 'Channels the buffer is split over', default: '2 for tree/nvlstree, else 1' },
    { name: 'seed', value: 'n', help: 'Seed of the synthetic gradients', default: '1' },
    { name: 'json', help: 'Print the result as JSON' },
  ],
  async execute({ flags, positional }, io) {
    noPositionals('verify', positional);
    const ranks = positiveIntegerFlag('ranks', requiredFlag(flags, 'ranks', '512'), 'verifyRanks');
    const optional = <T>(name: string, parse: (text: string) => T): T | undefined => {
      const text = flagValue(flags, name);
      return text === undefined ? undefined : parse(text);
    };
    const elements = optional('elements', (t) => positiveIntegerFlag('elements', t, 'elements')) ?? 4096;
    // Every element is reduced on every rank in software: the product is what costs time and memory.
    enforceLimit('rankElements', `--ranks ${ranks} × --elements ${elements}`, ranks * elements);
    const algorithm = optional('algo', (t) => choiceFlag('algo', t, ALGORITHMS)) ?? 'ring';
    // The direct algorithm's work grows with the square of the ranks: it has its own, smaller bound.
    if (algorithm === 'direct')
      enforceLimit(
        'directWork',
        `--algo direct with --ranks ${ranks}² × --elements ${elements}`,
        ranks * ranks * elements,
      );
    const magnitude =
      optional('magnitude', (t) => numberFlag('magnitude', t, (v) => v >= 0, 'must be a number ≥ 0')) ?? 100;
    const seed =
      optional('seed', (t) => numberFlag('seed', t, (v) => Number.isInteger(v), 'must be a whole number')) ?? 1;
    let result: NumericReductionResult;
    try {
      result = reduceNumerically({
        ranks,
        magnitude,
        seed,
        algorithm,
        dtype:
          optional('dtype', (t) => choiceFlag('dtype', t, DTYPES, { float: 'fp32', half: 'fp16', bfloat16: 'bf16' })) ??
          'fp32',
        op: optional('op', (t) => choiceFlag('op', t, OPS, { average: 'avg', predivide: 'premulsum' })) ?? 'sum',
        scalar: optional('scalar', (t) => numberFlag('scalar', t, () => true, 'must be a number')),
        elements,
        correlation: optional('correlation', (t) =>
          numberFlag('correlation', t, (v) => v >= 0 && v <= 1, 'must be between 0 and 1'),
        ),
        gpusPerNode: optional('gpus-per-node', (t) => positiveIntegerFlag('gpus-per-node', t, 'gpusPerNode')),
        channels: optional('channels', (t) => positiveIntegerFlag('channels', t, 'channels')),
      });
    } catch (error) {
      if (error instanceof NumericOptionError) throw new UsageError(error.message);
      throw error;
    }
    io.stdout(flags.has('json') ? JSON.stringify(verifyJson(result), null, 2) : formatVerify(result, magnitude, seed));
    return result.overflow === null && result.wrong === 0 ? 0 : 1;
  },
});
