// "Is my bandwidth normal?" in the editor: which system a measurement is judged against, and warnings on the rows
// of the measurement file whose busbw falls below what the model's uncertainty allows (native/compare.ts judges).
import {
  formatBytes,
  formatMicros,
  gpuFromDescription,
  systemFromDescription,
  type SystemSpec,
  asMicros,
  asBytes,
} from '../../engine/index';
import { l10n } from './l10n';

export interface FlaggedRow {
  readonly bytes: number;
  readonly measuredBusbwGBps: number;
  readonly expectedBusbwGBps: number;
  readonly ratio: number;
  readonly flagged: boolean;
  /** The ratio below which this row was flagged (its size band's bound, or a flat threshold). */
  readonly threshold?: number;
  /** 1-based line of the measured row in its file, when the importer knew it. */
  readonly line?: number;
  /** Measured and modelled times, µs: what a small size is judged by. */
  readonly measuredTimeUs?: number;
  readonly expectedTimeUs?: number;
}

/**
 * Below this size, or where the model's busbw is under 1 GB/s, a collective is latency-bound: its busbw is a few
 * hundredths of a GB/s and prints as "0.0 GB/s is 21 % of 0.0 GB/s". Such a row is stated in time.
 */
export const TIME_JUDGED_BELOW_BYTES = 1024 * 1024;
const TIME_JUDGED_BELOW_GBPS = 1;

function judged(r: FlaggedRow, systemLabel: string): string {
  const byTime =
    (r.bytes < TIME_JUDGED_BELOW_BYTES || r.expectedBusbwGBps < TIME_JUDGED_BELOW_GBPS) &&
    r.measuredTimeUs !== undefined &&
    r.expectedTimeUs !== undefined;
  if (byTime) {
    const slower = r.measuredTimeUs! / r.expectedTimeUs!;
    return l10n.t(
      '{0}: {1}, {2}× the {3} the model expects on {4}',
      size(r.bytes),
      formatMicros(asMicros(r.measuredTimeUs!)),
      slower.toFixed(1),
      formatMicros(asMicros(r.expectedTimeUs!)),
      systemLabel,
    );
  }
  return l10n.t(
    '{0}: busbw {1} GB/s is {2}% of the {3} GB/s the model expects on {4}',
    size(r.bytes),
    r.measuredBusbwGBps.toFixed(1),
    Math.round(r.ratio * 100),
    r.expectedBusbwGBps.toFixed(1),
    systemLabel,
  );
}

/** A flagged size as a warning on its row of the measurement file (0-based line). */
export interface RowWarning {
  readonly line: number;
  readonly message: string;
}

const size = (bytes: number) => formatBytes(asBytes(bytes));

/**
 * What a measurement is judged against: a system the log describes, one built from the GPU the file names, or the
 * selected system standing in for hardware the file never names.
 */
export type ComparisonBasis = 'log' | 'file-gpu' | 'assumed';

/** The system a verdict is stated against, and how the comparison came by it. */
export interface JudgedSystem {
  readonly label: string;
  readonly basis: ComparisonBasis;
}

/**
 * Puts the verdict where the numbers are: one warning per flagged row that knows its line. Against assumed hardware
 * a low ratio proves nothing about the run (it may have been measured on slower GPUs), so nothing is said there;
 * the panel still draws the comparison, labelled as assumed.
 */
export function rowWarnings(rows: readonly FlaggedRow[], system: JudgedSystem, threshold?: number): RowWarning[] {
  if (system.basis === 'assumed') return [];
  const systemLabel = system.label;
  return rows
    .filter((r) => r.flagged && r.line !== undefined && r.line >= 1)
    .map((r) => ({
      line: r.line! - 1,
      message: l10n.t(
        '{0} (below {1}% of its speed).',
        judged(r, systemLabel),
        Math.round((r.threshold ?? threshold ?? 0) * 100),
      ),
    }));
}

/**
 * A preset describes one box; a measurement may span several. With the node count from the file, the preset is
 * stretched to the measured ranks (GPUs per node = ranks ÷ nodes) as the CLI's compare does. Without one, the box
 * keeps its GPUs and the ranks fill as many boxes as they need (16 ranks on an 8-GPU preset are 2 nodes, not one
 * node of 16, which a hybrid cube-mesh cannot even hold); ranks that do not fill whole boxes make one node of them.
 * Undefined when it cannot be.
 */
export function presetScaling(
  ranks: number,
  nodes: number | undefined,
  boxGpus?: number,
): { nodes: number; gpusPerNode: number } | undefined {
  if (ranks <= 0) return undefined;
  if (nodes && nodes > 0) return ranks % nodes === 0 ? { nodes, gpusPerNode: ranks / nodes } : undefined;
  if (boxGpus && boxGpus > 0 && ranks % boxGpus === 0) return { nodes: ranks / boxGpus, gpusPerNode: boxGpus };
  return { nodes: 1, gpusPerNode: ranks };
}

/** The GPU family in a device name ("NVIDIA A100-SXM4-40GB" → "A100"), for telling a mismatched system apart. */
export function gpuFamily(name: string): string | undefined {
  return /\b(GB200|GH200|B200|H200|H100|A100|A10|L40S|V100|RTX ?\d{4}|T4|K80|MI\d{3})/i
    .exec(name)?.[1]
    .replace(/\s/g, '')
    .toUpperCase();
}

/** A note when the measured GPUs are not the system's, because then a low ratio says nothing about health. */
export function gpuMismatch(measuredGpuNames: readonly string[], spec: SystemSpec): string | undefined {
  const measured = measuredGpuNames.map(gpuFamily).find((f) => f !== undefined);
  const modelled = gpuFamily(spec.gpu);
  if (!measured || !modelled || measured === modelled) return undefined;
  return l10n.t(
    'the measurement ran on {0} GPUs but the selected system has {1}; select a matching system for a fair comparison',
    measured,
    modelled,
  );
}

/**
 * A system for the GPU a measurement file names, when the engine's catalogue has it: that GPU, the measured ranks
 * over the measured nodes. The file does not say how the GPUs are wired: SXM-class parts (and B200, H200, GB200)
 * are taken as NVLink-connected, others as PCIe, and the network as the description reader's default, which the
 * caller states as assumed. Undefined when the file names no GPU the catalogue knows, or the ranks do not divide.
 */
export function systemFromMeasuredGpu(
  gpuNames: readonly string[],
  ranks: number,
  nodes: number,
): SystemSpec | undefined {
  const name = gpuNames.find((n) => gpuFromDescription(n) !== undefined);
  if (!name || !(ranks > 0) || !(nodes > 0) || ranks % nodes !== 0) return undefined;
  const gpusPerNode = ranks / nodes;
  const nvlink = /sxm|hbm3|b200|h200|gb200/i.test(name) && gpusPerNode > 1;
  return systemFromDescription({
    gpu: name,
    gpus_per_node: gpusPerNode,
    nodes,
    interconnect: nvlink ? 'nvlink' : 'pcie',
  });
}
