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

  set(uri: vscode.Uri, findings: readonly Finding[]): void {
    this.byUri.set(uri.toString(), findings);
    this.changed.fire(uri);
  }

  delete(uri: vscode.Uri): void {
    if (this.byUri.delete(uri.toString())) this.changed.fire(uri);
  }

  dispose(): void {
    this.changed.dispose();
  }
}
