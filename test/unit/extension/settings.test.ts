import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readSettings, DEFAULT_SETTINGS, type SettingsSource } from '../../../src/extension/settings';

function source(values: Record<string, unknown>, global: Record<string, unknown> = values): SettingsSource {
  return { get: (key) => values[key], globalValue: (key) => global[key] };
}

test('missing settings give the defaults and no problems', () => {
  const { settings, problems } = readSettings(source({}));
  assert.deepEqual(settings, DEFAULT_SETTINGS);
  assert.deepEqual(problems, []);
});

test('valid values are read and the bucket size is converted to bytes', () => {
  const { settings, problems } = readSettings(
    source({
      system: ' hgx-h200 ',
      nodes: 4,
      defaultBucketMB: 50,
      'diagnostics.debounceMs': 0,
      'diagnostics.rules': { CP006: 'off', CP003: 'error' },
      'codeLens.bucketRecommendation': false,
    }),
  );
  assert.deepEqual(problems, []);
  assert.equal(settings.system, 'hgx-h200');
  assert.equal(settings.nodes, 4);
  assert.equal(settings.defaultBucketBytes, 50 * 1024 * 1024);
  assert.equal(settings.diagnostics.debounceMs, 0);
  assert.deepEqual(settings.diagnostics.rules, { CP006: 'off', CP003: 'error' });
  assert.equal(settings.lenses.bucketRecommendation, false);
  assert.equal(settings.lenses.collectives, true);
});

test('the master lens switch turns every lens kind off', () => {
  const { settings } = readSettings(source({ 'codeLens.enabled': false }));
  assert.ok(Object.values(settings.lenses).every((on) => on === false));
});

test('malformed values fall back to defaults and are reported by key', () => {
  const { settings, problems } = readSettings(
    source({
      nodes: 0,
      'diagnostics.debounceMs': 'fast',
      system: '',
      'diagnostics.rules': { CP001: 'loud', XY1: 'off' },
      'native.launcher': 'mpirun',
    }),
  );
  assert.equal(settings.nodes, 1);
  assert.equal(settings.diagnostics.debounceMs, 300);
  assert.equal(settings.system, 'dgx-h100');
  assert.equal(settings.native.launcher, 'direct');
  assert.deepEqual(settings.diagnostics.rules, {});
  const keys = problems.map((p) => p.key).sort();
  assert.deepEqual(keys, [
    'collectiveProfiler.diagnostics.debounceMs',
    'collectiveProfiler.diagnostics.rules.CP001',
    'collectiveProfiler.diagnostics.rules.XY1',
    'collectiveProfiler.native.launcher',
    'collectiveProfiler.nodes',
    'collectiveProfiler.system',
  ]);
  assert.match(problems.find((p) => p.key.endsWith('.nodes'))!.message, /integer from 1 to 65536/);
});

test('executable paths come only from the user (global) value, never from the workspace', () => {
  const workspace = { 'native.pythonPath': '/repo/evil/python', 'native.torchrunPath': './torchrun' };
  const { settings } = readSettings(source(workspace, { 'native.pythonPath': '/usr/bin/python3' }));
  assert.equal(settings.native.pythonPath, '/usr/bin/python3');
  assert.equal(settings.native.torchrunPath, '');
});

test('ncclVersion takes an NCCL 2.x release or nothing; anything else is reported and ignored', () => {
  assert.equal(readSettings(source({ ncclVersion: ' 2.26.2 ' })).settings.ncclVersion, '2.26.2');
  assert.equal(readSettings(source({ ncclVersion: '' })).settings.ncclVersion, '');
  const bad = readSettings(source({ ncclVersion: 'latest' }));
  assert.equal(bad.settings.ncclVersion, '');
  assert.deepEqual(
    bad.problems.map((p) => p.key),
    ['collectiveProfiler.ncclVersion'],
  );
  assert.match(bad.problems[0].message, /an NCCL release such as "2\.26\.2"/);
});

test('trace.detail takes auto, summary or full; anything else is reported and auto used', () => {
  assert.equal(readSettings(source({})).settings.traceDetail, 'auto');
  assert.equal(readSettings(source({ 'trace.detail': 'full' })).settings.traceDetail, 'full');
  const { settings, problems } = readSettings(source({ 'trace.detail': 'everything' }));
  assert.equal(settings.traceDetail, 'auto');
  assert.deepEqual(
    problems.map((p) => p.key),
    ['collectiveProfiler.trace.detail'],
  );
  assert.match(problems[0].message, /one of auto, summary, full/);
});
