// The panel state writer (webview/shared/state-saver.ts): a stream of scroll or zoom changes is written once it
// pauses, a discrete change (fold, pin, selection) at once with whatever was waiting, and a change still waiting
// when the page is hidden is written then; a reload right after a change must find that change saved.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StateSaver, type SaverTimers } from '../../webview/shared/state-saver';

/** Timers that fire only when the test advances the clock. */
class FakeTimers implements SaverTimers {
  nowMs = 0;
  private readonly queue = new Map<number, { atMs: number; callback: () => void }>();
  private nextId = 1;
  set(callback: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.queue.set(id, { atMs: this.nowMs + delayMs, callback });
    return id;
  }
  clear(handle: unknown): void {
    this.queue.delete(handle as number);
  }
  advance(ms: number): void {
    this.nowMs += ms;
    for (const [id, timer] of [...this.queue].sort((a, b) => a[1].atMs - b[1].atMs)) {
      if (timer.atMs > this.nowMs) continue;
      this.queue.delete(id);
      timer.callback();
    }
  }
  get pendingCount(): number {
    return this.queue.size;
  }
}

interface Shown {
  folded: string[];
  pinned: number[];
  scrollTopPx: number;
}

function setup(): { shown: Shown | undefined; written: Shown[]; saver: StateSaver<Shown>; timers: FakeTimers } {
  const timers = new FakeTimers();
  const written: Shown[] = [];
  const box = {
    shown: { folded: [], pinned: [], scrollTopPx: 0 } as Shown | undefined,
    written,
    timers,
    saver: undefined as unknown as StateSaver<Shown>,
  };
  box.saver = new StateSaver<Shown>(
    () => (box.shown ? structuredClone(box.shown) : undefined),
    (state) => written.push(state),
    250,
    timers,
  );
  return box;
}

test('a stream of scroll changes is written once, a quarter second after the last', () => {
  const s = setup();
  for (let i = 1; i <= 5; i++) {
    s.shown!.scrollTopPx = i * 10;
    s.saver.schedule();
    s.timers.advance(100);
  }
  assert.equal(s.written.length, 0, 'nothing written while the changes keep coming');
  s.timers.advance(150);
  assert.deepEqual(s.written, [{ folded: [], pinned: [], scrollTopPx: 50 }]);
  assert.equal(s.saver.waiting, false);
});

test('a pin then a fold are each written at once: a reload between or right after them keeps both', () => {
  const s = setup();
  s.shown!.pinned = [3];
  s.saver.saveNow();
  assert.deepEqual(s.written.at(-1), { folded: [], pinned: [3], scrollTopPx: 0 });
  s.shown!.folded = ['node 0'];
  s.saver.saveNow();
  assert.deepEqual(s.written.at(-1), { folded: ['node 0'], pinned: [3], scrollTopPx: 0 });
  assert.equal(s.timers.pendingCount, 0, 'no write is left waiting that a reload could lose');
});

test('a discrete change writes the scroll that was waiting with it, and cancels the waiting write', () => {
  const s = setup();
  s.shown!.scrollTopPx = 70;
  s.saver.schedule();
  s.shown!.pinned = [1];
  s.saver.saveNow();
  assert.deepEqual(s.written, [{ folded: [], pinned: [1], scrollTopPx: 70 }]);
  s.timers.advance(1000);
  assert.equal(s.written.length, 1, 'the cancelled write did not fire later with the same state');
});

test('hiding the page writes a waiting change; with nothing waiting it writes nothing', () => {
  const s = setup();
  const listeners = new Map<string, () => void>();
  const target = { addEventListener: (type: string, listener: () => void) => listeners.set(type, listener) };
  const doc = { ...target, visibilityState: 'visible' as DocumentVisibilityState };
  s.saver.flushOnPageHide(target as never, doc as never);
  listeners.get('pagehide')!();
  assert.equal(s.written.length, 0);
  s.shown!.scrollTopPx = 30;
  s.saver.schedule();
  doc.visibilityState = 'hidden';
  listeners.get('visibilitychange')!();
  assert.deepEqual(s.written, [{ folded: [], pinned: [], scrollTopPx: 30 }]);
  s.shown!.scrollTopPx = 40;
  s.saver.schedule();
  listeners.get('pagehide')!();
  assert.equal(s.written.at(-1)!.scrollTopPx, 40);
});

test('nothing is written while the panel shows nothing, so the state saved before a reload survives it', () => {
  const s = setup();
  s.shown = undefined;
  s.saver.schedule();
  s.timers.advance(1000);
  s.saver.saveNow();
  s.saver.flush();
  assert.deepEqual(s.written, []);
});
