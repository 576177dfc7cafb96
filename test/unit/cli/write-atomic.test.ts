// Atomic writes: the target is replaced whole or not at all, and no temporary file is left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomic } from '../../../src/cli/write-atomic';

test('writeFileAtomic replaces the file and leaves no temporary behind', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-atomic-'));
  const target = join(dir, 'out.json');
  writeFileSync(target, 'old');
  writeFileAtomic(target, '{"new": true}');
  assert.equal(readFileSync(target, 'utf8'), '{"new": true}');
  assert.deepEqual(readdirSync(dir), ['out.json']);
});

test('a failed write keeps the old file and cleans up', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-atomic-'));
  // Renaming a file over a folder fails after the temporary file was written, which is the case to clean up.
  const target = join(dir, 'taken');
  mkdirSync(target);
  writeFileSync(join(target, 'inside'), 'keep me');
  assert.throws(() => writeFileAtomic(target, 'text'));
  assert.deepEqual(readdirSync(dir), ['taken']);
  assert.equal(readFileSync(join(target, 'inside'), 'utf8'), 'keep me');
  assert.throws(() => writeFileAtomic(join(dir, 'missing', 'x.json'), 'text'), /ENOENT/);
});
