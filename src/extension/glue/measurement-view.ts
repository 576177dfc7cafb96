// What the editor shows about an imported measurement before any comparison: the hardware it ran on as the file
// names it (or that the file does not), what the file holds in words that match it (an init-only NCCL log is not
// "unknown (0 sizes)"), what an NCCL_DEBUG log says about topology, channels, rings, trees and tuning, and the
// rows that must be errors in the editor (#wrong > 0, failed validation, a truncated run). Pure.
import { formatBytes, asBytes } from '../../engine/index';
import {
  NCCL_LOC_BW_GBps,
  parseNcclLogFacts,
  type ImportResult,
  type Measurement,
  type NcclLogFacts,
  type TopologyLink,
} from '../../native/import/index';
import { l10n } from './l10n';

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
  const where = nodes && nodes > 1 ? l10n.t(' on {0} nodes', nodes) : nodes === 1 ? l10n.t(' on 1 node') : '';
  const measuredOn = names.length > 0 ? `${ranks ? `${ranks} × ` : ''}${names.join(' / ')}${where}` : undefined;
  const assumptions = [...new Set(result.measurements.flatMap((m) => strings(m.meta.assumptions)))];
  const rankWords = ranks ? (ranks === 1 ? l10n.t('1 rank') : l10n.t('{0} ranks', ranks)) : '';
  const hardware =
    (measuredOn
      ? l10n.t('measured on {0} (named in the file)', measuredOn)
      : ranks || where
        ? l10n.t('the file does not name the GPUs it ran on ({0})', `${rankWords}${where}`.trim())
        : l10n.t('the file does not name the GPUs it ran on')) +
    (assumptions.length > 0 ? l10n.t('; the model assumed: {0}', assumptions.join('; ')) : '');
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
    if (m.rows.length > 0)
      parts.push(
        m.rows.length === 1
          ? l10n.t('{0}: 1 size timed', m.collective)
          : l10n.t('{0}: {1} sizes timed', m.collective, m.rows.length),
      );
    else if (m.kind === 'kineto' && typeof m.meta.kernels === 'number')
      parts.push(
        m.meta.kernels === 1
          ? l10n.t('{0}: 1 kernel without sizes', m.collective)
          : l10n.t('{0}: {1} kernels without sizes', m.collective, m.meta.kernels),
      );
  }
  for (const [collective, calls] of choicesByCollective(facts)) {
    const sizes = calls.map((c) => c.bytes);
    parts.push(
      calls.length === 1
        ? l10n.t(
            "1 {0} call with NCCL's algorithm choice, {1} to {2} (the log has no timings)",
            collective,
            formatBytes(asBytes(Math.min(...sizes))),
            formatBytes(asBytes(Math.max(...sizes))),
          )
        : l10n.t(
            "{0} {1} calls with NCCL's algorithm choice, {2} to {3} (the log has no timings)",
            calls.length,
            collective,
            formatBytes(asBytes(Math.min(...sizes))),
            formatBytes(asBytes(Math.max(...sizes))),
          ),
    );
  }
  if (parts.length > 0) return parts.join('; ');
  if (facts && facts.infoLines > 0)
    return l10n.t('NCCL initialisation only ({0} INFO lines): no collective was timed or logged', facts.infoLines);
  if (result.trace && result.trace.spans.length > 0)
    return l10n.t('{0} events without NCCL kernels (CPU side only)', result.trace.spans.length);
  return l10n.t('nothing timed');
}

function choicesByCollective(facts: NcclLogFacts | undefined): Map<string, NcclLogFacts['choices']> {
  const by = new Map<string, NcclLogFacts['choices']>();
  for (const c of facts?.choices ?? []) by.set(c.collective, [...(by.get(c.collective) ?? []), c]);
  return by;
}

function listed(items: readonly string[]): string[] {
  return items.length <= MAX_LISTED
    ? [...items]
    : [...items.slice(0, MAX_LISTED), l10n.t('… and {0} more', items.length - MAX_LISTED)];
}

/**
 * The topology dump's links, each link once, by kind and bandwidth. A SYS link at NCCL's LOC_BW (5000 GB/s) is
 * said to be a placeholder: NCCL prints it for an inter-CPU link it has no figure for (AMD x86 before 2.19), and
 * "5000 GB/s" beside a PCIe link would otherwise read as the fastest link of the machine.
 */
