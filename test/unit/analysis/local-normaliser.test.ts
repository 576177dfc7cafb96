// A loss divided by a count of this rank's own micro-batch, whose gradients a helper of another file then sums over
// all ranks with a rescale of 1: a sum of per-rank means (CP001). Every correct twin changes one link of that chain:
// the count gathered or reduced across ranks, the rescale set to the world size, the normaliser a parameter whose
// origin is elsewhere, or a second definition of the loss method that does something else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeProgram, py, summary } from './helpers';

const DIST = py`
  import torch.distributed as dist

  def sum_and_scale(tensors, denom):
      for t in tensors:
          dist.all_reduce(t)
          t.div_(denom)
`;

const CRITERION = py`
  import torch

  class TokenLoss(torch.nn.Module):
      def run_backward(self, batch, logits, norm):
          loss = torch.nn.functional.cross_entropy(logits, batch.labels, reduction='sum')
          loss.div(float(norm)).backward()
          return loss.item()
`;

function trainer(opts: { normaliser?: string; rescale?: string; after?: string } = {}): string {
  return py`
    from pkg.dist_utils import sum_and_scale

    class Runner:
        def accumulate(self, micro_batches):
            self.model.zero_grad()
            for mb in micro_batches:
                logits = self.model(mb.inputs)
                norm = ${opts.normaliser ?? 'mb.labels.ne(self.pad).sum()'}
                ${opts.after ?? 'pass'}
                self.criterion.run_backward(mb, logits, norm)
            grads = [p.grad.data for p in self.model.parameters() if p.requires_grad]
            sum_and_scale(grads, ${opts.rescale ?? 'float(1)'})
            self.optimizer.step()
  `;
}

async function trainerFindings(train: string, extra: Record<string, string> = {}): Promise<string[]> {
  const results = await analyzeProgram({
    'pkg/dist_utils.py': DIST,
    'pkg/criterion.py': CRITERION,
    'train.py': train,
    ...extra,
  });
  return summary(results.get('train.py')!.findings);
}

test('a per-micro-batch token count normalises the loss and a rescale of 1 sums the ranks: CP001 with the chain', async () => {
  const results = await analyzeProgram({
    'pkg/dist_utils.py': DIST,
    'pkg/criterion.py': CRITERION,
    'train.py': trainer(),
  });
  const findings = results.get('train.py')!.findings;
  assert.deepEqual(summary(findings), ['CP001@12']);
  const f = findings[0];
  assert.match(f.message, /sum_and_scale.*sums the gradients in `grads` over all ranks/);
  assert.match(f.message, /divided by `norm`, a count of this rank's own micro-batch/);
  assert.match(f.message, /N× \(world size\)/);
  assert.deepEqual(
    f.related.map((r) => [r.file ?? '', r.range.startLine + 1]),
    [
      ['', 8],
      ['pkg/criterion.py', 6],
      ['pkg/dist_utils.py', 5],
      ['', 13],
    ],
  );
  assert.deepEqual(summary(results.get('pkg/dist_utils.py')!.findings), []);
});

test('the batch size of the micro-batch is a local count too', async () => {
  assert.deepEqual(await trainerFindings(trainer({ normaliser: 'mb.batch_size' })), ['CP001@12']);
});

test('a count reduced over all ranks before it divides the loss: silent', async () => {
  assert.deepEqual(await trainerFindings(trainer({ after: 'dist.all_reduce(norm)' })), []);
});

test('a count gathered from every rank: silent', async () => {
  assert.deepEqual(
    await trainerFindings(trainer({ normaliser: 'sum(all_gather_list(mb.labels.ne(self.pad).sum()))' })),
    [],
  );
});

test('the helper rescales by the world size: silent', async () => {
  assert.deepEqual(await trainerFindings(trainer({ rescale: 'dist.get_world_size()' })), []);
});

test('a normaliser that is not counted from the micro-batch (a configured constant): silent', async () => {
  assert.deepEqual(await trainerFindings(trainer({ normaliser: 'self.norm_constant' })), []);
});

test('a normaliser passed in by the caller, the way the fix gathers it outside: silent', async () => {
  const fixed = py`
    from pkg.dist_utils import sum_and_scale

    class Runner:
        def accumulate(self, micro_batches, norm):
            for mb in micro_batches:
                logits = self.model(mb.inputs)
                self.criterion.run_backward(mb, logits, norm)
            grads = [p.grad.data for p in self.model.parameters() if p.requires_grad]
            sum_and_scale(grads, float(1))
            self.optimizer.step()
  `;
  assert.deepEqual(await trainerFindings(fixed), []);
});

test('another class defines the loss method without dividing by the count: the call is ambiguous, silent', async () => {
  const other = py`
    class PlainLoss:
        def run_backward(self, batch, logits, norm):
            loss = self.crit(logits, batch.labels)
            loss.backward()
  `;
  assert.deepEqual(await trainerFindings(trainer(), { 'pkg/plain.py': other }), []);
});

const DIRECT = py`
  from pkg.dist_utils import sum_and_scale

  def accumulate(model, optimizer, micro_batches):
      model.zero_grad()
      for batch in micro_batches:
          loss = model(batch.inputs, batch.labels)
          loss = loss / ${'NORM'}
          loss.backward()
      grads = [p.grad for p in model.parameters()]
      sum_and_scale(grads, 1)
      optimizer.step()
`;

test('the loss divided here by the micro-batch size before its own backward: CP001 at the rescale of 1', async () => {
  const results = await analyzeProgram({
    'pkg/dist_utils.py': DIST,
    'train.py': DIRECT.replace('NORM', 'len(batch.inputs)'),
  });
  assert.deepEqual(summary(results.get('train.py')!.findings), ['CP001@10']);
});

test('a backward here whose loss shows no divisor may be normalised elsewhere: silent', async () => {
  const codes = await trainerFindings(DIRECT.replace('loss = loss / NORM', 'pass'));
  assert.deepEqual(
    codes.filter((c) => c.startsWith('CP001')),
    [],
  );
});

test('the learning rate divided by the world size in the same file compensates the sum: silent', async () => {
  const compensated = DIRECT.replace('NORM', 'len(batch.inputs)').replace(
    '    optimizer.step()',
    '    lr = base_lr / dist.get_world_size()\n    optimizer.step(lr)',
  );
  const results = await analyzeProgram({ 'pkg/dist_utils.py': DIST, 'train.py': compensated });
  assert.deepEqual(summary(results.get('train.py')!.findings), []);
});
