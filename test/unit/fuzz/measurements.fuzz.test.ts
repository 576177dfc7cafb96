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

const importAs =
  (format: string) =>
  ({ name, text }: { name: string; text: string }): void => {
    checkInput(format, text, () => importMeasurementText(text, { fileName: name }), importResultProblem);
  };

test('nccl-tests output: mutated real runs and recombined rows', { skip: SHARED_MISSING }, () => {
  const seeds = ncclTestsSeeds();
  assert.ok(seeds.length >= 10);
  fuzz(mutatedWindow(seeds, 200), FUZZ_PLAN.ncclTestsMutated, importAs('nccl-tests (mutated)'));
  // A real header (banner and column lines) in front of recombined rows gets most inputs into the row parser.
  const headers = seeds.map((s) =>
    s.text
      .split('\n')
      .slice(0, s.text.split('\n').findIndex((l) => /^#\s+\(B\)/.test(l)) + 1)
      .join('\n'),
  );
  const table = fc
    .tuple(fc.nat(), recombinedLines(seeds))
    .map(([i, rows]) => `${headers[i % headers.length]}\n${rows}`);
  fuzz(table, FUZZ_PLAN.ncclTestsGenerated, (text) =>
    importAs('nccl-tests (recombined)')({ name: 'gen_perf.txt', text }),
  );
});

test('NCCL_DEBUG logs: mutated real logs and recombined lines', { skip: SHARED_MISSING }, () => {
  const seeds = ncclLogSeeds();
  assert.ok(seeds.length >= 3);
  fuzz(mutatedWindow(seeds, 250), FUZZ_PLAN.ncclLogMutated, importAs('NCCL log (mutated)'));
  fuzz(recombinedLines(seeds, 80), FUZZ_PLAN.ncclLogGenerated, (text) =>
    importAs('NCCL log (recombined)')({ name: 'nccl-debug.log', text }),
  );
});

test('DeepSpeed comms logs and calibration JSON: mutated real files', { skip: SHARED_MISSING }, () => {
  const ds = deepSpeedLogSeeds();
  const calibration = calibrationSeeds();
  assert.ok(ds.length >= 2 && calibration.length >= 3);
  fuzz(mutatedText(ds), FUZZ_PLAN.deepSpeedLogMutated, importAs('DeepSpeed comms log (mutated)'));
  fuzz(mutatedText(calibration), FUZZ_PLAN.calibrationMutated, importAs('calibration JSON (mutated)'));
});

/** A saved native run (`> collective-run.jsonl`): env, results and per-step spans, in the harness's line format. */
const NATIVE_LINES: readonly Record<string, unknown>[] = [
  {
    type: 'env',
    python: '3.11.2',
    torch: '2.1.0',
    backend: 'gloo',
    worldSize: 2,
    gpuCount: 0,
    ncclVersion: null,
    clockOffsetsUs: [0, 3.5],
  },
  {
    type: 'result',
    kind: 'fused',
    label: 'size',
    bytes: 65536,
    timeUs: 120.5,
    algbwGBps: 0.54,
    busbwGBps: 0.54,
    verified: { sum: true, avg: true },
  },
  {
    type: 'result',
    kind: 'reduce_scatter+all_gather',
    label: 'size',
    bytes: 65536,
    unsupported: 'gloo has no reduce_scatter',
  },
  {
    type: 'result',
    kind: 'ring',
    label: 'size',
    bytes: 65536,
    timeUs: 300,
    algbwGBps: 0.2,
    busbwGBps: 0.2,
    verified: { sum: true },
  },
  {
    type: 'span',
    algorithm: 'ring',
    label: 'size',
    messageBytes: 65536,
    bytes: 32768,
    rank: 0,
    phase: 'exchange',
    step: 0,
    startUs: 10,
    endUs: 40,
    sendTo: 1,
    recvFrom: 1,
  },
  {
    type: 'span',
    algorithm: 'ring',
    label: 'size',
    messageBytes: 65536,
    bytes: 32768,
    rank: 1,
    phase: 'reduce',
    step: 0,
    startUs: 41,
    endUs: 50,
    sendTo: 0,
    recvFrom: 0,
  },
  {
    type: 'span',
    algorithm: 'tree',
    label: 'size',
    messageBytes: 65536,
    bytes: 65536,
    rank: 0,
    phase: 'broadcast',
    step: 1,
    startUs: 60,
    endUs: 90,
    sendTo: 1,
    recvFrom: 1,
  },
  { type: 'progress', done: 1, total: 2 },
  { type: 'done' },
];

test('saved native runs (harness JSON lines) with hostile fields', () => {
  const hostile = fc.oneof(
    fc.constantFrom(-1, 0, 1e308, -1e308, 'ring', 'exchange', 'tree', '', null, true, [], {}, 2 ** 40),
    fc.jsonValue({ maxDepth: 1 }),
  );
  const line = fc
    .record({
      index: fc.nat(),
      changes: fc.array(
        fc.tuple(
          fc.constantFrom(
            'type',
            'kind',
            'bytes',
            'timeUs',
            'algbwGBps',
            'busbwGBps',
            'verified',
            'unsupported',
            'algorithm',
            'phase',
            'rank',
            'step',
            'startUs',
            'endUs',
            'sendTo',
            'recvFrom',
            'messageBytes',
            'worldSize',
            'backend',
            'torch',
          ),
          fc.option(hostile, { nil: undefined }),
        ),
        { maxLength: 3 },
      ),
    })
    .map(({ index, changes }) => {
      const copy: Record<string, unknown> = { ...NATIVE_LINES[index % NATIVE_LINES.length] };
      for (const [key, value] of changes) {
        if (value === undefined) delete copy[key];
        else copy[key] = structuredClone(value);
      }
      return JSON.stringify(copy);
    });
  const run = fc.array(line, { maxLength: 12 }).map((lines) => [JSON.stringify(NATIVE_LINES[0]), ...lines].join('\n'));
  fuzz(run, FUZZ_PLAN.nativeRun, (text) => importAs('native run (JSON lines)')({ name: 'collective-run.jsonl', text }));
});

/** Replaces some numeric leaves of a JSON document with numbers at the edges, keeping the structure valid. */
function edgeNumbers(doc: unknown, picks: readonly number[], values: readonly number[]): unknown {
  let leaf = 0;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'number') {
      const k = leaf++;
      const at = picks.indexOf(k % 97);
      return at >= 0 ? values[at % values.length] : v;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([key, x]) => [key, walk(x)]));
    return v;
  };
  return walk(doc);
}

test('calibration JSON: valid documents with numbers at the edges', { skip: SHARED_MISSING }, () => {
  const docs = calibrationSeeds().map((s) => JSON.parse(s.text) as unknown);
  const edge = fc.constantFrom(0, -1, 1, 2.5, 1e308, -1e308, 1e-308, 2 ** 53, 4294967296);
  fuzz(
    fc.record({
      index: fc.nat(),
      picks: fc.array(fc.nat(96), { minLength: 1, maxLength: 6 }),
      values: fc.array(edge, { minLength: 1, maxLength: 6 }),
    }),
    FUZZ_PLAN.calibrationEdges,
    ({ index, picks, values }) => {
      const text = JSON.stringify(edgeNumbers(docs[index % docs.length], picks, values), null, 1);
      importAs('calibration JSON (edge numbers)')({ name: 'calibration.json', text });
    },
  );
});
