// The contract of transformers' Trainer with a subclass that overrides compute_loss: from 4.48 to 4.53 the Trainer
// divides the loss by gradient_accumulation_steps only when `model_accepts_loss_kwargs` is false, and 4.46.0-4.46.1
// divide no loss at all. A subclass whose loss ignores `num_items_in_batch` is CP008 where the workspace's pins
// allow those releases, and nothing (or a hint, on request) where it states no version.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program, type AnalysisResult } from '../../../src/analysis/index';
import { allowedReleases, parseVersion, pinsInText, type Version } from '../../../src/analysis/contracts/versions';
import { parser, py, summary } from './helpers';

const TRAINER = py`
  import torch
  from transformers import Trainer


  class PairTrainer(Trainer):
      def __init__(self, *args, margin=1.0, **kwargs):
          super().__init__(*args, **kwargs)
          self.margin = margin

      def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
          chosen = model(**inputs["chosen"]).logits
          rejected = model(**inputs["rejected"]).logits
          loss = -torch.nn.functional.logsigmoid(chosen - rejected - self.margin).mean()
          return (loss, chosen) if return_outputs else loss
`;

async function check(
  files: Record<string, string>,
  manifests: Record<string, string> = {},
  hints = false,
): Promise<Map<string, AnalysisResult>> {
  const program = new Program(await parser(), { hints });
  for (const [path, text] of Object.entries(files)) program.setFile(path, text);
  for (const [path, text] of Object.entries(manifests)) program.setManifest(path, text);
  return program.analyzeAll();
}

function codes(results: Map<string, AnalysisResult>, path: string): string[] {
  return summary(results.get(path)!.findings);
}

test('a compute_loss that ignores num_items_in_batch is CP008 at super().__init__ where the pins allow 4.48-4.53', async () => {
  const results = await check({ 'pkg/trainer.py': TRAINER }, { 'requirements.txt': 'torch\ntransformers>=4.46.0\n' });
  assert.deepEqual(codes(results, 'pkg/trainer.py'), ['CP008@7']);
  const finding = results.get('pkg/trainer.py')!.findings[0];
  assert.equal(finding.severity, 'error');
  assert.match(finding.message, /`PairTrainer\.compute_loss` ignores `num_items_in_batch`/);
  assert.match(finding.message, /4\.48\.0 to 4\.53\.3/);
  assert.match(finding.message, /`transformers>=4\.46\.0` in requirements\.txt:2/);
  assert.match(finding.message, /K× \(gradient accumulation steps\)/);
  assert.ok(finding.related.some((r) => r.file === 'requirements.txt' && r.range.startLine === 1));
  assert.ok(finding.related.some((r) => r.file === undefined && r.range.startLine === 9));
});

test('a comment or docstring that names training_step or the flag chooses nothing', async () => {
  const commented = TRAINER.replace(
    'self.margin = margin',
    'self.margin = margin\n        # columns are set for `training_step`; model_accepts_loss_kwargs is left alone',
  );
  const results = await check({ 't.py': commented }, { 'requirements.txt': 'transformers>=4.46.0' });
  assert.deepEqual(codes(results, 't.py'), ['CP008@7']);
});

test('the same class is clean when it sets the flag, reads the count, divides itself or its pins exclude the releases', async () => {
  const pin = { 'requirements.txt': 'transformers>=4.46.0\n' };
  const variants = [
    TRAINER.replace('self.margin = margin', 'self.margin = margin\n        self.model_accepts_loss_kwargs = False'),
    TRAINER.replace('.mean()', '.sum() / num_items_in_batch'),
    TRAINER.replace('return (loss', 'loss = loss / self.args.gradient_accumulation_steps\n        return (loss'),
    TRAINER.replace(
      'class PairTrainer(Trainer):',
      'class PairTrainer(Trainer):\n    model_accepts_loss_kwargs = False\n',
    ),
  ];
  for (const text of variants) assert.deepEqual(codes(await check({ 't.py': text }, pin), 't.py'), [], text);
  // Newer releases also divide when the batch has no labels, older ones divide always: nothing is proven.
  for (const spec of ['transformers>=4.54.0', 'transformers>=4.41,<4.46', 'transformers==4.47.1'])
    assert.deepEqual(codes(await check({ 't.py': TRAINER }, { 'requirements.txt': spec }), 't.py'), [], spec);
  // A signature without the count fails on 4.46 and later with a TypeError, which is not a scaling bug.
  const old = TRAINER.replace(', num_items_in_batch=None)', ')');
  assert.deepEqual(codes(await check({ 't.py': old }, pin), 't.py'), []);
});

test('without a stated version nothing is reported, and the hint is given only on request', async () => {
  assert.deepEqual(codes(await check({ 't.py': TRAINER }), 't.py'), []);
  const hinted = await check({ 't.py': TRAINER }, {}, true);
  assert.deepEqual(codes(hinted, 't.py'), ['CP008@7']);
  assert.equal(hinted.get('t.py')!.findings[0].severity, 'info');
  assert.match(hinted.get('t.py')!.findings[0].message, /states no version, so this is not proven/);
});

test('4.46.0 as the newest allowed release divides no loss, so even a class that sets the flag is CP008', async () => {
  const flagged = TRAINER.replace(
    'self.margin = margin',
    'self.margin = margin\n        self.model_accepts_loss_kwargs = False',
  );
  const pins = { 'requirements.txt': 'transformers>=4.41.2,<=4.46.0\n' };
  // The flag is not consulted by 4.46.0, but setting it says the author chose the scaling: stay silent.
  assert.deepEqual(codes(await check({ 't.py': flagged }, pins), 't.py'), []);
  const results = await check({ 't.py': TRAINER }, pins);
  assert.deepEqual(codes(results, 't.py'), ['CP008@7']);
  assert.match(results.get('t.py')!.findings[0].message, /4\.46\.0, the newest release the workspace allows/);
});

