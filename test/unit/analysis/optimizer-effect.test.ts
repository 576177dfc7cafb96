// The effect a proven gradient factor has depends on the optimizer the step applies it with: a K× learning rate for
// SGD, a change through eps (and clipping, and an L2 decay) for an adaptive optimizer. Labelled cases: SGD and an
// unresolved optimizer keep the learning-rate wording; Adam, AdamW, FusedAdam and optax.adamw restate it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

// CP008: K micro-batch losses summed into one step; `OPTIMIZER` is replaced by each case's construction.
const ACCUMULATION = py`
  import torch
  from apex.optimizers import FusedAdam

  def train(model, loader, args):
      optimizer = OPTIMIZER
      for step, batch in enumerate(loader):
          loss = criterion(model(batch), batch.y)
          loss.backward()
          if (step + 1) % accumulation_steps == 0:
              CLIP
              optimizer.step()
              optimizer.zero_grad()
`;

function accumulation(optimizer: string, clip = 'pass'): string {
  return ACCUMULATION.replace('OPTIMIZER', optimizer).replace('CLIP', clip);
}

const LR_WORDING = /the effective learning rate is `accumulation_steps`× the configured one/;

test('SGD, with or without momentum, keeps the learning-rate wording', async () => {
  for (const opt of [
    'torch.optim.SGD(model.parameters(), lr=0.1)',
    'torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)',
  ]) {
    const findings = await analyze(accumulation(opt));
    assert.deepEqual(summary(findings), ['CP008@8']);
    assert.match(findings[0].message, LR_WORDING);
  }
});

test('an optimizer the file does not construct keeps the learning-rate wording', async () => {
  for (const opt of ['build_optimizer(model, args)', 'args.optimizer', 'Adam(model.parameters())']) {
    const findings = await analyze(accumulation(opt));
    assert.deepEqual(summary(findings), ['CP008@8']);
    assert.match(findings[0].message, LR_WORDING, opt);
  }
});

test('Adam, AdamW and FusedAdam: the gradient factor changes the update through eps, not as a learning rate', async () => {
  for (const [opt, name] of [
    ['torch.optim.Adam(model.parameters(), lr=1e-3)', 'Adam'],
    ['torch.optim.AdamW(model.parameters(), lr=1e-3)', 'AdamW'],
    ['FusedAdam(model.parameters(), lr=1e-3)', 'FusedAdam'],
  ]) {
    const findings = await analyze(accumulation(opt));
    assert.deepEqual(summary(findings), ['CP008@8'], opt);
    const message = findings[0].message;
    assert.doesNotMatch(message, /effective learning rate/, opt);
    assert.match(
      message,
      new RegExp(
        `the gradient the optimizer reads is \`accumulation_steps\`× the intended one, but ${name} normalises its step by the gradient's scale, so the update changes only through eps, not as a learning-rate factor\\.`,
      ),
      opt,
    );
  }
});

test('clipping by norm in view and an L2 weight decay are named; AdamW has no L2 decay to name', async () => {
  const clipped = (
    await analyze(
      accumulation('torch.optim.AdamW(model.parameters())', 'torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)'),
    )
  )[0];
  assert.match(clipped.message, /through eps and the gradient clipping \(`torch\.nn\.utils\.clip_grad_norm_`/);
  const decayed = (await analyze(accumulation('torch.optim.Adam(model.parameters(), weight_decay=0.01)')))[0];
  assert.match(decayed.message, /through eps and the L2 weight decay added to the gradient/);
  const decoupled = (await analyze(accumulation('torch.optim.AdamW(model.parameters(), weight_decay=0.01)')))[0];
  assert.match(decoupled.message, /changes only through eps, not/);
});

test('the AMP scaler steps the optimizer it is given, through a Horovod wrapper', async () => {
  const text = accumulation('hvd.DistributedOptimizer(torch.optim.Adam(model.parameters()))')
    .replace('import torch\n', 'import torch\nimport horovod.torch as hvd\n')
    .replace('optimizer.step()', 'scaler.step(optimizer)');
  const findings = await analyze(text);
  assert.deepEqual(summary(findings), ['CP008@9']);
  assert.match(findings[0].message, /but Adam normalises its step/);
});

test('CP004 with optax.adamw and clip_by_global_norm in its chain; optax.sgd keeps the wording', async () => {
  const text = py`
    import jax
    import optax
    from jax import lax

    tx = optax.chain(optax.clip_by_global_norm(1.0), OPT)

    def train_step(params, opt_state, batch):
        grads = jax.grad(loss_fn)(params, batch)
        grads = lax.psum(grads, axis_name="batch")
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    p_train_step = jax.pmap(train_step, axis_name="batch")
  `;
  const adamw = await analyze(text.replace('OPT', 'optax.adamw(1e-3)'));
  assert.deepEqual(summary(adamw), ['CP004@9']);
  assert.match(
    adamw[0].message,
    /but optax\.adamw normalises its step by the gradient's scale, so the update changes only through eps and the gradient clipping \(`optax\.clip_by_global_norm`/,
  );
  const sgd = await analyze(text.replace('OPT', 'optax.sgd(1e-3)'));
  assert.deepEqual(summary(sgd), ['CP004@9']);
  assert.match(sgd[0].message, /the effective learning rate is N× \(world size\) the configured one/);
});

test('a name rebound by unpacking another call is unresolved; a wrapper handed the same optimizer is not', async () => {
  const rebound = accumulation('torch.optim.AdamW(model.parameters())').replace(
    '    for step,',
    '    model, optimizer = build(model, args)\n    for step,',
  );
  const findings = await analyze(rebound);
  assert.deepEqual(summary(findings), ['CP008@9']);
  assert.match(findings[0].message, LR_WORDING);
  const prepared = rebound.replace('build(model, args)', 'accelerator.prepare(model, optimizer)');
  assert.match((await analyze(prepared))[0].message, /but AdamW normalises its step/);
});

// CP005: a learning rate scaled by the world size on top of gradients summed over the ranks.
const LR_ON_SUM = py`
  import torch
  import torch.distributed as dist
  import torch.nn.functional as F

  def train(model, loader, base_lr):
      opt = OPTIMIZER(model.parameters(), lr=base_lr * dist.get_world_size())
      for x, y in loader:
          F.cross_entropy(model(x), y).backward()
          for p in model.parameters():
              dist.all_reduce(p.grad)
          opt.step()
`;

test('CP005 under SGD keeps N²×; under Adam the update is N× (the learning rate), the sum acting through eps', async () => {
  const sgd = await analyze(LR_ON_SUM.replace('OPTIMIZER', 'torch.optim.SGD'));
  assert.deepEqual(summary(sgd), ['CP005@6', 'CP001@10']);
  assert.match(sgd[0].message, /the effective learning rate is N²× \(world size squared\) the single-GPU one/);
  const adam = await analyze(LR_ON_SUM.replace('OPTIMIZER', 'torch.optim.AdamW'));
  assert.deepEqual(summary(adam), ['CP005@6', 'CP001@10']);
  assert.doesNotMatch(adam[0].message, /effective learning rate is N²×/);
  assert.match(
    adam[0].message,
    /the update is N× \(world size\) the single-GPU one, not N²× \(world size squared\): AdamW normalises its step by the gradient's scale, so the sum's factor changes the update only through eps/,
  );
});
