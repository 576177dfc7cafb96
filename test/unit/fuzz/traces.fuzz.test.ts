// Fuzzes the trace readers: Kineto (PyTorch profiler) traces through the measurement importer, any Chrome Trace
// Event JSON through the timeline's Open Trace reader, the extension's own *.cptrace.json, and gzipped files
// through the CLI's file reader. Seeds are the real Kineto excerpts in ../shared plus a simulated trace.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { presetSystem, simulateCollective, asBytes } from '../../../src/engine/index';
import { importMeasurementText } from '../../../src/native/import/index';
import { importMeasurementFile } from '../../../src/native/import-file';
import { readTraceFile, serializeTraceFile } from '../../../src/extension/glue/trace-file';
import { TraceEventScanner } from '../../../src/native/stream/trace-event-scanner';
import { checkInput, fuzz, importResultProblem, reportCounts, traceProblem } from './harness';
import { editsArbitrary, mutate, mutateText } from './mutate';
import { kinetoSeeds, SHARED_MISSING } from './seeds';
import { FUZZ_PLAN } from './plan';

after(() => reportCounts('traces'));

const excerpts = (): { name: string; text: string }[] => kinetoSeeds().filter((s) => s.text.length < 200_000);

/** Values that have broken event readers: wrong types, non-finite numbers, huge and negative times. */
const hostileValue = fc.oneof(
  fc.constantFrom(
    -1,
    0,
    1e308,
    -1e308,
    2 ** 53 + 1,
    0.5,
    '12',
    'abc',
    '',
    null,
    true,
    [],
    {},
    [[1, 2]],
    ['float'],
    '<img src=x onerror=alert(1)>',
    'ncclKernel_AllReduce_RING_LL_Sum_float(',
    'ncclDevKernel_Generic(',
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

/** Real Kineto events with fields replaced, dropped or added, and a random distributedInfo. */
function kinetoEventsArbitrary(pool: readonly Record<string, unknown>[]): fc.Arbitrary<string> {
  const event = fc
    .record({
      index: fc.nat(),
      changes: fc.array(
        fc.tuple(
          fc.constantFrom(
            'ph',
            'cat',
            'name',
            'pid',
            'tid',
            'ts',
            'dur',
            'args',
            'args.External id',
            'args.correlation',
            'args.stream',
            'args.dtype',
            'args.In msg nelems',
            'args.Out msg nelems',
            'args.Group size',
            'args.Collective name',
            'args.Input Dims',
            'args.Input type',
          ),
          fc.option(hostileValue, { nil: undefined }),
        ),
        { maxLength: 3 },
      ),
    })
    .map(({ index, changes }) => {
      const copy = structuredClone(pool[index % pool.length]) as Record<string, unknown>;
      for (const [key, value] of changes) {
        const [outer, inner] = key.split('.');
        const target = inner
          ? ((copy.args && typeof copy.args === 'object' ? copy.args : (copy.args = {})) as Record<string, unknown>)
          : copy;
        const field = inner ?? outer;
        if (value === undefined) delete target[field];
        // A copy: the hostile constants ({} and []) are shared between runs and must not be mutated.
        else target[field] = structuredClone(value);
      }
      return copy;
    });
  return fc
    .record({
      events: fc.array(event, { maxLength: 40 }),
      info: fc.option(fc.dictionary(fc.constantFrom('rank', 'world_size', 'backend', 'nccl_version'), hostileValue), {
        nil: undefined,
      }),
    })
    .map(({ events, info }) => JSON.stringify({ ...(info ? { distributedInfo: info } : {}), traceEvents: events }));
}

const chromeEvent = fc.record(
  {
    ph: fc.constantFrom('X', 'B', 'E', 'i', 'M', 'C', 'x', 'b'),
    name: fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.constantFrom('process_name', 'thread_name', 'ncclKernel_AllReduce', '<script>alert(1)</script>'),
    ),
    cat: fc.constantFrom('kernel', 'cpu_op', 'nccl', 'gpu_op', ''),
    pid: fc.oneof(fc.integer({ min: -2, max: 8 }), fc.constantFrom('0', 'a:b', '__proto__')),
    tid: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constantFrom('t:1', 'constructor')),
    ts: fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), hostileValue),
    dur: fc.oneof(fc.double({ min: -10, max: 1e4, noNaN: true }), hostileValue),
    args: fc.oneof(fc.constant({}), fc.record({ name: fc.string({ maxLength: 8 }), bytes: hostileValue })),
  },
  { requiredKeys: ['ph'] },
);

