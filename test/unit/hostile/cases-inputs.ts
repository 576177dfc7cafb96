// Class 2, inputs that are not plain regular files, or not plain text: links that loop, folders and FIFOs named
// where a file is expected, kernel files, sparse giants, and encodings (BOM, CRLF, UTF-16) of real files. The
// answer is exit 2 with one line naming the file (and, for a file named inside a config, its line), or the same
// result as the plain file where the encoding is one a text editor writes.
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, openSync, readFileSync, symlinkSync, writeFileSync, ftruncateSync } from 'node:fs';
import { join } from 'node:path';
import { makeFifo } from '../native/files/mounts';
import { assertBounded, assertUserError, cli, EXAMPLES, FIXTURES_REAL, type HostileCase } from './round';

const NCCL_TESTS = join(FIXTURES_REAL, 'nccl-tests-a100-8gpu-2021.txt');
const NCCL_LOG = join(FIXTURES_REAL, 'nccl-debug-a100-2gpu-graph-tuning.log');
const KINETO = join(FIXTURES_REAL, 'kineto-a100-2rank-nccl2.17-gpu-excerpt.json');
const SYSTEM_JSON = join(EXAMPLES, 'systems', 'dgx-h100-2node.json');
const SYSTEM_YAML = join(EXAMPLES, 'systems', 'dgx-h100-2node.yaml');

function sparse(path: string, bytes: number): void {
  const fd = openSync(path, 'w');
  ftruncateSync(fd, bytes);
  closeSync(fd);
}

function utf16le(text: string): Buffer {
  return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
}

/** The --json result of a command, parsed, after checking it succeeded. */
async function jsonOf(args: string[]): Promise<unknown> {
  const r = await cli([...args, '--json']);
  assertBounded(r);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** Either the same --json result as the plain file, or a one-line exit 2 naming the file. */
async function sameOrRefused(args: string[], plainArgs: string[], names: RegExp): Promise<void> {
  const r = await cli([...args, '--json']);
  if (r.code === 2) return assertUserError(r, { names });
  assertBounded(r);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), await jsonOf(plainArgs));
}

