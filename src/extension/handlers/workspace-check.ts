// Check Gradient Scaling in Workspace: analyses every Python file (not only open ones) as one program, publishes
// the findings to the Problems panel, and can be cancelled at any point (the search, reading, analysing). At most
// MAX_FILES files are checked, and the summary says so when there were more; files that were not fully analysed
// (too large, syntax errors, bytes that are not UTF-8) are counted apart and listed in the log, never as clean.
import * as vscode from 'vscode';
import type { Ctx } from '../context';
import type { Unanalysed } from '../../analysis/types';
import { mayHaveFindings } from '../../analysis/select';
import { throwIfCancelled, withCancellableProgress, yieldToEventLoop } from '../progress';
import { checkUserFile } from '../user-files';
import { UserFileError } from '../../native/files/file-errors';
import { SKIPPED_FOLDERS_GLOB } from '../../analysis/skipped-folders';

/**
 * Folders that hold other people's code or generated files; their findings are not the user's to fix. The same
 * folders `check` skips, so the editor and the command line analyse the same files.
 */
export const EXCLUDED_FOLDERS = SKIPPED_FOLDERS_GLOB;
export const MAX_FILES = 5000;
const MAX_FILE_BYTES = 5 * 1024 * 1024;

export async function checkGradientScalingInWorkspace(ctx: Ctx, folder?: unknown): Promise<void> {
  const diagnostics = ctx.diagnostics;
  if (!diagnostics) throw new Error(vscode.l10n.t('Diagnostics are not available.'));
  const include = folder instanceof vscode.Uri ? new vscode.RelativePattern(folder, '**/*.py') : '**/*.py';
  const counts = new Map<string, number>();
  let withFindings = 0;
  let checked = 0;
  let moreThanLimit = false;
  const partial: { uri: vscode.Uri; unanalysed: readonly Unanalysed[] }[] = [];
  await withCancellableProgress(vscode.l10n.t('Checking gradient scaling'), async (signal, report) => {
    report(vscode.l10n.t('finding Python files'));
    // The search stops on Cancel too; VS Code's search (ripgrep) detects symbolic-link loops.
    const found = await vscode.workspace.findFiles(include, EXCLUDED_FOLDERS, MAX_FILES + 1, tokenOf(signal));
    throwIfCancelled(signal);
    moreThanLimit = found.length > MAX_FILES;
    const files = found.slice(0, MAX_FILES);
    checked = files.length;
    // Read every file first (open documents with their editor text), then analyse them as one program, so a
    // summing helper in one file is judged at its callers in the others.
    const inputs: { uri: vscode.Uri; text: string }[] = [];
    const skipped = new Map<string, Unanalysed[]>();
    for (const [index, uri] of files.entries()) {
      throwIfCancelled(signal);
      if (index % 20 === 0)
        report(vscode.l10n.t('reading {0}', vscode.workspace.asRelativePath(uri)), (index + 1) / files.length / 2);
      // A FIFO or a device named *.py would block the read: it is named as not analysed, like an unreadable file.
      let sizeBytes: number;
      try {
        sizeBytes = await checkUserFile(uri, 'source');
      } catch (error) {
        const message = `cannot read: ${error instanceof UserFileError ? error.reason : String(error)}`;
        partial.push({ uri, unanalysed: [{ reason: 'unreadable', whole: true, message }] });
        continue;
      }
      if (sizeBytes > MAX_FILE_BYTES) {
        partial.push({
          uri,
          unanalysed: [
            {
              reason: 'too-large',
              whole: true,
              message: `${(sizeBytes / 1e6).toFixed(1)} MB is past the 5 MB analysis limit; skipped`,
            },
          ],
        });
        continue;
      }
      const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
      const read = open ? { text: open.getText(), replaced: false } : decode(await vscode.workspace.fs.readFile(uri));
      // Replaced bytes matter only in a file the rules read: one that calls no trigger has none to hide.
      if (read.replaced && mayHaveFindings(read.text))
        skipped.set(uri.toString(), [
          { reason: 'not-utf8', whole: false, message: 'the file is not valid UTF-8; undecodable bytes were replaced' },
        ]);
      inputs.push({ uri, text: read.text });
      if (index % 20 === 19) await yieldToEventLoop();
    }
    // The manifests' version pins decide library contracts, as they do for `check` on the same folder.
    await diagnostics.loadManifests(folder instanceof vscode.Uri ? folder : undefined, tokenOf(signal));
    throwIfCancelled(signal);
    const results = await diagnostics.analyseFiles(inputs, async (index) => {
      throwIfCancelled(signal);
      if (index % 20 !== 0) return;
      // The program may also hold files of an earlier check, so the index can run past this check's files.
      const input = inputs[index];
      if (input)
        report(
          vscode.l10n.t('analysing {0}', vscode.workspace.asRelativePath(input.uri)),
          0.5 + (index + 1) / inputs.length / 2,
        );
      await yieldToEventLoop();
    });
    for (const { uri } of inputs) {
      const result = results.get(uri.toString());
      const found = result?.diagnostics ?? [];
      diagnostics.collection.set(uri, found);
      const unanalysed = [...(skipped.get(uri.toString()) ?? []), ...(result?.unanalysed ?? [])];
      if (unanalysed.length > 0) partial.push({ uri, unanalysed });
      if (found.length > 0) withFindings++;
      for (const d of found) {
        const code = typeof d.code === 'object' ? String(d.code.value) : String(d.code);
        counts.set(code, (counts.get(code) ?? 0) + 1);
      }
    }
  });
  if (checked === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('No Python files in the workspace.'));
    return;
  }
  for (const { uri, unanalysed } of partial) {
    for (const u of unanalysed)
      ctx.log.warn(
        `${u.whole ? 'Not analysed' : 'Partly analysed'}: ${vscode.workspace.asRelativePath(uri)}${u.line === undefined ? '' : `:${u.line + 1}`}: ${u.message}`,
      );
  }
  const summary = workspaceSummary({ checked, moreThanLimit, withFindings, counts, partial: partial.length });
  ctx.log.info(summary);
  const total = [...counts.values()].reduce((a, b) => a + b, 0);
  const showProblems = vscode.l10n.t('Show Problems');
  const showLog = vscode.l10n.t('Show Log');
  const actions = [...(total > 0 ? [showProblems] : []), ...(partial.length > 0 ? [showLog] : [])];
  const choice = await (moreThanLimit || partial.length > 0
    ? vscode.window.showWarningMessage(summary, ...actions)
    : vscode.window.showInformationMessage(summary, ...actions));
  if (choice === showProblems) void vscode.commands.executeCommand('workbench.actions.view.problems');
  else if (choice === showLog) void vscode.commands.executeCommand('collectiveProfiler.showLog');
}

