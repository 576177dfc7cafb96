// What the editor shows about an imported measurement before any comparison: the hardware it ran on as the file
// names it (or that the file does not), what the file holds in words that match it (an init-only NCCL log is not
// "unknown (0 sizes)"), what an NCCL_DEBUG log says about topology, channels, rings, trees and tuning, and the
// rows that must be errors in the editor (#wrong > 0, failed validation, a truncated run). Pure.
import { formatBytes, asBytes } from '../../engine/index';
import { parseNcclLogFacts, type ImportResult, type Measurement, type NcclLogFacts } from '../../native/import/index';

export interface ViewSection {
  readonly title: string;
  readonly lines: readonly string[];
}

/** An error on a line of the measurement file (0-based). */
export interface MeasurementError {
  readonly line: number;
  readonly message: string;
}

export interface MeasurementView {
  /** "16 × NVIDIA H100 80GB HBM3 on 2 nodes", when the file names its GPUs. */
  readonly measuredOn?: string;
  /** The sentence the panel shows about the hardware: what the file names, or that it names none. */
  readonly hardware: string;
  /** What the file holds: "allreduce: 31 sizes", "72 Broadcast calls with NCCL's choice, no timings", … */
  readonly contents: string;
  readonly sections: readonly ViewSection[];
  readonly errors: readonly MeasurementError[];
}

const MAX_LISTED = 8;

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

function gpuNamesOf(result: ImportResult, facts: NcclLogFacts | undefined): string[] {
  const names = [
    ...result.measurements.flatMap((m) => strings(m.meta.gpuNames)),
    ...(facts?.gpuNames ?? []),
    ...String(result.trace?.metadata.facts?.gpus ?? '')
      .split(', ')
      .filter(Boolean),
  ];
  return [...new Set(names.map((n) => n.trim()).filter(Boolean))];
}

function rankCount(result: ImportResult, facts: NcclLogFacts | undefined): number | undefined {
  // An NCCL log without timings gets its measurement's ranks from the importer's guessed system: not a fact.
  const measured = result.measurements.filter((m) => m.rows.length > 0 || m.kind !== 'nccl-log').map((m) => m.ranks);
  const ranks = Math.max(0, ...measured, facts?.ranks ?? 0, result.trace?.metadata.ranks ?? 0);
  return ranks > 0 ? ranks : undefined;
}

function nodeCount(result: ImportResult, facts: NcclLogFacts | undefined): number | undefined {
  const fromMeta = Math.max(
    0,
    ...result.measurements.map((m) => (typeof m.meta.nodes === 'number' ? m.meta.nodes : 0)),
  );
  const nodes = fromMeta || facts?.nodes || (facts && facts.hosts.length > 0 ? facts.hosts.length : 0);
  return nodes > 0 ? nodes : undefined;
}

/** The NCCL_DEBUG facts of a file whose import found NCCL INFO lines (a debug log, or nccl-tests run with them). */
export function ncclFactsOf(result: ImportResult, text: string): NcclLogFacts | undefined {
  const hasLog = result.kind === 'nccl-log' || result.measurements.some((m) => m.meta.transports !== undefined);
  return hasLog ? parseNcclLogFacts(text) : undefined;
}

export function measurementView(result: ImportResult, facts?: NcclLogFacts): MeasurementView {
  const names = gpuNamesOf(result, facts);
  const ranks = rankCount(result, facts);
  const nodes = nodeCount(result, facts);
  const where = nodes && nodes > 1 ? ` on ${nodes} nodes` : nodes === 1 ? ' on 1 node' : '';
  const measuredOn = names.length > 0 ? `${ranks ? `${ranks} × ` : ''}${names.join(' / ')}${where}` : undefined;
  const assumptions = [...new Set(result.measurements.flatMap((m) => strings(m.meta.assumptions)))];
  const hardware =
    (measuredOn
      ? `measured on ${measuredOn} (named in the file)`
      : `the file does not name the GPUs it ran on${ranks ? ` (${ranks} rank${ranks === 1 ? '' : 's'}${where})` : where ? ` (${where.trim()})` : ''}`) +
    (assumptions.length > 0 ? `; the model assumed: ${assumptions.join('; ')}` : '');
  return {
    measuredOn,
    hardware,
    contents: contentsOf(result, facts),
    sections: facts ? logSections(facts) : [],
    errors: errorsOf(result),
  };
}

