// The contract of transformers 4.46.0-4.46.1 with a Trainer subclass that keeps the Trainer's own compute_loss:
// training_step multiplies every loss by gradient_accumulation_steps before accelerate divides it, and only a model
// whose forward takes loss kwargs normalises by the window's count. A workspace whose pins make 4.46.0 or 4.46.1
// the newest release gets a CP008 warning at the name of the most derived such class (the fix is a compute_loss
// added to its body); every other case stays silent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program, type AnalysisResult } from '../../../src/analysis/index';
import { parser, py, summary } from './helpers';

const TRAINER = py`
  from transformers import Trainer


  class CustomTrainer(Trainer):
      def __init__(self, finetuning_args, processor=None, **kwargs):
          super().__init__(**kwargs)
          self.finetuning_args = finetuning_args

      def create_optimizer(self):
          if self.optimizer is None:
              self.optimizer = make_optimizer(self.model, self.args, self.finetuning_args)
          return super().create_optimizer()
`;

const PINNED = { 'requirements.txt': 'transformers>=4.41.2,<=4.46.0\naccelerate>=0.34.0\n' };

async function check(
  files: Record<string, string>,
  manifests: Record<string, string>,
): Promise<Map<string, AnalysisResult>> {
  const program = new Program(await parser(), {});
  for (const [path, text] of Object.entries(files)) program.setFile(path, text);
  for (const [path, text] of Object.entries(manifests)) program.setManifest(path, text);
  return program.analyzeAll();
}

async function codes(
  files: Record<string, string>,
  manifests: Record<string, string>,
  path: string,
): Promise<string[]> {
  return summary((await check(files, manifests)).get(path)!.findings);
}

test('a subclass that keeps Trainer.compute_loss is a CP008 warning where 4.46.0 or 4.46.1 is the newest release', async () => {
  const results = await check({ 'pkg/trainer.py': TRAINER }, PINNED);
  assert.deepEqual(summary(results.get('pkg/trainer.py')!.findings), ['CP008@4']);
  const finding = results.get('pkg/trainer.py')!.findings[0];
  assert.equal(finding.severity, 'warning');
  assert.match(finding.message, /`CustomTrainer` keeps `Trainer\.compute_loss`/);
  assert.match(finding.message, /transformers 4\.46\.0, the newest release the workspace allows/);
  assert.match(finding.message, /`transformers>=4\.41\.2,<=4\.46\.0` in requirements\.txt:1/);
  assert.match(finding.message, /forward takes `loss_kwargs`/);
  assert.ok(finding.related.some((r) => r.file === 'requirements.txt' && r.range.startLine === 0));
  // A direct subclass has only the pins as evidence: the class is the finding's own place.
  assert.equal(finding.related.length, 1);
  // 4.46.1 is the other release that multiplies every loss; Seq2SeqTrainer keeps the same compute_loss.
  const seq2seq = TRAINER.replace(/\bTrainer\b/g, 'Seq2SeqTrainer');
  const pins461 = { 'requirements.txt': 'transformers>=4.41.2,<=4.46.1\n' };
  assert.deepEqual(await codes({ 't.py': seq2seq }, pins461, 't.py'), ['CP008@4']);
});

test('other releases, no upper bound or no pin prove nothing', async () => {
  for (const spec of ['transformers>=4.41.2,<=4.45.2', 'transformers>=4.41.2,<=4.46.2', 'transformers>=4.46.0', ''])
    assert.deepEqual(await codes({ 't.py': TRAINER }, spec ? { 'requirements.txt': spec } : {}, 't.py'), [], spec);
});

test('a class that divides, sets the flag, replaces training_step or gets a compute_loss_func is silent', async () => {
  const variants = [
    // LLaMA-Factory's fix (8185eb1): divide where the model takes no loss kwargs.
    TRAINER.replace(
      '    def create_optimizer(self):',
      [
        '    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):',
        '        loss = super().compute_loss(model, inputs, return_outputs, **kwargs)',
        '        if not getattr(self, "model_accepts_loss_kwargs", False):',
        '            loss /= self.args.gradient_accumulation_steps',
        '        return loss',
        '',
        '    def create_optimizer(self):',
      ].join('\n'),
    ),
    TRAINER.replace('self.finetuning_args = finetuning_args', 'self.model_accepts_loss_kwargs = False'),
    TRAINER.replace(
      '    def create_optimizer(self):',
      '    def training_step(self, model, inputs, num_items_in_batch=None):\n        return super().training_step(model, inputs)\n\n    def create_optimizer(self):',
    ),
  ];
  for (const text of variants) assert.deepEqual(await codes({ 't.py': text }, PINNED, 't.py'), [], text);
  const lossFunc = py`
    from .trainer import CustomTrainer

    def build(model, args, loss_fn):
        return CustomTrainer(None, model=model, args=args, compute_loss_func=loss_fn)
  `;
  assert.deepEqual(await codes({ 'pkg/trainer.py': TRAINER, 'pkg/run.py': lossFunc }, PINNED, 'pkg/trainer.py'), []);
  // unsloth rewrites Trainer.training_step at import: the multiplication is no longer the library's.
  const patch = py`
    import transformers

    def patch(step):
        transformers.Trainer.training_step = step
  `;
  assert.deepEqual(await codes({ 'pkg/trainer.py': TRAINER, 'pkg/patch.py': patch }, PINNED, 'pkg/trainer.py'), []);
});

test('the most derived class is judged once, and a base the workspace cannot see decides nothing', async () => {
  const child = py`
    from .trainer import CustomTrainer

    class PretrainTrainer(CustomTrainer):
        pass
  `;
  const files = { 'pkg/trainer.py': TRAINER, 'pkg/pt.py': child };
  const results = await check(files, PINNED);
  assert.deepEqual(summary(results.get('pkg/trainer.py')!.findings), []);
  assert.deepEqual(summary(results.get('pkg/pt.py')!.findings), ['CP008@3']);
  assert.match(results.get('pkg/pt.py')!.findings[0].message, /through `CustomTrainer`/);
  // The base it inherits the loss through is evidence, in its own file.
  assert.ok(
    results.get('pkg/pt.py')!.findings[0].related.some((r) => r.file === 'pkg/trainer.py' && r.range.startLine === 3),
  );
  // A subclass that overrides compute_loss is the hf-trainer.ts contract's: its base is not reported again.
  const overrides = child.replace(
    '    pass',
    '    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):\n        return super().compute_loss(model, inputs, return_outputs, **kwargs)',
  );
  assert.deepEqual(await codes({ ...files, 'pkg/pt.py': overrides }, PINNED, 'pkg/trainer.py'), []);
  const trl = TRAINER.replace('from transformers import Trainer', 'from trl import DPOTrainer as Trainer');
  assert.deepEqual(await codes({ 't.py': trl }, PINNED, 't.py'), []);
});
