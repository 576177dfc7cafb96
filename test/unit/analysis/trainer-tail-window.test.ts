// The last, shorter accumulation window of an epoch: from transformers 4.55.0 the Trainer's loop steps after a
// window of r < K micro-batches at the end of an epoch and records r in `current_gradient_accumulation_steps`. A
// subclass whose own training_step divides every loss by `self.args.gradient_accumulation_steps` gives that step
// r/K of the mean gradient (CP003). Proven only where the pins exclude every release before 4.55.0 and nothing in
// the class family or the program decides the windows differently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program, type AnalysisResult } from '../../../src/analysis/index';
import { parser, py, summary } from './helpers';

const BASE = py`
  from transformers import Seq2SeqTrainer


  class CustomSeq2SeqTrainer(Seq2SeqTrainer):
      def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
          return super().compute_loss(model, inputs, return_outputs, **kwargs)
`;

const STEP = py`
  from torch import nn

  from ..sft.trainer import CustomSeq2SeqTrainer


  class ParallelTrainer(CustomSeq2SeqTrainer):
      def training_step(self, model: nn.Module, inputs, num_items_in_batch=None):
          model.train()
          inputs = self._prepare_inputs(inputs)
          with self.compute_loss_context_manager():
              loss = self.compute_loss(model, inputs, num_items_in_batch=num_items_in_batch)
          if self.args.n_gpu > 1:
              loss = loss.mean()
          if not self.model_accepts_loss_kwargs and self.compute_loss_func is None:
              loss = loss / self.args.gradient_accumulation_steps
          self.accelerator.backward(loss)
          return loss.detach()
`;

const PIN: Record<string, string> = {
  'pyproject.toml': '[project]\ndependencies = [\n  "transformers>=4.55.0,<=5.8.0",\n]\n',
};

async function check(
  files: Record<string, string>,
  manifests: Record<string, string> = PIN,
): Promise<Map<string, AnalysisResult>> {
  const program = new Program(await parser());
  for (const [path, text] of Object.entries(files)) program.setFile(path, text);
  for (const [path, text] of Object.entries(manifests)) program.setManifest(path, text);
  return program.analyzeAll();
}

const BASE_PATH = 'pkg/train/sft/trainer.py';
const STEP_PATH = 'pkg/train/parallel/trainer.py';

async function stepCodes(step: string, extra: Record<string, string> = {}, manifests = PIN): Promise<string[]> {
  const results = await check({ [BASE_PATH]: BASE, [STEP_PATH]: step, ...extra }, manifests);
  return summary(results.get(STEP_PATH)!.findings);
}

test('a training_step that divides by the configured K under transformers>=4.55 is CP003 at the division', async () => {
  const results = await check({ [BASE_PATH]: BASE, [STEP_PATH]: STEP });
  assert.deepEqual(summary(results.get(STEP_PATH)!.findings), ['CP003@15']);
  const finding = results.get(STEP_PATH)!.findings[0];
  assert.equal(finding.severity, 'error');
  assert.match(
    finding.message,
    /`ParallelTrainer\.training_step` divides `loss` by `self\.args\.gradient_accumulation_steps`/,
  );
  assert.match(finding.message, /r\/K of their mean gradient/);
  assert.match(finding.message, /`transformers>=4\.55\.0,<=5\.8\.0` in pyproject\.toml:3/);
  assert.ok(finding.related.some((r) => r.file === undefined && r.range.startLine === 15));
  assert.ok(finding.related.some((r) => r.file === 'pyproject.toml' && r.range.startLine === 2));
  assert.deepEqual(summary(results.get(BASE_PATH)!.findings), []);
});

test('the augmented form `loss /= self.args.gradient_accumulation_steps` is the same division', async () => {
  const step = STEP.replace('loss = loss / self.args', 'loss /= self.args');
  assert.deepEqual(await stepCodes(step), ['CP003@15']);
});

test('dividing by the window being run, or by what getattr finds for it, is clean', async () => {
  const variants = [
    STEP.replace('self.args.gradient_accumulation_steps', 'self.current_gradient_accumulation_steps'),
    STEP.replace(
      'loss = loss / self.args.gradient_accumulation_steps',
      'steps = getattr(self, "current_gradient_accumulation_steps", self.args.gradient_accumulation_steps)\n            loss = loss / steps',
    ),
  ];
  for (const step of variants) assert.deepEqual(await stepCodes(step), [], step);
});

test('a division that the backward does not read is clean', async () => {
  const variants = [
    // Only the reported value is divided (trl's online DPO trainer).
    STEP.replace('loss = loss / self.args.gradient_accumulation_steps', 'pass').replace(
      'return loss.detach()',
      'return loss.detach() / self.args.gradient_accumulation_steps',
    ),
    // The name is assigned again between the division and the backward.
    STEP.replace(
      'self.accelerator.backward(loss)',
      'loss = self.rescale(loss)\n        self.accelerator.backward(loss)',
    ),
    // The backward runs in a loop of the method's own micro-batches.
    STEP.replace(
      'self.accelerator.backward(loss)',
      'for chunk in loss.chunk(2):\n            self.accelerator.backward(loss)',
    ),
  ];
  for (const step of variants) assert.deepEqual(await stepCodes(step), [], step);
});

test('pins that allow a release before 4.55.0, or no pin at all, prove nothing', async () => {
  for (const spec of ['transformers>=4.46.0', 'transformers<=5.8.0', 'transformers', 'transformers!=4.57.0']) {
    const manifests = { 'requirements.txt': `${spec}\n` };
    assert.deepEqual(await stepCodes(STEP, {}, manifests), [], spec);
  }
  // Pins that contradict each other describe no environment.
  const contradiction = { 'requirements.txt': 'transformers>=4.55.0\n', 'pkg/requirements.txt': 'transformers<4.50\n' };
  assert.deepEqual(await stepCodes(STEP, {}, contradiction), []);
  assert.deepEqual(await stepCodes(STEP, {}, { 'requirements.txt': 'transformers~=4.56.1\n' }), ['CP003@15']);
  assert.deepEqual(await stepCodes(STEP, {}, { 'requirements.txt': 'transformers>=5.2\n' }), ['CP003@15']);
  assert.deepEqual(await stepCodes(STEP, {}, { 'requirements.txt': 'transformers==4.57.*\n' }), ['CP003@15']);
});

test('a base outside the workspace, or code that forms the windows itself, proves nothing', async () => {
  // The base comes from a library the workspace does not hold (its own loop may form the windows).
  const results = await check({ [STEP_PATH]: STEP });
  assert.deepEqual(summary(results.get(STEP_PATH)!.findings), []);
  // A class of the family replaces the loop or the window sampling.
  const loop = BASE.replace(
    '    def compute_loss',
    '    def _inner_training_loop(self, *args, **kwargs):\n        return self.custom_loop(*args, **kwargs)\n\n    def compute_loss',
  );
  assert.deepEqual(summary((await check({ [BASE_PATH]: loop, [STEP_PATH]: STEP })).get(STEP_PATH)!.findings), []);
  // A file of the program patches the Trainer's loop at import time (unsloth does this).
  const patch = py`
    from transformers import Trainer

    def _fast_loop(self, *args, **kwargs):
        return None

    Trainer._inner_training_loop = _fast_loop
  `;
  assert.deepEqual(await stepCodes(STEP, { 'pkg/patches.py': patch }), []);
});