test('bases and pins are followed across files, and a manifest applies only below its folder', async () => {
  const base = py`
    from transformers import Seq2SeqTrainer as HFTrainer

    class BaseTrainer(HFTrainer):
        pass
  `;
  const child = py`
    from .base import BaseTrainer

    class RankTrainer(BaseTrainer):
        def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
            return model(**inputs).loss.mean()
  `;
  const files = { 'app/base.py': base, 'app/rank.py': child };
  assert.deepEqual(
    codes(
      await check(files, { 'app/setup.cfg': '[options]\ninstall_requires =\n    transformers>=4.50\n' }),
      'app/rank.py',
    ),
    ['CP008@4'],
  );
  assert.deepEqual(codes(await check(files, { 'other/requirements.txt': 'transformers>=4.50\n' }), 'app/rank.py'), []);
  // `**kwargs` forwarded to the parent's compute_loss carries the count to the Trainer's own loss.
  const forwards = child.replace(
    'return model(**inputs).loss.mean()',
    'return super().compute_loss(model, inputs, return_outputs, **kwargs)',
  );
  assert.deepEqual(
    codes(
      await check({ ...files, 'app/rank.py': forwards }, { 'requirements.txt': 'transformers>=4.50' }),
      'app/rank.py',
    ),
    [],
  );
  // A subclass that sets the flag shows the base is not used as it stands.
  const fixed = py`
    from .rank import RankTrainer

    class FixedTrainer(RankTrainer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.model_accepts_loss_kwargs = False
  `;
  assert.deepEqual(
    codes(
      await check({ ...files, 'app/fixed.py': fixed }, { 'requirements.txt': 'transformers>=4.50' }),
      'app/rank.py',
    ),
    [],
  );
});

test('a base the workspace cannot see (a trl trainer) and test code decide nothing', async () => {
  const trl = TRAINER.replace('from transformers import Trainer', 'from trl import DPOTrainer as Trainer');
  assert.deepEqual(codes(await check({ 't.py': trl }, { 'requirements.txt': 'transformers>=4.46' }), 't.py'), []);
  assert.deepEqual(
    codes(await check({ 'tests/test_t.py': TRAINER }, { 'requirements.txt': 'transformers>=4.46' }), 'tests/test_t.py'),
    [],
  );
});

test('pins are read from requirements lines, setup.py strings, setup.cfg, PEP 621 and Poetry, and require_version', () => {
  const spec = (file: string, text: string) =>
    pinsInText(file, text, 'transformers').map((p) => `${p.line}:${p.specifier}`);
  assert.deepEqual(
    spec('requirements.txt', 'torch>=2\ntransformers[torch] >= 4.46.0 ; python_version >= "3.9"  # GA fix\n'),
    ['1:>=4.46.0'],
  );
  assert.deepEqual(spec('setup.py', 'REQUIRED = [\n    "accelerate>=1.0",\n    "transformers>=4.46.0",\n]\n'), [
    '2:>=4.46.0',
  ]);
  assert.deepEqual(spec('pyproject.toml', 'dependencies = ["transformers>=4.56.2", "transformers!=5.1.0"]\n'), [
    '0:>=4.56.2',
    '0:!=5.1.0',
  ]);
  assert.deepEqual(spec('pyproject.toml', '[tool.poetry.dependencies]\ntransformers = "^4.40"\n'), ['1:^4.40']);
  assert.deepEqual(spec('requirements.txt', 'transformers\ntransformers-stream-generator==0.0.4\n'), []);
});

test('a specifier set is judged against the known releases, with wildcards and upper bounds', () => {
  const releases = ['4.45.2', '4.46.0', '4.46.1', '4.46.3', '4.47.1', '4.48.0', '4.52.4', '4.54.0'].map((v) =>
    parseVersion(v)!,
  );
  const allowed = (text: string): string[] =>
    allowedReleases(pinsInText('r.txt', `transformers${text}`, 'transformers'), releases).allowed.map((v: Version) =>
      v.join('.'),
    );
  assert.deepEqual(allowed('>=4.45.0,<=4.51.3,!=4.46.*,!=4.47.*,!=4.48.0'), ['4.45.2']);
  assert.deepEqual(allowed('~=4.46.0'), ['4.46.0', '4.46.1', '4.46.3']);
  assert.deepEqual(allowed('==4.52.*'), ['4.52.4']);
  assert.equal(allowedReleases(pinsInText('r.txt', 'transformers>=4.46', 'transformers'), releases).bounded, false);
  assert.equal(allowedReleases(pinsInText('r.txt', 'transformers<=4.46.0', 'transformers'), releases).bounded, true);
});

test('check reads the manifests of the folders it walks', async () => {
  const { mkdtempSync, mkdirSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { checkCommand } = await import('../../../src/cli/commands/check');
  const dir = mkdtempSync(join(tmpdir(), 'cp-trainer-'));
  mkdirSync(join(dir, 'pkg'));
  writeFileSync(join(dir, 'pkg', 'trainer.py'), TRAINER);
  writeFileSync(join(dir, 'pyproject.toml'), '[project]\ndependencies = ["transformers>=4.46.0,<5"]\n');
  let out = '';
  const code = await checkCommand.run([dir, '--json'], { stdout: (t) => (out += t), stderr: () => undefined });
  const findings = JSON.parse(out) as { file: string; line: number; code: string; related: { file?: string }[] }[];
  assert.equal(code, 1);
  assert.deepEqual(
    findings.map((f) => `${f.code}@${f.line}`),
    ['CP008@7'],
  );
  assert.ok(findings[0].related.some((r) => r.file?.endsWith('pyproject.toml')));
});
