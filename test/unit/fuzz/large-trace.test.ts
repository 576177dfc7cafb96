// Huge traces: the streaming reader gives the same events as a whole-file parse, a trace over the whole-file limit
// is streamed with bounded memory (measured in a child process), and files that cannot be streamed are refused at
// once with their size and a way forward.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { importMeasurementFile, MeasurementFileError } from '../../../src/native/import-file';
import { importMeasurementText } from '../../../src/native/import/index';
import { MeasurementParseError } from '../../../src/native/import/model';
import { TraceEventScanner } from '../../../src/native/stream/trace-event-scanner';
import { importLargeTrace, WHOLE_FILE_LIMIT_BYTES } from '../../../src/native/stream/large-trace';
import { importCommand } from '../../../src/cli/commands/import';
import { UsageError } from '../../../src/cli/command';
import { kinetoSeeds, SHARED_MISSING } from './seeds';
import type { Trace } from '../../../src/engine/index';

const MiB = 1024 * 1024;
/** Node with tsx needs about 100 MB to start; reading a 128 MB trace whole needs the text, a string of it and the parsed events, over 600 MB. */
const MAX_RSS_BYTES = 256 * MiB;
const CHILD = resolve(import.meta.dirname, 'fixtures/import-and-measure.ts');

function scanInChunks(text: string, sizes: number[]): { events: unknown[]; metadata: Record<string, unknown> } {
  const events: unknown[] = [];
  const metadata: Record<string, unknown> = {};
  const scanner = new TraceEventScanner({
    event: (e) => events.push(e),
    metadata: (k, v) => {
      metadata[k] = v;
    },
  });
  for (let at = 0, k = 0; at < text.length; k++) {
    const size = sizes[k % sizes.length];
    scanner.push(text.slice(at, at + size));
    at += size;
  }
  scanner.end();
  return { events, metadata };
}

test(
  'the streaming reader yields exactly the events of a whole parse, whatever the chunk boundaries',
  { skip: SHARED_MISSING },
  () => {
    const seeds = kinetoSeeds().filter((s) => s.text.length < 2_000_000);
    assert.ok(seeds.length >= 4);
    for (const seed of seeds) {
      const whole = JSON.parse(seed.text) as { traceEvents: unknown[]; distributedInfo?: unknown };
      for (const sizes of [[1, 2, 3, 5, 7], [4093], [1 << 20]]) {
        const streamed = scanInChunks(seed.text, sizes);
        assert.deepEqual(streamed.events, whole.traceEvents, `${seed.name} in chunks of ${sizes.join('/')}`);
        if (whole.distributedInfo) assert.deepEqual(streamed.metadata.distributedInfo, whole.distributedInfo);
      }
    }
    // Escapes split across chunks, and a bare array of events.
    const tricky = JSON.stringify([
      { name: 'a\\"b\\\\', ph: 'X' },
      { name: '}]{[', ph: 'X', args: { s: '\\u005d' } },
    ]);
    for (let size = 1; size < 8; size++) assert.deepEqual(scanInChunks(tricky, [size]).events, JSON.parse(tricky));
  },
);

