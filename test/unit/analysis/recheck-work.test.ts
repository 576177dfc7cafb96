// The editor re-checks one file after each edit of a large workspace (issue 12: under 50 ms in a 2,000-file tree).
// The workspace-wide indexes answer it from per-file results kept by the file's text: an edit of a file that the
// answer does not read re-runs none of that per-file work, and an edit of a file it does read changes the answer.
// The work is counted by spying on the per-file readers, not timed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program, type AnalysisResult } from '../../../src/analysis/index';
import { CallbackScheduleIndex } from '../../../src/analysis/contracts/callback-schedule';
import { ScaledAttributes } from '../../../src/analysis/scaled-attributes';
import { parser, py, summary } from './helpers';

/** Counts the calls of a method on every instance of a class while `run` runs. */
async function countCalls(proto: object, method: string, run: () => unknown): Promise<number> {
  const holder = proto as Record<string, (...args: unknown[]) => unknown>;
  const original = holder[method];
  assert.equal(typeof original, 'function', method);
  let calls = 0;
  holder[method] = function (this: unknown, ...args: unknown[]) {
    calls++;
    return original.apply(this, args);
  };
  try {
    await run();
  } finally {
    holder[method] = original;
  }
  return calls;
}

const SCHEDULE = py`
  import torch
  from framework.backward import run_backward


  def train_step(forward_fn, model, optimizer, loader, args):
      optimizer.zero_grad()
      for _ in range(args.grad_accum_steps):
          loss, stats = forward_fn(next(loader), model)
          run_backward(optimizer, loss)
      optimizer.step()
`;

const BACKWARD = 'def run_backward(optimizer, loss):\n    loss.backward()\n';

const SCRIPT = py`
  import torch.nn.functional as F
  from framework.trainer import train_step


  def loss_step(batch, model):
      logits = model(batch["input"])
      loss = F.cross_entropy(logits, batch["label"])
      return loss, {"loss": loss.item()}


  train_step(loss_step, model, optimizer, loader, args)
`;

const UNRELATED = 'import json\n\n\ndef load(path):\n    with open(path) as f:\n        return json.load(f)\n';

async function callbackProgram(): Promise<Program> {
  const program = new Program(await parser());
  program.setFile('framework/trainer.py', SCHEDULE);
  program.setFile('framework/backward.py', BACKWARD);
  program.setFile('train.py', SCRIPT);
  program.setFile('util/io.py', UNRELATED);
  program.analyzeAll();
  return program;
}

const codes = (result: AnalysisResult) => summary(result.findings).filter((s) => s.startsWith('CP008'));

test('an edit of an unrelated file re-reads no schedule; an edit of the schedule file does', async () => {
  const program = await callbackProgram();
  assert.deepEqual(codes(program.analyzeFile('train.py')), ['CP008@7']);
  const schedule = CallbackScheduleIndex.prototype;
  const unrelated = await countCalls(schedule, 'schedule', () => {
    program.setFile('util/io.py', UNRELATED.replace('json.load(f)', 'json.loads(f.read())'));
    assert.deepEqual(codes(program.analyzeFile('util/io.py')), []);
    assert.deepEqual(codes(program.analyzeFile('train.py')), ['CP008@7']);
  });
  assert.equal(unrelated, 0);
  const own = await countCalls(schedule, 'schedule', () => {
    program.setFile('framework/trainer.py', SCHEDULE.replace('import torch\n', 'import torch  # edited\n'));
    assert.deepEqual(codes(program.analyzeFile('train.py')), ['CP008@7']);
  });
  assert.ok(own > 0, `${own} schedule reads after the schedule's own file changed`);
});

test('an edit of a file the schedule calls into, or of one that divides by its setting, changes the answer', async () => {
  const program = await callbackProgram();
  // The helper now runs backward twice: the passes no longer add up to the count.
  program.setFile('framework/backward.py', BACKWARD + '    loss.backward()\n');
  assert.deepEqual(codes(program.analyzeFile('train.py')), []);
  program.setFile('framework/backward.py', BACKWARD);
  assert.deepEqual(codes(program.analyzeFile('train.py')), ['CP008@7']);
  // A file the run does not import divides by the count's setting: the answer stands.
  const divides = '\n\ndef scale(g, args):\n    return g / args.grad_accum_steps\n';
  program.setFile('util/io.py', UNRELATED + divides);
  assert.deepEqual(codes(program.analyzeFile('train.py')), ['CP008@7']);
  // A file the run imports (the backward helper's) divides by it.
  program.setFile('framework/backward.py', BACKWARD + divides);
  assert.deepEqual(codes(program.analyzeFile('train.py')), []);
  program.setFile('framework/backward.py', BACKWARD);
  // The helper's module stops resolving (its file is removed): nothing is followed, nothing is claimed.
  program.setFile('util/io.py', UNRELATED);
  program.removeFile('framework/backward.py');
  assert.deepEqual(codes(program.analyzeFile('train.py')), []);
});

const BUCKET = py`
  import torch

  class Bucket:
      def __init__(self, grad_data, data_parallel_group):
          self.grad_data = grad_data
          self.data_parallel_group = data_parallel_group

      def start_grad_sync(self):
          torch.distributed.all_reduce(self.grad_data, group=self.data_parallel_group)

      def scale_gradients(self, scaling_factor):
          self.grad_data *= scaling_factor
`;

const CALLER = 'def finalize(bucket, dp_size):\n    bucket.scale_gradients(1.0 / dp_size)\n';

test('an edit of a file that does not name a rescaling method re-reads no reference; one that does is re-read', async () => {
  const program = new Program(await parser());
  program.setFile('buffer.py', BUCKET);
  program.setFile('finalize.py', CALLER);
  program.setFile('util/io.py', UNRELATED);
  program.analyzeAll();
  assert.deepEqual(summary(program.analyzeFile('buffer.py').findings), []);
  const scaled = ScaledAttributes.prototype;
  const unrelated = await countCalls(scaled, 'referencedInTexts', () => {
    program.setFile('util/io.py', UNRELATED.replace('json.load(f)', 'json.loads(f.read())'));
    assert.deepEqual(summary(program.analyzeFile('buffer.py').findings), []);
  });
  assert.equal(unrelated, 0);
  // The only reference goes: the rescaling is dead code, and the sum is a CP001 again.
  const named = await countCalls(scaled, 'referencedInTexts', () => {
    program.setFile('finalize.py', 'def finalize(bucket, dp_size):\n    return None\n');
    const found = summary(program.analyzeFile('buffer.py').findings);
    assert.equal(found.length, 1, found.join('\n'));
    assert.match(found[0], /CP001/);
  });
  assert.ok(named > 0);
});
