// Class 6, messages: damaged real files (empty, truncated, trailing commas, tabs) must be answered with one line
// naming the file and, for text formats, the line and column; text from input (keys, values, device names, a
// Python's stderr) must reach the terminal escaped and unable to forge a line; a missing or broken Python is a
// user error (2), never an internal one (70).
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  assertBounded,
  assertNoForgedLine,
  assertUserError,
  cli,
  EXAMPLES,
  FIXTURES_REAL,
  LLAMA_CONFIG,
  type HostileCase,
} from './round';

const KINETO = join(FIXTURES_REAL, 'kineto-a100-2rank-nccl2.17-gpu-excerpt.json');
const KINETO_GZ = join(FIXTURES_REAL, 'kineto-a100-2rank-nccl2.17-full.json.gz');
const NCCL_TESTS = join(FIXTURES_REAL, 'nccl-tests-a100-8gpu-2021.txt');

function messageCase(
  id: string,
  input: string,
  setup: (dir: string) => string[],
  names: RegExp,
  oneLine = true,
): HostileCase {
  return {
    id,
    cls: 6,
    input,
    expect: `exit 2, ${oneLine ? 'one line' : 'error lines only'}, naming ${names.source}`,
    async run(dir) {
      const r = await cli(setup(dir), { limitMs: 30_000 });
      assertUserError(r, { names, oneLine });
      assertNoForgedLine(r.stderr);
    },
  };
}

