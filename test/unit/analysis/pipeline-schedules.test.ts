// The contract of torch.distributed.pipelining's schedules: with `scale_grads=True` (the default) every
// `schedule.step()` divides all `.grad` by `n_microbatches`, the gradients accumulated by earlier steps included.
// Stepping a schedule several times before one optimizer step is CP002 at the schedule's construction; one step per
// optimizer step, `scale_grads=False`, or a window the code does not prove stays silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type AnalysisResult } from '../../../src/analysis/index';
import { analyzeProgram, py, summary } from './helpers';

const FACTORY = py`
  from torch.distributed.pipelining import ScheduleGPipe


  def make_schedule(stage, chunks, criterion):
      schedule = ScheduleGPipe(stage, n_microbatches=chunks, loss_fn=criterion)
      return schedule
`;

const RUNNER = py`
  import torch
  from factory import make_schedule


  class Runner:
      def __init__(self, stage, optimizer, criterion, accumulation):
          self.pipe = make_schedule(stage, 8, criterion)
          self.optimizer = optimizer
          self.accumulation = accumulation

      def run_chunks(self, batch, labels):
          losses = []
          self.pipe.step(batch, target=labels, losses=losses)
          return torch.stack(losses).mean()

      def train_step(self, batches):
          self.optimizer.zero_grad()
          for _ in range(self.accumulation):
              batch, labels = next(batches)
              self.run_chunks(batch, labels)
          self.optimizer.step()
`;

function codes(results: Map<string, AnalysisResult>, path: string): string[] {
  return summary(results.get(path)!.findings);
}

test('a scaling schedule stepped in an accumulation loop before one optimizer step is CP002 at its construction', async () => {
  const results = await analyzeProgram({ 'factory.py': FACTORY, 'runner.py': RUNNER });
  assert.deepEqual(codes(results, 'factory.py'), ['CP002@5']);
  assert.deepEqual(codes(results, 'runner.py'), []);
  const finding = results.get('factory.py')!.findings[0];
  assert.match(finding.message, /leaves `scale_grads` at its default, True/);
  assert.match(finding.message, /`n_microbatches` \(`chunks`\)/);
  assert.match(
    finding.message,
    /`self\.pipe\.step\(\)` runs `self\.accumulation` times before one `self\.optimizer\.step\(\)`/,
  );
  assert.deepEqual(
    finding.related.map((r) => `${r.file}:${r.range.startLine + 1}`),
    ['runner.py:13', 'runner.py:18', 'runner.py:21'],
  );
});

test('the same program is clean with scale_grads=False, one step per optimizer step or no repeated window', async () => {
  const twins: Record<string, string>[] = [
    { 'factory.py': FACTORY.replace('loss_fn=criterion)', 'loss_fn=criterion, scale_grads=False)') },
    {
      runner: RUNNER.replace(
        'self.run_chunks(batch, labels)',
        'self.run_chunks(batch, labels)\n            self.optimizer.step()',
      ),
    },
    {
      runner: RUNNER.replace(
        'self.run_chunks(batch, labels)',
        'self.run_chunks(batch, labels)\n            self.optimizer.zero_grad()',
      ),
    },
    { runner: RUNNER.replace('range(self.accumulation)', 'range(1)') },
    { runner: RUNNER.replace('        self.optimizer.step()\n', '        return None\n') },
    // A flag chosen elsewhere proves nothing about the scaling.
    { 'factory.py': FACTORY.replace('loss_fn=criterion)', 'loss_fn=criterion, scale_grads=cfg.scale)') },
  ];
  for (const twin of twins) {
    const files = { 'factory.py': twin['factory.py'] ?? FACTORY, 'runner.py': twin.runner ?? RUNNER };
    const results = await analyzeProgram(files);
    assert.deepEqual([...codes(results, 'factory.py'), ...codes(results, 'runner.py')], [], JSON.stringify(twin));
  }
});

const SPEC = py`
  from dataclasses import dataclass
  from typing import Callable, TypeAlias
  from torch.distributed.pipelining.schedules import _PipelineSchedule

  BuildPipeline: TypeAlias = Callable[..., tuple[list, _PipelineSchedule]]


  @dataclass
  class Recipe:
      name: str
      build_pipeline: BuildPipeline | None = None
`;

const BUILDER = py`
  from torch.distributed.pipelining.schedules import _PipelineSchedule, get_schedule_class


  def build(stages, cfg, loss_fn) -> tuple[list, _PipelineSchedule]:
      cls = get_schedule_class(cfg.schedule)
      sched = cls(stages, n_microbatches=cfg.batch // cfg.micro, loss_fn=loss_fn)
      return stages, sched
`;

