// The shipped schema for *.collective.yaml: in step with the system-file schema it embeds, described for editor
// completion, and satisfied by every example.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import collective from '../../../schemas/collective.schema.json';
import system from '../../../schemas/system.schema.json';
import { parseDocument, validateAgainstSchema } from '../../../src/config/positioned';
import { WHAT_IF_KEYS } from '../../../src/engine/training/what-if';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');

type Schema = { properties?: Record<string, Schema>; anyOf?: Schema[]; description?: string };

test('the inline system accepts exactly the system file keys, with the same definitions', () => {
  const inline = (collective as Schema).properties!.system.anyOf![1].properties!;
  for (const [key, definition] of Object.entries((system as Schema).properties!)) {
    if (key === '$schema') continue;
    assert.deepEqual(inline[key], definition, `system.${key} differs from schemas/system.schema.json`);
  }
  assert.deepEqual(
    Object.keys(inline)
      .filter((k) => !(k in (system as Schema).properties!))
      .sort(),
    ['file', 'preset'],
  );
});

test('every key of the collective schema has a description for editor hovers', () => {
  const missing: string[] = [];
  const walk = (schema: Schema, path: string): void => {
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      if (!child.description && !child.anyOf) missing.push(`${path}${key}`);
      walk(child, `${path}${key}.`);
      for (const branch of child.anyOf ?? []) walk(branch, `${path}${key}.`);
    }
  };
  walk(collective as Schema, '');
  assert.deepEqual(missing, []);
});

test('every example *.collective.* file is valid against the shipped schema', () => {
  const files = readdirSync(join(ROOT, 'examples')).filter((f) => /\.collective\.(ya?ml|json)$/.test(f));
  assert.ok(files.length >= 2);
  for (const name of files) {
    const doc = parseDocument(readFileSync(join(ROOT, 'examples', name), 'utf8'), name);
    assert.deepEqual(validateAgainstSchema(doc, collective), [], name);
  }
});

test('the training keys cover the what-if knobs that are training settings', () => {
  const training = Object.keys((collective as Schema).properties!.training.properties!);
  for (const key of WHAT_IF_KEYS.filter((k) => !['nodes', 'gpus_per_node', 'system', 'gpu', 'dtype'].includes(k)))
    assert.ok(training.includes(key), key);
});
