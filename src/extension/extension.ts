// Extension entry point. activate builds the shared context and registers commands, lenses, diagnostics, the
// status bar, the panels' serializers and the trace editor. Nothing heavy runs here: the tree-sitter parser
// loads when the first Python file is analysed, and the engine runs when a lens is resolved or a command runs.
import * as vscode from 'vscode';
import { Ctx } from './context';
import { registerCommands } from './commands';
import { CollectiveLensProvider, LENS_SELECTOR } from './lenses';
import { ScalingDiagnostics } from './diagnostics';
import { FindingsStore } from './findings-store';
import { registerStatusBar } from './status-bar';
import { PanelManager } from './panels/panel-manager';
import { TraceEditorProvider } from './trace-editor';

let active: Ctx | undefined;

/** What activate returns, for the integration tests: the live context. */
export interface ExtensionApi {
  readonly ctx: Ctx;
}

export function activate(context: vscode.ExtensionContext): ExtensionApi {
  const started = Date.now();
  const ctx = new Ctx(context);
  active = ctx;
  context.subscriptions.push(ctx);
  ctx.panels = new PanelManager(ctx);
  ctx.push(ctx.panels);
  const findings = new FindingsStore();
  ctx.findings = findings;
  ctx.push(findings);
  registerCommands(ctx);
  const lenses = new CollectiveLensProvider(ctx, findings);
  ctx.push(vscode.languages.registerCodeLensProvider(LENS_SELECTOR, lenses));
  ctx.diagnostics = new ScalingDiagnostics(ctx, findings);
  ctx.push(
    ctx.diagnostics,
    vscode.languages.registerCodeActionsProvider(
      [{ language: 'python' }, { language: 'json' }, { language: 'jsonc' }],
      ctx.diagnostics,
      ScalingDiagnostics.metadata,
    ),
  );
  registerStatusBar(ctx);
  ctx.push(TraceEditorProvider.register(ctx));
  void vscode.commands.executeCommand('setContext', 'collectiveProfiler.hasTrace', false);
  ctx.log.info(
    `Collective Profiler activated in ${Date.now() - started} ms (workspace ${ctx.trusted ? 'trusted' : 'untrusted: the native engine is off'}).`,
  );
  return { ctx };
}

export function deactivate(): void {
  active?.dispose();
  active = undefined;
}
