import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { createMessageDispatcher, isInsideFolders } from '../../../src/extension/glue/message-dispatch';

function setup() {
  const log: string[] = [];
  const seen: unknown[] = [];
  const dispatch = createMessageDispatcher(
    'timeline',
    {
      openSource: (m) => {
        seen.push(m);
      },
      log: (m) => {
        seen.push(m);
      },
      exportTrace: () => {
        throw new Error('disk full');
      },
    },
    { warn: (m) => log.push(`warn ${m}`), error: (m) => log.push(`error ${m}`) },
  );
  return { log, seen, dispatch };
}

test('a valid message reaches its handler', async () => {
  const { dispatch, seen, log } = setup();
  assert.equal(await dispatch({ type: 'openSource', file: '/w/train.py', line: 12 }), 'handled');
  assert.deepEqual(seen, [{ type: 'openSource', file: '/w/train.py', line: 12 }]);
  assert.deepEqual(log, []);
});

test('malformed and unknown messages are logged and never reach a handler', async () => {
  const { dispatch, seen, log } = setup();
  const bad: unknown[] = [
    null,
    'openSource',
    42,
    [],
    { type: 'runShell', cmd: 'rm -rf /' },
    { type: 'openSource', file: '/w/a.py' },
    { type: 'openSource', file: '/w/a.py', line: 0 },
    { type: 'openSource', file: '/w/a.py', line: 1.5 },
    { type: 'openSource', file: '/w/a.py', line: 3, extra: true },
    { type: 'log', level: 'fatal', message: 'x' },
    { type: 'log', level: 'info', message: 'x'.repeat(100_000) },
    { type: '__proto__' },
    { type: 'constructor' },
    JSON.parse('{"type":"openSource","file":"/w/a.py","line":2,"__proto__":{"polluted":1}}'),
  ];
  for (const message of bad) assert.equal(await dispatch(message), 'invalid', JSON.stringify(message)?.slice(0, 80));
  assert.deepEqual(seen, []);
  assert.equal(log.length, bad.length);
  assert.ok(log.every((l) => l.startsWith('warn [timeline] dropped an invalid webview message')));
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('a valid message without a handler is reported as unhandled, and a throwing handler is contained', async () => {
  const { dispatch, log } = setup();
  assert.equal(await dispatch({ type: 'selectSpan', spanIndex: 3 }), 'unhandled');
  assert.equal(await dispatch({ type: 'exportTrace' }), 'failed');
  assert.deepEqual(log, ['error [timeline] handling "exportTrace" failed: disk full']);
});

test('span sources open only inside the workspace folders', () => {
  const folders = ['/work/project'];
  assert.equal(isInsideFolders('/work/project/train.py', folders, resolve), true);
  assert.equal(isInsideFolders('/work/project/../secrets/id_rsa', folders, resolve), false);
  assert.equal(isInsideFolders('/work/project-other/x.py', folders, resolve), false);
  assert.equal(isInsideFolders('/etc/passwd', folders, resolve), false);
});
