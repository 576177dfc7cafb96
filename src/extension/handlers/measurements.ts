// Import Measurements… and Compare with Model: measured busbw (nccl-tests, NCCL_DEBUG logs, Kineto, DeepSpeed)
// drawn over the model's prediction for the system the measurement ran on (from the log when it says) or the
// selected one.
import * as vscode from 'vscode';
import { presetSystem, resolveSystem, sweepCollective, type System } from '../../engine/index';
import type { ChartsNote } from '../../protocol';
import { measurementView, type MeasurementView } from '../glue/measurement-view';
import type { ImportResult, Measurement } from '../../native/import/index';
import { compareMeasurement } from '../../native/compare';
import { modelledKind, usableRows } from '../../native/compare-inputs';
import type { Ctx } from '../context';
import { requireSystem } from '../system';
import { measuredSeries, modelSweepRange } from '../glue/charts-data';
import { deepSpeedLensSites } from '../glue/lens-sites';
import { MAX_MEASUREMENT_BYTES, formatFileSize, refuseLargeFile } from '../glue/file-limits';
import { presetScaling, rowWarnings, systemFromMeasuredGpu, type ComparisonBasis } from '../glue/compare';
import { parseSystemChoice } from '../glue/system-choice';
import { withCancellableProgress } from '../progress';
import { checkUserFile, readUserFileWithProgress } from '../user-files';
import { runEngineTask } from '../worker/engine-client';

async function pickMeasurementFile(uri: unknown): Promise<vscode.Uri | undefined> {
  if (uri instanceof vscode.Uri) return uri;
  const active = vscode.window.activeTextEditor?.document;
  // The files that get Import lenses: nccl-tests output, NCCL_DEBUG logs and DeepSpeed comms logs.
  if (active && (['nccl-tests', 'nccl-log'].includes(active.languageId) || deepSpeedLensSites(active.getText()).length))
    return active.uri;
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false,
    openLabel: vscode.l10n.t('Import'),
    filters: {
      [vscode.l10n.t('Measurements')]: ['txt', 'log', 'out', 'json', 'gz'],
      [vscode.l10n.t('All files')]: ['*'],
    },
  });
  return picked?.[0];
}

/** An imported file and what the panel says about it (glue/measurement-view.ts). */
export interface LoadedMeasurement {
  readonly result: ImportResult;
  readonly view: MeasurementView;
}

/**
 * Reads and parses a measurement file under a cancellable progress notification: the bytes read, then the parse,
 * which runs in the engine worker so that Cancel ends it at once (the worker is terminated) and nothing partial is
 * kept or shown.
 */
export async function loadMeasurement(ctx: Ctx, uri: vscode.Uri): Promise<LoadedMeasurement> {
  const name = uri.path.split('/').pop() ?? uri.fsPath;
  const size = await checkUserFile(uri, 'streamed-trace');
  const refusal = refuseLargeFile(name, size, MAX_MEASUREMENT_BYTES, 'measurement');
  if (refusal) throw new Error(refusal);
  const { result, facts } = await withCancellableProgress(
    vscode.l10n.t('Importing {0}', name),
    async (signal, report) => {
      // An open editor may hold unsaved edits; import what the user sees.
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      const bytes = open
        ? new TextEncoder().encode(open.getText())
        : await readUserFileWithProgress(uri, 'measurement', signal, (readBytes, sizeBytes) =>
            report(
              vscode.l10n.t('read {0} of {1}', formatFileSize(readBytes), formatFileSize(sizeBytes)),
              sizeBytes > 0 ? (0.5 * readBytes) / sizeBytes : undefined,
            ),
          );
      report(vscode.l10n.t('parsing {0}', formatFileSize(bytes.length)), 0.5);
      return runEngineTask(
        vscode.Uri.joinPath(ctx.extensionUri, 'dist', 'extension-worker.js').fsPath,
        { kind: 'importMeasurement', bytes, fileName: uri.fsPath },
        signal,
      );
    },
  );
  for (const w of result.warnings) ctx.log.warn(`${name}: ${w}`);
  return { result, view: measurementView(result, facts) };
}

/** The charts panel's text cards for a measurement: where it ran, what it holds, what its NCCL log says. */
function measurementNotes(view: MeasurementView, comparedWith?: string): ChartsNote[] {
  return [
    {
      title: vscode.l10n.t('Measurement'),
      lines: [view.hardware, vscode.l10n.t('holds: {0}', view.contents), ...(comparedWith ? [comparedWith] : [])],
    },
    ...view.sections,
  ];
}

