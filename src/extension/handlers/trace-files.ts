// Open Trace… and Export Trace. Opening refuses files too big to parse in memory, with a way forward; exporting
// writes atomically and never replaces an existing file without the user's yes.
import * as vscode from 'vscode';
import { gunzipSync } from 'node:zlib';
import { homedir } from 'node:os';
import type { Ctx } from '../context';
import { readTraceFile, serializeTraceFile } from '../glue/trace-file';
import { MAX_TRACE_BYTES, refuseLargeFile } from '../glue/file-limits';
import { overwriteDecision, writeFileAtomic } from '../glue/atomic-write';
import { isGzip } from '../../native/import/index';
import { withCancellableProgress } from '../progress';
import type { Trace } from '../../engine/index';
import { checkUserFile } from '../user-files';

/** Reads and parses a trace file (plain or gzipped), refusing oversized ones before reading them. */
export async function loadTrace(uri: vscode.Uri): Promise<{ trace: Trace; warnings: string[] }> {
  const name = uri.path.split('/').pop() ?? uri.path;
  // Devices and FIFOs are refused here; the size check after it keeps the timeline's own advice.
  const size = await checkUserFile(uri, 'streamed-trace');
  const refusal = refuseLargeFile(name, size, MAX_TRACE_BYTES, 'trace');
  if (refusal) throw new Error(refusal);
  let bytes = await vscode.workspace.fs.readFile(uri);
  if (isGzip(bytes)) {
    bytes = gunzipSync(bytes, { maxOutputLength: MAX_TRACE_BYTES });
  }
  const { trace, warnings } = readTraceFile(new TextDecoder().decode(bytes), uri.fsPath);
  return { trace, warnings };
}

export async function openTrace(ctx: Ctx, uri?: unknown): Promise<void> {
  let target = uri instanceof vscode.Uri ? uri : undefined;
  if (!target) {
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: false,
      openLabel: vscode.l10n.t('Open Trace'),
      filters: {
        [vscode.l10n.t('Chrome / Perfetto trace')]: ['json', 'gz'],
        [vscode.l10n.t('All files')]: ['*'],
      },
    });
    if (!picked?.[0]) return;
    target = picked[0];
  }
  const file = target;
  const { trace, warnings } = await withCancellableProgress(
    vscode.l10n.t('Opening {0}', file.path.split('/').pop() ?? ''),
    () => loadTrace(file),
  );
  for (const w of warnings) ctx.log.warn(`${file.fsPath}: ${w}`);
  await ctx.panels.showTrace(trace, { uri: file.toString(), label: file.path.split('/').pop() ?? file.fsPath });
}

/** A file name from the trace title: letters, digits, dots and dashes only. */
export function suggestedTraceName(title: string): string {
  const base =
    title
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 80) || 'trace';
  return `${base}.cptrace.json`;
}

export async function exportTrace(ctx: Ctx, uri?: unknown): Promise<void> {
  const trace = ctx.panels.activeTraceView?.trace;
  if (!trace) {
    void vscode.window.showInformationMessage(
      vscode.l10n.t('There is no trace to export: profile something or open a trace first.'),
    );
    return;
  }
  const folder = ctx.workspaceRoot ?? vscode.Uri.file(homedir());
  let target = uri instanceof vscode.Uri ? uri : undefined;
  // The save dialog asks before replacing a file itself; a target passed in by a caller has not been asked about.
  let confirmed = false;
  if (!target) {
    target = await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.joinPath(folder, suggestedTraceName(trace.metadata.title)),
      saveLabel: vscode.l10n.t('Export Trace'),
      filters: { [vscode.l10n.t('Chrome / Perfetto trace (opens in the timeline too)')]: ['json'] },
    });
    if (!target) return;
    confirmed = true;
  }
  const decision = await overwriteDecision(target.fsPath, confirmed);
  if (decision === 'refuse')
    throw new Error(vscode.l10n.t('{0} is not a regular file; choose another name.', target.fsPath));
  if (decision === 'ask') {
    const replace = vscode.l10n.t('Replace');
    const yes = await vscode.window.showWarningMessage(
      vscode.l10n.t('{0} exists. Replace it?', target.fsPath),
      { modal: true },
      replace,
    );
    if (yes !== replace) return;
  }
  await writeFileAtomic(target.fsPath, serializeTraceFile(trace));
  ctx.log.info(`Exported ${trace.spans.length} spans to ${target.fsPath}`);
  // Not awaited: the command is done when the file is written, whether or not the user reads the message.
  const written = target;
  void vscode.window
    .showInformationMessage(
      vscode.l10n.t(
        'Exported the trace to {0}. It opens in Perfetto and in the timeline.',
        vscode.workspace.asRelativePath(written),
      ),
      vscode.l10n.t('Reveal'),
    )
    .then((open) => {
      if (open) void vscode.commands.executeCommand('revealFileInOS', written);
    });
}
