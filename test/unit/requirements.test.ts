// The skip-or-fail rule for tests that need ../shared or torch: a reason locally, an error under REQUIRE_*=1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { needShared, torchAbsent } from './requirements';

function withEnv(name: string, value: string | undefined, body: () => void): void {
  const old = process.env[name];
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
  try {
    body();
  } finally {
    if (old === undefined) delete process.env[name];
    else process.env[name] = old;
  }
}

test('a missing input is a skip reason locally and an error under REQUIRE_SHARED=1', () => {
  const missing = '/nonexistent/shared/fixtures-real';
  withEnv('REQUIRE_SHARED', undefined, () =>
    assert.match(String(needShared(missing, 'the fixtures')), /the fixtures is absent/),
  );
  withEnv('REQUIRE_SHARED', '1', () =>
    assert.throws(() => needShared(missing, 'the fixtures'), /REQUIRE_SHARED=1, but the fixtures is absent/),
  );
  withEnv('REQUIRE_SHARED', '1', () => assert.equal(needShared(import.meta.dirname), false));
});

test('a Python without torch is a skip reason locally and an error under REQUIRE_TORCH=1', () => {
  withEnv('REQUIRE_TORCH', undefined, () => assert.equal(torchAbsent('no torch'), 'no torch'));
  withEnv('REQUIRE_TORCH', '1', () => assert.throws(() => torchAbsent('no torch'), /REQUIRE_TORCH=1, but no torch/));
});
