// The integration suite's harness must fail the run when a test fails or hangs; otherwise a broken extension
// would pass `npm run test:vscode`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { suite, test as itest, suiteSetup, runAll } from '../../integration/suite/harness';

test('the harness counts passes, failures, timeouts and failed setups', async () => {
  const lines: string[] = [];
  suite('ok', () => {
    itest('passes', () => undefined);
    itest('fails', () => {
      throw new Error('command collectiveProfiler.x is not registered');
    });
    itest('hangs', () => new Promise(() => undefined), 50);
  });
  suite('broken setup', () => {
    suiteSetup(() => {
      throw new Error('activation failed');
    });
    itest('never runs', () => undefined);
  });
  const result = await runAll((l) => lines.push(l));
  assert.deepEqual(result, { passed: 1, failed: 3 });
  assert.ok(lines.some((l) => l.includes('✗ fails') && l.includes('is not registered')));
  assert.ok(lines.some((l) => l.includes('hangs: timed out after 50 ms')));
  assert.ok(lines.some((l) => l.includes('setup failed') && l.includes('activation failed')));
});
