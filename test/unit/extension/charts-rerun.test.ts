// A charts panel restored after a window reload runs its profile or sweep again from what its saved assumptions
// name (glue/charts-rerun.ts). The saved state is the webview's: what it names is checked as a panel message is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { restoredRerun, rerunCommandId } from '../../../src/extension/glue/charts-rerun';

const SAVED = {
  command: 'sweep',
  config: 'ds_config.json',
  configUri: 'file:///work/ds_config.json',
  fields: [
    { key: 'model', value: 'llama2-7b', origin: 'config' },
    { key: 'sequenceLength', value: 1024, origin: 'panel' },
    { key: 'computeEfficiencyPct', value: 40, origin: 'default' },
    { key: 'bucketMiB', value: 50, origin: 'panel' },
  ],
  others: [],
};

test('the saved assumptions give the command, the config and the changes the panel made', () => {
  assert.deepEqual(restoredRerun(SAVED), {
    command: 'sweep',
    configUri: 'file:///work/ds_config.json',
    changes: { sequenceLength: 1024, bucketMiB: 50 },
  });
  assert.equal(rerunCommandId('sweep'), 'collectiveProfiler.sweepBucketSize');
  assert.equal(rerunCommandId('profile'), 'collectiveProfiler.profileTrainingConfig');
});

test('a state without a config URI, or with anything malformed, gives no re-run', () => {
  const { configUri: _dropped, ...older } = SAVED;
  for (const [what, value] of [
    ['no assumptions', undefined],
    ['a panel saved before assumptions named their config', older],
    ['an unknown command', { ...SAVED, command: 'rm' }],
    ['an empty URI', { ...SAVED, configUri: '' }],
    ['a URI longer than any path', { ...SAVED, configUri: `file:///${'a'.repeat(5000)}` }],
    ['fields that are not a list', { ...SAVED, fields: {} }],
    ['an unknown key set by the panel', { ...SAVED, fields: [{ key: 'system', value: 'x', origin: 'panel' }] }],
    ['a prototype key', { ...SAVED, fields: [{ key: '__proto__', value: 1, origin: 'panel' }] }],
    ['a value out of bounds', { ...SAVED, fields: [{ key: 'sequenceLength', value: 2 ** 40, origin: 'panel' }] }],
    ['a number where a model name goes', { ...SAVED, fields: [{ key: 'model', value: 7, origin: 'panel' }] }],
  ] as const)
    assert.equal(restoredRerun(value), undefined, what);
});
