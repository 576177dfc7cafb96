// Importing traces too large to read whole. A plain (uncompressed) Chrome/Kineto trace over the whole-file limit
// is streamed: the file is read in 4 MiB pieces, each event is parsed on its own, and only the events the Kineto
// importer uses (NCCL kernels, record_param_comms, nccl: annotations, and the launches those annotations need) are
// kept, trimmed to the fields it reads. Memory is bounded by the NCCL events, not the file. Anything else that
// large (a log, a gzipped trace) is refused with its size and a way forward.
import { closeSync, openSync, readSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { parseKineto } from '../import/kineto';
import { MeasurementParseError, type ImportResult } from '../import/model';
import { TraceEventScanner } from './trace-event-scanner';
import { INPUT_LIMITS_BYTES } from '../files/input-limits';

/** Files up to this size are read whole by the ordinary importers (a V8 string stops near 512 MiB). */
export const WHOLE_FILE_LIMIT_BYTES = INPUT_LIMITS_BYTES.measurement;
/** Kept NCCL events beyond this many are dropped with a warning, so even an all-NCCL trace stays bounded. */
export const MAX_KEPT_EVENTS = 400_000;
const CHUNK_BYTES = 4 * 1024 * 1024;

export function formatSize(bytes: number): string {
  return bytes >= 1024 ** 3 ? `${(bytes / 1024 ** 3).toFixed(1)} GB` : `${Math.round(bytes / 1024 ** 2)} MB`;
}

/** The refusal for a file too large to read whole that cannot be streamed either. */
export function tooLargeMessage(path: string, sizeBytes: number, why: string): string {
  return `'${path}' is ${formatSize(sizeBytes)}, larger than the ${formatSize(WHOLE_FILE_LIMIT_BYTES)} read whole; ${why}`;
}

/** Reads the first bytes of a file, to decide what it is without reading it all. */
export function sniff(path: string, bytes = 64): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const buffer = new Uint8Array(bytes);
    const n = readSync(fd, buffer, 0, bytes, 0);
    return buffer.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** Whether the text starts like JSON (after whitespace and a byte-order mark). */
export function startsLikeJson(head: Uint8Array): boolean {
  return /^\uFEFF?\s*[[{]/.test(new TextDecoder().decode(head));
}

type Event = Record<string, unknown>;
const isRecord = (v: unknown): v is Event => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The arguments the Kineto importer reads; the rest (grid, block, occupancy…) is dropped on the way in. */
const KEPT_ARGS = [
  'External id',
  'correlation',
  'stream',
  'dtype',
  'In msg nelems',
  'Out msg nelems',
  'Group size',
  'Collective name',
  'Input Dims',
  'Input type',
];

function trimmed(e: Event): Event {
  const args: Event = {};
  if (isRecord(e.args)) for (const key of KEPT_ARGS) if (key in e.args) args[key] = e.args[key];
  return { ph: e.ph, cat: e.cat, name: e.name, pid: e.pid, tid: e.tid, ts: e.ts, dur: e.dur, args };
}

function isNcclEvent(e: Event): boolean {
  const name = typeof e.name === 'string' ? e.name : '';
  if (name === 'record_param_comms') return true;
  if (e.cat === 'kernel') return name.startsWith('nccl');
  return e.cat === 'user_annotation' && name.startsWith('nccl:');
}

/** Streams a file's events through `onEvent`; returns the small top-level values (distributedInfo…). */
function scanFile(
  path: string,
  wants: (text: string) => boolean,
  onEvent: (e: Event) => void,
  onRead?: (readBytes: number) => void,
): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  const scanner = new TraceEventScanner(
    {
      wants,
      event: (v) => {
        if (isRecord(v)) onEvent(v);
      },
      metadata: (k, v) => {
        metadata[k] = v;
      },
    },
    path,
  );
  const decoder = new StringDecoder('utf8');
  const buffer = Buffer.alloc(CHUNK_BYTES);
  const fd = openSync(path, 'r');
  let readBytes = 0;
  try {
    for (;;) {
      const n = readSync(fd, buffer, 0, CHUNK_BYTES, null);
      if (n === 0) break;
      scanner.push(decoder.write(buffer.subarray(0, n)));
      readBytes += n;
      onRead?.(readBytes);
    }
    scanner.push(decoder.end());
    scanner.end();
  } finally {
    closeSync(fd);
  }
  return metadata;
}

/**
 * Imports a Kineto/Chrome trace file of any size by streaming it. Compute kernels are not kept here (memory stays
 * bounded; the whole-file import, up to its limit, draws them). The first pass keeps the NCCL events; a second
 * pass runs only when some NCCL kernels have no size of their own and the trace has `nccl:` annotations, to pick
 * up the launches that tie the two together.
 */
export function importLargeTrace(
  path: string,
  /** Bytes scanned so far in the current pass; the second pass, when there is one, starts again from 0. */
  onRead?: (readBytes: number, pass: 1 | 2) => void,
): ImportResult {
  const kept: Event[] = [];
  let dropped = 0;
  // Most events are compute kernels and CPU ops; a substring test skips them without parsing.
  const metadata = scanFile(
    path,
    (text) => text.includes('nccl') || text.includes('record_param_comms'),
    (e) => {
      if (!isNcclEvent(e)) return;
      if (kept.length < MAX_KEPT_EVENTS) kept.push(trimmed(e));
      else dropped++;
    },
    onRead && ((readBytes) => onRead(readBytes, 1)),
  );
  const hasAnnotations = kept.some((e) => e.cat === 'user_annotation');
  const unsized = new Set(
    kept
      .filter((e) => e.cat === 'kernel' && isRecord(e.args) && !('In msg nelems' in e.args))
      .map((e) => (e.args as Event).correlation),
  );
  if (hasAnnotations && unsized.size > 0) {
    scanFile(
      path,
      (text) => text.includes('cuda_'),
      (e) => {
        if (
          (e.cat === 'cuda_runtime' || e.cat === 'cuda_driver') &&
          isRecord(e.args) &&
          unsized.has(e.args.correlation) &&
          kept.length < MAX_KEPT_EVENTS
        )
          kept.push(trimmed(e));
      },
      onRead && ((readBytes) => onRead(readBytes, 2)),
    );
  }
  // deviceProperties names the GPUs the trace ran on; the whole-file import reads it too.
  const doc = {
    ...(isRecord(metadata.distributedInfo) ? { distributedInfo: metadata.distributedInfo } : {}),
    ...(Array.isArray(metadata.deviceProperties) ? { deviceProperties: metadata.deviceProperties } : {}),
    traceEvents: kept,
  };
  let result: ReturnType<typeof parseKineto>;
  try {
    result = parseKineto(JSON.stringify(doc), path);
  } catch (error) {
    if (error instanceof MeasurementParseError)
      throw new MeasurementParseError(error.message.replace(/^.*?\d+:\d+: /, ''), 1, 1, path);
    throw error;
  }
  const warnings = [
    `streamed: the file is over ${formatSize(WHOLE_FILE_LIMIT_BYTES)}, so only its NCCL events were kept`,
    ...result.warnings,
  ];
  if (dropped > 0)
    warnings.push(
      `only the first ${MAX_KEPT_EVENTS.toLocaleString('en-US')} NCCL events were imported; ${dropped.toLocaleString('en-US')} more were skipped (record fewer profiler steps for the rest)`,
    );
  return { kind: 'kineto', measurements: result.measurements, trace: result.trace, warnings };
}

/** What to do with a file over the whole-file limit: stream it (a plain JSON trace), or refuse with this message. */
export function largeFilePlan(path: string, sizeBytes: number): { readonly refuse?: string } {
  const head = sniff(path);
  if (head.length > 2 && head[0] === 0x1f && head[1] === 0x8b) {
    return {
      refuse: tooLargeMessage(
        path,
        sizeBytes,
        'a gzipped trace cannot be streamed. Inflate it (`gunzip -k`) and import the .json, which is streamed, or record fewer profiler steps.',
      ),
    };
  }
  if (!startsLikeJson(head)) {
    return {
      refuse: tooLargeMessage(
        path,
        sizeBytes,
        'only Chrome/Kineto traces that large are streamed. Split the file (for example `split -l 1000000`) or keep the runs you need, and import those.',
      ),
    };
  }
  return {};
}