test(
  'a streamed Kineto import gives the same measurements and spans as the whole-file import',
  { skip: SHARED_MISSING },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'cp-stream-'));
    try {
      for (const seed of kinetoSeeds().filter((s) => s.text.length < 2_000_000)) {
        const path = join(dir, 'trace.json');
        writeFileSync(path, seed.text);
        const whole = importMeasurementText(seed.text, { fileName: path });
        const streamed = importLargeTrace(path);
        assert.deepEqual(streamed.measurements, whole.measurements, seed.name);
        // A streamed file keeps the NCCL events only (bounded memory); the whole-file import also draws the compute
        // kernels, which can move its origin earlier. The NCCL and CPU spans agree on their lanes at absolute times.
        assert.deepEqual(ncclSpans(streamed), ncclSpans(whole), seed.name);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

/** The spans of an import other than compute kernels, by lane label, at absolute times (µs, to 1 ns). */
function ncclSpans(result: { trace?: Trace }): unknown[] {
  const trace = result.trace!;
  const origin = Number(trace.metadata.facts?.originUs ?? 0);
  const at = (us: number): number => Math.round((us + origin) * 1000) / 1000;
  return trace.spans
    .filter((s) => s.phase !== 'compute')
    .map((s) => ({ ...s, lane: trace.lanes[s.lane].label, startUs: at(s.startUs), endUs: at(s.endUs) }));
}

test('broken streamed traces are rejected with a line and column', () => {
  const cases = [
    '{"traceEvents":[{"ph":"X",}]}',
    '{"traceEvents":[{"ph":"X"}',
    'hello',
    '{"other":[1,2]}',
    '{"traceEvents":[{"name":"a\nb"}]}',
  ];
  for (const text of cases) {
    assert.throws(
      () => scanInChunks(text, [3]),
      (e: unknown) => e instanceof MeasurementParseError && e.line >= 1 && e.column >= 1,
      text,
    );
  }
});

/** Writes a Kineto-like trace of about `totalBytes`: mostly compute kernels, one NCCL AllReduce in fifty. */
function writeSyntheticTrace(path: string, totalBytes: number): number {
  const fd = openSync(path, 'w');
  let written = writeSync(fd, '{"distributedInfo":{"rank":0,"world_size":8},"traceEvents":[\n');
  let nccl = 0;
  const parts: string[] = [];
  for (let i = 0; written < totalBytes; i++) {
    const isNccl = i % 50 === 0;
    if (isNccl) nccl++;
    const name = isNccl
      ? 'ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)'
      : 'void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int, T2, T3)';
    const args = isNccl
      ? '"In msg nelems":1048576,"Out msg nelems":1048576,"dtype":"Float","Group size":8,"stream":7'
      : '"stream":7,"correlation":1,"grid":[128,1,1],"block":[256,1,1],"registers per thread":32';
    parts.push(
      `{"ph":"X","cat":"kernel","name":"${name}","pid":0,"tid":7,"ts":${1000 + i * 3},"dur":2.5,"args":{${args}}},\n`,
    );
    if (parts.length === 4096) {
      written += writeSync(fd, parts.join(''));
      parts.length = 0;
    }
  }
  writeSync(fd, `${parts.join('')}{"ph":"i","name":"end","ts":0}\n]}\n`);
  closeSync(fd);
  return nccl;
}

function runChild(
  path: string,
  mode: 'stream' | 'file',
): { ok: boolean; message?: string; spans?: number; maxRssBytes: number; ms: number; warnings?: string[] } {
  const child = spawnSync(process.execPath, ['--import', 'tsx', CHILD, path, mode], {
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(child.status, 0, child.stderr);
  return JSON.parse(child.stdout.trim().split('\n').pop()!);
}

test('a 128 MB trace streams with bounded memory; past the whole-file limit import streams instead of reading it whole', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-huge-'));
  try {
    const path = join(dir, 'huge.json');
    const nccl = writeSyntheticTrace(path, 128 * MiB);
    const streamed = runChild(path, 'stream');
    assert.ok(streamed.ok, streamed.message);
    assert.equal(streamed.spans, nccl);
    console.log(
      `128 MB trace streamed in ${streamed.ms} ms, peak RSS ${(streamed.maxRssBytes / MiB).toFixed(0)} MB, ${nccl} NCCL kernels`,
    );
    // Reading it whole would hold the 128 MB text, a string of it and its parsed events; streaming stays near Node's own footprint.
    assert.ok(streamed.maxRssBytes < MAX_RSS_BYTES, `peak RSS ${(streamed.maxRssBytes / MiB).toFixed(0)} MB`);

    // A sparse file just over the limit (a valid head, a hole, a valid tail) goes down the streaming path.
    const sparse = join(dir, 'over-limit.json');
    const fd = openSync(sparse, 'w');
    writeSync(
      fd,
      '{"traceEvents":[{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce_RING_LL_Sum_float(","ts":1,"dur":2,"args":{"In msg nelems":256,"dtype":"Float"}}',
    );
    writeSync(fd, ']}\n', WHOLE_FILE_LIMIT_BYTES + 16 * MiB);
    closeSync(fd);
    const over = runChild(sparse, 'file');
    assert.ok(over.ok, over.message);
    assert.equal(over.spans, 1);
    assert.match(over.warnings?.[0] ?? '', /streamed/);
    assert.ok(
      over.maxRssBytes < MAX_RSS_BYTES,
      `peak RSS ${(over.maxRssBytes / MiB).toFixed(0)} MB for a ${((WHOLE_FILE_LIMIT_BYTES + 16 * MiB) / MiB).toFixed(0)} MB file`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a 2 GB file that is not a plain trace is refused at once, with its size and a way forward', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-2g-'));
  try {
    const log = join(dir, 'huge.log');
    writeFileSync(log, 'NCCL INFO\n');
    truncateSync(log, Math.floor(2.1 * 1024 ** 3));
    const started = Date.now();
    assert.throws(
      () => importMeasurementFile(log),
      (e: unknown) =>
        e instanceof MeasurementFileError &&
        /2\.1 GB, larger than the 256 MB read whole/.test(e.message) &&
        /split/i.test(e.message),
    );
    const gz = join(dir, 'huge.json.gz');
    writeFileSync(gz, gzipSync('{"traceEvents":[]}'));
    truncateSync(gz, Math.floor(2.1 * 1024 ** 3));
    assert.throws(
      () => importMeasurementFile(gz),
      (e: unknown) => e instanceof MeasurementFileError && /gunzip -k/.test(e.message),
    );
    // The CLI turns the refusal into a one-line usage error (exit code 2), not a stack trace.
    await assert.rejects(
      importCommand.run([log], { stdout: () => undefined, stderr: () => undefined }),
      (e: unknown) => e instanceof UsageError && /2\.1 GB/.test((e as Error).message),
    );
    assert.ok(Date.now() - started < 2000, 'refusing looks only at the size and the first bytes');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a small .gz that inflates past the limit (a zip bomb) is refused, not inflated', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-bomb-'));
  try {
    const path = join(dir, 'bomb.json.gz');
    // Gzip members concatenate: 257 copies of one compressed MiB of spaces make a 257 MiB stream from about 260 KB.
    const member = gzipSync(Buffer.alloc(MiB, 0x20));
    writeFileSync(path, Buffer.concat(Array.from({ length: WHOLE_FILE_LIMIT_BYTES / MiB + 1 }, () => member)));
    assert.throws(
      () => importMeasurementFile(path),
      (e: unknown) => e instanceof MeasurementFileError && /inflates past that limit/.test(e.message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a streamed import tells its caller how many bytes it has scanned, up to the whole file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-stream-progress-'));
  try {
    const path = join(dir, 'trace.json');
    // Three 4 MiB pieces and a part.
    writeSyntheticTrace(path, 13 * 2 ** 20);
    const sizeBytes = statSync(path).size;
    const reports: [number, 1 | 2][] = [];
    const result = importLargeTrace(path, (readBytes, pass) => reports.push([readBytes, pass]));
    assert.ok(result.measurements.length > 0);
    assert.ok(reports.length >= 4, `${reports.length} reports`);
    assert.ok(
      reports.every(([, pass]) => pass === 1),
      'no second pass: the trace has no nccl: annotations',
    );
    reports.forEach(([read], i) => assert.ok(read > (reports[i - 1]?.[0] ?? 0), `report ${i} counts up`));
    assert.equal(reports.at(-1)?.[0], sizeBytes);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
