// Class 3, sizes with no upper bound: numbers in every spelling a parser might take (1e400, 0x10, -0, 1e-3, odd
// suffixes, unsafe integers) through every flag and config key that takes one, ranges that end before they
// start or have no end, and limits that two values break only together. The answer is exit 2 with one line
// naming the flag or the file:line:col and key, before any work; a value within every limit finishes in bounds.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertBounded, assertUserError, cli, EXAMPLES, FIXTURES_REAL, LLAMA_CONFIG, type HostileCase } from './round';

/** A case whose answer is a one-line exit 2 from `args`, naming `names`, within `limitMs`. */
function refused(
  id: string,
  input: string,
  args: readonly string[],
  names: RegExp,
  options: { limitMs?: number; oneLine?: boolean } = {},
): HostileCase {
  return {
    id,
    cls: 3,
    input,
    expect: `exit 2, one line naming ${names.source}, at once`,
    async run() {
      const r = await cli(args, { limitMs: options.limitMs ?? 20_000 });
      assertUserError(r, { names, oneLine: options.oneLine });
    },
  };
}

/** A case that writes `files` (name → text) into the case's folder and expects `profile <first>` refused. */
function refusedConfig(id: string, input: string, files: Record<string, string>, names: RegExp): HostileCase {
  return {
    id,
    cls: 3,
    input,
    expect: `exit 2 naming ${names.source} with its file:line:col, at once`,
    async run(dir) {
      for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
      const r = await cli(['profile', join(dir, Object.keys(files)[0])], { limitMs: 20_000 });
      assertUserError(r, { names, oneLine: false });
    },
  };
}

const SIM = ['simulate', '--system', 'dgx-h100'];
const LLAMA_MODEL = join(EXAMPLES, 'models', 'llama-2-7b', 'config.json');

