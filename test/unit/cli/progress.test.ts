// Progress lines: drawn on a terminal only, after the first second, never in CI or with machine-readable output,
// and erased at the end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createProgress } from '../../../src/cli/progress';

function fakeTerminal(isTTY: boolean): { written: string[]; stream: { isTTY: boolean; write(t: string): boolean } } {
  const written: string[] = [];
  return { written, stream: { isTTY, write: (t: string) => written.push(t) > 0 } };
}

test('nothing before a second has passed, then one rewritten line, erased by finish', () => {
  let clockMs = 0;
  const { written, stream } = fakeTerminal(true);
  const progress = createProgress('validate', { enabled: true, stream, env: {}, now: () => clockMs });
  progress.update(0, 10, 'first');
  assert.deepEqual(written, [], 'fast work shows nothing');
  clockMs = 1500;
  progress.update(3, 10, 'dgx-a100');
  assert.equal(written.length, 1);
  // eslint-disable-next-line no-control-regex -- the line starts with the erase-line escape sequence.
  assert.match(written[0], /^\r\x1b\[2Kvalidate: 3\/10 dgx-a100$/);
  clockMs = 1550;
  progress.update(4, 10, 'too soon');
  assert.equal(written.length, 1, 'at most ten redraws a second');
  progress.finish();
  assert.equal(written.at(-1), '\r\x1b[2K');
});

test('a byte count reads in the project size units', () => {
  const { written, stream } = fakeTerminal(true);
  const progress = createProgress('import', {
    enabled: true,
    stream,
    env: {},
    delayMs: 0,
    now: () => 5000,
    unit: 'bytes',
  });
  progress.update(12 * 2 ** 20, 256 * 2 ** 20, 'trace.json (parsing)');
  // eslint-disable-next-line no-control-regex -- the line starts with the erase-line escape sequence.
  assert.match(written[0], /^\r\x1b\[2Kimport: 12(\.0)? MiB\/256 MiB trace\.json \(parsing\)$/);
});

test('silent when stderr is not a terminal, in CI, or with --json', () => {
  for (const [isTTY, env, enabled] of [
    [false, {}, true],
    [true, { CI: 'true' }, true],
    [true, {}, false],
  ] as const) {
    const { written, stream } = fakeTerminal(isTTY);
    const progress = createProgress('check', { enabled, stream, env, delayMs: 0, now: () => 5000 });
    progress.update(1, 2, 'a.py');
    progress.finish();
    assert.deepEqual(written, []);
  }
});

test('a label from input cannot move the cursor', () => {
  const { written, stream } = fakeTerminal(true);
  const progress = createProgress('check', { enabled: true, stream, env: {}, delayMs: 0, now: () => 5000 });
  progress.update(1, 2, 'evil\x1b[2Jname.py');
  assert.ok(!written[0].slice('\r\x1b[2K'.length).includes('\x1b'), JSON.stringify(written[0]));
});