const ENGINE = py`
  class Engine:
      def setup(self, recipe, stages, cfg, loss_fn):
          (self.parts, self.sched) = recipe.build_pipeline(stages, cfg, loss_fn)

      def step(self, data, accumulation, optimizers):
          for _ in range(accumulation):
              x, y = next(data)
              self.sched.step(x, target=y, losses=[])
          optimizers.step()
`;

test('a schedule reached through an annotated callable is CP002 where every schedule that leaves its function scales', async () => {
  const files = { 'spec.py': SPEC, 'builder.py': BUILDER, 'engine.py': ENGINE };
  assert.deepEqual(codes(await analyzeProgram(files), 'builder.py'), ['CP002@6']);
  // Another schedule that leaves its function without scaling: which one the callable returns is not proven.
  const other = py`
    from torch.distributed.pipelining import Schedule1F1B

    def build_plain(stages, n, loss_fn):
        plain = Schedule1F1B(stages[0], n, loss_fn=loss_fn, scale_grads=False)
        return stages, plain
  `;
  assert.deepEqual(codes(await analyzeProgram({ ...files, 'plain.py': other }), 'builder.py'), []);
  // The annotation at the wrong position, or a result never stepped in a loop, proves nothing.
  const swapped = {
    ...files,
    'spec.py': SPEC.replace('tuple[list, _PipelineSchedule]', 'tuple[_PipelineSchedule, list]'),
  };
  assert.deepEqual(codes(await analyzeProgram(swapped), 'builder.py'), []);
});

test('a local schedule: CP002 when stepped k times before the optimizer, clean when each step is followed by zero_grad', async () => {
  const script = py`
    import torch
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B


    def main(model, optimizer, data, pp_group, accumulation):
        stage = PipelineStage(model, 0, 2, "cuda", group=pp_group)
        schedule = Schedule1F1B(stage, 4, loss_fn=torch.nn.functional.cross_entropy)
        for epoch in range(10):
            for _ in range(accumulation):
                x, y = next(data)
                schedule.step(x, target=y)
            optimizer.step()
            optimizer.zero_grad()
  `;
  assert.deepEqual(codes(await analyzeProgram({ 'train.py': script }), 'train.py'), ['CP002@7']);
  const perStep = script.replace(
    'schedule.step(x, target=y)',
    'schedule.step(x, target=y)\n            model.zero_grad()',
  );
  assert.deepEqual(codes(await analyzeProgram({ 'train.py': perStep }), 'train.py'), []);
  // Test code is not judged.
  assert.deepEqual(codes(await analyzeProgram({ 'tests/test_pipe.py': script }), 'tests/test_pipe.py'), []);
});

const SCALED_LOSS = py`
  import functools
  from torch.distributed.pipelining import ScheduleInterleaved1F1B


  def mean_over(loss_fn, parts):
      @functools.wraps(loss_fn)
      def divided(*args, **kwargs):
          value = loss_fn(*args, **kwargs)
          return value / parts

      return divided


  def build(stages, loss_fn, micro):
      return ScheduleInterleaved1F1B(stages, n_microbatches=micro, loss_fn=mean_over(loss_fn, micro))
`;

test('a loss divided by n_microbatches given to a schedule that also scales the gradients is CP002', async () => {
  const results = await analyzeProgram({ 'pp.py': SCALED_LOSS });
  assert.deepEqual(codes(results, 'pp.py'), ['CP002@15']);
  const finding = results.get('pp.py')!.findings[0];
  assert.match(finding.message, /divided by `micro` \(`mean_over`\)/);
  assert.match(finding.message, /1\/n_microbatches of the configured one/);
  assert.deepEqual(
    finding.related.map((r) => r.range.startLine + 1),
    [15, 9],
  );
  // torchtitan's fix: the loss divided once, and the schedule told not to scale; or a division by another count.
  const fixed = SCALED_LOSS.replace('mean_over(loss_fn, micro))', 'mean_over(loss_fn, micro), scale_grads=False)');
  assert.deepEqual(codes(await analyzeProgram({ 'pp.py': fixed }), 'pp.py'), []);
  const accumulation = SCALED_LOSS.replace(
    'def build(stages, loss_fn, micro)',
    'def build(stages, loss_fn, micro, steps)',
  ).replace('mean_over(loss_fn, micro))', 'mean_over(loss_fn, steps))');
  assert.deepEqual(codes(await analyzeProgram({ 'pp.py': accumulation }), 'pp.py'), []);
  const multiplied = SCALED_LOSS.replace('return value / parts', 'return value * parts');
  assert.deepEqual(codes(await analyzeProgram({ 'pp.py': multiplied }), 'pp.py'), []);
});
