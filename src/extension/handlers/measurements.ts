// Import Measurements… and Compare with Model: measured busbw (nccl-tests, NCCL_DEBUG logs, Kineto, DeepSpeed)
// drawn over the model's prediction for the system the measurement ran on (from the log when it says) or the
// selected one.
import * as vscode from 'vscode';
import { gunzipSync } from 'node:zlib';
import { resolveSystem, sweepAllReduce, type System } from '../../engine/index';
import { importMeasurementBytes, type ImportResult } from '../../native/import/index';
import type { Ctx } from '../context';
import { requireSystem } from '../system';
import { measuredSeries } from '../glue/charts-data';
import { MAX_MEASUREMENT_BYTES, refuseLargeFile } from '../glue/file-limits';
import { compareMeasured } from '../glue/compare';
import { withCancellableProgress } from '../progress';

async function pickMeasurementFile(uri: unknown): Promise<vscode.Uri | undefined> {
  if (uri instanceof vscode.Uri) return uri;
  const active = vscode.window.activeTextEditor?.document;
  if (active && ['nccl-tests', 'nccl-log'].includes(active.languageId)) return active.uri;
  const picked = await vscode.window.showOpenDialog({
    canSelectMany: false, openLabel: 'Import',
    filters: { 'Measurements': ['txt', 'log', 'out', 'json', 'gz'], 'All files': ['*'] },
  });
  return picked?.[0];
}

export async function loadMeasurement(ctx: Ctx, uri: vscode.Uri): Promise<ImportResult> {
  const name = uri.path.split('/').pop() ?? uri.fsPath;
  const size = (await vscode.workspace.fs.stat(uri)).size;
  const refusal = refuseLargeFile(name, size, MAX_MEASUREMENT_BYTES, 'measurement');
  if (refusal) throw new Error(refusal);
  // An open editor may hold unsaved edits; import what the user sees.
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  const bytes = open ? new TextEncoder().encode(open.getText()) : await vscode.workspace.fs.readFile(uri);
  const result = importMeasurementBytes(bytes, { fileName: uri.fsPath, gunzip: (b) => gunzipSync(b, { maxOutputLength: MAX_MEASUREMENT_BYTES }) });
  for (const w of result.warnings) ctx.log.warn(`${name}: ${w}`);
  return result;
}

/** The system to compare against: the one the log describes, else the selected one. */
async function comparisonSystem(ctx: Ctx, result: ImportResult): Promise<{ system: System; label: string; fromLog: boolean }> {
  if (result.system) {
    try {
      const system = resolveSystem(result.system);
      return { system, label: `${system.label} (from the log)`, fromLog: true };
    } catch (error) {
      ctx.log.warn(`The system described by the log cannot be simulated (${error instanceof Error ? error.message : String(error)}); using the selected one.`);
    }
  }
  const selected = await requireSystem(ctx);
  return { system: selected.system, label: selected.label, fromLog: false };
}

export async function importMeasurements(ctx: Ctx, uri?: unknown): Promise<void> {
  const file = await pickMeasurementFile(uri);
  if (!file) return;
  const result = await withCancellableProgress(`Importing ${file.path.split('/').pop()}`, () => loadMeasurement(ctx, file));
  // The imported trace is kept in the extension's storage (no source given), so a reload can restore it even
  // though the measurement file itself is not a trace file.
  if (result.trace) await ctx.panels.showTrace(result.trace);
  await showComparison(ctx, file, result);
}

export async function compareWithModel(ctx: Ctx, uri?: unknown): Promise<void> {
  const file = await pickMeasurementFile(uri);
  if (!file) return;
  const result = await loadMeasurement(ctx, file);
  await showComparison(ctx, file, result);
}

async function showComparison(ctx: Ctx, file: vscode.Uri, result: ImportResult): Promise<void> {
  const name = file.path.split('/').pop() ?? '';
  const measurements = result.measurements.filter((m) => m.rows.length > 0);
  if (measurements.length === 0) {
    void vscode.window.showInformationMessage(`${name} holds no timed sizes to chart${result.system ? '; its system was read (see the log).' : '.'}`);
    return;
  }
  const { system, label } = await comparisonSystem(ctx, result);
  const allreduce = measurements.filter((m) => m.collective === 'allreduce');
  const rows = (allreduce.length > 0 ? allreduce : measurements).flatMap((m) => m.rows);
  const sizes = rows.map((r) => r.bytes).filter((b) => b > 0);
  const minBytes = Math.max(8, Math.min(...sizes));
  const maxBytes = Math.max(minBytes * 2, Math.max(...sizes));
  const model = sweepAllReduce(system, { minBytes, maxBytes, factor: 2 });
  const comparison = compareMeasured(rows, model);
  const flagged = comparison.filter((c) => c.flagged);
  ctx.panels.showCharts({
    title: `${name}: measured vs model on ${label}`, system: label,
    sweeps: [{ label: `model: ${label}`, rows: model }],
    measured: measurements.map((m, i) => measuredSeries(`measured: ${m.collective}${measurements.length > 1 ? ` #${i + 1}` : ''} · ${m.ranks} ranks (${m.kind})`, m.rows)),
  });
  const summary = flagged.length === 0
    ? `${name}: every measured size reaches at least 70% of the model's busbw on ${label}.`
    : `${name}: ${flagged.length} of ${comparison.length} sizes reach less than 70% of the model's busbw on ${label} (smallest ratio ${Math.round(Math.min(...flagged.map((f) => f.ratio)) * 100)}%).`;
  ctx.log.info(summary);
  void vscode.window.showInformationMessage(summary);
}
