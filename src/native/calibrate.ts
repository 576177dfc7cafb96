// Fits a system's bandwidths and latencies to a measurement: coordinate descent on the log of each override's
// scale, minimising the mean absolute log error of predicted vs measured times (robust to the odd noisy size).
// Each size's algorithm and protocol are held while fitting (one schedule per size, not NCCL's whole search) and
// re-picked between rounds; the fitted system is judged with normal selection, as `sweep` will run it.
import { simulateCollective, type Algorithm, type Protocol, type System, type SystemOverrides, type SystemSpec } from '../engine/index';
import { achieved, asResolved, collectiveKindOf, compareMeasurement, dtypeOf, forcedAlgorithm, medianRelativeError, usableRows, withMeasuredNccl } from './compare';
import type { Measurement, MeasurementRow } from './import/model';

type Param = keyof SystemOverrides;

export interface CalibrationResult {
  readonly system: SystemSpec;
  readonly medianErrorBefore: number;
  readonly medianErrorAfter: number;
  readonly parameters: Readonly<Partial<Record<Param, { readonly from: number; readonly to: number }>>>;
  /** Parameters left alone because a factor of 4 either way moves no measured size by 5 %: the data cannot tell. */
  readonly unidentified: readonly Param[];
  readonly evaluations: number;
}

/** Below this change of any row's time when a parameter is divided or multiplied by 4, the measurement cannot pin it down. */
const IDENTIFIABLE_CHANGE = 0.05;

/** The overrides that matter for this system, with the values it uses now. */
function fittableParameters(system: System): Partial<Record<Param, number>> {
  const links = system.topology.links;
  const first = (kinds: string[]): { GBps: number; latencyUs: number } | undefined => links.find((l) => kinds.includes(l.kind));
  const base: Partial<Record<Param, number>> = { launchUs: Math.max(system.launchUs, 0.5) };
  if (system.spec.intraNode === 'uniform-ring') {
    const link = links[0];
    if (link) Object.assign(base, { linkGBps: link.GBps, linkLatencyUs: Math.max(link.latencyUs, 0.1) });
    return base;
  }
  const nvlink = first(['nvlink', 'nvswitch']);
  if (nvlink && system.gpu.nvlinkGBpsPerLink > 0) Object.assign(base, { nvlinkGBpsPerLink: system.gpu.nvlinkGBpsPerLink, nvlinkLatencyUs: Math.max(nvlink.latencyUs, 0.05) });
  const pcie = first(['pcie']);
  // Across nodes every GPU also reaches its NIC over PCIe (GPUDirect RDMA), a hop in series with the NIC.
  if (pcie && (!nvlink || system.fabric.hostStaged || system.spec.intraNode === 'pcie' || system.nodes > 1)) Object.assign(base, { pcieGBps: pcie.GBps, pcieLatencyUs: Math.max(pcie.latencyUs, 0.05) });
  const socket = first(['inter-socket']);
  if (socket && (system.fabric.hostStaged || system.spec.intraNode === 'pcie')) base.interSocketGBps = socket.GBps;
  // The NIC's own link is the slowest network link; leaf-to-spine uplinks carry several NICs' worth.
  const nets = links.filter((l) => l.kind === 'network').sort((a, b) => a.GBps - b.GBps);
  if (nets.length > 0) Object.assign(base, { nicGBps: nets[0].GBps, nicLatencyUs: Math.max(nets[0].latencyUs, 0.1) });
  return base;
}

/** Up to `limit` rows spread evenly in log size, so small and large messages weigh alike. */
function spread(rows: MeasurementRow[], limit: number): MeasurementRow[] {
  if (rows.length <= limit) return rows;
  return Array.from({ length: limit }, (_, i) => rows[Math.round((i * (rows.length - 1)) / (limit - 1))]);
}

