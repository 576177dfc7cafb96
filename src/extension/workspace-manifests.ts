// The workspace's package manifests (requirements*.txt, setup.cfg, pyproject.toml), read for the analysis as `check`
// reads them on the command line: the versions they pin decide library contracts (transformers' Trainer divides
// the loss at some releases and not at others), so the editor must see the same pins to give the same findings.
// setup.py is a Python file and reaches the program with the others.
import * as vscode from 'vscode';
import type { PythonAnalyzer } from './analysis-host';
import { EXCLUDED_FOLDERS } from './handlers/workspace-check';
import { isManifest } from '../analysis/contracts/versions';
import { readUserFile } from './user-files';

/** The names `isManifest` accepts, as a search pattern (the search is case-sensitive; isManifest filters again). */
export const MANIFEST_GLOB = '**/{requirements*.txt,Requirements*.txt,REQUIREMENTS*.txt,setup.cfg,pyproject.toml}';
/** A workspace with more manifests than this is a monorepo of vendored packages; the first ones are read. */
const MAX_MANIFESTS = 1000;

/** Program paths name files on disk by their file-system path, other documents by their URI (as diagnostics.ts). */
export function manifestPath(uri: vscode.Uri): string {
  return uri.scheme === 'file' ? uri.fsPath : uri.toString();
}

/**
 * Finds and reads the manifests under `base` (the whole workspace when undefined) and gives them to the analyzer.
 * Open documents give their editor text. Returns how many were read.
 */
export async function loadManifests(
  analyzer: PythonAnalyzer,
  base: vscode.Uri | undefined,
  token: vscode.CancellationToken | undefined,
): Promise<number> {
  const include = base ? new vscode.RelativePattern(base, MANIFEST_GLOB) : MANIFEST_GLOB;
  const uris = await vscode.workspace.findFiles(include, EXCLUDED_FOLDERS, MAX_MANIFESTS, token);
  const files: { path: string; text: string }[] = [];
  for (const uri of uris) {
    if (token?.isCancellationRequested) break;
    const path = manifestPath(uri);
    if (!isManifest(path.replace(/\\/g, '/'))) continue;
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    try {
      const text = open ? open.getText() : new TextDecoder().decode(await readUserFile(uri, 'source'));
      files.push({ path, text });
    } catch {
      // An unreadable manifest pins nothing; the Python files it would pin are still analysed, as in `check`.
    }
  }
  // A complete search of the whole workspace also tells which manifests were deleted since the last one.
  analyzer.setManifests(files, base === undefined && uris.length < MAX_MANIFESTS && !token?.isCancellationRequested);
  return files.length;
}
