// The code lens provider of the real bundle (dist/extension.js, against the stand-in vscode module) never tells
// the editor to refresh while one of its resolves runs, and a config's Profile lens simulates again once its file
// was closed and reopened. Both left lenses stuck for the rest of an e2e window (glue/lens-refresh.ts says how).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import * as fake from './fixtures/fake-vscode';
import { ROOT, activateBundle, notBuilt } from './fixtures/activate-bundle';
import { SUMMED_GRADIENTS_SCRIPT as TRAIN } from './fixtures/summed-gradients';
import { settledProfileLens } from './fixtures/profile-lens';

before(() => {
  if (!notBuilt) activateBundle();
});

const skip = notBuilt ?? false;

/** The bundle's lens provider with its refresh method (a public method of CollectiveLensProvider). */
function lensProvider(): (typeof fake.recorded.lensProviders)[number] & { refresh(): void } {
  return fake.recorded.lensProviders[0] as (typeof fake.recorded.lensProviders)[number] & { refresh(): void };
}

test('a refresh asked for while a lens resolves reaches the editor only after the answer', { skip }, async () => {
  const provider = lensProvider();
  let refreshes = 0;
  provider.onDidChangeCodeLenses!(() => refreshes++);
  const doc = fake.document('/w/train.py', 'python', TRAIN);
  // Resolved in provideCodeLenses when the system is known; resolving it again runs the same prediction.
  const prediction = provider.provideCodeLenses(doc).find((l) => l.range.start.line === 8)!;
  prediction.command = undefined;
  let answered = false;
  const resolving = provider.resolveCodeLens!(prediction).then((lens) => {
    answered = true;
    return lens;
  });
  provider.refresh();
  assert.equal(refreshes, 0, 'no refresh while the resolve runs');
  const resolved = await resolving;
  assert.match(resolved.command!.title, /^≈ /);
  assert.ok(answered);
  assert.equal(refreshes, 0, 'the answer goes back first');
  await sleep(20);
  assert.equal(refreshes, 1, 'then one refresh');
  provider.refresh();
  assert.equal(refreshes, 2, 'with nothing resolving, a refresh goes out at once');
});

test("a config's Profile lens simulates again after its file is closed and reopened", { skip }, async () => {
  const provider = lensProvider();
  // The example DDP config names its model file by a relative path, which is missing at first.
  const dir = mkdtempSync(join(tmpdir(), 'cp-reopen-'));
  const path = join(dir, 'llama2-7b.collective.yaml');
  cpSync(join(ROOT, 'examples', 'llama2-7b-ddp.collective.yaml'), path);
  const profileTitle = async (): Promise<string> => {
    const doc = fake.document(path, 'yaml', readFileSync(path, 'utf8'));
    fake.fireOpen(doc);
    const title = (await settledProfileLens(provider, doc)).command!.title;
    fake.fireClose(doc);
    return title;
  };
  const missing = await profileTitle();
  assert.equal(missing, '$(pulse) Profile', 'no estimate while the model file is missing');
  mkdirSync(join(dir, 'models', 'llama-2-7b'), { recursive: true });
  cpSync(
    join(ROOT, 'examples', 'models', 'llama-2-7b', 'config.json'),
    join(dir, 'models', 'llama-2-7b', 'config.json'),
  );
  // Reopened, the document is at version 1 again: the same key as the failure kept for the first opening.
  const reopened = await profileTitle();
  assert.match(reopened, /^\$\(pulse\) Profile · step ≈ /, `the reopened file simulates again: ${reopened}`);
});

test(
  'once the system is resolved, a Python lens comes with its prediction and needs no resolve',
  { skip },
  async () => {
    const provider = lensProvider();
    const doc = fake.document('/w/train.py', 'python', TRAIN);
    // The first resolve resolves the selected system, as the status bar does at activation.
    const first = provider.provideCodeLenses(doc).find((l) => l.range.start.line === 8)!;
    if (!first.command) await provider.resolveCodeLens!(first);
    const lens = provider.provideCodeLenses(doc).find((l) => l.range.start.line === 8)!;
    assert.match(lens.command?.title ?? '(unresolved)', /^≈ [\d.]+ (µs|ms) · /);
    assert.deepEqual(lens.command!.arguments?.[1], 8, 'the command profiles the lens line');
  },
);
