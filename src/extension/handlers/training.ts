// Commands on training configs: profile the step (timeline + charts), sweep the bucket size, show the
// gradient-scaling check, and profile the bundled example.
import * as vscode from 'vscode';
import {
  parseSweep, simulateTrainingStep, stepTrace, sweepTraining, resolveSystem, formatMicros,
} from '../../engine/index';
import type { Ctx } from '../context';
import { loadTrainingRun } from '../training-run-loader';
import { configFormatOf } from '../glue/lens-sites';
import { sweepSeries } from '../glue/charts-data';
import { bucketSweepRows, stepPhaseRows, scalingCurves, type ScalingSubject } from '../glue/training-charts';
import { withCancellableProgress } from '../progress';
import { requireSystem } from '../system';

export const EXAMPLE_CONFIG = 'examples/llama2-7b-ddp.collective.yaml';

/** The config to act on: the argument, the active editor when it is a config, or one the user picks. */
async function configUri(arg: unknown): Promise<vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri) return arg;
  const doc = vscode.window.activeTextEditor?.document;
  if (doc && configFormatOf(doc.fileName, doc.getText())) return doc.uri;
  const found = await vscode.workspace.findFiles('**/{*.collective.{yaml,yml,json},*ds_config*.json,*deepspeed*.json,*accelerate*.{yaml,yml}}', '**/node_modules/**', 200);
  if (found.length === 1) return found[0];
  const picked = await vscode.window.showQuickPick(
    [...found.map((u) => ({ label: vscode.workspace.asRelativePath(u), uri: u as vscode.Uri | undefined })), { label: '$(folder-opened) Browse…', uri: undefined }],
    { title: 'Which training config?' },
  );
  if (!picked) return undefined;
  if (picked.uri) return picked.uri;
  return (await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'Training configs': ['yaml', 'yml', 'json', 'sh'] } }))?.[0];
}

export async function profileTrainingConfig(ctx: Ctx, uri?: unknown): Promise<void> {
  const target = await configUri(uri);
  if (!target) return;
  const name = target.path.split('/').pop() ?? '';
  await withCancellableProgress(`Profiling ${name}`, async (_signal, report) => {
    const run = await loadTrainingRun(ctx, target);
    report('simulating the training step…');
    const step = simulateTrainingStep(run);
    const trace = stepTrace(step);
    await ctx.panels.showTrace({ ...trace, metadata: { ...trace.metadata, title: `${name} on ${step.systemLabel}` } });
    const system = resolveSystem(run.system);
    ctx.panels.showCharts({
      title: `${name}: ${formatMicros(step.stepTimeUs)} per step on ${step.systemLabel}`, system: step.systemLabel,
      phases: stepPhaseRows(step), sweeps: sweepSeries(system),
    });
    ctx.log.info(`${name}: step ${formatMicros(step.stepTimeUs)}, compute ${formatMicros(step.computeUs)}, exposed communication ${formatMicros(step.exposedCommUs)}, overlap ${step.overlapPct.toFixed(0)}%, ${step.collectives.length} collectives`);
    for (const a of run.assumed) ctx.log.info(`${name}: assumed ${a}`);
  });
}

export async function sweepBucketSize(ctx: Ctx, uri?: unknown): Promise<void> {
  const target = await configUri(uri);
  if (!target) return;
  const name = target.path.split('/').pop() ?? '';
  await withCancellableProgress(`Sweeping bucket sizes for ${name}`, async () => {
    const run = await loadTrainingRun(ctx, target);
    const sweep = sweepTraining(run, parseSweep('bucket_cap_mb=1..1024'));
    ctx.panels.showCharts({ title: `${name}: bucket-size sweep`, system: resolveSystem(run.system).label, bucketSweep: bucketSweepRows(sweep) });
    ctx.log.info(`${name}: ${sweep.recommendation}`);
    void vscode.window.showInformationMessage(`${name}: ${sweep.recommendation}`);
  });
}

/**
 * The gradient-scaling check, on the selected system's rank count (or the config's world size): for a finding
 * (a warning lens passes the file and line) it runs that finding's pattern; for a config, its reduce op and LR rule.
 */
export async function showScalingCheck(ctx: Ctx, uri?: unknown, line?: unknown): Promise<void> {
  let subject: ScalingSubject = { kind: 'default' };
  let ranks: number | undefined;
  if (uri instanceof vscode.Uri && typeof line === 'number') {
    const finding = ctx.findings?.get(uri).find((f) => f.range.startLine === line);
    if (finding) subject = { kind: 'finding', code: finding.code };
  } else if (uri instanceof vscode.Uri) {
    const run = await loadTrainingRun(ctx, uri);
    ranks = resolveSystem(run.system).ranks;
    subject = { kind: 'config', reduceOp: run.training.reduceOp, lrRule: run.training.lrRule, dtype: run.training.gradDtype };
  }
  ranks ??= (await requireSystem(ctx)).system.ranks;
  const curves = scalingCurves(ranks, subject);
  ctx.panels.showCharts({ title: `Gradient scaling over ${ranks} ranks`, scalingCheck: curves });
  ctx.log.info(curves.verdict ?? '');
}

export async function profileExample(ctx: Ctx): Promise<void> {
  const example = vscode.Uri.joinPath(ctx.extensionUri, EXAMPLE_CONFIG);
  await vscode.window.showTextDocument(example, { preview: true, viewColumn: vscode.ViewColumn.One });
  await profileTrainingConfig(ctx, example);
}
