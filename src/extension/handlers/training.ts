// Commands on training configs: profile the step (timeline + charts), sweep the bucket size, show the
// gradient-scaling check, and profile the bundled example.
import * as vscode from 'vscode';
import { EXAMPLE_CONFIG, untitledExampleText } from '../glue/example-copy';
import { MODEL_PRESETS, modelPreset } from '../../config/model-presets';
import { trainingChangesProblem, type ChartsData, type TrainingChanges } from '../../protocol';
import { resolveSystem, formatMicros, type TrainingRun } from '../../engine/index';
import { runEngineTask } from '../worker/engine-client';
import type { StepSummary } from '../worker/engine-tasks';
import type { Ctx } from '../context';
import type { CoreServices } from '../core';
import { loadTrainingRun } from '../training-run-loader';
import { configFormatOf, type ConfigFormat } from '../glue/lens-sites';
import { readUserFile } from '../user-files';
import { EXCLUDED_FOLDERS } from './workspace-check';
import { sweepSeries } from '../glue/charts-data';
import { stepPhaseRows, scalingCurves, type ScalingSubject } from '../glue/training-charts';
import { bucketAdvice, bucketSweepRange, bucketSweepRows } from '../glue/bucket-advice';
import { stepTimeText } from '../glue/lens-label';
import { changesPart, mergeChanges, trainingAssumptions } from '../glue/training-assumptions';
import { withCancellableProgress } from '../progress';
import { requireSystem } from '../system';

/** Most candidate files the config picker reads to tell a training config from other JSON and YAML. */
const MAX_CONFIG_CANDIDATES = 400;

/** How the picker describes each config format. */
function configFormatLabel(format: ConfigFormat): string {
  switch (format) {
    case 'collective':
      return vscode.l10n.t('Collective Profiler config');
    case 'deepspeed':
      return vscode.l10n.t('DeepSpeed config');
    case 'accelerate':
      return vscode.l10n.t('Accelerate config');
    case 'hf-model':
      return vscode.l10n.t('Hugging Face model config');
  }
}

/**
 * The training configs in the workspace: *.collective.yaml, DeepSpeed JSON, Accelerate YAML and Hugging Face
 * config.json files, each recognised as the lenses recognise it (glue/lens-sites.ts configFormatOf), so a file the
 * picker offers is one that has lenses, and a package.json or an unrelated config.json is not offered.
 */
async function workspaceConfigs(): Promise<{ uri: vscode.Uri; format: ConfigFormat }[]> {
  const found = await vscode.workspace.findFiles(
    '**/{*.collective.{yaml,yml,json},*ds_config*.json,*deepspeed*.json,*accelerate*.{yaml,yml},config.json}',
    EXCLUDED_FOLDERS,
    MAX_CONFIG_CANDIDATES,
  );
  const configs: { uri: vscode.Uri; format: ConfigFormat }[] = [];
  for (const uri of found) {
    let text: string;
    try {
      text = new TextDecoder().decode(await readUserFile(uri, 'config'));
    } catch {
      continue; // an unreadable file is not offered; picking it would only fail
    }
    const format = configFormatOf(uri.path, text);
    if (format) configs.push({ uri, format });
  }
  return configs.sort((a, b) => a.uri.path.localeCompare(b.uri.path));
}

/** The config to act on: the argument, the active editor when it is a config, or one the user picks. */
async function configUri(arg: unknown): Promise<vscode.Uri | undefined> {
  if (arg instanceof vscode.Uri) return arg;
  const doc = vscode.window.activeTextEditor?.document;
  if (doc && configFormatOf(doc.fileName, doc.getText())) return doc.uri;
  const found = await workspaceConfigs();
  if (found.length === 1) return found[0].uri;
  const picked = await vscode.window.showQuickPick(
    [
      ...found.map((c) => ({
        label: vscode.workspace.asRelativePath(c.uri),
        description: configFormatLabel(c.format),
        uri: c.uri as vscode.Uri | undefined,
      })),
      { label: vscode.l10n.t('$(folder-opened) Browse…'), uri: undefined },
    ],
    { title: vscode.l10n.t('Which training config?') },
  );
  if (!picked) return undefined;
  if (picked.uri) return picked.uri;
  return (
    await vscode.window.showOpenDialog({
      canSelectMany: false,
      filters: { [vscode.l10n.t('Training configs')]: ['yaml', 'yml', 'json', 'sh'] },
    })
  )?.[0];
}

