// Text and JSON renderings of a training-step profile, kept apart from the command's flag handling.
import {
  DTYPE_BYTES,
  formatBytes,
  formatMicros,
  worldSizeOf,
  globalBatchSize,
  type StepResult,
  type TrainingRun,
  type TrainingSweep,
} from '../engine/index';
import { terminalInline } from './terminal-text';

const ms = (us: number): number => Math.round(us) / 1000;
/** Bucket times share one unit so that a column reads as a timeline. */
const msText = (us: number): string => `${(us / 1000).toFixed(us < 1e5 ? 2 : 1)} ms`;
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const WRAPPER_NAMES: Record<string, string> = {
  ddp: 'DDP',
  fsdp: 'FSDP (full shard)',
  zero1: 'ZeRO-1',
  zero2: 'ZeRO-2',
  zero3: 'ZeRO-3',
  horovod: 'Horovod',
};

export function profileJson(
  run: TrainingRun,
  step: StepResult,
  extra: Record<string, unknown>,
): Record<string, unknown> {
  const gradients = step.collectives.filter((c) => c.purpose === 'gradients');
  return {
    model: run.model.name,
    system: step.systemLabel,
    wrapper: run.training.wrapper,
    parameters: step.parameters,
    gradientBytes: step.gradientBytes,
    worldSize: step.worldSize,
    globalBatchSize: globalBatchSize(run),
    stepTimeMs: ms(step.stepTimeUs),
    computeMs: ms(step.computeUs),
    forwardMs: ms(step.forwardUs),
    backwardMs: ms(step.backwardUs),
    optimizerMs: ms(step.optimizerUs),
    commMs: ms(step.commUs),
    exposedCommMs: ms(step.exposedCommUs),
    overlapPct: Math.round(step.overlapPct * 10) / 10,
    scalingEfficiencyPct: Math.round(step.scalingEfficiency * 1000) / 10,
    buckets: gradients.map((c) => ({
      kind: c.kind,
      bytes: c.bytes,
      microStep: c.microStep,
      readyMs: c.readyUs / 1000,
      startMs: c.startUs / 1000,
      endMs: c.endUs / 1000,
      algorithm: c.algorithm,
      protocol: c.protocol,
    })),
    parameterGathers: step.collectives.length - gradients.length,
    assumed: run.assumed,
    notes: run.notes,
    ...extra,
  };
}

function table(rows: readonly (readonly string[])[], rightAligned: readonly number[] = []): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) =>
    r
      .map((cell, i) => (rightAligned.includes(i) ? cell.padStart(widths[i]) : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd(),
  );
}

/** The first and last few gradient collectives, which show the small first bucket and what is left exposed. */
function bucketLines(step: StepResult): string[] {
  const gradients = step.collectives.filter((c) => c.purpose === 'gradients' && c.microStep === step.microSteps - 1);
  if (gradients.length === 0) return [];
  const shown = gradients.length <= 10 ? gradients : [...gradients.slice(0, 5), undefined, ...gradients.slice(-4)];
  const rows: string[][] = [['#', 'collective', 'size', 'grads ready', 'start', 'end', 'algorithm', 'protocol']];
  for (const c of shown) {
    if (!c) rows.push(['…', `${gradients.length - 9} more`, '', '', '', '', '', '']);
    else
      rows.push([
        String(c.index),
        `${c.kind} ${terminalInline(c.label)}`,
        formatBytes(c.bytes),
        msText(c.readyUs),
        msText(c.startUs),
        msText(c.endUs),
        c.algorithm,
        c.protocol,
      ]);
  }
  return [
    '',
    `gradient collectives (last micro-step, ${gradients.length} of them):`,
    ...table(rows, [0, 2, 3, 4, 5]).map((l) => `  ${l}`),
  ];
}

export function profileText(run: TrainingRun, step: StepResult, sources: string): string {
  const t = run.training;
  const world = worldSizeOf(run.system);
  const bucketWords =
    t.wrapper === 'fsdp' || t.wrapper === 'zero3'
      ? 'per-layer gather and reduce-scatter'
      : `${formatBytes(t.bucketBytes)} buckets (${step.gradientBuckets})`;
  const header = [
    `profile of ${sources}`,
    `  model     ${terminalInline(run.model.name)}: ${(step.parameters / 1e9).toFixed(step.parameters < 1e9 ? 3 : 2)} B parameters, ${formatBytes(step.gradientBytes)} of ${t.gradDtype} gradients (${DTYPE_BYTES[t.gradDtype]} B each)`,
    `  system    ${terminalInline(step.systemLabel)}: ${world} GPU${world === 1 ? '' : 's'} (${run.system.nodes} node${run.system.nodes === 1 ? '' : 's'} × ${run.system.gpusPerNode})`,
    `  training  ${WRAPPER_NAMES[t.wrapper]}, micro-batch ${t.microBatchSize} × ${t.sequenceLength} tokens, ${t.gradAccumulationSteps} accumulation step${t.gradAccumulationSteps === 1 ? '' : 's'}, global batch ${globalBatchSize(run)}; ${bucketWords}`,
  ];
  const rows: string[][] = [
    ['step time', formatMicros(step.stepTimeUs), ''],
    [
      'compute',
      formatMicros(step.computeUs),
      `forward ${formatMicros(step.forwardUs)}, backward ${formatMicros(step.backwardUs)}, optimizer ${formatMicros(step.optimizerUs)}`,
    ],
    ['communication', formatMicros(step.commUs), `${step.collectives.length} collectives on the communication stream`],
    ['exposed communication', formatMicros(step.exposedCommUs), 'time compute waited on collectives'],
    ['overlap', `${step.overlapPct.toFixed(1)}%`, 'of communication hidden behind compute'],
    [
      'scaling efficiency',
      pct(step.scalingEfficiency),
      `vs one GPU doing the same per-GPU work (${formatMicros(step.singleGpuStepUs)})`,
    ],
  ];
  const lines = [...header, '', ...table(rows, [1]).map((l) => `  ${l}`), ...bucketLines(step)];
  if (run.notes.length > 0) lines.push('', ...run.notes.map((n) => `note: ${n}`));
  if (run.assumed.length > 0) lines.push('', `assumed: ${run.assumed.join(', ')}`);
  return lines.join('\n');
}

export function sweepText(sweep: TrainingSweep): string {
  const unit = sweep.key === 'bucket_cap_mb' ? 'MiB' : 'nodes';
  const worst = Math.max(...sweep.points.map((p) => p.stepTimeUs));
  const rows: string[][] = [[sweep.key, 'step time', 'exposed comm', 'collectives', 'efficiency', '']];
  for (const p of sweep.points) {
    const bar = '█'.repeat(Math.max(1, Math.round((p.stepTimeUs / worst) * 30)));
    rows.push([
      `${p.value}${p.value === sweep.best ? ' *' : ''}`,
      formatMicros(p.stepTimeUs),
      formatMicros(p.exposedCommUs),
      String(p.collectives),
      pct(p.scalingEfficiency),
      bar,
    ]);
  }
  return [
    '',
    `sweep of ${sweep.key} (${unit}); * marks the best:`,
    ...table(rows, [1, 2, 3, 4]).map((l) => `  ${l}`),
    '',
    `best: ${sweep.key}=${sweep.best}`,
    `recommendation: ${sweep.recommendation}`,
  ].join('\n');
}
