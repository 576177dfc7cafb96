import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyedDebouncer, type Timers } from '../../../src/extension/glue/debounce';
import { nativeAvailability, executableFromSettings } from '../../../src/extension/glue/trust';

function fakeClock() {
  let now = 0;
  let next = 0;
  const due = new Map<number, { at: number; run: () => void }>();
  const timers: Timers = {
    set: (run, ms) => {
      due.set(++next, { at: now + ms, run });
      return next;
    },
    clear: (h) => {
      due.delete(h as number);
    },
  };
  const advance = (ms: number) => {
    now += ms;
    for (const [h, t] of [...due].sort((a, b) => a[1].at - b[1].at))
      if (t.at <= now) {
        due.delete(h);
        t.run();
      }
  };
  return { timers, advance };
}

test('edits to one document within the debounce window analyse it once, after the last edit', () => {
  const clock = fakeClock();
  const debouncer = new KeyedDebouncer(clock.timers);
  const runs: string[] = [];
  for (let i = 0; i < 5; i++) {
    debouncer.schedule('a.py', 300, () => runs.push(`a${i}`));
    clock.advance(100);
  }
  debouncer.schedule('b.py', 300, () => runs.push('b'));
  assert.deepEqual(runs, []);
  clock.advance(250);
  assert.deepEqual(runs, ['a4']);
  clock.advance(100);
  assert.deepEqual(runs, ['a4', 'b']);
  assert.equal(debouncer.size, 0);
});

test('cancel and dispose drop pending work', () => {
  const clock = fakeClock();
  const debouncer = new KeyedDebouncer(clock.timers);
  const runs: string[] = [];
  debouncer.schedule('a', 10, () => runs.push('a'));
  debouncer.schedule('b', 10, () => runs.push('b'));
  debouncer.cancel('a');
  debouncer.dispose();
  clock.advance(100);
  assert.deepEqual(runs, []);
});

test('the native engine is refused in untrusted workspaces with the reason', () => {
  assert.deepEqual(nativeAvailability(true), { allowed: true });
  const refused = nativeAvailability(false);
  assert.equal(refused.allowed, false);
  assert.match(!refused.allowed ? refused.reason : '', /untrusted workspace.*starts Python/);
  assert.match(!refused.allowed ? refused.reason : '', /simulated engine, code lenses and diagnostics keep working/);
});

test('an executable set by the workspace is ignored and reported; the user value wins', () => {
  const r = executableFromSettings({
    key: 'collectiveProfiler.native.pythonPath',
    globalValue: '/usr/bin/python3',
    workspaceValue: './venv/bin/python',
  });
  assert.equal(r.path, '/usr/bin/python3');
  assert.match(r.ignored ?? '', /Ignored collectiveProfiler\.native\.pythonPath = "\.\/venv\/bin\/python"/);
  assert.deepEqual(executableFromSettings({ key: 'k' }), { path: undefined, ignored: undefined });
});