function topologyLinkLines(links: readonly TopologyLink[]): string[] {
  const counts = new Map<string, number>();
  const placeholders: TopologyLink[] = [];
  for (const l of links) {
    const placeholder = l.kind === 'SYS' && l.GBps === NCCL_LOC_BW_GBps;
    if (placeholder) placeholders.push(l);
    const key = placeholder ? l10n.t('SYS ({0} GB/s placeholder)', NCCL_LOC_BW_GBps) : `${l.kind} ${l.GBps} GB/s`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  if (counts.size === 0) return [];
  const ended = links.some((l) => l.from !== undefined);
  const listed = [...counts].map(([k, n]) => `${n} × ${k}`).join(', ');
  const lines = [
    ended
      ? l10n.t('links in the topology dump (one node, each link once): {0}', listed)
      : l10n.t('link lines in the topology dump: {0}', listed),
  ];
  for (const l of placeholders)
    lines.push(
      l10n.t(
        'SYS {0}: NCCL printed {1} GB/s, its placeholder (LOC_BW) for an inter-CPU link it has no figure for, not a bandwidth',
        l.from && l.to ? `${l.from} – ${l.to}` : l10n.t('link'),
        NCCL_LOC_BW_GBps,
      ),
    );
  return lines;
}

/** What an NCCL_DEBUG log says about the job: the panel shows these as they are in the log. */
export function logSections(facts: NcclLogFacts): ViewSection[] {
  const sections: ViewSection[] = [];
  const topology: string[] = [];
  if (facts.version) topology.push(`NCCL ${facts.version}`);
  if (facts.ranks !== undefined)
    topology.push(
      l10n.t('{0} ranks', facts.ranks) +
        (facts.nodes ? l10n.t(' on {0} nodes', facts.nodes) : '') +
        (facts.localRanks ? l10n.t(', {0} per node', facts.localRanks) : ''),
    );
  if (facts.hosts.length > 0) topology.push(l10n.t('hosts: {0}', listed(facts.hosts).join(', ')));
  if (facts.gpuNames.length > 0) topology.push(l10n.t('GPUs: {0}', facts.gpuNames.join(', ')));
  topology.push(...topologyLinkLines(facts.topologyLinks));
  if (facts.hasNvSwitch) topology.push(l10n.t('NVSwitch present'));
  if (facts.network)
    topology.push(
      facts.gdrdma ? l10n.t('network: {0} with GPUDirect RDMA', facts.network) : l10n.t('network: {0}', facts.network),
    );
  if (facts.nics.length > 0)
    topology.push(
      l10n.t(
        'NICs: {0}',
        facts.nics
          .map((n) => `${n.name}${n.kind ? ` (${n.kind})` : ''}${n.speedGbps ? ` ${n.speedGbps} Gb/s` : ''}`)
          .join(', '),
      ),
    );
  if (facts.transports.length > 0) topology.push(l10n.t('transports: {0}', facts.transports.join(', ')));
  const env = Object.entries(facts.env);
  if (env.length > 0) topology.push(l10n.t('environment: {0}', env.map(([k, v]) => `${k}=${v}`).join(' ')));
  if (topology.length > 0) sections.push({ title: l10n.t('Topology'), lines: topology });
  const channels: string[] = [];
  if (facts.channels !== undefined)
    channels.push(
      facts.collChannels !== undefined
        ? l10n.t('{0} channels, {1} collective channels', facts.channels, facts.collChannels)
        : l10n.t('{0} channels', facts.channels),
    );
  if (facts.nvlsChannels !== undefined || facts.nvlsAvailable !== undefined)
    channels.push(
      (facts.nvlsAvailable ? l10n.t('NVLS: available') : l10n.t('NVLS: not available')) +
        (facts.nvlsChannels !== undefined ? l10n.t(', {0} NVLS channels', facts.nvlsChannels) : ''),
    );
  for (const p of facts.graphPatterns)
    channels.push(
      l10n.t(
        'graph pattern {0}: {1} channels, {2}/{3} GB/s intra/inter, {4}',
        p.pattern,
        p.nChannels,
        p.bwIntraGBps,
        p.bwInterGBps,
        p.type,
      ),
    );
  if (channels.length > 0) sections.push({ title: l10n.t('Channels'), lines: channels });
  if (facts.rings.length > 0)
    sections.push({ title: l10n.t('Rings ({0})', facts.rings.length), lines: listed(facts.rings) });
  if (facts.trees.length > 0)
    sections.push({ title: l10n.t('Trees ({0})', facts.trees.length), lines: listed(facts.trees) });
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
    sections.push({ title: l10n.t("Tuning table (NCCL's latency and busbw per algorithm/protocol)"), lines: tuning });
  const choices = [...choicesByCollective(facts)].map(([collective, calls]) => {
    const pairs = new Map<string, number[]>();
    for (const c of calls)
      pairs.set(`${c.algorithm}/${c.protocol}`, [...(pairs.get(`${c.algorithm}/${c.protocol}`) ?? []), c.bytes]);
    const ranges = [...pairs].map(([pair, sizes]) =>
      l10n.t(
        '{0} for {1} to {2}',
        pair,
        formatBytes(asBytes(Math.min(...sizes))),
        formatBytes(asBytes(Math.max(...sizes))),
      ),
    );
    return `${collective}: ${ranges.join(', ')}`;
  });
  if (choices.length > 0) sections.push({ title: l10n.t("NCCL's choices per call"), lines: choices });
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
        message: l10n.t(
          "{0}: #wrong {1}: the {2} result failed validation (data corrupted in transit), so this size's timing is not a valid measurement.",
          formatBytes(asBytes(row.bytes)),
          wrong,
          m.collective,
        ),
      });
    }
  }
  if (m.meta.validation === 'FAILED' || (typeof m.meta.outOfBounds === 'number' && m.meta.outOfBounds > 0)) {
    errors.push({
      line: Math.max(0, lastLine - 1),
      message:
        typeof m.meta.outOfBounds === 'number' && m.meta.outOfBounds > 0
          ? l10n.t(
              'The {0} run failed validation ({1} out-of-bounds values): its results are not valid measurements.',
              m.collective,
              m.meta.outOfBounds,
            )
          : l10n.t('The {0} run failed validation: its results are not valid measurements.', m.collective),
    });
  }
  if (m.meta.truncated === true) {
    const last = m.rows[m.rows.length - 1];
    errors.push({
      line: Math.max(0, lastLine - 1),
      message: last
        ? l10n.t(
            'The {0} run is truncated: it stops after {1} without nccl-tests\' "# Avg bus bandwidth" summary, so it did not finish.',
            m.collective,
            formatBytes(asBytes(last.bytes)),
          )
        : l10n.t(
            'The {0} run is truncated: it stops without nccl-tests\' "# Avg bus bandwidth" summary, so it did not finish.',
            m.collective,
          ),
    });
  }
  return errors;
}