export function calibrateSystem(measurement: Measurement, given: SystemSpec, options: { maxRows?: number } = {}): CalibrationResult {
  const kind = collectiveKindOf(measurement);
  // The fit, and the file it writes, keep the NCCL release the measurement ran, as compare judges it.
  const start = withMeasuredNccl(asResolved(given), measurement);
  const spec = start.spec;
  const before = medianRelativeError(compareMeasurement(measurement, start).rows);
  const forced = forcedAlgorithm(measurement);
  const rows = spread(usableRows(measurement), options.maxRows ?? 24);
  const choose = (system: System): { algorithm: Algorithm; protocol: Protocol }[] =>
    rows.map((row) => {
      const r = simulateCollective(system, { kind, bytes: row.bytes, dtype: dtypeOf(row), ...(forced ? { algorithm: forced } : {}) });
      return { algorithm: r.algorithm, protocol: r.protocol };
    });
  let choices = choose(start);
  const base = fittableParameters(start);
  const names = Object.keys(base) as Param[];
  let evaluations = 0;
  // Only moved parameters become overrides, so the starting point is exactly the unfitted system even where a
  // value read back from the topology (a link latency) is not quite the knob that produced it.
  const specFor = (logScales: number[]): SystemSpec => {
    const overrides: Record<string, number> = { ...(spec.overrides ?? {}) };
    names.forEach((name, i) => {
      if (logScales[i] !== 0 || spec.overrides?.[name] !== undefined) overrides[name] = base[name]! * Math.exp(logScales[i]);
    });
    return Object.keys(overrides).length > 0 ? { ...spec, overrides: overrides as SystemOverrides } : { ...spec };
  };
  /** Log errors of every fitted row, or undefined when the overrides make an impossible system. */
  const logErrors = (logScales: number[]): number[] | undefined => {
    evaluations++;
    let system: System;
    try {
      system = asResolved(specFor(logScales));
    } catch {
      return undefined;
    }
    return rows.map((row, i) => Math.log(simulateCollective(system, { kind, bytes: row.bytes, dtype: dtypeOf(row), ...choices[i] }).timeUs / achieved(row).timeUs));
  };
  // The mean absolute log error steers the search; the last rounds polish the median itself, the figure of merit.
  let polish = false;
  const loss = (logScales: number[]): number => {
    const errors = logErrors(logScales);
    if (!errors) return Infinity;
    if (!polish) return errors.reduce((sum, e) => sum + Math.abs(e), 0) / errors.length;
    const sorted = errors.map((e) => Math.abs(Math.exp(e) - 1)).sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  };
  const x = names.map(() => 0);
  let pickedAt = x.join();
  let best = loss(x);
  // A parameter the measured sizes barely depend on would only soak up what others explain (1 GiB rows "fitted"
  // with a millisecond launch cost), so it keeps its value.
  const startErrors = logErrors(x) ?? [];
  const frozen = names.map((_, i) => [Math.log(4), -Math.log(4)].every((d) => {
    const moved = logErrors(x.map((v, j) => (j === i ? d : v)));
    return moved !== undefined && moved.every((e, r) => Math.abs(Math.exp(e - startErrors[r]) - 1) < IDENTIFIABLE_CHANGE);
  }));
  const bound = Math.log(200);
  const steps = [Math.log(2), Math.log(1.3), Math.log(1.1), Math.log(1.03), Math.log(1.01), Math.log(1.03), Math.log(1.01)];
  const descend = (step: number): void => {
    for (let pass = 0; pass < 2; pass++) {
      let improved = false;
      for (let i = 0; i < names.length; i++) {
        if (frozen[i]) continue;
        for (const direction of [1, -1]) {
          // Keep walking while it helps, so a parameter far from its value gets there in one pass.
          for (let moves = 0; moves < 6; moves++) {
            const trial = [...x];
            trial[i] = Math.max(-bound, Math.min(bound, x[i] + direction * step));
            if (trial[i] === x[i]) break;
            const value = loss(trial);
            if (!(value < best - 1e-12)) break;
            best = value;
            x[i] = trial[i];
            improved = true;
          }
        }
      }
      if (!improved) break;
    }
  };
  /** NCCL re-picks algorithms as the hardware changes, so the fit does too; true when a choice changed. */
  const repick = (): boolean => {
    // Re-picking is NCCL's whole search per size, the slow part on multi-node systems: only when x moved.
    if (x.join() === pickedAt) return false;
    const again = choose(asResolved(specFor(x)));
    pickedAt = x.join();
    const changed = again.some((c, i) => c.algorithm !== choices[i].algorithm || c.protocol !== choices[i].protocol);
    choices = again;
    return changed;
  };
  /**
   * The coarse start moves one parameter at a time, always the one whose best move helps most. Several parameters
   * can explain the same slow rows (a slow NIC or slow NVLink both cap NVLSTree); walking them in a fixed order
   * would hand the explanation to whichever comes first, where this hands it to the one that fits best.
   */
  const steepestFirst = (step: number): void => {
    for (let moved = 0; moved < 3 * names.length; moved++) {
      let chosen: { i: number; to: number; value: number } | undefined;
      for (let i = 0; i < names.length; i++) {
        if (frozen[i]) continue;
        for (const direction of [1, -1]) {
          let at = x[i];
          let value = best;
          for (let moves = 0; moves < 6; moves++) {
            const trial = [...x];
            trial[i] = Math.max(-bound, Math.min(bound, at + direction * step));
            if (trial[i] === at) break;
            const v = loss(trial);
            if (!(v < value - 1e-12)) break;
            value = v;
            at = trial[i];
          }
          if (at !== x[i] && (!chosen || value < chosen.value)) chosen = { i, to: at, value };
        }
      }
      if (!chosen) break;
      x[chosen.i] = chosen.to;
      best = chosen.value;
    }
  };
  steps.forEach((step, round) => {
    if (round > 0) {
      repick();
      polish = round >= 5;
      best = loss(x);
    }
    if (round === 0) steepestFirst(step);
    descend(step);
  });
  // The last rounds may move the system across one of NCCL's switch points: polish again under the new choices
  // until they hold, so the fitted file is judged by the algorithms it will really run.
  for (let settle = 0; settle < 3 && repick(); settle++) {
    best = loss(x);
    descend(Math.log(1.03));
    descend(Math.log(1.01));
  }
  let fitted = specFor(x);
  let after = medianRelativeError(compareMeasurement(measurement, fitted).rows);
  // The search sees at most 24 rows; when what it found is no better on all of them, the unfitted system stands.
  if (after >= before) {
    x.fill(0);
    fitted = specFor(x);
    after = before;
  }
  const parameters: Partial<Record<Param, { from: number; to: number }>> = {};
  names.forEach((name, i) => {
    if (x[i] !== 0) parameters[name] = { from: base[name]!, to: base[name]! * Math.exp(x[i]) };
  });
  const rounded = Object.fromEntries(Object.entries(fitted.overrides ?? {}).map(([k, v]) => [k, Number((v as number).toPrecision(4))]));
  return {
    system: { ...fitted, name: `${spec.name ?? start.label} (calibrated)`, ...(Object.keys(rounded).length > 0 ? { overrides: rounded as SystemOverrides } : {}) },
    medianErrorBefore: before,
    medianErrorAfter: after,
    parameters,
    unidentified: names.filter((_, i) => frozen[i]),
    evaluations,
  };
}
