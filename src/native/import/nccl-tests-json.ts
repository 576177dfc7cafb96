// Parses the JSON report of newer nccl-tests (`-J/--output_file`). No real file was available, so this follows
// the writer in nccl-tests' src/util.cu loosely: a top-level object with the run's configuration and an array
// of per-size results, each with out-of-place and in-place time/algbw/busbw/#wrong. Key names are matched
// tolerantly (snake_case, camelCase, with or without units) so small schema changes across versions still read.
import { parseJsonText } from './json-text';
import { MeasurementParseError, dtypeBytes, normalizeCollective, type Measurement, type MeasurementRow } from './model';

import { asBytes, asGBps, asMicros } from '../../engine/index';
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const norm = (k: string): string => k.toLowerCase().replace(/[^a-z#]/g, '');

function pick(o: Obj, ...names: string[]): unknown {
  const wanted = names.map(norm);
  for (const [k, v] of Object.entries(o)) if (wanted.includes(norm(k))) return v;
  return undefined;
}
const num = (v: unknown): number | undefined =>
  typeof v === 'number'
    ? v
    : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))
      ? Number(v)
      : undefined;

function resultArray(doc: Obj): Obj[] | undefined {
  for (const key of ['results', 'rows', 'data', 'tests', 'measurements']) {
    const v = pick(doc, key);
    if (Array.isArray(v) && v.every(isObj) && v.some((r) => pick(r, 'size', 'bytes') !== undefined)) return v;
  }
  return undefined;
}

export function looksLikeNcclTestsJson(value: unknown): boolean {
  return isObj(value) && resultArray(value) !== undefined && !('total_ranks' in value);
}

function side(r: Obj, ...keys: string[]): Obj | undefined {
  const v = pick(r, ...keys);
  return isObj(v) ? v : undefined;
}

export function parseNcclTestsJson(
  text: string,
  fileName?: string,
): { measurements: Measurement[]; warnings: string[] } {
  const doc = parseJsonText(text, fileName);
  if (!isObj(doc)) throw new MeasurementParseError('expected a JSON object', 1, 1, fileName);
  const results = resultArray(doc);
  if (!results) throw new MeasurementParseError('no results array with "size" entries found', 1, 1, fileName);
  const config = side(doc, 'config', 'parameters', 'args') ?? doc;
  const name = String(
    pick(doc, 'collective', 'test', 'name', 'benchmark') ?? pick(config, 'collective', 'test', 'name') ?? '',
  );
  const devices = pick(doc, 'devices', 'ranks');
  const warnings: string[] = [];
  const rows: MeasurementRow[] = results.map((r, i) => {
    const out = side(r, 'out_of_place', 'outofplace', 'oop') ?? r;
    const inp = side(r, 'in_place', 'inplace', 'ip');
    const bytes = num(pick(r, 'size', 'bytes'));
    const timeUs = num(pick(out, 'time', 'time_us', 'timeUs'));
    if (bytes === undefined || timeUs === undefined)
      throw new MeasurementParseError(`result ${i + 1} lacks "size" or "time"`, 1, 1, fileName);
    const wrong = num(pick(out, 'wrong', '#wrong', 'errors'));
    const inTime = inp ? num(pick(inp, 'time', 'time_us')) : undefined;
    return {
      bytes: asBytes(bytes),
      timeUs: asMicros(timeUs),
      algbwGBps: asGBps(num(pick(out, 'algbw', 'algbw_gbps')) ?? bytes / (timeUs * 1e3)),
      busbwGBps: asGBps(num(pick(out, 'busbw', 'busbw_gbps')) ?? 0),
      count: num(pick(r, 'count')),
      dtype: String(pick(r, 'type', 'datatype', 'dtype') ?? ''),
      ...(wrong !== undefined ? { wrong } : {}),
      ...(inp && inTime !== undefined
        ? {
            inPlace: {
              timeUs: asMicros(inTime),
              algbwGBps: asGBps(num(pick(inp, 'algbw')) ?? 0),
              busbwGBps: asGBps(num(pick(inp, 'busbw')) ?? 0),
              ...(num(pick(inp, 'wrong', '#wrong')) !== undefined ? { wrong: num(pick(inp, 'wrong', '#wrong')) } : {}),
            },
          }
        : {}),
    };
  });
  let ranks = num(pick(doc, 'nranks', 'world_size', 'nRanks')) ?? (Array.isArray(devices) ? devices.length : undefined);
  if (ranks === undefined) {
    const big = rows.find(
      (r) => r.count && r.dtype && dtypeBytes(r.dtype) && r.bytes > r.count * (dtypeBytes(r.dtype) ?? 1),
    );
    ranks = big ? Math.round(big.bytes / (big.count! * dtypeBytes(big.dtype)!)) : 1;
    warnings.push('the report does not state the rank count; inferred it from the sizes');
  }
  return {
    measurements: [
      {
        kind: 'nccl-tests',
        collective: normalizeCollective(name || 'all_reduce'),
        ranks,
        rows,
        meta: { format: 'json', test: name },
      },
    ],
    warnings,
  };
}
