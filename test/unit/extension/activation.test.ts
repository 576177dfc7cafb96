// Loads the real bundle (dist/extension.js) against a stand-in `vscode` module and checks what activation
// registers, that code lenses resolve to engine predictions, and that a Python file gets its diagnostics through
// the shipped tree-sitter wasm. The real-VS-Code checks live in test/integration and the e2e suite.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SUMMED_GRADIENTS_SCRIPT as TRAIN } from './fixtures/summed-gradients';
import * as fake from './fixtures/fake-vscode';
import { ROOT, activateBundle, notBuilt } from './fixtures/activate-bundle';
import { needShared } from '../requirements';
import { settledProfileLens } from './fixtures/profile-lens';

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
let activateMs = 0;
before(() => {
  if (!notBuilt) activateMs = activateBundle();
});

const skip = notBuilt ?? false;

test(
  'activation registers every contributed command, the serializers, the trace editor and one lens provider',
  { skip },
  () => {
    const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    assert.deepEqual([...fake.recorded.commands.keys()].sort(), contributed);
    assert.deepEqual(fake.recorded.serializers.sort(), [
      'collectiveProfiler.charts',
      'collectiveProfiler.timeline',
      'collectiveProfiler.topology',
    ]);
    assert.deepEqual(fake.recorded.customEditors, ['collectiveProfiler.traceEditor']);
    assert.equal(fake.recorded.lensProviders.length, 1);
    assert.ok(fake.recorded.logs.some((l) => /^info Collective Profiler activated in \d+ ms/.test(l)));
    console.log(`activate() took ${activateMs.toFixed(1)} ms`);
  },
);

test('the status bar names the selected system', { skip }, async () => {
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(fake.recorded.statusBar.text, '$(server) 8× H100 NVSwitch');
});

test('Python code lenses resolve to a prediction on the selected system', { skip }, async () => {
  const provider = fake.recorded.lensProviders[0];
  const doc = fake.document('/w/train.py', 'python', TRAIN);
  const lenses = provider.provideCodeLenses(doc);
  const prediction = lenses.find((l) => l.range.start.line === 8);
  assert.ok(prediction, 'a lens on the all_reduce line');
  // Once the system is resolved (the status bar did), the lens comes with its prediction and needs no resolve.
  const resolved = prediction.command ? prediction : await provider.resolveCodeLens!(prediction);
  assert.match(
    resolved.command!.title,
    /^≈ [\d.]+ (µs|ms) · [\d.]+ GB\/s busbw · \w+\/(LL|LL128|Simple) for a 25 MiB tensor$/,
  );
  assert.equal(resolved.command!.command, 'collectiveProfiler.profileAllReduceAtCursor');
});

test(
  "a training config's Profile lens resolves, in the engine worker, to the simulated step time",
  { skip },
  async () => {
    const provider = fake.recorded.lensProviders[0];
    const path = join(ROOT, 'examples', 'llama2-7b-ddp.collective.yaml');
    const doc = fake.document(path, 'yaml', readFileSync(path, 'utf8'));
    const lenses = provider.provideCodeLenses(doc);
    const profile = lenses.find((l) => !l.command);
    assert.ok(profile, 'an unresolved Profile lens');
    assert.deepEqual(
      lenses.filter((l) => l.command).map((l) => l.command!.title),
      ['Sweep buckets', 'Scaling'],
    );
    const resolved = await settledProfileLens(provider, doc);
    assert.match(
      resolved.command!.title,
      /^\$\(pulse\) Profile · step ≈ [\d.]+ (µs|ms|s) · [\d.]+ (µs|ms|s) communication exposed$/,
    );
    assert.equal(resolved.command!.command, 'collectiveProfiler.profileTrainingConfig');
    assert.match(String(resolved.command!.tooltip), /on 4×8 H100 NVSwitch/);

    // A config that does not parse still gets a Profile lens, which says why there is no estimate.
    const broken = fake.document('/w/broken.collective.yaml', 'yaml', 'model: [unclosed\n');
    assert.ok(
      provider.provideCodeLenses(broken).some((l) => !l.command),
      'an unresolved Profile lens on the broken config',
    );
    const fallback = await settledProfileLens(provider, broken);
    assert.equal(fallback.command!.title, '$(pulse) Profile');
    assert.match(String(fallback.command!.tooltip), /no step estimate: /);
  },
);