/**
 * The system a measurement is judged against, and a sentence saying which and why: the one the log describes;
 * else one built from the GPU the file names (when the catalogue knows it; the interconnect is then assumed);
 * else the selected preset stretched to the measured ranks, said to be an assumption.
 */
async function comparisonSystem(
  ctx: Ctx,
  result: ImportResult,
  measurement: Measurement,
  view: MeasurementView,
): Promise<{ system: System; label: string; note: string; basis: ComparisonBasis }> {
  if (result.system) {
    try {
      const system = resolveSystem(result.system);
      return {
        system,
        label: vscode.l10n.t('{0} (from the log)', system.label),
        basis: 'log',
        note: vscode.l10n.t('compared with {0}, the system the log describes', system.label),
      };
    } catch (error) {
      ctx.log.warn(
        `The system described by the log cannot be simulated (${error instanceof Error ? error.message : String(error)}); using the selected one.`,
      );
    }
  }
  const fileNodes = Number(measurement.meta.nodes ?? 0) || undefined;
  const nodes = fileNodes ?? 1;
  const named = Array.isArray(measurement.meta.gpuNames)
    ? (measurement.meta.gpuNames as readonly string[]).map(String)
    : [];
  const fromFile = systemFromMeasuredGpu(named, measurement.ranks, nodes);
  if (fromFile) {
    const system = resolveSystem(fromFile);
    return {
      system,
      label: vscode.l10n.t('{0} (GPU from the file)', system.label),
      basis: 'file-gpu',
      note: vscode.l10n.t(
        "compared with {0}: the file's {1} as the catalogue's {2}; interconnect and network assumed",
        system.label,
        named[0],
        fromFile.gpu,
      ),
    };
  }
  const selected = await requireSystem(ctx);
  const choice = parseSystemChoice(ctx.settings.system);
  const box = choice.kind === 'preset' ? presetSystem(choice.name)?.gpusPerNode : undefined;
  const scaling = presetScaling(measurement.ranks, fileNodes, box);
  const spec = choice.kind === 'preset' && scaling ? presetSystem(choice.name, scaling) : undefined;
  let system = selected.system;
  try {
    if (spec) system = resolveSystem(spec);
  } catch (error) {
    // A preset stretched past what its fabric holds (a cube-mesh of more than 8 GPUs) is said, not thrown.
    ctx.log.warn(
      `The selected system cannot hold the measured layout (${error instanceof Error ? error.message : String(error)}); comparing with ${selected.system.label}.`,
    );
  }
  const why = !view.measuredOn
    ? vscode.l10n.t('the file does not name its hardware')
    : named[0] !== undefined
      ? vscode.l10n.t("the model's catalogue has no {0}", named[0])
      : vscode.l10n.t("the model's catalogue has no such GPU");
  return {
    system,
    label: vscode.l10n.t('{0} (assumed)', system.label),
    basis: 'assumed',
    note: vscode.l10n.t(
      'compared with the selected {0} as an assumption: {1}; no size is judged in Problems (Collective Profiler: Select System picks the system it ran on)',
      system.label,
      why,
    ),
  };
}

export async function importMeasurements(ctx: Ctx, uri?: unknown): Promise<void> {
  const file = await pickMeasurementFile(uri);
  if (!file) return;
  const loaded = await loadMeasurement(ctx, file);
  // The imported trace is kept in the extension's storage (no source given), so a reload can restore it even
  // though the measurement file itself is not a trace file.
  if (loaded.result.trace) await ctx.panels.showTrace(loaded.result.trace);
  await showComparison(ctx, file, loaded);
}

export async function compareWithModel(ctx: Ctx, uri?: unknown): Promise<void> {
  const file = await pickMeasurementFile(uri);
  if (!file) return;
  await showComparison(ctx, file, await loadMeasurement(ctx, file));
}

function diagnostic(line: number, message: string, severity: vscode.DiagnosticSeverity): vscode.Diagnostic {
  const d = new vscode.Diagnostic(new vscode.Range(line, 0, line, Number.MAX_SAFE_INTEGER), message, severity);
  d.source = 'Collective Profiler';
  return d;
}

