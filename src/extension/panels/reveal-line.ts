// "Reveal Line in Timeline": from a line of code to the spans it produced, the way back from a span's source link.
// The panel manager finds the spans and sends the timeline a reveal message; this adapter reads the editor and
// says so when the shown trace has nothing from that line.
import * as vscode from 'vscode';
import type { Ctx } from '../context';

export async function revealLineInTimeline(ctx: Ctx): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    await vscode.window.showInformationMessage(
      vscode.l10n.t('Open the file whose line you want to find in the timeline.'),
    );
    return;
  }
  const file = editor.document.uri.fsPath;
  const line = editor.selection.active.line + 1;
  const extent = ctx.panels.revealSource(file, line);
  if (!extent) {
    await vscode.window.showInformationMessage(
      vscode.l10n.t('No span of the shown trace comes from {0}:{1}.', vscode.workspace.asRelativePath(file), line),
    );
    return;
  }
  ctx.log.debug(`revealed ${extent.spans} span(s) of ${file}:${line} in the timeline`);
}
