// Background indexing: once the first Python file is analysed, the workspace's other Python files are read and
// their helpers learnt, so the diagnostics of an open file know a summing helper that lives in a closed one. It is
// bounded (the workspace check's file and size limits), yields to the event loop between files, stops when the
// extension is disposed, and re-analyses the open documents when it is done. The package manifests are read too,
// so a library contract is judged with the versions `check` would read.
import * as vscode from 'vscode';
import type { ProgramOptions, PythonAnalyzer } from './analysis-host';
import { EXCLUDED_FOLDERS, MAX_FILES } from './handlers/workspace-check';
import { yieldToEventLoop } from './progress';
import { checkUserFile } from './user-files';
import { loadManifests } from './workspace-manifests';

const MAX_FILE_BYTES = 5 * 1024 * 1024;
const YIELD_EVERY_FILES = 10;

export async function indexWorkspace(
  analyzer: PythonAnalyzer,
  options: ProgramOptions,
  token: vscode.CancellationToken,
  log: vscode.LogOutputChannel,
): Promise<number> {
  if (!vscode.workspace.workspaceFolders?.length) return 0;
  const started = Date.now();
  const uris = await vscode.workspace.findFiles('**/*.py', EXCLUDED_FOLDERS, MAX_FILES, token);
  const open = new Set(vscode.workspace.textDocuments.map((d) => d.uri.toString()));
  const files: { path: string; text: string }[] = [];
  for (const [index, uri] of uris.entries()) {
    if (token.isCancellationRequested) return 0;
    if (open.has(uri.toString()) || uri.scheme !== 'file') continue;
    try {
      if ((await checkUserFile(uri, 'source')) > MAX_FILE_BYTES) continue;
      files.push({ path: uri.fsPath, text: new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)) });
    } catch {
      // A file deleted or unreadable meanwhile teaches nothing; the workspace check reports such files.
    }
    if (index % YIELD_EVERY_FILES === YIELD_EVERY_FILES - 1) await yieldToEventLoop();
  }
  const manifests = await loadManifests(analyzer, undefined, token);
  if (token.isCancellationRequested) return 0;
  await analyzer.prepare(files, options, async (index) => {
    if (token.isCancellationRequested) throw new vscode.CancellationError();
    if (index % YIELD_EVERY_FILES === YIELD_EVERY_FILES - 1) await yieldToEventLoop();
  });
  log.info(
    `Indexed ${files.length} Python files and ${manifests} package manifests of the workspace for the gradient-scaling check in ${Date.now() - started} ms.`,
  );
  // Either can change an open file's findings: a helper it calls, or the version pins of a library contract.
  return files.length + manifests;
}
