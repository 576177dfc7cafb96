// Fuzzes the measurement importers through their one entry point, importMeasurementText, which the CLI and the
// extension both call after reading a file: nccl-tests output, NCCL_DEBUG logs, DeepSpeed comms_logger output
// and calibration JSON. Seeds are the real files in ../shared, mutated byte by byte and recombined line by line.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { importMeasurementText } from '../../../src/native/import/index';
import { checkInput, fuzz, importResultProblem, reportCounts } from './harness';
import { mutatedText, mutatedWindow, recombinedLines } from './mutate';
import { calibrationSeeds, deepSpeedLogSeeds, ncclLogSeeds, ncclTestsSeeds, SHARED_MISSING } from './seeds';
import { FUZZ_PLAN } from './plan';

after(() => reportCounts('measurements'));

const importAs = (format: string) => ({ name, text }: { name: string; text: string }): void => {
  checkInput(format, text, () => importMeasurementText(text, { fileName: name }), importResultProblem);
};

test('nccl-tests output: mutated real runs and recombined rows', { skip: SHARED_MISSING }, () => {
  const seeds = ncclTestsSeeds();
  assert.ok(seeds.length >= 10);
  fuzz(mutatedWindow(seeds, 200), FUZZ_PLAN.ncclTestsMutated, importAs('nccl-tests (mutated)'));
  // A real header (banner and column lines) in front of recombined rows gets most inputs into the row parser.
  const headers = seeds.map((s) => s.text.split('\n').slice(0, s.text.split('\n').findIndex((l) => /^#\s+\(B\)/.test(l)) + 1).join('\n'));
  const table = fc.tuple(fc.nat(), recombinedLines(seeds)).map(([i, rows]) => `${headers[i % headers.length]}\n${rows}`);
  fuzz(table, FUZZ_PLAN.ncclTestsGenerated, (text) => importAs('nccl-tests (recombined)')({ name: 'gen_perf.txt', text }));
});

test('NCCL_DEBUG logs: mutated real logs and recombined lines', { skip: SHARED_MISSING }, () => {
  const seeds = ncclLogSeeds();
  assert.ok(seeds.length >= 3);
  fuzz(mutatedWindow(seeds, 250), FUZZ_PLAN.ncclLogMutated, importAs('NCCL log (mutated)'));
  fuzz(recombinedLines(seeds, 80), FUZZ_PLAN.ncclLogGenerated, (text) => importAs('NCCL log (recombined)')({ name: 'nccl-debug.log', text }));
});

test('DeepSpeed comms logs and calibration JSON: mutated real files', { skip: SHARED_MISSING }, () => {
  const ds = deepSpeedLogSeeds();
  const calibration = calibrationSeeds();
  assert.ok(ds.length >= 2 && calibration.length >= 3);
  fuzz(mutatedText(ds), FUZZ_PLAN.deepSpeedLogMutated, importAs('DeepSpeed comms log (mutated)'));
  fuzz(mutatedText(calibration), FUZZ_PLAN.calibrationMutated, importAs('calibration JSON (mutated)'));
});
