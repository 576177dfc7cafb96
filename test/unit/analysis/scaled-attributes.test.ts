// A buffer held on an object and all-reduced over the data-parallel group, whose division happens elsewhere: Megatron
// -LM's bucket sums `self.grad_data`, and `finalize_model_grads` (reached through `config.finalize_model_grads_func`,
// a callback the call graph does not follow) calls `scale_gradients(1.0 / dp_size)`, which multiplies the buffer's
// `grad_data` in place. No missing division can be proved there (scaled-attributes.ts); the twins where nothing
// rescales the summed attribute keep their CP001.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program } from '../../../src/analysis/index';
import { attributeScalings, reducedAttributes } from '../../../src/analysis/scaled-attributes';
import { analyzeProgram, parser, py, summary } from './helpers';

const BUCKET = py`
  import torch

  class Bucket:
      def __init__(self, grad_data, data_parallel_group):
          self.grad_data = grad_data
          self.data_parallel_group = data_parallel_group

      def start_grad_sync(self):
          torch.distributed.all_reduce(self.grad_data, group=self.data_parallel_group)

  class GradBuffer:
      def __init__(self, numel):
          self.grad_data = torch.zeros(numel)

      def scale_gradients(self, scaling_factor: float) -> None:
          SCALE_STATEMENT
`;

const DDP = py`
  class DistributedDataParallel:
      def __init__(self, buffers):
          self.buffers = buffers

      def scale_gradients(self, scaling_factor):
          for buffer in self.buffers:
              buffer.scale_gradients(scaling_factor)
`;

const FINALIZE = py`
  from megatron.core import parallel_state

  def finalize_model_grads(model):
      dp_size = parallel_state.get_data_parallel_world_size()
      for model_chunk in model:
          model_chunk.scale_gradients(1.0 / dp_size)
`;

const TRAINING = py`
  from megatron.core.distributed.finalize_model_grads import finalize_model_grads

  def setup(config):
      config.finalize_model_grads_func = finalize_model_grads
`;

const SCALES = 'self.grad_data *= scaling_factor';

const BUCKET_PATH = 'megatron/core/distributed/buffer.py';

async function check(scale: string, files: Record<string, string>): Promise<string[]> {
  const results = await analyzeProgram({ [BUCKET_PATH]: BUCKET.replace('SCALE_STATEMENT', scale), ...files });
  return summary(results.get(BUCKET_PATH)?.findings ?? []);
}

const CALLED = {
  'megatron/core/distributed/ddp.py': DDP,
  'megatron/core/distributed/finalize_model_grads.py': FINALIZE,
  'megatron/training.py': TRAINING,
};

test('a buffer attribute that a referenced method rescales in place: no missing-division claim', async () => {
  assert.deepEqual(await check(SCALES, CALLED), []);
  assert.deepEqual(await check('self.grad_data.mul_(scaling_factor)', CALLED), []);
  assert.deepEqual(await check('self.grad_data /= scaling_factor', CALLED), []);
});

test('the sum stays a CP001 when the rescaling method is never referenced (dead code compensates nothing)', async () => {
  const codes = await check(SCALES, { 'megatron/training.py': 'def setup(config):\n    return config\n' });
  assert.equal(codes.length, 1, codes.join('\n'));
  assert.match(codes[0], /CP001/);
});

test('the sum stays a CP001 when the referenced method rescales another attribute, or by the literal 1', async () => {
  for (const scale of ['self.main_grad *= scaling_factor', 'self.grad_data *= 1.0']) {
    const codes = await check(scale, CALLED);
    assert.equal(codes.length, 1, `${scale}: ${codes.join('\n')}`);
    assert.match(codes[0], /CP001/);
  }
});

// The scaling method's body as the bucket file holds it, at its indentation: one statement a line.
const body = (...lines: string[]) => lines.join('\n        ');

test('a rescaling written in a comment, a docstring or the text of an f-string rescales nothing: CP001 stays', async () => {
  const cases: Record<string, string> = {
    comment: body('# self.grad_data *= scaling_factor, once the caller asks for it', 'return None'),
    'comment after code': body('return None  # self.grad_data.mul_(scaling_factor)'),
    docstring: body('"""Callers scale the buffer themselves:', '', '    self.grad_data *= scaling_factor', '"""'),
    'prefixed docstring': body("rb'''self.grad_data.div_(scaling_factor)'''", 'return None'),
    'f-string text': body('print(f"self.grad_data *= {scaling_factor}")'),
    'f-string spec': body('print(f"{scaling_factor:{width}} self.grad_data.mul_(x)")'),
  };
  const silenced: string[] = [];
  for (const [label, scale] of Object.entries(cases)) {
    const codes = await check(scale, CALLED);
    if (codes.length !== 1 || !/CP001/.test(codes[0])) silenced.push(`${label}: ${codes.join(' | ')}`);
  }
  assert.deepEqual(silenced, []);
});

test('a rescaling called inside an f-string field is code: no missing-division claim', async () => {
  assert.deepEqual(await check(body('print(f"scaled: {self.grad_data.mul_(scaling_factor)!r:>10}")'), CALLED), []);
});

test('a comment that names the rescaling method does not make it referenced', async () => {
  const training = '# GradBuffer.scale_gradients divides later\ndef setup(config):\n    return config\n';
  const codes = await check(SCALES, { 'megatron/training.py': training });
  assert.equal(codes.length, 1, codes.join('\n'));
  assert.match(codes[0], /CP001/);
  // A string can name it (`getattr(buffer, "scale_gradients")`): that is a reference.
  const named = 'def setup(buffer, f):\n    getattr(buffer, "scale_gradients")(f)\n';
  assert.deepEqual(await check(SCALES, { 'megatron/training.py': named }), []);
});

test('the index names the enclosing function and skips factors written as 1', () => {
  const text = 'class B:\n    def scale(self, f):\n        self.buf *= f\n        self.other *= 1\n\nx.top.div_(n)\n';
  assert.deepEqual(
    attributeScalings('b.py', text).map((s) => [s.attribute, s.functionName, s.line]),
    [
      ['buf', 'scale', 2],
      ['top', undefined, 5],
    ],
  );
  // `.grad` and `.data` are rescaled by clipping and loss-scale unscaling everywhere: they never silence a sum.
  assert.deepEqual(reducedAttributes(['self.grad_data', 'p.grad', 'p.data', 'f(self.x)[self.rank]', 'a.b()']), [
    'grad_data',
    'x',
    'rank',
  ]);
});

test('an edit of another file that adds or removes the rescaling re-judges the buffer without editing its file', async () => {
  // The editor keeps each file's analysis while its text is unchanged; the answer about the rescaling came from
  // other files, so an edit there must re-judge this one.
  const program = new Program(await parser());
  program.setFile(BUCKET_PATH, BUCKET.replace('SCALE_STATEMENT', SCALES));
  for (const [path, text] of Object.entries(CALLED)) program.setFile(path, text);
  const codesNow = () => summary(program.analyzeAll().get(BUCKET_PATH)?.findings ?? []);
  assert.deepEqual(codesNow(), []);
  // The other files stop naming the rescaling method: it is dead code, and the sum is a CP001 again.
  for (const path of Object.keys(CALLED)) program.setFile(path, 'def unrelated():\n    return 1\n');
  assert.match(codesNow().join('\n'), /CP001/);
  for (const [path, text] of Object.entries(CALLED)) program.setFile(path, text);
  assert.deepEqual(codesNow(), []);
  assert.deepEqual(summary(program.analyzeFile(BUCKET_PATH).findings), []);
});