export const SIZE_CASES: readonly HostileCase[] = [
  refused('size-bytes-milli', 'simulate --bytes 1e-3', [...SIM, '--bytes', '1e-3'], /--bytes '1e-3'/),
  refused('size-bytes-odd-suffix', 'simulate --bytes 8QB', [...SIM, '--bytes', '8QB'], /--bytes '8QB'/),
  refused('size-bytes-double-suffix', 'simulate --bytes 8KiBB', [...SIM, '--bytes', '8KiBB'], /--bytes '8KiBB'/),
  refused(
    'size-bytes-fraction',
    'simulate --bytes 1.3 (not a whole byte)',
    [...SIM, '--bytes', '1.3'],
    /--bytes '1\.3'/,
  ),
  refused(
    'size-bytes-unsafe',
    'simulate --bytes 9007199254740993 (2^53 + 1)',
    [...SIM, '--bytes', '9007199254740993'],
    /--bytes.*limit/,
  ),
  refused('size-bytes-binary', 'simulate --bytes 0b1000', [...SIM, '--bytes', '0b1000'], /--bytes '0b1000'/),
  refused('size-bytes-infinity', 'simulate --bytes Infinity', [...SIM, '--bytes', 'Infinity'], /--bytes 'Infinity'/),
  refused('size-nodes-hex', 'simulate --nodes 0x10', [...SIM, '--bytes', '1M', '--nodes', '0x10'], /--nodes '0x10'/),
  refused(
    'size-nodes-negative-zero',
    'simulate --nodes -0',
    [...SIM, '--bytes', '1M', '--nodes', '-0'],
    /--nodes '-0'/,
  ),
  refused(
    'size-ranks-product',
    'simulate --nodes 16384 --gpus-per-node 1024 (each within its limit, together 16.7 M ranks)',
    [...SIM, '--bytes', '1M', '--nodes', '16384', '--gpus-per-node', '1024'],
    /ranks|limit/,
  ),
  refused(
    'sweep-factor-tiny',
    'sweep --factor 1.0000001',
    ['sweep', '--system', 'dgx-h100', '--factor', '1.0000001'],
    /--factor/,
  ),
  refused(
    'sweep-factor-one',
    'sweep --factor 1 (never ends)',
    ['sweep', '--system', 'dgx-h100', '--factor', '1'],
    /--factor/,
  ),
  refused('sweep-factor-nan', 'sweep --factor NaN', ['sweep', '--system', 'dgx-h100', '--factor', 'NaN'], /--factor/),
  refused(
    'sweep-min-over-max',
    'sweep --min-bytes 1G --max-bytes 1K',
    ['sweep', '--system', 'dgx-h100', '--min-bytes', '1G', '--max-bytes', '1K'],
    /--min-bytes.*--max-bytes/,
  ),
  refused('verify-ranks-zero', 'verify --ranks 0', ['verify', '--ranks', '0'], /--ranks '0'/),
  refused(
    'verify-rank-elements',
    'verify --ranks 4096 --elements 1048576 (each within its limit)',
    ['verify', '--ranks', '4096', '--elements', '1048576'],
    /limit/,
  ),
  refused(
    'verify-ranks-quadratic',
    'verify --ranks 131072 --elements 128 (each within the old limits; the steps grow with ranks²)',
    ['verify', '--ranks', '131072', '--elements', '128'],
    /--ranks.*limit/,
    { limitMs: 60_000 },
  ),
  refused(
    'verify-direct-work',
    'verify --algo direct --ranks 1024 --elements 1024 (within ranks × elements; direct does ranks² × elements)',
    ['verify', '--algo', 'direct', '--ranks', '1024', '--elements', '1024'],
    /direct.*limit/,
    { limitMs: 60_000 },
  ),
  refused(
    'verify-channels',
    'verify --ranks 8 --channels 65',
    ['verify', '--ranks', '8', '--channels', '65'],
    /--channels/,
  ),
  refused(
    'verify-magnitude-inf',
    'verify --ranks 8 --magnitude 1e400',
    ['verify', '--ranks', '8', '--magnitude', '1e400'],
    /--magnitude/,
  ),
  refused(
    'verify-correlation',
    'verify --ranks 8 --correlation 2',
    ['verify', '--ranks', '8', '--correlation', '2'],
    /--correlation/,
  ),
  refused(
    'verify-seed-unsafe',
    'verify --ranks 8 --seed 1e400',
    ['verify', '--ranks', '8', '--seed', '1e400'],
    /--seed/,
  ),
  refused(
    'run-timeout-negative',
    'run --timeout -1',
    ['run', '--timeout', '-1', '--python', '/nonexistent'],
    /--timeout/,
  ),
  refused(
    'run-timeout-hex',
    'run --timeout 0x10',
    ['run', '--timeout', '0x10', '--python', '/nonexistent'],
    /--timeout/,
  ),
  refused('run-sizes-empty-item', 'run --sizes 1M,,2M', ['run', '--sizes', '1M,,2M', '--print-launch'], /--sizes/),
  refused(
    'run-sizes-count',
    'run --sizes with 65 sizes',
    ['run', '--print-launch', '--sizes', Array.from({ length: 65 }, (_, i) => `${i + 1}K`).join(',')],
    /--sizes.*limit/,
  ),
  refused('run-iters', 'run --iters 1e5', ['run', '--iters', '1e5', '--python', '/nonexistent'], /--iters/),
  refused(
    'run-launch-nodes',
    'run --print-launch --nodes 1e400',
    ['run', '--print-launch', '--nodes', '1e400'],
    /--nodes/,
  ),
  refused(
    'check-world-size',
    'check --world-size 99999999999999999999',
    ['check', EXAMPLES, '--world-size', '99999999999999999999'],
    /--world-size/,
  ),
  refused(
    'compare-threshold',
    'compare --threshold 1e400',
    ['compare', join(FIXTURES_REAL, 'nccl-tests-a100-8gpu-2021.txt'), '--threshold', '1e400'],
    /--threshold/,
  ),
  refused(
    'calibrate-fit-min',
    'calibrate --fit-min-bytes 1e400',
    [
      'calibrate',
      join(FIXTURES_REAL, 'nccl-tests-a100-8gpu-2021.txt'),
      '--system',
      'dgx-a100',
      '--fit-min-bytes',
      '1e400',
    ],
    /--fit-min-bytes/,
  ),
  refused(
    'profile-trace-ranks-zero',
    'profile --trace-ranks 0 --trace -',
    ['profile', LLAMA_CONFIG, '--trace-ranks', '0', '--trace', '-'],
    /--trace-ranks/,
  ),
  refused(
    'profile-trace-ranks-big',
    'profile --trace-ranks 1000000 --trace -',
    ['profile', LLAMA_CONFIG, '--trace-ranks', '1000000', '--trace', '-'],
    /--trace-ranks.*limit/,
  ),
  refused(
    'whatif-negative',
    'profile --what-if micro_batch_size=-1',
    ['profile', LLAMA_CONFIG, '--what-if', 'micro_batch_size=-1'],
    /micro_batch_size/,
  ),
  refused(
    'whatif-hex',
    'profile --what-if sequence_length=0x1000',
    ['profile', LLAMA_CONFIG, '--what-if', 'sequence_length=0x1000'],
    /sequence_length/,
  ),
  refused(
    'whatif-ranks-product',
    'profile --what-if nodes=16384 --what-if gpus_per_node=1024',
    ['profile', LLAMA_CONFIG, '--what-if', 'nodes=16384', '--what-if', 'gpus_per_node=1024'],
    /limit/,
  ),
  refused(
    'sweep-key-unbounded',
    'profile --sweep nodes=1..1e400',
    ['profile', LLAMA_CONFIG, '--sweep', 'nodes=1..1e400'],
    /nodes/,
  ),
  refused(
    'sweep-key-over',
    'profile --sweep nodes=1..100000',
    ['profile', LLAMA_CONFIG, '--sweep', 'nodes=1..100000'],
    /nodes.*limit/,
  ),
  refusedConfig(
    'cfg-nodes-inf',
    'a *.collective.yaml with system.nodes: 1e400',
    { 'run.collective.yaml': 'model: {preset: gpt2}\nsystem:\n  preset: dgx-h100\n  nodes: 1e400\n' },
    /run\.collective\.yaml:4:\d+:.*nodes/,
  ),
  refusedConfig(
    'cfg-merge-key-bypass',
    'a YAML merge key (<<: *big) that brings nodes: 100000 into system',
    {
      'run.collective.yaml':
        'big: &big {nodes: 100000}\nmodel: {preset: gpt2}\nsystem:\n  <<: *big\n  preset: dgx-h100\n',
    },
    /run\.collective\.yaml:\d+:\d+:.*(nodes|<<)/,
  ),
  refusedConfig(
    'cfg-hf-layers',
    'a config.json named by a training config with num_hidden_layers: 1e9',
    {
      'run.collective.yaml': 'model: {config: big.json}\nsystem: {preset: dgx-h100}\n',
      'big.json': JSON.stringify(
        {
          ...{ architectures: ['LlamaForCausalLM'], model_type: 'llama' },
          hidden_size: 4096,
          num_hidden_layers: 1e9,
          num_attention_heads: 32,
          vocab_size: 32000,
          intermediate_size: 11008,
        },
        null,
        2,
      ),
    },
    /big\.json:\d+:\d+:.*num_hidden_layers/,
  ),
  refusedConfig(
    'cfg-ds-micro-batch',
    'a ds_config.json with train_micro_batch_size_per_gpu: 1e308',
    { 'ds_config.json': '{\n  "train_micro_batch_size_per_gpu": 1e308,\n  "zero_optimization": {"stage": 2}\n}\n' },
    /ds_config\.json:2:\d+:.*train_micro_batch_size_per_gpu/,
  ),
  refusedConfig(
    'cfg-accelerate-processes',
    'an Accelerate YAML with num_processes: 10000000',
    {
      'accelerate.yaml':
        'compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: 10000000\n',
    },
    /accelerate\.yaml:4:\d+:.*num_processes/,
  ),
  {
    id: 'cfg-duplicate-key',
    cls: 3,
    input: 'a system JSON with "nodes" twice: 1, then 1000000',
    expect: 'exit 2 naming the duplicate key or the limit with its line; never the later value unchecked',
    async run(dir) {
      writeFileSync(
        join(dir, 'box.json'),
        '{\n  "gpu": "H100-SXM",\n  "nodes": 1,\n  "gpusPerNode": 8,\n  "intraNode": "nvswitch",\n  "nodes": 1000000\n}\n',
      );
      const r = await cli(['simulate', '--system', join(dir, 'box.json'), '--bytes', '1M'], { limitMs: 20_000 });
      assertUserError(r, { names: /box\.json:\d+:\d+:.*nodes/, oneLine: false });
    },
  },
  {
    id: 'model-arg-layers',
    cls: 3,
    input: 'profile --model big.json (a model named on the command line) with hidden_size: 1e12',
    expect: 'exit 2 naming big.json:line:col and hidden_size',
    async run(dir) {
      const model = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync(LLAMA_MODEL, 'utf8')));
      writeFileSync(join(dir, 'big.json'), JSON.stringify({ ...model, hidden_size: 1e12 }, null, 2));
      const r = await cli(['profile', join(EXAMPLES, 'accelerate_config.yaml'), '--model', join(dir, 'big.json')], {
        limitMs: 20_000,
      });
      assertUserError(r, { names: /big\.json:\d+:\d+:.*hidden_size/, oneLine: false });
    },
  },
  {
    id: 'tiny-events',
    cls: 3,
    input: 'import a Kineto trace of 10^6 tiny CPU events and 2 NCCL kernels (about 80 MB)',
    expect: 'exit 0 with the 2 kernels, within 60 s and 1 GiB',
    async run(dir) {
      const parts = ['{"traceEvents":['];
      for (let i = 0; i < 1_000_000; i++)
        parts.push(`{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":${i},"dur":1},`);
      for (const ts of [10, 500])
        parts.push(
          `{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)","pid":0,"tid":7,"ts":${ts},"dur":40,"args":{"In msg nelems":1048576,"Group size":8,"dtype":"Float"}},`,
        );
      parts.push('{"ph":"M","name":"process_name","pid":0,"args":{"name":"gpu"}}]}');
      writeFileSync(join(dir, 'many.json'), parts.join(''));
      const r = await cli(['import', join(dir, 'many.json'), '--json'], { limitMs: 90_000 });
      assertBounded(r);
      assert.equal(r.code, 0, r.stderr);
    },
  },
];
