// The latest findings per document, shared by the diagnostics (which fill it) and the code lenses and quick
// fixes (which read it).
import * as vscode from 'vscode';
import type { Finding } from '../analysis/types';

export class FindingsStore implements vscode.Disposable {
  private readonly byUri = new Map<string, readonly Finding[]>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  get(uri: vscode.Uri): readonly Finding[] {
    return this.byUri.get(uri.toString()) ?? [];
  }

  /**
   * Stores a document's findings and tells listeners only when they differ: every event re-renders all visible
   * code lenses, and a lens re-rendered under the pointer swallows the click.
   */
  set(uri: vscode.Uri, findings: readonly Finding[]): void {
    const key = uri.toString();
    // No findings before (a file just opened) and none now change no lens either.
    const before = this.byUri.get(key) ?? [];
    this.byUri.set(key, findings);
    if (!sameFindings(before, findings)) this.changed.fire(uri);
  }

  delete(uri: vscode.Uri): void {
    const before = this.byUri.get(uri.toString());
    if (this.byUri.delete(uri.toString()) && before && before.length > 0) this.changed.fire(uri);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

function sameFindings(a: readonly Finding[], b: readonly Finding[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((f, i) => {
    const g = b[i];
    return (
      f.code === g.code &&
      f.message === g.message &&
      f.range.startLine === g.range.startLine &&
      f.range.startColumn === g.range.startColumn &&
      f.range.endLine === g.range.endLine &&
      f.range.endColumn === g.range.endColumn
    );
  });
}