function contentsOf(result: ImportResult, facts: NcclLogFacts | undefined): string {
  const parts: string[] = [];
  for (const m of result.measurements) {
    if (m.rows.length > 0) parts.push(`${m.collective}: ${m.rows.length} size${m.rows.length === 1 ? '' : 's'} timed`);
    else if (m.kind === 'kineto' && typeof m.meta.kernels === 'number')
      parts.push(`${m.collective}: ${m.meta.kernels} kernel${m.meta.kernels === 1 ? '' : 's'} without sizes`);
  }
  for (const [collective, calls] of choicesByCollective(facts)) {
    const sizes = calls.map((c) => c.bytes);
    parts.push(
      `${calls.length} ${collective} call${calls.length === 1 ? '' : 's'} with NCCL's algorithm choice, ${formatBytes(asBytes(Math.min(...sizes)))} to ${formatBytes(asBytes(Math.max(...sizes)))} (the log has no timings)`,
    );
  }
  if (parts.length > 0) return parts.join('; ');
  if (facts && facts.infoLines > 0)
    return `NCCL initialisation only (${facts.infoLines} INFO lines): no collective was timed or logged`;
  if (result.trace && result.trace.spans.length > 0)
    return `${result.trace.spans.length} events without NCCL kernels (CPU side only)`;
  return 'nothing timed';
}

function choicesByCollective(facts: NcclLogFacts | undefined): Map<string, NcclLogFacts['choices']> {
  const by = new Map<string, NcclLogFacts['choices']>();
  for (const c of facts?.choices ?? []) by.set(c.collective, [...(by.get(c.collective) ?? []), c]);
  return by;
}

function listed(items: readonly string[]): string[] {
  return items.length <= MAX_LISTED
    ? [...items]
    : [...items.slice(0, MAX_LISTED), `… and ${items.length - MAX_LISTED} more`];
}