/** The engine worker next to the bundles; long simulations run there so they can be cancelled. */
function workerPath(ctx: CoreServices): string {
  return vscode.Uri.joinPath(ctx.extensionUri, 'dist', 'extension-worker.js').fsPath;
}

/**
 * The changes a command was given (by the charts panel's Assumptions card, through a re-run), checked as the
 * protocol checks the panel's message: a command can also be run with arguments from elsewhere.
 */
function checkedChanges(changes: unknown): TrainingChanges {
  if (changes === undefined) return {};
  const problem = trainingChangesProblem(changes);
  if (problem) throw new Error(vscode.l10n.t('changed assumptions {0}', problem));
  return changes as TrainingChanges;
}

/**
 * Runs a profile or sweep that the charts panel asked for again with changed assumptions. The panel learns of a
 * failure (a value the config's batch arithmetic rejects) in the panel too, and the command reports it as usual.
 */
async function inPanel(ctx: Ctx, rerun: boolean, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (rerun) ctx.panels.showChartsError(error instanceof Error ? error.message : String(error));
    throw error;
  }
}

/** Loads the config with the panel's changes applied on top of every file. */
async function loadWithChanges(ctx: Ctx, target: vscode.Uri, changes: TrainingChanges) {
  return loadTrainingRun(ctx, target, changesPart(changes, modelPreset, MODEL_PRESETS));
}

export async function profileTrainingConfig(ctx: Ctx, uri?: unknown, changes?: unknown): Promise<void> {
  await runOnConfig(ctx, uri, changes, (name) => vscode.l10n.t('Profiling {0}', name), profileInPanels);
}

type ConfigWork = (
  ctx: Ctx,
  target: vscode.Uri,
  name: string,
  changes: TrainingChanges,
  signal: AbortSignal,
  report: (message: string) => void,
) => Promise<void>;

/**
 * The shape both config commands share: pick the config, check the panel's changes (an untrusted webview sent
 * them), and run the work under a cancellable progress, reporting errors in the panel when the panel asked.
 */
async function runOnConfig(
  ctx: Ctx,
  uri: unknown,
  changes: unknown,
  title: (name: string) => string,
  work: ConfigWork,
): Promise<void> {
  const target = await configUri(uri);
  if (!target) return;
  const name = target.path.split('/').pop() ?? '';
  const applied = checkedChanges(changes);
  await withCancellableProgress(title(name), (signal, report) =>
    inPanel(ctx, changes !== undefined, () => work(ctx, target, name, applied, signal, report)),
  );
}

async function profileInPanels(
  ctx: Ctx,
  target: vscode.Uri,
  name: string,
  changes: TrainingChanges,
  signal: AbortSignal,
  report: (message: string) => void,
): Promise<void> {
  const run = await loadWithChanges(ctx, target, changes);
  report(vscode.l10n.t('simulating the training step…'));
  const { step, trace, systemLabel } = await runEngineTask(
    workerPath(ctx),
    { kind: 'profileStep', run, title: vscode.l10n.t('{0} on {1}', name, resolveSystem(run.system).label) },
    signal,
  );
  await ctx.panels.showTrace(trace);
  showTrainingCharts(ctx, 'profile', target, name, run, changes, {
    title: vscode.l10n.t('{0}: {1} per step on {2}', name, stepTimeText(step), systemLabel),
    system: systemLabel,
    phases: stepPhaseRows(step),
    sweeps: sweepSeries(resolveSystem(run.system)),
  });
  ctx.log.info(
    `${name}: step ${stepTimeText(step)}, compute ${formatMicros(step.computeUs)}, exposed communication ${formatMicros(step.exposedCommUs)}, overlap ${step.overlapPct.toFixed(0)}%, ${step.collectives.length} collectives; ${run.assumed.length} assumptions, shown and changeable in the charts panel`,
  );
}

/**
 * The charts of a training command with its assumptions card; the card's Re-run runs the same command on the same
 * config with the user's changes merged into the ones this run had.
 */