/** The notification's sentence: findings, files not fully analysed, and the file limit when it was reached. */
export function workspaceSummary(s: {
  checked: number;
  moreThanLimit: boolean;
  withFindings: number;
  counts: ReadonlyMap<string, number>;
  partial: number;
}): string {
  const total = [...s.counts.values()].reduce((a, b) => a + b, 0);
  const byCode = [...s.counts]
    .sort()
    .map(([code, n]) => `${code} ×${n}`)
    .join(', ');
  const n = s.moreThanLimit ? vscode.l10n.t('the first {0}', s.checked.toLocaleString()) : `${s.checked}`;
  const head =
    total === 0
      ? vscode.l10n.t('Gradient scaling: no findings in {0} Python files', n)
      : total === 1
        ? vscode.l10n.t('Gradient scaling: 1 finding in {0} of {1} files ({2})', s.withFindings, n, byCode)
        : vscode.l10n.t('Gradient scaling: {0} findings in {1} of {2} files ({3})', total, s.withFindings, n, byCode);
  const partial =
    s.partial === 0
      ? ''
      : s.partial === 1
        ? vscode.l10n.t('; 1 file not fully analysed (see the log)')
        : vscode.l10n.t('; {0} files not fully analysed (see the log)', s.partial);
  const limit = s.moreThanLimit
    ? vscode.l10n.t(
        '; there are more than {0} Python files, so check a folder from the Explorer for the rest',
        MAX_FILES.toLocaleString(),
      )
    : '';
  return `${head}${partial}${limit}.`;
}

/** UTF-8 text, and whether bytes had to be replaced to decode it. */
function decode(bytes: Uint8Array): { text: string; replaced: boolean } {
  try {
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), replaced: false };
  } catch {
    return { text: new TextDecoder('utf-8').decode(bytes), replaced: true };
  }
}

/** A cancellation token that follows the progress notification's abort signal (for findFiles). */
function tokenOf(signal: AbortSignal): vscode.CancellationToken {
  return {
    get isCancellationRequested() {
      return signal.aborted;
    },
    onCancellationRequested: (listener, thisArgs, disposables) => {
      const fire = () => listener.call(thisArgs, undefined);
      signal.addEventListener('abort', fire);
      const subscription = { dispose: () => signal.removeEventListener('abort', fire) };
      disposables?.push(subscription);
      return subscription;
    },
  };
}
