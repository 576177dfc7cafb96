// One entry point for every measured format: detects what a file is and hands it to its importer. Pure (no
// node:), so the extension's webview host and the CLI share it; gzip is inflated by the caller's `gunzip`.
import { parseCalibrationJson, looksLikeCalibrationJson } from './calibration-json';
import { looksLikeDeepSpeed, parseDeepSpeed } from './deepspeed';
import { looksLikeKineto, parseKineto } from './kineto';
import { MeasurementParseError, type ImportResult, type Measurement } from './model';
import { looksLikeNcclLog, parseNcclLogFacts } from './nccl-log';
import { systemFromNcclLog } from './nccl-log-system';
import { looksLikeNcclTests, parseNcclTests } from './nccl-tests';
import { looksLikeNcclTestsJson, parseNcclTestsJson } from './nccl-tests-json';
import { nativeMeasurements, nativeTrace } from '../convert';
import { parseHarnessOutput } from '../harness-protocol';
import { decodeText } from '../files/decode-text';

export * from './model';
export { parseNcclTests } from './nccl-tests';
export { parseNcclTestsJson } from './nccl-tests-json';
export { parseNcclLogFacts, type NcclLogFacts } from './nccl-log';
export { systemFromNcclLog } from './nccl-log-system';
export { NCCL_LOC_BW_GBps, type TopologyLink } from './nccl-log-topology';
export { parseKineto, parseNcclKernelName } from './kineto';
export { parseDeepSpeed } from './deepspeed';
export { parseCalibrationJson } from './calibration-json';

export interface ImportOptions {
  readonly fileName?: string;
  /** Catalogue GPU name for logs that do not name theirs. */
  readonly gpu?: string;
  /** Inflates gzip; the CLI passes node:zlib's gunzipSync, a browser host DecompressionStream's result. */
  readonly gunzip?: (bytes: Uint8Array) => Uint8Array;
}

export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

export function importMeasurementBytes(bytes: Uint8Array, options: ImportOptions = {}): ImportResult {
  let data = bytes;
  if (isGzip(bytes)) {
    if (!options.gunzip)
      throw new MeasurementParseError('the file is gzipped and no gunzip function was given', 1, 1, options.fileName);
    data = options.gunzip(bytes);
  }
  return importMeasurementText(decodeText(data), options);
}

export function importMeasurementText(text: string, options: ImportOptions = {}): ImportResult {
  const fileName = options.fileName;
  const body = text.replace(/^\uFEFF/, '');
  if (/^\s*\{\s*"type"\s*:\s*"env"/.test(body)) {
    const run = parseHarnessOutput(body);
    if (run)
      return {
        kind: 'native',
        measurements: nativeMeasurements(run),
        trace: nativeTrace(run, fileName ?? 'native run'),
        warnings: [],
      };
  }
  if (/^\s*(?:\{|\[\s*[{\]])/.test(body)) return importJson(body, options);
  if (looksLikeDeepSpeed(body)) return withKind('deepspeed', parseDeepSpeed(body, fileName));
  const hasTable = looksLikeNcclTests(body);
  if (looksLikeNcclLog(body)) {
    const facts = parseNcclLogFacts(body);
    const tables = hasTable
      ? parseNcclTests(body, { fileName })
      : { measurements: [] as Measurement[], warnings: [] as string[] };
    const rowCount = tables.measurements.reduce((n, m) => n + m.rows.length, 0);
    const { system, assumptions } = systemFromNcclLog(facts, { gpu: options.gpu, fileName });
    // A debug log shows NCCL's decisions (graph search, tuning table, per-call choices, the comm layout); an
    // nccl-tests run with NCCL_DEBUG on only adds connection chatter around its table.
    const isLog =
      rowCount === 0 ||
      facts.graphPatterns.length > 0 ||
      Object.keys(facts.tuning).length > 0 ||
      facts.choices.length > 0 ||
      facts.nodes !== undefined;
    const kind = isLog ? 'nccl-log' : 'nccl-tests';
    const meta = {
      ...(facts.version ? { ncclVersion: facts.version } : {}),
      channels: facts.channels ?? facts.collChannels ?? 0,
      nvlsChannels: facts.nvlsChannels ?? 0,
      nvlsAvailable: facts.nvlsAvailable ?? false,
      network: facts.network ?? 'none',
      transports: facts.transports,
      rings: facts.rings.slice(0, 8),
      trees: facts.trees.slice(0, 8),
      // One line per collective and size (a sweep logs every iteration), so compare can look each size up.
      tuningChoices: [
        ...new Set(facts.choices.map((c) => `${c.collective} ${c.bytes} B: ${c.algorithm}/${c.protocol}`)),
      ].slice(0, 512),
      tuningCollectives: Object.keys(facts.tuning),
      assumptions,
    };
    const measurements: Measurement[] =
      tables.measurements.length > 0
        ? tables.measurements.map((m) => ({ ...m, kind, system, meta: { ...m.meta, ...meta } }))
        : [
            {
              kind: 'nccl-log',
              collective: facts.choices[0] ? normalizeChoice(facts.choices[0].collective) : 'unknown',
              ranks: facts.ranks ?? system.nodes * system.gpusPerNode,
              rows: [],
              system,
              meta,
            },
          ];
    return { kind, measurements, system, warnings: [...tables.warnings, ...assumptions] };
  }
  if (hasTable) return withKind('nccl-tests', parseNcclTests(body, { fileName }));
  throw new MeasurementParseError(
    'unrecognised file: expected nccl-tests output, an NCCL_DEBUG log, a Kineto trace, DeepSpeed comms_logger output or calibration JSON',
    1,
    1,
    fileName,
  );
}

function normalizeChoice(name: string): Measurement['collective'] {
  const map: Record<string, Measurement['collective']> = {
    AllReduce: 'allreduce',
    AllGather: 'allgather',
    ReduceScatter: 'reducescatter',
    Broadcast: 'broadcast',
    Reduce: 'reduce',
  };
  return map[name] ?? 'unknown';
}

function importJson(text: string, options: ImportOptions): ImportResult {
  const fileName = options.fileName;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    // Let the format parsers report the syntax error with its position.
    if (/"traceEvents"/.test(text.slice(0, 4096))) return importKineto(text, fileName);
    return withKind('calibration-json', parseCalibrationJson(text, fileName));
  }
  if (looksLikeKineto(doc)) return importKineto(doc as object, fileName);
  if (looksLikeCalibrationJson(doc)) return withKind('calibration-json', parseCalibrationJson(text, fileName));
  if (looksLikeNcclTestsJson(doc)) return withKind('nccl-tests', parseNcclTestsJson(text, fileName));
  throw new MeasurementParseError(
    'unrecognised JSON: not a Kineto trace, calibration JSON or nccl-tests -J report',
    1,
    1,
    fileName,
  );
}

function importKineto(source: string | object, fileName?: string): ImportResult {
  const result = parseKineto(source, fileName);
  return { kind: 'kineto', measurements: result.measurements, trace: result.trace, warnings: result.warnings };
}

function withKind(
  kind: ImportResult['kind'],
  parsed: { measurements: Measurement[]; warnings: string[] },
): ImportResult {
  const system = parsed.measurements.find((m) => m.system)?.system;
  return { kind, measurements: parsed.measurements, warnings: parsed.warnings, ...(system ? { system } : {}) };
}
