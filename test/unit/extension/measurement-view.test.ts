// Every real measurement file (../shared/fixtures-real, read in place): the panel model names the hardware the
// file says it was measured on (or says the file names none), says what the file holds, shows what an
// NCCL_DEBUG log contains, and turns corrupted, failed or cut-off runs into editor errors (issue 14, item 4).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join } from 'node:path';
import { importMeasurementFile } from '../../../src/native/import-file';
import { measurementView, ncclFactsOf } from '../../../src/extension/glue/measurement-view';
import { FIXTURES_REAL, HARDWARE, LOG_CONTENT, fixtureFiles } from '../../shared/fixtures-real-expected';

const FIXTURES = FIXTURES_REAL;
const skip = existsSync(FIXTURES) ? false : 'the real fixtures (../shared/fixtures-real) are not here';
const files = fixtureFiles();

test('every real fixture file has an expectation here, so a new one cannot slip past', { skip }, () => {
  assert.deepEqual(files, Object.keys(HARDWARE).sort());
});

for (const file of files) {
  test(`${file}: the panel names the hardware it was measured on and what the file holds`, { skip }, () => {
    const path = join(FIXTURES, file);
    const result = importMeasurementFile(path);
    const raw = readFileSync(path);
    const text = (file.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
    const view = measurementView(result, ncclFactsOf(result, text));
    const expected = HARDWARE[file];
    if (expected) {
      assert.match(view.measuredOn ?? '', expected);
      assert.match(view.hardware, /^measured on .* \(named in the file\)/);
    } else {
      assert.equal(view.measuredOn, undefined);
      assert.match(view.hardware, /^the file does not name the GPUs it ran on/);
    }
    assert.doesNotMatch(view.contents, /\(0 sizes\)|unknown/, view.contents);
    for (const [title, line] of LOG_CONTENT[file] ?? []) {
      const section = view.sections.find((s) => title.test(s.title));
      assert.ok(section, `${file}: a section ${title} among ${view.sections.map((s) => s.title).join(', ')}`);
      assert.ok(
        section.lines.some((l) => line.test(l)),
        `${file}: ${title} has a line ${line}:\n${section.lines.join('\n')}`,
      );
    }
    if (!LOG_CONTENT[file]) assert.deepEqual(view.sections, [], 'only NCCL_DEBUG output has log sections');
  });
}

test('init-only and choice-only NCCL logs say what they hold', { skip }, () => {
  const view = (file: string) => {
    const path = join(FIXTURES, file);
    const result = importMeasurementFile(path);
    return measurementView(result, ncclFactsOf(result, readFileSync(path, 'utf8')));
  };
  assert.match(
    view('nccl-debug-a100-8gpu-multinode-ofi.log').contents,
    /^NCCL initialisation only \(\d+ INFO lines\): no collective was timed or logged$/,
  );
  assert.match(
    view('nccl-debug-rtx5090-2rank-tuning.log').contents,
    /^72 Broadcast calls with NCCL's algorithm choice, 1 KiB to 128 MiB \(the log has no timings\)$/,
  );
});

test('#wrong > 0, failed validation and a truncated run are errors on their lines', { skip }, () => {
  const path = join(FIXTURES, 'nccl-tests-gh200-16gpu-2026-wrong-truncated.txt');
  const lines = readFileSync(path, 'utf8').split('\n');
  const { errors } = measurementView(importMeasurementFile(path));
  const wrong = errors.filter((e) => /#wrong/.test(e.message));
  assert.equal(wrong.length, 6);
  for (const e of wrong) {
    const columns = lines[e.line].trim().split(/\s+/);
    assert.ok(
      Number(columns[columns.length - 1]) > 0 || Number(columns[8]) > 0,
      `line ${e.line + 1} is a row with #wrong > 0: ${lines[e.line]}`,
    );
  }
  assert.ok(
    errors.some((e) => /truncated/.test(e.message)),
    'the truncated run is an error',
  );
  const failed = measurementView(
    importMeasurementFile(join(FIXTURES, 'nccl-tests-v100-12gpu-2020-all_gather.txt')),
  ).errors;
  assert.ok(failed.some((e) => /failed validation \(4 out-of-bounds values\)/.test(e.message)));
  assert.deepEqual(
    measurementView(importMeasurementFile(join(FIXTURES, 'nccl-tests-h100-16gpu-2025.txt'))).errors,
    [],
    'a healthy run has none',
  );
});
