// Imports PyTorch profiler (Kineto) traces: NCCL kernels per rank become trace spans, with the algorithm,
// protocol, reduction op and dtype read from the kernel name (NCCL 2.10 to 2.27 naming, and RCCL's Generic
// kernel) and the message size from the kernel's own collective args or the `record_param_comms` op that
// launched it. Takes JSON text; gzipped files are inflated by the caller.
import { TraceBuilder, type Trace, asBytes, asMicros } from '../../engine/index';
import { parseJsonText } from './json-text';
import { MeasurementParseError, normalizeCollective, type CollectiveName, type Measurement } from './model';
import { dropImplausible, droppedWarning } from './corrupt-events';
import { kinetoFlows } from './kineto-flows';
import {
  bytesFromArgs,
  bytesFromEnclosingAnnotation,
  indexAnnotations,
  num,
  rankCount,
  str,
  type KinetoEvent,
  type NcclKernel,
} from './kineto-events';
import { toMeasurements } from './kineto-measurements';

export type { NcclKernel } from './kineto-events';

const KERNEL =
  /^nccl(?:Dev)?Kernel_([A-Za-z]+?)(?:_(RING|TREE|COLLNET_DIRECT|COLLNET_CHAIN|COLLNET|NVLS_TREE|NVLS|PAT))?(?:_(LL128|LL|SIMPLE))?(?:_(Sum|Prod|Min|Max|Avg|PreMulSum|SumPostDiv))?(?:_(\w+?))?\(/;

/** Splits an NCCL kernel name into its parts; RCCL's ncclDevKernel_Generic names none of them. */
export function parseNcclKernelName(
  name: string,
): { collective: CollectiveName; algorithm?: string; protocol?: string; op?: string; dtype?: string } | undefined {
  const m = KERNEL.exec(name);
  if (!m) return undefined;
  if (m[1] === 'Generic') return { collective: 'unknown' };
  return {
    collective: normalizeCollective(m[1]),
    algorithm: m[2]?.toLowerCase(),
    protocol: m[3] === 'SIMPLE' ? 'Simple' : m[3],
    op: m[4]?.toLowerCase(),
    dtype: m[5],
  };
}

export function looksLikeKineto(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Array.isArray((value as { traceEvents?: unknown }).traceEvents);
}

/** Takes the JSON text, or the already parsed document (so a caller that sniffed the format parses only once). */
export function parseKineto(
  source: string | object,
  fileName?: string,
): { measurements: Measurement[]; trace: Trace; kernels: NcclKernel[]; warnings: string[] } {
  const doc = typeof source === 'string' ? parseJsonText(source, fileName) : source;
  if (!looksLikeKineto(doc))
    throw new MeasurementParseError('not a PyTorch profiler trace: no "traceEvents" array', 1, 1, fileName);
  const root = doc as { traceEvents: KinetoEvent[]; distributedInfo?: Record<string, unknown> };
  const info = root.distributedInfo ?? {};
  const rank = num(info.rank) ?? 0;
  const worldSize = rankCount(info.world_size) ?? 1;
  const warnings: string[] = [];
  const events = root.traceEvents.filter((e): e is KinetoEvent => typeof e === 'object' && e !== null);
  const paramComms = new Map<number, Record<string, unknown>>();
  const cpuComms: KinetoEvent[] = [];
  const launches = new Map<number, KinetoEvent>();
  const annotations: KinetoEvent[] = [];
  for (const e of events) {
    const args = e.args ?? {};
    if (e.name === 'record_param_comms') {
      const id = num(args['External id']);
      if (id !== undefined) paramComms.set(id, args);
      if (num(e.ts) !== undefined) cpuComms.push(e);
    } else if (e.cat === 'cuda_runtime' || e.cat === 'cuda_driver') {
      const corr = num(args.correlation);
      if (corr !== undefined) launches.set(corr, e);
    } else if (e.cat === 'user_annotation' && typeof e.name === 'string' && e.name.startsWith('nccl:'))
      annotations.push(e);
  }
  const annotationIndex = indexAnnotations(annotations);
  let kernels: NcclKernel[] = [];
  const computeKernels: ComputeKernel[] = [];
  let corrupt = 0;
  for (const e of events) {
    if (e.cat !== 'kernel' || typeof e.name !== 'string') continue;
    const parsed = parseNcclKernelName(e.name);
    if (!parsed) {
      // Compute kernels (GEMMs, elementwise, optimizer) are what the collectives overlap with: drawn on their stream.
      // A time that is missing, not a number or negative is kept as NaN here, so the plausibility filter below
      // drops it and counts it with the rest, instead of it vanishing unsaid (or being drawn as 0 µs).
      computeKernels.push({
        rank,
        stream: String(num(e.args?.stream) ?? e.tid ?? 0),
        name: e.name,
        startUs: num(e.ts) ?? NaN,
        durationUs: e.dur === undefined ? 0 : (num(e.dur) ?? NaN),
      });
      continue;
    }
    // Times must be finite numbers: a corrupt event is counted and skipped rather than drawn at NaN or backwards.
    const startUs = num(e.ts);
    if (startUs === undefined || (e.dur !== undefined && num(e.dur) === undefined)) {
      corrupt++;
      continue;
    }
    const args = e.args ?? {};
    const named = str(args['Collective name']);
    const comms = paramComms.get(num(args['External id']) ?? NaN);
    const collective =
      parsed.collective !== 'unknown'
        ? parsed.collective
        : normalizeCollective(named ?? str(comms?.['Collective name']) ?? '');
    let bytes = bytesFromArgs(args, collective) ?? (comms ? bytesFromArgs(comms, collective) : undefined);
    if (bytes === undefined)
      bytes = bytesFromEnclosingAnnotation(launches.get(num(args.correlation) ?? NaN), annotationIndex);
    kernels.push({
      rank,
      stream: String(num(args.stream) ?? e.tid ?? 0),
      collective,
      algorithm: parsed.algorithm,
      protocol: parsed.protocol,
      op: parsed.op,
      dtype: parsed.dtype ?? str(args.dtype),
      bytes,
      groupSize: rankCount(args['Group size']) ?? rankCount(comms?.['Group size']),
      startUs,
      durationUs: Math.max(0, num(e.dur) ?? 0),
      name: e.name,
    });
  }
  const plausible = dropImplausible(kernels);
  kernels = plausible.kept;
  corrupt += plausible.dropped;
  if (kernels.length === 0 && corrupt === 0) warnings.push('the trace holds no NCCL kernels (only CPU-side events?)');
  const unsized = kernels.filter((k) => k.bytes === undefined).length;
  if (unsized > 0)
    warnings.push(
      `${unsized} of ${kernels.length} NCCL kernels have no size (no collective args or record_param_comms)`,
    );
  const cpu = dropImplausible(
    cpuComms.map((e) => {
      const args = e.args ?? {};
      const collective = normalizeCollective(str(args['Collective name']) ?? '');
      return {
        rank,
        collective,
        bytes: bytesFromArgs(args, collective),
        startUs: num(e.ts) ?? NaN,
        durationUs: e.dur === undefined ? 0 : (num(e.dur) ?? NaN),
      };
    }),
  );
  const cpuOps = cpu.kept;
  corrupt += cpu.dropped;
  if (corrupt > 0) warnings.push(droppedWarning(corrupt, 'NCCL events'));
  // The profiler records the devices it saw (deviceProperties): the hardware the measurement ran on, which a
  // comparison must use or say it did not.
  const gpuNames = deviceNames((doc as { deviceProperties?: unknown }).deviceProperties);
  const measurements = toMeasurements(kernels, worldSize, info).map((m) =>
    gpuNames.length > 0 ? { ...m, meta: { ...m.meta, gpuNames } } : m,
  );
  // Compute kernels pass the same plausibility window: one at 1e22 µs would stretch the axis over nothing.
  const compute = dropImplausible(computeKernels);
  if (compute.dropped > 0) warnings.push(droppedWarning(compute.dropped, 'compute kernels'));
  const spans = toTrace(kernels, cpuOps, compute.kept, worldSize, fileName);
  // The profiler's launch → kernel flow events become arrows where both ends are drawn.
  const flows = kinetoFlows(events, spans, Number(spans.metadata.facts?.originUs ?? 0));
  const trace = flows.length > 0 ? { ...spans, flows } : spans;
  const withDevices =
    gpuNames.length > 0
      ? {
          ...trace,
          metadata: { ...trace.metadata, facts: { ...(trace.metadata.facts ?? {}), gpus: gpuNames.join(', ') } },
        }
      : trace;
  return { measurements, trace: withDevices, kernels, warnings };
}

/** Distinct device names of a Kineto trace's deviceProperties, in their order. */
function deviceNames(properties: unknown): string[] {
  if (!Array.isArray(properties)) return [];
  const names = properties
    .map((p) =>
      typeof p === 'object' && p !== null && typeof (p as { name?: unknown }).name === 'string'
        ? (p as { name: string }).name.trim()
        : '',
    )
    .filter(Boolean);
  return [...new Set(names)];
}

interface CpuCommsOp {
  readonly rank: number;
  readonly collective: CollectiveName;
  readonly bytes?: number;
  readonly startUs: number;
  readonly durationUs: number;
}

/** A kernel that is not NCCL's: compute the collectives overlap with, or wait behind. */
interface ComputeKernel {
  readonly rank: number;
  readonly stream: string;
  readonly name: string;
  readonly startUs: number;
  readonly durationUs: number;
}

/**
 * NCCL and compute kernels on each rank's GPU stream lanes (the lane of a stream holds both, as Nsight draws it);
 * the CPU-side record_param_comms ops on a CPU lane per rank.
 */
function toTrace(
  kernels: NcclKernel[],
  cpuOps: CpuCommsOp[],
  computeKernels: readonly ComputeKernel[],
  worldSize: number,
  fileName?: string,
): Trace {
  // A loop, not Math.min(...spread), which overflows the stack on traces with a few hundred thousand kernels.
  let origin = Infinity;
  for (const k of kernels) origin = Math.min(origin, k.startUs);
  for (const c of cpuOps) origin = Math.min(origin, c.startUs);
  // Compute kernels count too: merging ranks aligns them by the absolute origin recorded in the facts.
  for (const k of computeKernels) origin = Math.min(origin, k.startUs);
  if (origin === Infinity) origin = 0;
  // The absolute origin lets traces of several ranks (one file each) be merged onto one time axis.
  const title = fileName ? `Kineto ${fileName.split(/[\\/]/).pop()}` : 'Kineto trace';
  const builder = new TraceBuilder({ origin: 'imported:kineto', title, ranks: worldSize, facts: { originUs: origin } });
  // Timestamps far apart (a corrupt event at 1e308 µs) overflow when made relative; such events cannot be drawn.
  const drawable = (startUs: number, durationUs: number): boolean => Number.isFinite(startUs - origin + durationUs);
  for (const c of cpuOps) {
    if (!drawable(c.startUs, c.durationUs)) continue;
    const lane = builder.lane('rank', `rank ${c.rank} · CPU`, { rank: c.rank });
    builder.add({
      lane,
      rank: c.rank,
      phase: 'other',
      name: `record_param_comms ${c.collective}`,
      step: -1,
      channel: 0,
      chunk: 0,
      bytes: asBytes(c.bytes ?? 0),
      links: [],
      startUs: asMicros(c.startUs - origin),
      endUs: asMicros(c.startUs - origin + c.durationUs),
    });
  }
  for (const k of computeKernels) {
    if (!drawable(k.startUs, k.durationUs)) continue;
    const lane = builder.lane('rank', `rank ${k.rank} · stream ${k.stream}`, { rank: k.rank });
    builder.add({
      lane,
      rank: k.rank,
      phase: 'compute',
      name: k.name,
      step: -1,
      channel: 0,
      chunk: -1,
      bytes: asBytes(0),
      links: [],
      startUs: asMicros(k.startUs - origin),
      endUs: asMicros(k.startUs - origin + k.durationUs),
    });
  }
  for (const k of kernels) {
    if (!drawable(k.startUs, k.durationUs)) continue;
    const lane = builder.lane('rank', `rank ${k.rank} · stream ${k.stream}`, { rank: k.rank });
    builder.add({
      lane,
      rank: k.rank,
      phase: 'collective',
      name: `${k.collective} ${k.algorithm ?? ''} ${k.protocol ?? ''}`.trim(),
      step: -1,
      channel: 0,
      chunk: 0,
      bytes: asBytes(k.bytes ?? 0),
      links: [],
      startUs: asMicros(k.startUs - origin),
      endUs: asMicros(k.startUs - origin + k.durationUs),
      args: {
        kernel: k.name,
        ...(k.algorithm ? { algorithm: k.algorithm } : {}),
        ...(k.protocol ? { protocol: k.protocol } : {}),
        ...(k.op ? { op: k.op } : {}),
        ...(k.dtype ? { dtype: k.dtype } : {}),
      },
    });
  }
  return builder.build();
}
