// A micro-batch schedule contract read from the code (Megatron-LM before 3d7194c): the training script passes a
// `forward_step` callback to the framework, which hands it down to the function that runs one optimizer step; that
// function runs backward on the callback's losses (through a tuple, a queue and a backward helper) in loops whose
// counts add up to the micro-batch count, and divides by nothing. A callback loss that is a mean over its own
// micro-batch is then CP008 at the loss; any division by the count, a count that does not add up, or a queue or
// helper the analysis cannot follow stays silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program, type AnalysisResult } from '../../../src/analysis/index';
import { parser, py, summary } from './helpers';

const TRAINING = py`
  import torch
  from core import parallel


  def run_backward(optimizer, received, loss, loss_grad):
      if received is not None:
          received.retain_grad()
      if optimizer.mixed_precision:
          optimizer.backward(loss, grad=loss_grad)
      else:
          torch.autograd.backward(loss, grad_tensors=loss_grad)
      return None if received is None else received.grad


  def warmup_forward(step_fn, batches, model, received, losses):
      result = step_fn(batches, model, received[-1])
      if parallel.is_last_stage():
          loss, stats = result
          result = loss
      else:
          parallel.send_next(result)
      losses.append(result)


  def steady_step(step_fn, batches, model, optimizer, received, losses):
      result = step_fn(batches, model, received[-1])
      if parallel.is_last_stage():
          loss, stats = result
          result = loss
      losses.append(result)
      oldest = losses.pop(0)
      grad = run_backward(optimizer, received.pop(0), oldest, None)
      parallel.send_prev(grad)


  def cooldown_backward(optimizer, received, losses):
      oldest = losses.pop(0)
      run_backward(optimizer, received.pop(0), oldest, parallel.recv_grad())


  def one_step(step_fn, batches, model, optimizer, settings):
      optimizer.zero_grad()
      micro = settings.micro_batches_per_step
      warm = parallel.stages() - parallel.stage() - 1
      warm = min(warm, micro)
      received = []
      losses = []
      for _ in range(warm):
          warmup_forward(step_fn, batches, model, received, losses)
      for _ in range(micro - warm):
          steady_step(step_fn, batches, model, optimizer, received, losses)
      for _ in range(warm):
          if settings.stages > 1:
              cooldown_backward(optimizer, received, losses)
          else:
              oldest = losses.pop(0)
              run_backward(optimizer, None, oldest, None)
      optimizer.step()


  def fit(step_fn, model, optimizer, batches, settings):
      for iteration in range(settings.iterations):
          one_step(step_fn, batches, model, optimizer, settings)


  def launch(build_model, step_fn, settings):
      model, optimizer = build_model(settings)
      fit(step_fn, model, optimizer, iter(settings.data), settings)
`;

const SCRIPT = py`
  import torch
  from framework.training import launch


  def forward_step(batches, model, received):
      tokens, mask = next(batches)
      output = model(tokens, received)
      if model.is_last:
          mask = mask.view(-1).float()
          loss = torch.sum(output.view(-1) * mask) / mask.sum()
          return loss, {'lm loss': loss.detach()}
      return output


  if __name__ == "__main__":
      launch(build, forward_step, load_settings())
`;

/** A schedule with one loop that runs the callback and its backward directly. */
const PLAIN = py`
  import torch.nn.functional as F
  from trainer import train_step


  def loss_step(batch, model):
      logits = model(batch["input"])
      loss = F.cross_entropy(logits, batch["label"])
      return loss, {"loss": loss.item()}


  train_step(loss_step, model, optimizer, loader, args)
`;

const PLAIN_TRAINER = py`
  def train_step(forward_fn, model, optimizer, loader, args):
      optimizer.zero_grad()
      for _ in range(args.grad_accum_steps):
          loss, stats = forward_fn(next(loader), model)
          loss.backward()
      optimizer.step()
`;

const PROGRAM = { 'framework/training.py': TRAINING, 'pretrain_lm.py': SCRIPT };

async function check(files: Record<string, string>): Promise<Map<string, AnalysisResult>> {
  const program = new Program(await parser());
  for (const [path, text] of Object.entries(files)) program.setFile(path, text);
  return program.analyzeAll();
}

function all(results: Map<string, AnalysisResult>): string[] {
  return [...results].flatMap(([path, r]) => summary(r.findings).map((s) => `${path}:${s}`));
}

test('a callback mean loss backward-ed in warm-up, 1F1B and cooldown loops that add up to K, never divided, is CP008', async () => {
  const results = await check(PROGRAM);
  assert.deepEqual(all(results), ['pretrain_lm.py:CP008@10']);
  const finding = results.get('pretrain_lm.py')!.findings[0];
  assert.match(
    finding.message,
    /`forward_step`'s loss is a mean over its own micro-batch \(divided by `mask.sum\(\)`\)/,
  );
  assert.match(finding.message, /`one_step` \(framework\/training.py:41\)/);
  assert.match(finding.message, /`settings.micro_batches_per_step`× the mean over the batch/);
  assert.deepEqual(
    finding.related.map((r) => `${r.file ?? 'pretrain_lm.py'}:${r.range.startLine + 1}`),
    ['pretrain_lm.py:16', 'framework/training.py:9', 'framework/training.py:11', 'framework/training.py:58'],
  );
});

/** A file that divides gradients by the count's setting. */
const DIVIDES_SETTING =
  'def scale(grads, settings):\n    return [g / settings.micro_batches_per_step for g in grads]\n';

