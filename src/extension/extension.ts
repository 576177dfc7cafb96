// Extension entry point. The commands, lenses, diagnostics and panels are registered in later modules.
import type * as vscode from 'vscode';

export function activate(_context: vscode.ExtensionContext): void {}

export function deactivate(): void {}