export const INPUT_CASES: readonly HostileCase[] = [
  {
    id: 'in-system-link-loop',
    cls: 2,
    input: 'simulate --system loop.yaml where loop.yaml -> loop.yaml',
    expect: 'exit 2, one line naming the file and the loop',
    async run(dir) {
      symlinkSync(join(dir, 'loop.yaml'), join(dir, 'loop.yaml'));
      const r = await cli(['simulate', '--system', join(dir, 'loop.yaml'), '--bytes', '1M']);
      assertUserError(r, { names: /loop\.yaml.*(symbolic links|loop)/i });
    },
  },
  {
    id: 'in-model-config-is-folder',
    cls: 2,
    input: 'a training config whose model.config names a folder',
    expect: 'exit 2, one line at the config line that names it, saying it is a folder',
    async run(dir) {
      mkdirSync(join(dir, 'model'));
      writeFileSync(join(dir, 'run.collective.yaml'), 'system: {preset: dgx-h100}\nmodel:\n  config: model\n');
      const r = await cli(['profile', join(dir, 'run.collective.yaml')]);
      assertUserError(r, { names: /run\.collective\.yaml:3:\d+: .*model.*a folder/ });
    },
  },
  {
    id: 'in-dev-stdin-held-open',
    cls: 2,
    input: 'simulate --system /dev/stdin while stdin is a pipe that stays open and silent',
    expect: 'exit 2 at once naming what stdin is (a FIFO or a socket), not a wait for input',
    async run() {
      const r = await cli(['simulate', '--system', '/dev/stdin', '--bytes', '1M'], {
        stdin: 'held-open',
        limitMs: 20_000,
      });
      assertUserError(r, { names: /\/dev\/stdin.*(FIFO|socket)/ });
    },
  },
  {
    id: 'in-sparse-1g-json',
    cls: 2,
    input: 'import big.json: a sparse 1 GiB file of NUL bytes (streamed size class)',
    expect: 'exit 2, one line naming big.json, in bounded time and memory',
    async run(dir) {
      sparse(join(dir, 'big.json'), 2 ** 30);
      const r = await cli(['import', join(dir, 'big.json')], { limitMs: 60_000 });
      assertUserError(r, { names: /big\.json/ });
    },
  },
  {
    id: 'in-sparse-20g-json',
    cls: 2,
    input: 'import huge.json: a sparse 20 GiB file (over the streamed-trace limit)',
    expect: 'exit 2 at once, naming the size and the 16 GiB limit',
    async run(dir) {
      sparse(join(dir, 'huge.json'), 20 * 2 ** 30);
      const r = await cli(['import', join(dir, 'huge.json')], { limitMs: 15_000 });
      assertUserError(r, { names: /huge\.json.*16 GiB/ });
    },
  },
  {
    id: 'in-sparse-3g-gz',
    cls: 2,
    input: 'compare trace.json.gz: a sparse 3 GiB gzip name',
    expect: 'exit 2 at once naming the size limit',
    async run(dir) {
      sparse(join(dir, 'trace.json.gz'), 3 * 2 ** 30);
      const r = await cli(['compare', join(dir, 'trace.json.gz')], { limitMs: 15_000 });
      assertUserError(r, { names: /trace\.json\.gz.*(limit|larger than)/ });
    },
  },
  {
    id: 'in-check-folder-loop',
    cls: 2,
    input: 'check a folder holding a link to itself (src/loop -> ..) and one Python file',
    expect: 'ends in bounded time; the Python file is reported once',
    async run(dir) {
      mkdirSync(join(dir, 'src'));
      writeFileSync(join(dir, 'src', 'train.py'), 'import torch\nloss.backward()\n');
      symlinkSync('..', join(dir, 'src', 'loop'));
      const r = await cli(['check', dir, '--json'], { limitMs: 30_000 });
      assertBounded(r);
      assert.ok(r.code === 0 || r.code === 1, r.stderr);
      assert.ok((r.stdout.match(/train\.py/g) ?? []).length <= 1, r.stdout);
    },
  },
  {
    id: 'in-run-config-fifo',
    cls: 2,
    input: 'run --config train.yaml where train.yaml is a FIFO nobody writes',
    expect: 'exit 2 at once naming the FIFO',
    async run(dir) {
      const fifo = join(dir, 'train.yaml');
      const why = makeFifo(fifo);
      if (why) throw new Error(why);
      const r = await cli(['run', '--config', fifo, '--print-launch'], { limitMs: 20_000 });
      assertUserError(r, { names: /train\.yaml.*FIFO/ });
    },
  },
  {
    id: 'in-proc-mem',
    cls: 2,
    input: 'compare /proc/self/mem (a kernel file of size 0 whose read fails)',
    expect: 'exit 2, one line naming the file',
    async run() {
      const r = await cli(['compare', '/proc/self/mem', '--system', 'dgx-h100']);
      assertUserError(r, { names: /\/proc\/self\/mem/ });
    },
  },
  {
    id: 'in-proc-environ',
    cls: 2,
    input: 'import /proc/self/environ (size 0, NUL-separated, not a measurement)',
    expect: 'exit 2, one line naming the file as not recognised',
    async run() {
      const r = await cli(['import', '/proc/self/environ']);
      assertUserError(r, { names: /\/proc\/self\/environ/ });
    },
  },
  {
    id: 'in-validate-dir-is-fifo',
    cls: 2,
    input: 'validate --calibration-dir pipe, a FIFO',
    expect: 'exit 2, one line naming --calibration-dir',
    async run(dir) {
      const fifo = join(dir, 'pipe');
      const why = makeFifo(fifo);
      if (why) throw new Error(why);
      const r = await cli(['validate', '--calibration-dir', fifo], { limitMs: 20_000 });
      assertUserError(r, { names: /pipe/ });
    },
  },
  {
    id: 'in-validate-dataset-fifo',
    cls: 2,
    input: 'validate a calibration folder whose nccl-tests/run.json is a FIFO',
    expect: 'bounded; the FIFO named (exit 2, or listed as unreadable with a non-zero exit)',
    async run(dir) {
      mkdirSync(join(dir, 'nccl-tests'));
      const why = makeFifo(join(dir, 'nccl-tests', 'run.json'));
      if (why) throw new Error(why);
      const r = await cli(['validate', '--calibration-dir', dir], { limitMs: 30_000 });
      assertBounded(r);
      assert.notEqual(r.code, 0, r.stdout);
      assert.match(`${r.stdout}${r.stderr}`, /run\.json.*FIFO/);
    },
  },
  {
    id: 'in-accelerate-deepspeed-zero',
    cls: 2,
    input: 'an Accelerate YAML whose deepspeed_config_file links to /dev/zero',
    expect: 'exit 2, one line at the YAML line naming the file, a character device',
    async run(dir) {
      symlinkSync('/dev/zero', join(dir, 'ds.json'));
      writeFileSync(
        join(dir, 'accelerate.yaml'),
        'compute_environment: LOCAL_MACHINE\ndistributed_type: DEEPSPEED\nnum_machines: 1\nnum_processes: 8\ndeepspeed_config:\n  deepspeed_config_file: ds.json\n  zero_stage: 2\n',
      );
      const r = await cli(['profile', join(dir, 'accelerate.yaml'), '--model', 'gpt2'], { limitMs: 20_000 });
      assertUserError(r, { names: /accelerate\.yaml:6:\d+: .*ds\.json.*character device/ });
    },
  },
  {
    id: 'in-system-utf16',
    cls: 2,
    input: 'simulate --system box.yaml saved as UTF-16LE with a BOM (as Windows editors do)',
    expect: 'the same result as the UTF-8 file, or exit 2 with one line naming the file and the encoding',
    async run(dir) {
      writeFileSync(join(dir, 'box.yaml'), utf16le(readFileSync(SYSTEM_YAML, 'utf8')));
      await sameOrRefused(
        ['simulate', '--system', join(dir, 'box.yaml'), '--bytes', '1M'],
        ['simulate', '--system', SYSTEM_YAML, '--bytes', '1M'],
        /box\.yaml.*UTF-16/,
      );
    },
  },
  {
    id: 'in-system-json-bom',
    cls: 2,
    input: 'simulate --system box.json with a UTF-8 byte-order mark',
    expect: 'the same result as without the mark',
    async run(dir) {
      writeFileSync(join(dir, 'box.json'), `\ufeff${readFileSync(SYSTEM_JSON, 'utf8')}`);
      assert.deepEqual(
        await jsonOf(['simulate', '--system', join(dir, 'box.json'), '--bytes', '1M']),
        await jsonOf(['simulate', '--system', SYSTEM_JSON, '--bytes', '1M']),
      );
    },
  },
  {
    id: 'in-nccl-tests-crlf',
    cls: 2,
    input: 'import nccl-tests output with CRLF line ends',
    expect: 'the same rows as the LF file',
    async run(dir) {
      writeFileSync(join(dir, 'run.txt'), readFileSync(NCCL_TESTS, 'utf8').replace(/\n/g, '\r\n'));
      const a = (await jsonOf(['import', join(dir, 'run.txt')])) as { rows: unknown[] };
      const b = (await jsonOf(['import', NCCL_TESTS])) as { rows: unknown[] };
      assert.deepEqual(a.rows, b.rows);
    },
  },
  {
    id: 'in-nccl-log-bom-crlf',
    cls: 2,
    input: 'import an NCCL_DEBUG log with a UTF-8 BOM and CRLF line ends',
    expect: 'the same result as the plain log',
    async run(dir) {
      writeFileSync(join(dir, 'debug.log'), `\ufeff${readFileSync(NCCL_LOG, 'utf8').replace(/\n/g, '\r\n')}`);
      const a = (await jsonOf(['import', join(dir, 'debug.log'), '--gpu', 'A100-SXM'])) as Record<string, unknown>;
      const b = (await jsonOf(['import', NCCL_LOG, '--gpu', 'A100-SXM'])) as Record<string, unknown>;
      assert.deepEqual(a.rows, b.rows);
      // The system is named after its file; everything else must be the same.
      assert.deepEqual({ ...(a.system as object), name: '' }, { ...(b.system as object), name: '' });
    },
  },
  {
    id: 'in-kineto-utf16',
    cls: 2,
    input: 'import a Kineto trace re-saved as UTF-16LE with a BOM',
    expect: 'the same spans as the UTF-8 trace, or exit 2 with one line naming the file and the encoding',
    async run(dir) {
      writeFileSync(join(dir, 'trace.json'), utf16le(readFileSync(KINETO, 'utf8')));
      await sameOrRefused(['import', join(dir, 'trace.json')], ['import', KINETO], /trace\.json.*UTF-16/);
    },
  },
  {
    id: 'in-check-py-utf16',
    cls: 2,
    input: 'check train.py saved as UTF-16LE with a byte-order mark (it sums gradients with all_reduce)',
    expect: 'read in its encoding: the same findings as the UTF-8 file, exit 1; never "no findings"',
    async run(dir) {
      const source = 'import torch.distributed as dist\nfor p in model.parameters():\n    dist.all_reduce(p.grad)\n';
      writeFileSync(join(dir, 'train.py'), utf16le(source));
      writeFileSync(join(dir, 'plain.py'), source);
      const r = await cli(['check', join(dir, 'train.py')]);
      const plain = await cli(['check', join(dir, 'plain.py')]);
      assertBounded(r);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.equal(r.stdout.replaceAll('train.py', 'plain.py'), plain.stdout);
    },
  },
  {
    id: 'in-check-py-utf16-no-mark',
    cls: 2,
    input: 'check train.py saved as UTF-16LE without a byte-order mark (NUL bytes between the letters)',
    expect: 'the file named as not fully analysed, exit 1; never "no findings"',
    async run(dir) {
      const source = 'import torch.distributed as dist\nfor p in model.parameters():\n    dist.all_reduce(p.grad)\n';
      writeFileSync(join(dir, 'train.py'), Buffer.from(source, 'utf16le'));
      const r = await cli(['check', join(dir, 'train.py')]);
      assertBounded(r);
      assert.equal(r.code, 1, r.stdout + r.stderr);
      assert.match(r.stdout, /train\.py.*(not (fully )?analysed|NUL)/);
    },
  },
];