const VM_RUN = join(
  ROOT,
  '..',
  'shared',
  'calibration',
  'nccl-tests',
  'h100-32gpu-nvswitch-4node-ib-ndr-nccltests309-qoofyk-vm.json',
);

// The near-tie explanation (a size normal for a pair NCCL rates near its choice) is tested on the CLI with a flat
// threshold (test/unit/native/compare-near-tie.test.ts); within the model's uncertainty band this healthy run has
// nothing left to explain.
test(
  "Compare with Model judges a healthy real run within the model's uncertainty, on the hardware the log names",
  { skip: skip || needShared(VM_RUN, '../shared/calibration') },
  async () => {
    await fake.commands.executeCommand('collectiveProfiler.compareWithModel', fake.Uri.file(VM_RUN));
    const verdict = fake.recorded.messages.find((m) =>
      m.includes('h100-32gpu-nvswitch-4node-ib-ndr-nccltests309-qoofyk-vm.json:'),
    );
    assert.ok(verdict, fake.recorded.messages.join(' | '));
    assert.match(
      verdict,
      /^info .*every measured size is within the model's uncertainty of its busbw on 4×8 H100 NVSwitch \+ 8×400G IB \(from the log\)\./,
    );
  },
);

test('opening a Python file publishes the sum-not-averaged diagnostic through the shipped wasm', { skip }, async () => {
  const doc = fake.document('/w/train.py', 'python', TRAIN);
  fake.fireOpen(doc);
  let diagnostics: fake.Diagnostic[] | undefined;
  for (let i = 0; i < 100 && !diagnostics?.length; i++) {
    await new Promise((r) => setTimeout(r, 50));
    diagnostics = fake.recorded.diagnostics.get(doc.uri.toString());
  }
  assert.ok(
    diagnostics?.length,
    `no diagnostics; log: ${fake.recorded.logs.filter((l) => !l.startsWith('debug')).join(' | ')}`,
  );
  const cp001 = diagnostics!.find((d) => (d.code as { value: string }).value === 'CP001');
  assert.ok(cp001, JSON.stringify(diagnostics!.map((d) => d.code)));
  assert.equal(cp001!.range.start.line, 8);
  assert.match(String((cp001!.code as { target: fake.Uri }).target), /docs\/rules\/CP001\.md$/);
  // And the scaling warning lens appears on that line once the findings are in.
  const lenses = fake.recorded.lensProviders[0].provideCodeLenses(doc);
  assert.ok(lenses.some((l) => l.command?.title.startsWith('$(warning) CP001')));
});

test('Run on This Machine refuses in an untrusted workspace and says why', { skip }, async () => {
  fake.recorded.trusted = false;
  await fake.commands.executeCommand('collectiveProfiler.runOnThisMachine');
  fake.recorded.trusted = true;
  assert.ok(
    fake.recorded.messages.some((m) => /^warn Run on This Machine is disabled in this untrusted workspace/.test(m)),
  );
});

test('a DeepSpeed config gets its pre-divide diagnostic (CP007); other JSON is left alone', { skip }, async () => {
  const ds = fake.document(
    '/w/ds_config.json',
    'json',
    '{\n  "train_batch_size": 32,\n  "prescale_gradients": true,\n  "gradient_predivide_factor": 8\n}\n',
  );
  const other = fake.document('/w/package.json', 'json', '{"name": "x"}');
  fake.fireOpen(ds);
  fake.fireOpen(other);
  let diagnostics: fake.Diagnostic[] | undefined;
  for (let i = 0; i < 100 && !diagnostics?.length; i++) {
    await new Promise((r) => setTimeout(r, 20));
    diagnostics = fake.recorded.diagnostics.get(ds.uri.toString());
  }
  assert.deepEqual(
    diagnostics?.map((d) => (d.code as { value: string }).value),
    ['CP007'],
  );
  assert.equal(fake.recorded.diagnostics.get(other.uri.toString()), undefined);
});
