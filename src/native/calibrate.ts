// Fits a system's bandwidths and latencies to a measurement: coordinate descent on the log of each override's
// scale, minimising the mean squared log error of predicted vs measured times. The algorithm and protocol of each
// size are held at the unfitted system's choice while fitting (one schedule per size, not NCCL's whole search),
// then the fitted system is judged with normal selection, as `sweep` will run it.
import { simulateCollective, type Algorithm, type Protocol, type System, type SystemOverrides, type SystemSpec } from '../engine/index';
import { asResolved, collectiveKindOf, compareMeasurement, dtypeOf, forcedAlgorithm, medianRelativeError, usableRows } from './compare';
import type { Measurement, MeasurementRow } from './import/model';

type Param = keyof SystemOverrides;

export interface CalibrationResult {
  readonly system: SystemSpec;
  readonly medianErrorBefore: number;
  readonly medianErrorAfter: number;
  readonly parameters: Readonly<Partial<Record<Param, { readonly from: number; readonly to: number }>>>;
  readonly evaluations: number;
}

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
  if (pcie && (!nvlink || system.fabric.hostStaged || system.spec.intraNode === 'pcie')) Object.assign(base, { pcieGBps: pcie.GBps, pcieLatencyUs: Math.max(pcie.latencyUs, 0.05) });
  const net = first(['network']);
  if (net) Object.assign(base, { nicGBps: net.GBps, nicLatencyUs: Math.max(net.latencyUs, 0.1) });
  return base;
}

/** Up to `limit` rows spread evenly in log size, so small and large messages weigh alike. */
function spread(rows: MeasurementRow[], limit: number): MeasurementRow[] {
  if (rows.length <= limit) return rows;
  return Array.from({ length: limit }, (_, i) => rows[Math.round((i * (rows.length - 1)) / (limit - 1))]);
}

export function calibrateSystem(measurement: Measurement, spec: SystemSpec, options: { maxRows?: number } = {}): CalibrationResult {
  const kind = collectiveKindOf(measurement);
  const start = asResolved(spec);
  const before = medianRelativeError(compareMeasurement(measurement, start).rows);
  const forced = forcedAlgorithm(measurement);
  const rows = spread(usableRows(measurement), options.maxRows ?? 14);
  const choose = (system: System): { algorithm: Algorithm; protocol: Protocol }[] =>
    rows.map((row) => {
      const r = simulateCollective(system, { kind, bytes: row.bytes, dtype: dtypeOf(row), ...(forced ? { algorithm: forced } : {}) });
      return { algorithm: r.algorithm, protocol: r.protocol };
    });
  let choices = choose(start);
  const base = fittableParameters(start);
  const names = Object.keys(base) as Param[];
  let evaluations = 0;
  const specFor = (logScales: number[]): SystemSpec => {
    const overrides: Record<string, number> = { ...(spec.overrides ?? {}) };
    names.forEach((name, i) => (overrides[name] = base[name]! * Math.exp(logScales[i])));
    return { ...spec, overrides: overrides as SystemOverrides };
  };
  const loss = (logScales: number[]): number => {
    evaluations++;
    let system: System;
    try {
      system = asResolved(specFor(logScales));
    } catch {
      return Infinity;
    }
    let sum = 0;
    rows.forEach((row, i) => {
      const predicted = simulateCollective(system, { kind, bytes: row.bytes, dtype: dtypeOf(row), ...choices[i] }).timeUs;
      sum += Math.log(predicted / row.timeUs) ** 2;
    });
    return sum / rows.length;
  };
  const x = names.map(() => 0);
  let best = loss(x);
  const bound = Math.log(200);
  for (const step of [Math.log(2), Math.log(1.3), Math.log(1.1), Math.log(1.03)]) {
    // NCCL re-picks algorithms as the hardware changes, so the fit does too between rounds.
    if (step !== Math.log(2)) {
      choices = choose(asResolved(specFor(x)));
      best = loss(x);
    }
    for (let pass = 0; pass < 2; pass++) {
      let improved = false;
      for (let i = 0; i < names.length; i++) {
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
  }
  const fitted = specFor(x);
  const after = medianRelativeError(compareMeasurement(measurement, fitted).rows);
  const parameters: Partial<Record<Param, { from: number; to: number }>> = {};
  names.forEach((name, i) => (parameters[name] = { from: base[name]!, to: base[name]! * Math.exp(x[i]) }));
  const rounded = Object.fromEntries(Object.entries(fitted.overrides ?? {}).map(([k, v]) => [k, Number((v as number).toPrecision(4))]));
  return {
    system: { ...fitted, name: `${spec.name ?? start.label} (calibrated)`, overrides: rounded as SystemOverrides },
    medianErrorBefore: before,
    medianErrorAfter: after,
    parameters,
    evaluations,
  };
}