export const MESSAGE_CASES: readonly HostileCase[] = [
  messageCase(
    'msg-system-key-escape',
    'a system YAML with an unknown key holding an escape sequence and a forged line',
    (dir) => {
      writeFileSync(
        join(dir, 'box.yaml'),
        'gpu: H100-SXM\nnodes: 1\ngpusPerNode: 8\nintraNode: nvswitch\n"x\\e[2J\\nerror: forged": 1\n',
      );
      return ['simulate', '--system', join(dir, 'box.yaml'), '--bytes', '1M'];
    },
    /box\.yaml:5:\d+/,
    false,
  ),
  messageCase(
    'msg-model-path-newline',
    'a training config whose model.config path holds a newline and "error: forged"',
    (dir) => {
      writeFileSync(
        join(dir, 'run.collective.yaml'),
        'system: {preset: dgx-h100}\nmodel:\n  config: "m\\nerror: forged.json"\n',
      );
      return ['profile', join(dir, 'run.collective.yaml')];
    },
    /run\.collective\.yaml:3:\d+/,
  ),
  messageCase(
    'msg-python-missing',
    'run --python /nonexistent/python3',
    () => ['run', '--python', '/nonexistent/python3'],
    /\/nonexistent\/python3/,
  ),
  messageCase(
    'msg-python-false',
    'run --python /bin/false (runs, but has no torch)',
    () => ['run', '--python', '/bin/false'],
    /\/bin\/false/,
  ),
  messageCase(
    'msg-python-forges',
    'run --python <a script that prints "error: forged" lines on stderr and exits 1>',
    (dir) => {
      const path = join(dir, 'py');
      writeFileSync(path, '#!/bin/sh\nprintf "Traceback\\nerror: forged\\n\\033[2J" >&2\nexit 1\n');
      chmodSync(path, 0o755);
      return ['run', '--python', path];
    },
    /py/,
  ),
  messageCase(
    'msg-empty-file',
    'import an empty file',
    (dir) => {
      writeFileSync(join(dir, 'empty.txt'), '');
      return ['import', join(dir, 'empty.txt')];
    },
    /empty\.txt/,
  ),
  messageCase(
    'msg-truncated-gz',
    'import a real Kineto .json.gz cut in half',
    (dir) => {
      const bytes = readFileSync(KINETO_GZ);
      writeFileSync(join(dir, 'cut.json.gz'), bytes.subarray(0, bytes.length >> 1));
      return ['import', join(dir, 'cut.json.gz')];
    },
    /cut\.json\.gz/,
  ),
  messageCase(
    'msg-truncated-kineto',
    'compare a real Kineto trace cut in the middle of an event',
    (dir) => {
      const text = readFileSync(KINETO, 'utf8');
      writeFileSync(join(dir, 'cut.json'), text.slice(0, Math.floor(text.length * 0.6)));
      return ['compare', join(dir, 'cut.json'), '--system', 'dgx-a100'];
    },
    /cut\.json(:\d+:\d+)?/,
  ),
  messageCase(
    'msg-truncated-ds',
    'profile a ds_config.json cut off after a key',
    (dir) => {
      const text = readFileSync(join(EXAMPLES, 'ds_config.json'), 'utf8');
      writeFileSync(join(dir, 'ds_config.json'), text.slice(0, text.indexOf('"zero_optimization"') + 20));
      return ['profile', join(dir, 'ds_config.json'), '--model', 'gpt2'];
    },
    /ds_config\.json:\d+:\d+/,
  ),
  messageCase(
    'msg-hf-trailing-comma',
    'profile --model config.json with a trailing comma on line 3',
    (dir) => {
      writeFileSync(join(dir, 'config.json'), '{\n  "hidden_size": 768,\n  "num_hidden_layers": 12,\n}\n');
      return ['profile', LLAMA_CONFIG, '--model', join(dir, 'config.json')];
    },
    /config\.json:[34]:\d+/,
  ),
  messageCase(
    'msg-accelerate-tab',
    'an Accelerate YAML indented with a tab',
    (dir) => {
      writeFileSync(
        join(dir, 'accelerate.yaml'),
        'distributed_type: MULTI_GPU\nnum_machines: 1\ndeepspeed_config:\n\tzero_stage: 2\n',
      );
      return ['profile', join(dir, 'accelerate.yaml'), '--model', 'gpt2'];
    },
    /accelerate\.yaml:4:\d+/,
  ),
  messageCase(
    'msg-unknown-flag-escape',
    'simulate --\\e]0;pwned\\a (an unknown flag holding an OSC title sequence)',
    () => ['simulate', '--system', 'dgx-h100', '--bytes', '1M', '--\u001b]0;pwned\u0007'],
    /\\u001b/,
  ),
  messageCase(
    'msg-whatif-no-equals',
    'profile --what-if nodes',
    () => ['profile', LLAMA_CONFIG, '--what-if', 'nodes'],
    /--what-if/,
  ),
  messageCase(
    'msg-whatif-empty',
    'profile --what-if nodes=',
    () => ['profile', LLAMA_CONFIG, '--what-if', 'nodes='],
    /nodes/,
  ),
  messageCase(
    'msg-whatif-gpu-escape',
    'profile --what-if gpu=<ESC>[31mH100<LF>error: forged',
    () => ['profile', LLAMA_CONFIG, '--what-if', 'gpu=\u001b[31mH100\nerror: forged'],
    /gpu/,
  ),
  {
    id: 'msg-device-name-osc',
    cls: 6,
    input: 'import nccl-tests output whose device names hold an OSC 8 hyperlink, BEL and a newline-free CR',
    expect: 'exit 0; nothing in stdout or stderr acts on the terminal',
    async run(dir) {
      const text = readFileSync(NCCL_TESTS, 'utf8').replace(
        /A100-SXM4-40GB/g,
        '\u001b]8;;http://x\u0007A100\u001b]8;;\u0007\rerror: forged',
      );
      writeFileSync(join(dir, 'run.txt'), text);
      const r = await cli(['import', join(dir, 'run.txt')]);
      assertBounded(r);
      assert.equal(r.code, 0, r.stderr);
      // eslint-disable-next-line no-control-regex -- the assertion is that no control character got through.
      assert.ok(!/[\u0007\u001b\r]/.test(r.stdout), JSON.stringify(r.stdout.slice(0, 300)));
    },
  },
];