test('a division by the setting of the count in a file the run does not import keeps CP008 (another script, a tool)', async () => {
  const results = await check({ ...PROGRAM, 'tools/report.py': DIVIDES_SETTING });
  assert.deepEqual(all(results), ['pretrain_lm.py:CP008@10']);
  // A module of the same name elsewhere is counted as reached: imports are over-approximated by module name.
  const script = SCRIPT.replace('import torch', 'import torch\nimport report');
  assert.deepEqual(all(await check({ ...PROGRAM, 'pretrain_lm.py': script, 'tools/report.py': DIVIDES_SETTING })), []);
});

test('a callback passed straight to a one-loop schedule in another file is CP008 at its cross-entropy mean', async () => {
  const results = await check({ 'train.py': PLAIN, 'trainer.py': PLAIN_TRAINER });
  // trainer.py:5 is the per-file accumulation rule, which asks what the program passes to `forward_fn`.
  assert.deepEqual(all(results), ['train.py:CP008@7', 'trainer.py:CP008@5']);
  assert.match(results.get('train.py')!.findings[0].message, /`args.grad_accum_steps`× the mean/);
});

test('the schedule stays silent when the count is divided, does not add up, or the losses cannot be followed', async () => {
  const training = (from: string, to: string) => {
    assert.ok(TRAINING.includes(from), from);
    return { ...PROGRAM, 'framework/training.py': TRAINING.replace(from, to) };
  };
  const script = (from: string, to: string) => {
    assert.ok(SCRIPT.includes(from), from);
    return { ...PROGRAM, 'pretrain_lm.py': SCRIPT.replace(from, to) };
  };
  const twins: [string, Record<string, string>][] = [
    // The fix: the callback divides by the count it is read from.
    [
      'callback divides by the count',
      script('/ mask.sum()', '/ (mask.sum() * load_settings().micro_batches_per_step)'),
    ],
    // Later Megatron: the schedule divides the loss it pops by the number of micro-batches.
    [
      'schedule divides',
      training('    losses.append(result)\n    oldest', '    losses.append(result / micro_batches)\n    oldest'),
    ],
    [
      'helper divides',
      training(
        'optimizer.backward(loss, grad=loss_grad)',
        'optimizer.backward(loss / num_microbatches, grad=loss_grad)',
      ),
    ],
    // The schedule divides the accumulated gradients by the count before the step.
    [
      'gradients divided',
      training(
        '    optimizer.step()\n',
        '    for p in model.parameters():\n        p.grad /= micro\n    optimizer.step()\n',
      ),
    ],
    // Another file the run imports divides by the count's setting (the gradients after the step's sync, or the
    // loss elsewhere): from the schedule's file, or two imports away from the script's.
    [
      'setting divided in a module the schedule imports',
      {
        ...training('from core import parallel', 'from core import parallel\nfrom framework import optim'),
        'framework/optim.py': DIVIDES_SETTING,
      },
    ],
    [
      'setting divided in a module the script imports through another',
      {
        ...script('from framework.training import launch', 'from framework.training import launch\nimport lm.losses'),
        'lm/losses.py': 'from .scaling import scale\n',
        'lm/scaling.py': DIVIDES_SETTING,
      },
    ],
    // A summed loss: K sums are the sum over the batch, a convention the code may mean.
    ['summed loss', script('/ mask.sum()', '')],
    // Divided by a count that is not the micro-batch's own (a global token count).
    ['global count', script('/ mask.sum()', '/ model.global_tokens')],
    // One micro-batch short: K − 1 backward passes, not K.
    ['loops do not add up', training('range(micro - warm)', 'range(micro - warm - 1)')],
    // The warm-up count is not bounded by K: the passes add up to max(K, w).
    ['warm-up unbounded', training('    warm = min(warm, micro)\n', '')],
    // Something other than a callback loss enters the queue.
    [
      'queue holds other values',
      training(
        '    losses.append(result)\n\n\ndef steady',
        '    losses.append(result)\n    losses.append(received[-1])\n\n\ndef steady',
      ),
    ],
    // One branch runs backward twice: the count differs between paths.
    [
      'branches differ',
      training(
        'torch.autograd.backward(loss, grad_tensors=loss_grad)',
        'torch.autograd.backward(loss, grad_tensors=loss_grad)\n        loss.backward()',
      ),
    ],
    // The callback is handed to a schedule function the program does not define (today's `get_forward_backward_func()`).
    [
      'schedule not in view',
      training(
        '        steady_step(step_fn,',
        '        schedule_fn = parallel.schedule()\n        schedule_fn(step_fn,',
      ),
    ],
    // A hop rebinds the callback: what reaches the schedule is not the script's function.
    [
      'callback rebound',
      training(
        'def fit(step_fn, model, optimizer, batches, settings):\n',
        'def fit(step_fn, model, optimizer, batches, settings):\n    step_fn = parallel.wrap(step_fn)\n',
      ),
    ],
    // No optimizer step in the function: nothing proves one step per K passes.
    ['no step', training('    optimizer.step()\n', '')],
  ];
  for (const [name, files] of twins) assert.deepEqual(all(await check(files)), [], name);
});

test('the one-loop schedule is silent when the loss is divided by the accumulation count or is a sum', async () => {
  const divided = PLAIN.replace(
    'loss = F.cross_entropy(logits, batch["label"])',
    'loss = F.cross_entropy(logits, batch["label"]) / args.grad_accum_steps',
  );
  const summed = PLAIN.replace('batch["label"])', 'batch["label"], reduction="sum")');
  for (const script of [divided, summed]) {
    // The per-file accumulation rule reads trainer.py's `forward_fn` result as the loss of the function passed.
    assert.deepEqual(all(await check({ 'train.py': script, 'trainer.py': PLAIN_TRAINER })), []);
  }
});

test('a schedule in test code judges nothing', async () => {
  assert.deepEqual(all(await check({ 'tests/train.py': PLAIN, 'tests/trainer.py': PLAIN_TRAINER })), []);
});
