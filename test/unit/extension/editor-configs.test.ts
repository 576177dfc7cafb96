// Training configs and DeepSpeed comms logs in the real bundle, against the stand-in vscode module (issue 14):
// a Hugging Face config.json gets Profile and Sweep lenses whose step time is the one the command's panel shows,
// the panel's Assumptions card re-runs the profile with a changed value (and drops a malformed request), the
// config picker lists the workspace's config.json models beside the other formats, and a DeepSpeed comms log in a
// plain-text editor gets Import and Compare lenses.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as fake from './fixtures/fake-vscode';
import { ROOT, activateBundle, notBuilt } from './fixtures/activate-bundle';
import type { ChartsData } from '../../../src/protocol';
import { settledProfileLens } from './fixtures/profile-lens';

const skip = notBuilt ?? false;
const run = (id: string, ...args: unknown[]) => fake.commands.executeCommand(`collectiveProfiler.${id}`, ...args);
const panel = (kind: string) => fake.recorded.panels.filter((p) => p.viewType === `collectiveProfiler.${kind}`).pop();
const errors = () => fake.recorded.messages.filter((m) => m.startsWith('error'));
const HF_CONFIG = join(ROOT, 'examples', 'models', 'gpt2', 'config.json');

before(() => {
  if (!notBuilt) activateBundle();
});

/** The webview's messages are dispatched without the panel waiting; this waits for the charts message number n. */
async function chartsPosted(n: number): Promise<void> {
  const started = Date.now();
  while (panel('charts')!.posted.filter((m) => m.type === 'charts').length < n) {
    if (Date.now() - started > 30_000) throw new Error(`no charts message ${n} after 30 s: ${errors().join('; ')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The charts data posted last to the charts panel. */
function lastCharts(): ChartsData {
  const posted = panel('charts')!.posted.filter((m) => m.type === 'charts');
  return (posted[posted.length - 1] as unknown as { data: ChartsData }).data;
}

test("a config.json's Profile lens, the command and the charts panel give one step time", { skip }, async () => {
  const provider = fake.recorded.lensProviders[0];
  const document = fake.document(HF_CONFIG, 'json', readFileSync(HF_CONFIG, 'utf8'));
  const lenses = provider.provideCodeLenses(document);
  const titles = lenses.map((l) => l.command?.title ?? '(resolved later)');
  assert.deepEqual(titles, ['(resolved later)', 'Sweep buckets'], 'Profile and Sweep, no Scaling for a model');
  const profile = await settledProfileLens(provider, document);
  const lensStep = /step ≈ (\S+ \S+) ·/.exec(profile.command!.title)?.[1];
  assert.ok(lensStep, profile.command!.title);
  await fake.commands.executeCommand(profile.command!.command, ...(profile.command!.arguments ?? []));
  assert.deepEqual(errors(), []);
  const charts = panel('charts')!;
  await charts.fromWebview({ type: 'ready', panel: 'charts' });
  const data = lastCharts();
  assert.ok(data.title.includes(`: ${lensStep} per step on `), `${data.title} vs the lens's ${lensStep}`);
  assert.equal(data.assumptions?.command, 'profile');
  assert.deepEqual(
    data.assumptions?.fields.map((f) => [f.key, f.origin]),
    [
      ['model', 'config'],
      ['sequenceLength', 'default'],
      ['microBatchSize', 'default'],
      ['computeEfficiencyPct', 'default'],
      ['bucketMiB', 'default'],
    ],
  );
});

test(
  'the Assumptions card re-runs the profile with the changed value; a malformed request is dropped',
  { skip },
  async () => {
    const charts = panel('charts')!;
    const before = lastCharts();
    const count = charts.posted.filter((m) => m.type === 'charts').length;
    await charts.fromWebview({ type: 'rerunTraining', changes: { sequenceLength: 2 ** 30 } });
    await charts.fromWebview({ type: 'rerunTraining', changes: { system: 'dgx-b200' } });
    assert.equal(charts.posted.filter((m) => m.type === 'charts').length, count, 'nothing ran');
    assert.ok(fake.recorded.logs.some((l) => /dropped an invalid webview message: rerunTraining/.test(l)));
    await charts.fromWebview({ type: 'rerunTraining', changes: { sequenceLength: 256 } });
    await chartsPosted(count + 1);
    assert.deepEqual(errors(), []);
    const after = lastCharts();
    const length = after.assumptions?.fields.find((f) => f.key === 'sequenceLength');
    assert.deepEqual([length?.value, length?.origin], [256, 'panel']);
    assert.notEqual(after.title, before.title, 'a shorter sequence is a shorter step');
    // A second change keeps the first one.
    await charts.fromWebview({ type: 'rerunTraining', changes: { computeEfficiencyPct: 30 } });
    await chartsPosted(count + 2);
    const both = lastCharts()
      .assumptions!.fields.filter((f) => f.origin === 'panel')
      .map((f) => [f.key, f.value]);
    assert.deepEqual(both, [
      ['sequenceLength', 256],
      ['computeEfficiencyPct', 30],
    ]);
  },
);

test(
  'after a window reload the restored charts panel still re-runs, keeping the changes made before it',
  { skip },
  async () => {
    const saved = lastCharts();
    assert.ok(saved.assumptions?.configUri?.startsWith('file:'), 'the assumptions name their config');
    panel('charts')!.dispose();
    const restored = await fake.restorePanel('collectiveProfiler.charts', { panel: 'charts', data: saved });
    assert.equal(panel('charts'), restored);
    await restored.fromWebview({ type: 'ready', panel: 'charts' });
    const count = restored.posted.filter((m) => m.type === 'charts').length;
    assert.equal(count, 1, 'the saved charts were drawn again');
    await restored.fromWebview({ type: 'rerunTraining', changes: { microBatchSize: 2 } });
    await chartsPosted(count + 1);
    assert.deepEqual(errors(), []);
    const changed = lastCharts()
      .assumptions!.fields.filter((f) => f.origin === 'panel')
      .map((f) => [f.key, f.value]);
    assert.deepEqual(changed, [
      ['sequenceLength', 256],
      ['microBatchSize', 2],
      ['computeEfficiencyPct', 30],
    ]);
    // A saved state that names no file (a web address, written by a tampered page) re-runs nothing.
    restored.dispose();
    const tampered = await fake.restorePanel('collectiveProfiler.charts', {
      panel: 'charts',
      data: { ...saved, assumptions: { ...saved.assumptions, configUri: 'https://example.com/config.json' } },
    });
    await tampered.fromWebview({ type: 'ready', panel: 'charts' });
    await tampered.fromWebview({ type: 'rerunTraining', changes: { microBatchSize: 4 } });
    const last = tampered.posted[tampered.posted.length - 1];
    assert.equal(last.type, 'error');
    assert.match(String(last.message), /restored after a reload/);
  },
);

test(
  'Profile Training Config and Sweep Bucket Size list the workspace configs, config.json models included, and nothing else',
  { skip },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cp-configs-'));
    const unrelated = join(dir, 'config.json');
    writeFileSync(unrelated, '{"name": "a web app", "port": 8080}');
    fake.recorded.workspaceFiles = [
      HF_CONFIG,
      unrelated,
      join(ROOT, 'examples', 'ds_config.json'),
      join(ROOT, 'examples', 'accelerate_config.yaml'),
      join(ROOT, 'examples', 'llama2-7b-ddp.collective.yaml'),
      join(ROOT, 'node_modules', 'some-package', 'config.json'),
    ];
    // Both commands ask the same question of the same files (issue 14: "list the configs found in the workspace").
    const listed: string[][][] = [];
    try {
      for (const command of ['profileTrainingConfig', 'sweepBucketSize']) {
        const before = fake.recorded.quickPicks.length;
        await run(command);
        assert.equal(fake.recorded.quickPicks.length, before + 1, `${command} asks which config`);
        const items = fake.recorded.quickPicks.pop()!;
        listed.push(
          items.map((i) => [i.label.startsWith(ROOT) ? i.label.slice(ROOT.length + 1) : i.label, i.description ?? '']),
        );
      }
    } finally {
      fake.recorded.workspaceFiles = [];
    }
    const expected = [
      ['examples/accelerate_config.yaml', 'Accelerate config'],
      ['examples/ds_config.json', 'DeepSpeed config'],
      ['examples/llama2-7b-ddp.collective.yaml', 'Collective Profiler config'],
      ['examples/models/gpt2/config.json', 'Hugging Face model config'],
      ['$(folder-opened) Browse…', ''],
    ];
    assert.deepEqual(listed, [expected, expected]);
  },
);

