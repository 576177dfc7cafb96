// Reads the calibration JSON format (one published all_reduce_perf run per file; see
// ../shared/calibration/README.md) and guesses a system from its hardware description. The guess is only a
// fallback: `compare` prefers calibration/systems/<basename>.json or --system.
import {
  asBytes,
  asGBps,
  asMicros,
  gpuFromDescription,
  gpusPerProcessFromDataset,
  type IntraNodeFabric,
  type SystemSpec,
} from '../../engine/index';
import { lineOfKey, parseJsonText } from './json-text';
import { MeasurementParseError, normalizeCollective, type Measurement, type MeasurementRow } from './model';

export function looksLikeCalibrationJson(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as { rows?: unknown }).rows) &&
    'total_ranks' in value
  );
}

const numOrUndef = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function parseCalibrationJson(
  text: string,
  fileName?: string,
): { measurements: Measurement[]; warnings: string[] } {
  const doc = parseJsonText(text, fileName) as Record<string, unknown>;
  if (!looksLikeCalibrationJson(doc))
    throw new MeasurementParseError('not a calibration JSON file: needs "rows" and "total_ranks"', 1, 1, fileName);
  const ranks = numOrUndef(doc.total_ranks);
  if (!ranks || ranks < 1)
    throw new MeasurementParseError(
      '"total_ranks" must be a positive number',
      lineOfKey(text, 'total_ranks'),
      1,
      fileName,
    );
  const warnings: string[] = [];
  const rows: MeasurementRow[] = [];
  (doc.rows as Record<string, unknown>[]).forEach((r, i) => {
    const bytes = numOrUndef(r.bytes);
    const out = {
      timeUs: numOrUndef(r.time_us),
      algbwGBps: numOrUndef(r.algbw_GBps),
      busbwGBps: numOrUndef(r.busbw_GBps),
      wrong: numOrUndef(r.wrong),
    };
    const inp = {
      timeUs: numOrUndef(r.inplace_time_us),
      algbwGBps: numOrUndef(r.inplace_algbw_GBps),
      busbwGBps: numOrUndef(r.inplace_busbw_GBps),
      wrong: numOrUndef(r.inplace_wrong),
    };
    const main = out.timeUs !== undefined ? out : inp;
    if (bytes === undefined || main.timeUs === undefined) {
      warnings.push(`row ${i + 1} has no bytes or time; skipped`);
      return;
    }
    const algbw = asGBps(main.algbwGBps ?? (main.timeUs > 0 ? bytes / (main.timeUs * 1e3) : 0));
    rows.push({
      bytes: asBytes(bytes),
      timeUs: asMicros(main.timeUs),
      algbwGBps: algbw,
      busbwGBps: asGBps(main.busbwGBps ?? (algbw * 2 * (ranks - 1)) / ranks),
      ...(main.wrong !== undefined ? { wrong: main.wrong } : {}),
      ...(numOrUndef(r.count) !== undefined ? { count: numOrUndef(r.count) } : {}),
      ...(main === out && inp.timeUs !== undefined
        ? {
            inPlace: {
              timeUs: asMicros(inp.timeUs),
              algbwGBps: asGBps(inp.algbwGBps ?? 0),
              busbwGBps: asGBps(inp.busbwGBps ?? 0),
              ...(inp.wrong !== undefined ? { wrong: inp.wrong } : {}),
            },
          }
        : {}),
      line: lineOfKey(text, 'bytes', nthIndex(text, '"bytes"', i)),
    });
  });
  const guess = guessSystem(doc, ranks, warnings);
  const measurement: Measurement = {
    kind: 'calibration-json',
    collective: normalizeCollective(String(doc.collective ?? 'allreduce')),
    ranks,
    rows,
    ...(guess ? { system: guess } : {}),
    meta: {
      gpu: String(doc.gpu ?? ''),
      nodes: numOrUndef(doc.nodes) ?? 1,
      gpusPerNode: numOrUndef(doc.gpus_per_node) ?? ranks,
      suspect: doc.suspect === true,
      ncclVersion: typeof doc.nccl_version === 'string' ? doc.nccl_version : null,
      source: String(doc.source ?? ''),
      ncclAlgo:
        typeof (doc.env as Record<string, unknown> | undefined)?.NCCL_ALGO === 'string'
          ? String((doc.env as Record<string, string>).NCCL_ALGO)
          : null,
      systemGuessed: guess !== undefined,
      ...gpusPerProcessSpec(doc, numOrUndef(doc.gpus_per_node) ?? ranks),
    },
  };
  return { measurements: [measurement], warnings };
}

function nthIndex(text: string, needle: string, n: number): number {
  let at = -1;
  for (let i = 0; i <= n; i++) {
    at = text.indexOf(needle, at + 1);
    if (at < 0) return 0;
  }
  return at;
}

/** The run's process layout where its command records it, so a guessed system pays the launch cost it paid. */
function gpusPerProcessSpec(doc: Record<string, unknown>, gpusPerNode: number): { gpusPerProcess?: number } {
  const gpusPerProcess = gpusPerProcessFromDataset(doc, gpusPerNode);
  return gpusPerProcess !== undefined && gpusPerProcess <= gpusPerNode ? { gpusPerProcess } : {};
}

/** A best-effort system from the file's words: GPU model, nodes, fabric and NICs. */
function guessSystem(doc: Record<string, unknown>, ranks: number, warnings: string[]): SystemSpec | undefined {
  const gpu = gpuFromDescription(String(doc.gpu ?? ''));
  if (!gpu) {
    warnings.push(`GPU "${String(doc.gpu)}" is not in the catalogue; pass --system`);
    return undefined;
  }
  const nodes = numOrUndef(doc.nodes) ?? 1;
  const gpusPerNode = numOrUndef(doc.gpus_per_node) ?? Math.round(ranks / nodes);
  const interconnect = String(doc.interconnect ?? '').toLowerCase();
  const noNvlink = /no nvlink/.test(interconnect);
  const intraNode: IntraNodeFabric = noNvlink
    ? 'pcie'
    : /nvswitch|nvlink switch/.test(interconnect)
      ? 'nvswitch'
      : /bridge/.test(interconnect)
        ? 'nvlink-bridge'
        : /nvlink/.test(interconnect)
          ? 'nvlink-mesh'
          : 'pcie';
  const nicText = String(doc.nic ?? '');
  const nicGbps = /(\d+)\s*Gb\/s/.exec(nicText);
  const nicCount = /(\d+)\s*x\s/i.exec(nicText);
  return {
    name: `guessed from ${String(doc.gpu)}`,
    gpu,
    nodes,
    gpusPerNode,
    ...gpusPerProcessSpec(doc, gpusPerNode),
    intraNode,
    ...(intraNode === 'pcie' &&
    /no.?p2p|p2p (?:is )?(?:disabled|off)/.test(`${interconnect} ${String(doc.description ?? '').toLowerCase()}`)
      ? { p2p: false }
      : {}),
    ...(nodes > 1
      ? { nic: { gbps: nicGbps ? Number(nicGbps[1]) : 400, perNode: nicCount ? Number(nicCount[1]) : gpusPerNode } }
      : {}),
  };
}
