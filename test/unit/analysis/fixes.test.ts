// Every quick fix, applied on every labelled example where it is offered, leaves code that parses and removes
// the finding it fixes (a second run finds nothing of that code).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEdits } from '../../../src/analysis/index';
import { analyze, EXTRA_CORPUS, parsesCleanly, pythonFiles, SHARED_CORPUS } from './helpers';
import { needShared } from '../requirements';

for (const [name, dir] of [
  ['shared corpus', SHARED_CORPUS],
  ['extra corpus', EXTRA_CORPUS],
] as const) {
  test(`${name}: every offered fix parses and removes its finding`, async (t) => {
    const files = pythonFiles(dir);
    const absent = files.length === 0 && needShared(dir);
    if (absent) return t.skip(absent);
    let applied = 0;
    for (const file of files) {
      const findings = await analyze(file.text);
      for (const finding of findings) {
        for (const fix of finding.fixes) {
          const fixed = applyEdits(file.text, fix.edits);
          assert.notEqual(fixed, file.text, `${file.name}: "${fix.title}" changes nothing`);
          assert.ok(
            await parsesCleanly(fixed),
            `${file.name}: "${fix.title}" leaves code that does not parse:\n${fixed}`,
          );
          const again = (await analyze(fixed)).filter((f) => f.code === finding.code);
          assert.deepEqual(
            again.map((f) => f.range.startLine + 1),
            [],
            `${file.name}: "${fix.title}" still has ${finding.code}:\n${fixed}`,
          );
          applied++;
        }
      }
    }
    t.diagnostic(`${applied} fixes applied and re-checked`);
    assert.ok(applied >= 5, `expected fixes on most bug examples, applied ${applied}`);
  });
}

test('every finding on a bug example offers at least one fix', async () => {
  const missing: string[] = [];
  for (const file of [...pythonFiles(SHARED_CORPUS), ...pythonFiles(EXTRA_CORPUS)]) {
    for (const f of await analyze(file.text))
      if (f.fixes.length === 0) missing.push(`${file.name} ${f.code}@${f.range.startLine + 1}`);
  }
  assert.deepEqual(missing, []);
});