test('Kineto traces: mutated real excerpts and real events with hostile fields', { skip: SHARED_MISSING }, () => {
  const seeds = excerpts();
  assert.ok(seeds.length >= 4);
  fuzz(fc.record({ index: fc.nat(), edits: editsArbitrary }), FUZZ_PLAN.kinetoMutated, ({ index, edits }) => {
    const seed = seeds[index % seeds.length];
    const text = mutateText(seed.text, edits);
    checkInput(
      'Kineto (mutated)',
      text,
      () => importMeasurementText(text, { fileName: seed.name }),
      importResultProblem,
    );
  });
  const pool = seeds
    .flatMap((s) => (JSON.parse(s.text) as { traceEvents: Record<string, unknown>[] }).traceEvents)
    .filter(
      (e) =>
        ['kernel', 'cuda_runtime', 'user_annotation', 'cpu_op'].includes(String(e.cat)) ||
        e.name === 'record_param_comms',
    );
  fuzz(kinetoEventsArbitrary(pool), FUZZ_PLAN.kinetoEvents, (text) => {
    checkInput(
      'Kineto (hostile events)',
      text,
      () => importMeasurementText(text, { fileName: 'trace.json' }),
      importResultProblem,
    );
  });
});

test('Chrome traces and *.cptrace.json: the timeline reader', () => {
  const simulated = simulateCollective(presetSystem('dgx-h100')!, { bytes: asBytes(1 << 20), trace: true }).trace!;
  const own = serializeTraceFile(simulated);
  const chrome = fc.oneof(
    fc.array(chromeEvent, { maxLength: 30 }).map((events) => JSON.stringify(events)),
    fc.array(chromeEvent, { maxLength: 30 }).map((events) => JSON.stringify({ traceEvents: events })),
    editsArbitrary.map((edits) => mutateText(own, edits)),
  );
  fuzz(chrome, FUZZ_PLAN.chromeTrace, (text) => {
    checkInput(
      'Chrome trace / cptrace',
      text,
      () => readTraceFile(text, 'fuzz.cptrace.json'),
      (r) => traceProblem(r.trace),
    );
  });
});

test('gzipped traces: corrupted and truncated .json.gz through the CLI file reader', { skip: SHARED_MISSING }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-fuzz-gz-'));
  try {
    const texts = excerpts();
    const seeds = texts.map((s) => gzipSync(s.text));
    fuzz(
      fc.record({ index: fc.nat(), edits: editsArbitrary, inner: fc.boolean() }),
      FUZZ_PLAN.gzip,
      ({ index, edits, inner }) => {
        const seed = texts[index % seeds.length];
        // Half the inputs corrupt the compressed bytes, half compress a corrupted trace.
        const bytes = inner
          ? gzipSync(mutate(new TextEncoder().encode(seed.text), edits))
          : mutate(seeds[index % seeds.length], edits);
        const path = join(dir, 'trace.json.gz');
        writeFileSync(path, bytes);
        checkInput('Kineto .json.gz', bytes, () => importMeasurementFile(path), importResultProblem);
      },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the streaming trace reader: mutated Kineto text in random chunks', { skip: SHARED_MISSING }, () => {
  const seeds = excerpts();
  fuzz(
    fc.record({ index: fc.nat(), edits: editsArbitrary, chunk: fc.integer({ min: 1, max: 70_000 }) }),
    FUZZ_PLAN.streamedTrace,
    ({ index, edits, chunk }) => {
      const text = mutateText(seeds[index % seeds.length].text, edits);
      checkInput(
        'Chrome trace (streamed)',
        text,
        () => {
          const events: unknown[] = [];
          const scanner = new TraceEventScanner({ event: (e) => events.push(e) }, 'fuzz.json');
          try {
            for (let at = 0; at < text.length; at += chunk) scanner.push(text.slice(at, at + chunk));
            scanner.end();
          } catch (error) {
            // A rejection is fine only for text that is not a trace to a whole-text parser either.
            let valid: boolean;
            try {
              const doc = JSON.parse(text) as unknown;
              valid = Array.isArray(doc) || Array.isArray((doc as { traceEvents?: unknown } | null)?.traceEvents);
            } catch {
              valid = false;
            }
            if (valid)
              throw new Error(`the streaming reader rejected a valid trace: ${String(error)}`, { cause: error });
            throw error;
          }
          return events;
        },
        (events) => {
          // Whatever the whole-text parser also reads must come out event for event.
          let whole: unknown;
          try {
            whole = JSON.parse(text);
          } catch {
            return undefined;
          }
          const expected = Array.isArray(whole) ? whole : (whole as { traceEvents?: unknown }).traceEvents;
          if (!Array.isArray(expected)) return undefined;
          const objects = expected.filter((e) => typeof e === 'object' && e !== null);
          return JSON.stringify(objects) === JSON.stringify(events)
            ? undefined
            : `streamed ${events.length} events, a whole parse ${objects.length}`;
        },
      );
    },
  );
});