/** What an NCCL_DEBUG log says about the job: the panel shows these as they are in the log. */
export function logSections(facts: NcclLogFacts): ViewSection[] {
  const sections: ViewSection[] = [];
  const topology: string[] = [];
  if (facts.version) topology.push(`NCCL ${facts.version}`);
  if (facts.ranks !== undefined)
    topology.push(
      `${facts.ranks} ranks${facts.nodes ? ` on ${facts.nodes} nodes` : ''}${facts.localRanks ? `, ${facts.localRanks} per node` : ''}`,
    );
  if (facts.hosts.length > 0) topology.push(`hosts: ${listed(facts.hosts).join(', ')}`);
  if (facts.gpuNames.length > 0) topology.push(`GPUs: ${facts.gpuNames.join(', ')}`);
  const links = new Map<string, number>();
  for (const l of facts.topologyLinks)
    links.set(`${l.kind} ${l.GBps} GB/s`, (links.get(`${l.kind} ${l.GBps} GB/s`) ?? 0) + 1);
  if (links.size > 0)
    topology.push(`links in the topology dump: ${[...links].map(([k, n]) => `${n} × ${k}`).join(', ')}`);
  if (facts.hasNvSwitch) topology.push('NVSwitch present');
  if (facts.network) topology.push(`network: ${facts.network}${facts.gdrdma ? ' with GPUDirect RDMA' : ''}`);
  if (facts.nics.length > 0)
    topology.push(
      `NICs: ${facts.nics.map((n) => `${n.name}${n.kind ? ` (${n.kind})` : ''}${n.speedGbps ? ` ${n.speedGbps} Gb/s` : ''}`).join(', ')}`,
    );
  if (facts.transports.length > 0) topology.push(`transports: ${facts.transports.join(', ')}`);
  const env = Object.entries(facts.env);
  if (env.length > 0) topology.push(`environment: ${env.map(([k, v]) => `${k}=${v}`).join(' ')}`);
  if (topology.length > 0) sections.push({ title: 'Topology', lines: topology });
  const channels: string[] = [];
  if (facts.channels !== undefined)
    channels.push(
      `${facts.channels} channels${facts.collChannels !== undefined ? `, ${facts.collChannels} collective channels` : ''}`,
    );
  if (facts.nvlsChannels !== undefined || facts.nvlsAvailable !== undefined)
    channels.push(
      `NVLS: ${facts.nvlsAvailable ? 'available' : 'not available'}${facts.nvlsChannels !== undefined ? `, ${facts.nvlsChannels} NVLS channels` : ''}`,
    );
  for (const p of facts.graphPatterns)
    channels.push(
      `graph pattern ${p.pattern}: ${p.nChannels} channels, ${p.bwIntraGBps}/${p.bwInterGBps} GB/s intra/inter, ${p.type}`,
    );
  if (channels.length > 0) sections.push({ title: 'Channels', lines: channels });
  if (facts.rings.length > 0) sections.push({ title: `Rings (${facts.rings.length})`, lines: listed(facts.rings) });
  if (facts.trees.length > 0) sections.push({ title: `Trees (${facts.trees.length})`, lines: listed(facts.trees) });
  const tuning: string[] = [];
  for (const [collective, table] of Object.entries(facts.tuning)) {
    const cells = Object.entries(table).flatMap(([algorithm, row]) =>
      Object.entries(row)
        .filter(([, cell]) => cell.busbwGBps > 0)
        .map(([protocol, cell]) => `${algorithm}/${protocol} ${cell.latencyUs} µs, ${cell.busbwGBps} GB/s`),
    );
    if (cells.length > 0) tuning.push(`${collective}: ${cells.join('; ')}`);
  }
  if (tuning.length > 0)
    sections.push({ title: "Tuning table (NCCL's latency and busbw per algorithm/protocol)", lines: tuning });
  const choices = [...choicesByCollective(facts)].map(([collective, calls]) => {
    const pairs = new Map<string, number[]>();
    for (const c of calls)
      pairs.set(`${c.algorithm}/${c.protocol}`, [...(pairs.get(`${c.algorithm}/${c.protocol}`) ?? []), c.bytes]);
    return `${collective}: ${[...pairs].map(([pair, sizes]) => `${pair} for ${formatBytes(asBytes(Math.min(...sizes)))} to ${formatBytes(asBytes(Math.max(...sizes)))}`).join(', ')}`;
  });
  if (choices.length > 0) sections.push({ title: "NCCL's choices per call", lines: choices });
  return sections;
}

/** Corrupted data, failed validation and a cut-off run: what must not pass as a measurement. */
function errorsOf(result: ImportResult): MeasurementError[] {
  const errors: MeasurementError[] = [];
  for (const m of result.measurements) errors.push(...measurementErrors(m));
  return errors;
}

function measurementErrors(m: Measurement): MeasurementError[] {
  const errors: MeasurementError[] = [];
  let lastLine = 0;
  for (const row of m.rows) {
    if (row.line !== undefined) lastLine = Math.max(lastLine, row.line);
    const wrong = Math.max(row.wrong ?? 0, row.inPlace?.wrong ?? 0);
    if (wrong > 0) {
      errors.push({
        line: Math.max(0, (row.line ?? 1) - 1),
        message: `${formatBytes(asBytes(row.bytes))}: #wrong ${wrong}: the ${m.collective} result failed validation (data corrupted in transit), so this size's timing is not a valid measurement.`,
      });
    }
  }
  if (m.meta.validation === 'FAILED' || (typeof m.meta.outOfBounds === 'number' && m.meta.outOfBounds > 0)) {
    errors.push({
      line: Math.max(0, lastLine - 1),
      message: `The ${m.collective} run failed validation${typeof m.meta.outOfBounds === 'number' && m.meta.outOfBounds > 0 ? ` (${m.meta.outOfBounds} out-of-bounds values)` : ''}: its results are not valid measurements.`,
    });
  }
  if (m.meta.truncated === true) {
    const last = m.rows[m.rows.length - 1];
    errors.push({
      line: Math.max(0, lastLine - 1),
      message: `The ${m.collective} run is truncated: it stops${last ? ` after ${formatBytes(asBytes(last.bytes))}` : ''} without nccl-tests' "# Avg bus bandwidth" summary, so it did not finish.`,
    });
  }
  return errors;
}
