// A code lens whose value comes after the editor stopped waiting must still reach the editor: the provider fires
// its change event, and the next resolve finds the settled value. Before, a Profile lens on a busy machine kept
// "no step estimate" until the next edit (an e2e run at load 17 waited 60 s for a step that never appeared).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PendingValues } from '../../../src/extension/glue/pending-values';

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

test('a value that comes in time is returned, computed once, and no change is announced', async () => {
  let late = 0;
  let computed = 0;
  const values = new PendingValues<string>(() => late++);
  const compute = async (): Promise<string> => {
    computed++;
    return 'step ≈ 412 ms';
  };
  assert.equal(await values.get('a@1', compute, 1_000), 'step ≈ 412 ms');
  assert.equal(await values.get('a@1', compute, 1_000), 'step ≈ 412 ms');
  assert.equal(computed, 1);
  assert.equal(late, 0);
});

test('a value that comes after the wait is announced once, and the next ask finds it without computing again', async () => {
  let late = 0;
  let computed = 0;
  const values = new PendingValues<string>(() => late++);
  const slow = deferred<string>();
  const compute = (): Promise<string> => {
    computed++;
    return slow.promise;
  };
  // Two resolves of the same lens while the step runs share one computation.
  assert.equal(await values.get('a@1', compute, 5), undefined);
  assert.equal(await values.get('a@1', compute, 5), undefined);
  assert.equal(values.pendingCount, 1);
  slow.resolve('step ≈ 3 s');
  await slow.promise;
  await new Promise((r) => setImmediate(r));
  assert.equal(late, 1);
  assert.equal(await values.get('a@1', compute, 5), 'step ≈ 3 s');
  assert.equal(computed, 1);
});

test('clear() and a newer version stop the old computations, and their late values are dropped', async () => {
  let late = 0;
  const values = new PendingValues<string>(() => late++);
  const signals: AbortSignal[] = [];
  const slow = deferred<string>();
  const compute = (signal: AbortSignal): Promise<string> => {
    signals.push(signal);
    return slow.promise;
  };
  assert.equal(await values.get('a@1', compute, 1), undefined);
  values.dropPendingExcept('a@', 'a@2');
  assert.ok(signals[0]!.aborted, 'the old version is stopped');
  assert.equal(await values.get('b@1', compute, 1), undefined);
  values.clear();
  assert.ok(signals[1]!.aborted, 'clear stops what is running');
  slow.resolve('outdated');
  await slow.promise;
  await new Promise((r) => setImmediate(r));
  assert.equal(late, 0, 'a dropped computation announces nothing');
  let recomputed = 0;
  assert.equal(
    await values.get('a@1', async () => `fresh ${++recomputed}`, 50),
    'fresh 1',
    'a dropped value is computed again',
  );
});

test('closing a document forgets its values and stops its computations, so reopening it computes again', async () => {
  const values = new PendingValues<string>(() => undefined);
  // A failure is kept as a value for its key; the same key comes back when the file is reopened (version 1 again).
  assert.equal(
    await values.get('file:///w/ds_config.json@1', async () => 'no step estimate: it took too long', 50),
    'no step estimate: it took too long',
  );
  const signals: AbortSignal[] = [];
  const hung = (signal: AbortSignal): Promise<string> => {
    signals.push(signal);
    return new Promise<string>(() => undefined);
  };
  assert.equal(await values.get('file:///w/config.json@1', hung, 1), undefined);
  assert.equal(await values.get('file:///w/other.json@1', hung, 1), undefined);
  values.forget('file:///w/ds_config.json@');
  values.forget('file:///w/config.json@');
  assert.ok(signals[0]!.aborted, "the closed file's computation is stopped");
  assert.ok(!signals[1]!.aborted, "another file's computation goes on");
  assert.equal(values.pendingCount, 1);
  let computed = 0;
  const fresh = async (): Promise<string> => `step ≈ 412 ms (${++computed})`;
  assert.equal(await values.get('file:///w/ds_config.json@1', fresh, 50), 'step ≈ 412 ms (1)');
  assert.equal(await values.get('file:///w/config.json@1', fresh, 50), 'step ≈ 412 ms (2)');
});
