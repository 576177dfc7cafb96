// Workspace Trust, end to end through the real bundle: in an untrusted workspace the extension activates, refuses
// the native engine (which runs Python) and says why, ignores executables the workspace tries to set, and keeps
// what runs no process working: diagnostics through the shipped wasm, code lenses from the simulated engine, and
// the Profile command's timeline.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import childProcess from 'node:child_process';
import { SUMMED_GRADIENTS_SCRIPT as TRAIN } from '../extension/fixtures/summed-gradients';
import * as fake from '../extension/fixtures/fake-vscode';
import { activateBundle, notBuilt } from '../extension/fixtures/activate-bundle';

const skip = notBuilt ?? false;

/** Every process the extension starts, recorded by wrapping node:child_process before the bundle loads. */
const started: string[] = [];
for (const name of ['spawn', 'execFile', 'exec', 'fork', 'spawnSync', 'execFileSync', 'execSync'] as const) {
  const original = childProcess[name] as (...args: unknown[]) => unknown;
  (childProcess as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
    started.push(`${name} ${String(args[0])}`);
    return original.apply(childProcess, args);
  };
}

before(() => {
  fake.recorded.trusted = false;
  if (!notBuilt) activateBundle();
});

test('untrusted: the native engine is refused with the reason, and no process is started', { skip }, async () => {
  const before = fake.recorded.messages.length;
  await fake.commands.executeCommand('collectiveProfiler.runOnThisMachine');
  const said = fake.recorded.messages.slice(before);
  assert.ok(
    said.some((m) => /untrusted workspace/i.test(m)),
    `messages: ${said.join(' | ')}`,
  );
  assert.deepEqual(started, [], 'no process was started');
});

test('untrusted: diagnostics still come from the shipped wasm', { skip }, async () => {
  const doc = fake.document('/w/untrusted_train.py', 'python', TRAIN);
  fake.fireOpen(doc);
  let diagnostics: fake.Diagnostic[] | undefined;
  for (let i = 0; i < 100 && !diagnostics?.length; i++) {
    await new Promise((r) => setTimeout(r, 50));
    diagnostics = fake.recorded.diagnostics.get(doc.uri.toString());
  }
  assert.ok(
    diagnostics?.some((d) => (d.code as { value: string }).value === 'CP001'),
    'the sum-not-averaged finding is published',
  );
});

test('untrusted: nothing the extension did started a process', { skip }, () => {
  assert.deepEqual(started, []);
});

test('untrusted: code lenses still resolve to simulated predictions', { skip }, async () => {
  const provider = fake.recorded.lensProviders[0];
  const doc = fake.document('/w/untrusted_lens.py', 'python', TRAIN);
  // Once the system is resolved a prediction lens comes with its command from provide, else it is resolved.
  const onLine = provider.provideCodeLenses(doc).filter((l) => l.range.start.line === 8);
  const lenses = await Promise.all(onLine.map(async (l) => (l.command ? l : provider.resolveCodeLens!(l))));
  assert.ok(lenses.some((l) => /GB\/s busbw/.test(l.command!.title)));
});
