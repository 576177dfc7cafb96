// A code lens refresh asked for while a resolve runs waits until the resolve has answered: VS Code applies a late
// answer to the newer lenses of the same line and then releases the older ones, which left a lens with a dead
// command (e2e: "Actual command not found, wanted to execute collectiveProfiler.profileAllReduceAtCursor /52") or
// a "simulating the step…" placeholder that was never resolved again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { LensRefresh } from '../../../src/extension/glue/lens-refresh';
import { untilAborted, CancelledError } from '../../../src/extension/glue/cancel';

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

test('a refresh with no resolve running fires at once', () => {
  let fired = 0;
  const refresh = new LensRefresh(() => fired++);
  refresh.request();
  assert.equal(fired, 1);
});

test('a refresh asked for during resolves fires once, in a later task, after the last one answered', async () => {
  let fired = 0;
  const refresh = new LensRefresh(() => fired++);
  const first = deferred<string>();
  const second = deferred<string>();
  const a = refresh.track(() => first.promise);
  const b = refresh.track(() => second.promise);
  refresh.request();
  refresh.request();
  assert.equal(fired, 0, 'held while resolves run');
  first.resolve('≈ 1.9 ms');
  assert.equal(await a, '≈ 1.9 ms');
  await sleep(5);
  assert.equal(fired, 0, 'one resolve still runs');
  second.resolve('≈ 2.0 ms');
  await b;
  assert.equal(fired, 0, 'the answer goes back before the refresh');
  await sleep(5);
  assert.equal(fired, 1, 'then the refresh fires, once');
  refresh.request();
  assert.equal(fired, 2, 'and later refreshes fire at once again');
});

test('a failed resolve releases a held refresh too', async () => {
  let fired = 0;
  const refresh = new LensRefresh(() => fired++);
  const failing = refresh.track(async () => {
    await sleep(1);
    throw new Error('the engine worker stopped');
  });
  refresh.request();
  await assert.rejects(failing, /worker stopped/);
  await sleep(5);
  assert.equal(fired, 1);
});

test('a resolve that never answers holds a refresh no longer than the limit', async () => {
  let fired = 0;
  const refresh = new LensRefresh(() => fired++, 20);
  void refresh.track(() => new Promise<never>(() => undefined));
  refresh.request();
  await sleep(5);
  assert.equal(fired, 0);
  await sleep(40);
  assert.equal(fired, 1);
  refresh.dispose();
});

test('untilAborted ends a wait that the work itself cannot end', async () => {
  const abort = new AbortController();
  const hung = untilAborted(new Promise<string>(() => undefined), abort.signal);
  abort.abort();
  await assert.rejects(hung, CancelledError);
  assert.equal(await untilAborted(Promise.resolve('step'), new AbortController().signal), 'step');
});
