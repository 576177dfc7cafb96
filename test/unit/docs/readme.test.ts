// The README is also the Marketplace page: at most about 150 lines (what it is, screenshots of the real panels,
// install, the two commands, links), with the reference in docs/ and every page of it linked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

test('the README is at most 150 lines, with screenshots, install and the quick start', () => {
  const lines = README.split('\n').length;
  assert.ok(lines <= 150, `README.md has ${lines} lines`);
  for (const heading of ['## Install', '## Quick start', '## Documentation'])
    assert.ok(README.includes(`\n${heading}\n`), heading);
  const screenshots = [...README.matchAll(/!\[[^\]]+\]\((media\/screenshots\/[\w.-]+\.png)\)/g)].map((m) => m[1]);
  assert.ok(screenshots.length >= 3, `${screenshots.length} screenshots`);
  for (const png of screenshots) assert.equal(readFileSync(join(ROOT, png)).subarray(1, 4).toString(), 'PNG', png);
  assert.match(README, /npm run demo/);
  assert.match(README, /npm test/);
});

test('the README links every reference page of docs/ and CONTRIBUTING.md', () => {
  for (const page of [
    'docs/cli.md',
    'docs/system-files.md',
    'docs/training-configs.md',
    'docs/native.md',
    'docs/calibration.md',
    'docs/rules/README.md',
    'docs/security.md',
    'docs/performance.md',
    'CONTRIBUTING.md',
  ]) {
    assert.ok(existsSync(join(ROOT, page)), `${page} exists`);
    assert.ok(README.includes(`](${page})`), `README links ${page}`);
  }
});