async function showComparison(ctx: Ctx, file: vscode.Uri, { result, view }: LoadedMeasurement): Promise<void> {
  const name = file.path.split('/').pop() ?? '';
  // Corrupted, failed or cut-off runs are errors in the editor whatever else the file holds.
  const errors = view.errors.map((e) => diagnostic(e.line, e.message, vscode.DiagnosticSeverity.Error));
  const measurement = result.measurements.find(
    (m) => m.rows.length > 0 && ['allreduce', 'allgather', 'reducescatter'].includes(m.collective),
  );
  if (!measurement) {
    ctx.measurementWarnings.set(file, errors);
    ctx.panels.showCharts({ title: vscode.l10n.t('{0}: what the file holds', name), notes: measurementNotes(view) });
    void vscode.window.showInformationMessage(
      vscode.l10n.t(
        '{0} holds no all-reduce, all-gather or reduce-scatter sizes to compare with the model; it holds {1}. {2}.',
        name,
        view.contents,
        view.hardware,
      ),
    );
    return;
  }
  const { system, label, note, basis } = await comparisonSystem(ctx, result, measurement, view);
  const compared = compareMeasurement(measurement, system);
  // compareMeasurement keeps usableRows' order, so the source lines line up by index.
  const lines = usableRows(measurement).map((r) => r.line);
  const rows = compared.rows.map((r, i) => ({ ...r, line: lines[i] }));
  const shown = result.measurements.filter((m) => m.rows.length > 0);
  const measured = shown.map((m, i, all) =>
    measuredSeries(
      all.length > 1
        ? vscode.l10n.t('measured: {0} #{1} · {2} ranks ({3})', m.collective, i + 1, m.ranks, m.kind)
        : vscode.l10n.t('measured: {0} · {1} ranks ({2})', m.collective, m.ranks, m.kind),
      m.rows,
    ),
  );
  // One model line per collective drawn, each over the sizes of its own series (an all-gather is read against an
  // all-gather model, not an all-reduce one); the compared measurement's collective comes first.
  const kinds = [...new Set([measurement, ...shown].map(modelledKind))].filter((k) => k !== undefined);
  const sweeps = kinds.flatMap((kind) => {
    const range = modelSweepRange(measured.filter((_, i) => modelledKind(shown[i]) === kind));
    if (!range) return [];
    return [
      { label: vscode.l10n.t('model: {0} on {1}', kind, label), rows: sweepCollective(system, { ...range, kind }) },
    ];
  });
  ctx.panels.showCharts({
    title: vscode.l10n.t('{0}: measured vs model on {1}', name, label),
    system: label,
    notes: measurementNotes(view, note),
    sweeps,
    measured,
  });
  ctx.measurementWarnings.set(file, [
    ...errors,
    ...rowWarnings(rows, { label, basis }, compared.threshold).map((w) =>
      diagnostic(w.line, w.message, vscode.DiagnosticSeverity.Warning),
    ),
  ]);
  const flagged = rows.filter((r) => r.flagged);
  // Against assumed hardware the summary states the numbers, not a verdict on the run.
  const verdict =
    basis === 'assumed'
      ? vscode.l10n.t(
          '{0}: measured against {1}; its sizes are not judged because the file does not say what it ran on.',
          name,
          label,
        )
      : flagged.length === 0
        ? vscode.l10n.t("{0}: every measured size is within the model's uncertainty of its busbw on {1}.", name, label)
        : vscode.l10n.t(
            "{0}: {1} of {2} sizes fall below what the model's uncertainty allows on {3} (lowest {4}% of the model's busbw).",
            name,
            flagged.length,
            rows.length,
            label,
            Math.round(Math.min(...flagged.map((f) => f.ratio)) * 100),
          );
  // Sizes below the threshold of NCCL's modelled choice but normal for a pair NCCL rates near it: NCCL took that pair.
  const explained = rows.filter((r) => r.explainedBy);
  const explanation =
    explained.length === 0
      ? ''
      : ` ${vscode.l10n.t(
          explained.length === 1
            ? '1 size runs as the model expects of {1}, which NCCL {2} rates near its choice.'
            : '{0} sizes run as the model expects of {1}, which NCCL {2} rates near its choice.',
          explained.length,
          [...new Set(explained.map((r) => `${r.explainedBy!.algorithm}/${r.explainedBy!.protocol}`))].join(', '),
          compared.ncclVersion,
        )}`;
  const invalid =
    errors.length > 0
      ? ` ${
          errors.length === 1
            ? vscode.l10n.t('1 problem in the run itself (see Problems).')
            : vscode.l10n.t('{0} problems in the run itself (see Problems).', errors.length)
        }`
      : '';
  const summary = `${verdict}${explanation} ${view.hardware[0].toUpperCase()}${view.hardware.slice(1)}; ${note}.${invalid}`;
  ctx.log.info(summary);
  void vscode.window.showInformationMessage(summary);
}