function showTrainingCharts(
  ctx: Ctx,
  mode: 'profile' | 'sweep',
  target: vscode.Uri,
  name: string,
  run: TrainingRun,
  changes: TrainingChanges,
  data: Omit<ChartsData, 'assumptions'>,
): void {
  const command =
    mode === 'profile' ? 'collectiveProfiler.profileTrainingConfig' : 'collectiveProfiler.sweepBucketSize';
  ctx.panels.showCharts(
    {
      ...data,
      assumptions: { ...trainingAssumptions(run, mode, name, changes, MODEL_PRESETS), configUri: target.toString() },
    },
    { rerun: (next) => vscode.commands.executeCommand(command, target, mergeChanges(changes, next)) },
  );
}

/** The figures a config's Profile lens shows, simulated in the worker so the extension host never waits on it. */
export async function stepSummary(ctx: CoreServices, uri: vscode.Uri, signal: AbortSignal): Promise<StepSummary> {
  const run = await loadTrainingRun(ctx, uri);
  return runEngineTask(workerPath(ctx), { kind: 'stepSummary', run }, signal);
}

export async function sweepBucketSize(ctx: Ctx, uri?: unknown, changes?: unknown): Promise<void> {
  await runOnConfig(ctx, uri, changes, (name) => vscode.l10n.t('Sweeping bucket sizes for {0}', name), sweepInPanel);
}

async function sweepInPanel(
  ctx: Ctx,
  target: vscode.Uri,
  name: string,
  changes: TrainingChanges,
  signal: AbortSignal,
  report: (message: string) => void,
): Promise<void> {
  const run = await loadWithChanges(ctx, target, changes);
  report(vscode.l10n.t('bucket_cap_mb from 1 to 1024 MB and the current value…'));
  const { sweep, systemLabel } = await runEngineTask(
    workerPath(ctx),
    { kind: 'sweep', run, range: bucketSweepRange(run.training.bucketBytes) },
    signal,
  );
  // One recommendation, the argmin of the simulated step time, in the chart and in the message alike.
  const advice = bucketAdvice(sweep, run.training.bucketBytes);
  showTrainingCharts(ctx, 'sweep', target, name, run, changes, {
    title: vscode.l10n.t('{0}: bucket-size sweep', name),
    system: systemLabel,
    bucketSweep: bucketSweepRows(sweep, advice),
    bucketAdvice: advice.text,
  });
  ctx.log.info(`${name}: ${advice.text}`);
  void vscode.window.showInformationMessage(vscode.l10n.t('{0}: {1}', name, advice.text));
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
    subject = {
      kind: 'config',
      reduceOp: run.training.reduceOp,
      lrRule: run.training.lrRule,
      dtype: run.training.gradDtype,
    };
  }
  ranks ??= (await requireSystem(ctx)).system.ranks;
  const curves = scalingCurves(ranks, subject);
  ctx.panels.showCharts({ title: vscode.l10n.t('Gradient scaling over {0} ranks', ranks), scalingCheck: curves });
  ctx.log.info(curves.verdict ?? '');
}

export async function profileExample(ctx: Ctx): Promise<void> {
  // An untitled copy, so that editing the example never touches the installed extension's files. It keeps the
  // example's file name, by which the config's format is recognised; run again, it reopens the same copy with
  // whatever the user changed in it.
  const uri = vscode.Uri.from({
    scheme: 'untitled',
    path: EXAMPLE_CONFIG.split('/').pop() ?? 'example.collective.yaml',
  });
  const copy = await vscode.workspace.openTextDocument(uri);
  if (copy.getText() === '') {
    const bundled = vscode.Uri.joinPath(ctx.extensionUri, EXAMPLE_CONFIG);
    const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(bundled));
    const edit = new vscode.WorkspaceEdit();
    edit.insert(uri, new vscode.Position(0, 0), untitledExampleText(text, MODEL_PRESETS));
    await vscode.workspace.applyEdit(edit);
  }
  await vscode.window.showTextDocument(copy, { preview: false, viewColumn: vscode.ViewColumn.One });
  await profileTrainingConfig(ctx, copy.uri);
}
