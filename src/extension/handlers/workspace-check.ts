// Check Gradient Scaling in Workspace: analyses every Python file (not only open ones) as one program, publishes
// the findings to the Problems panel, and can be cancelled.
import * as vscode from 'vscode';
import type { Ctx } from '../context';
import { throwIfCancelled, withCancellableProgress, yieldToEventLoop } from '../progress';

/** Folders that hold other people's code or generated files; their findings are not the user's to fix. */
export const EXCLUDED_FOLDERS = '**/{node_modules,.venv,venv,env,.env,site-packages,.git,__pycache__,build,dist,.tox,.mypy_cache}/**';
const MAX_FILES = 5000;
const MAX_FILE_BYTES = 5 * 1024 * 1024;

export async function checkGradientScalingInWorkspace(ctx: Ctx, folder?: unknown): Promise<void> {
  const diagnostics = ctx.diagnostics;
  if (!diagnostics) throw new Error('Diagnostics are not available.');
  const include = folder instanceof vscode.Uri ? new vscode.RelativePattern(folder, '**/*.py') : '**/*.py';
  const files = await vscode.workspace.findFiles(include, EXCLUDED_FOLDERS, MAX_FILES);
  if (files.length === 0) {
    void vscode.window.showInformationMessage('No Python files in the workspace.');
    return;
  }
  const counts = new Map<string, number>();
  let withFindings = 0;
  await withCancellableProgress(`Checking gradient scaling in ${files.length} Python files`, async (signal, report) => {
    // Read every file first (open documents with their editor text), then analyse them as one program, so a
    // summing helper in one file is judged at its callers in the others.
    const inputs: { uri: vscode.Uri; text: string }[] = [];
    for (const [index, uri] of files.entries()) {
      throwIfCancelled(signal);
      report(`reading ${vscode.workspace.asRelativePath(uri)}`, (index + 1) / files.length / 2);
      const stat = await vscode.workspace.fs.stat(uri);
      if (stat.size > MAX_FILE_BYTES) {
        ctx.log.info(`Skipped ${vscode.workspace.asRelativePath(uri)}: ${(stat.size / 1e6).toFixed(1)} MB is past the 5 MB analysis limit.`);
        continue;
      }
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      inputs.push({ uri, text: open ? open.getText() : new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)) });
      if (index % 20 === 19) await yieldToEventLoop();
    }
    const results = await diagnostics.analyseFiles(inputs, async (index) => {
      throwIfCancelled(signal);
      if (index % 20 !== 0) return;
      report(`analysing ${vscode.workspace.asRelativePath(inputs[index].uri)}`, 0.5 + (index + 1) / inputs.length / 2);
      await yieldToEventLoop();
    });
    for (const { uri } of inputs) {
      const found = results.get(uri.toString()) ?? [];
      diagnostics.collection.set(uri, found);
      if (found.length > 0) withFindings++;
      for (const d of found) {
        const code = typeof d.code === 'object' ? String(d.code.value) : String(d.code);
        counts.set(code, (counts.get(code) ?? 0) + 1);
      }
    }
  });
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const byCode = [...counts].sort().map(([code, n]) => `${code} ×${n}`).join(', ');
  const summary = total === 0
    ? `Gradient scaling: no findings in ${files.length} Python files.`
    : `Gradient scaling: ${total} finding${total === 1 ? '' : 's'} in ${withFindings} of ${files.length} files (${byCode}).`;
  ctx.log.info(summary);
  const choice = await vscode.window.showInformationMessage(summary, ...(total > 0 ? ['Show Problems'] : []));
  if (choice) void vscode.commands.executeCommand('workbench.actions.view.problems');
}