const VERBOSE_LOG = join(ROOT, '..', 'shared', 'fixtures-real', 'deepspeed-commslogger-verbose-2022.log');

test(
  'a DeepSpeed comms log in a plain-text editor gets Import and Compare lenses',
  { skip: skip || (existsSync(VERBOSE_LOG) ? false : 'needs ../shared/fixtures-real') },
  async () => {
    const provider = fake.recorded.lensProviders[0];
    const lenses = provider.provideCodeLenses(
      fake.document(VERBOSE_LOG, 'plaintext', readFileSync(VERBOSE_LOG, 'utf8')),
    );
    assert.deepEqual(
      lenses.map((l) => [l.range.start.line, l.command?.title, l.command?.command]),
      [
        [0, '$(cloud-download) Import DeepSpeed comms log', 'collectiveProfiler.importMeasurements'],
        [0, 'Compare with model', 'collectiveProfiler.compareWithModel'],
      ],
    );
    const notes = provider.provideCodeLenses(fake.document('/w/notes.txt', 'plaintext', 'a comm op, in prose\n'));
    assert.deepEqual(notes, []);
  },
);

test('charts posted while the charts panel is hidden wait for its page to load again', { skip }, async () => {
  const charts = panel('charts')!;
  const count = charts.posted.filter((m) => m.type === 'charts').length;
  // The timeline came to the front of the charts' editor group: VS Code tore the charts page down.
  charts.hide();
  await run('profileTrainingConfig', fake.Uri.file(HF_CONFIG), { sequenceLength: 128 });
  assert.deepEqual(errors(), []);
  assert.equal(charts.posted.filter((m) => m.type === 'charts').length, count, 'not posted into a torn-down page');
  await charts.fromWebview({ type: 'ready', panel: 'charts' });
  assert.equal(charts.posted.filter((m) => m.type === 'charts').length, count + 1);
  assert.equal(lastCharts().assumptions?.fields.find((f) => f.key === 'sequenceLength')?.value, 128);
});
