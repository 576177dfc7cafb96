// Extension entry point. activate builds the shared context and registers commands, lenses, diagnostics, the
// status bar, the panels' serializers and the trace editor. Nothing heavy runs here: the tree-sitter parser
// loads when the first Python file is analysed, and the engine runs when a lens is resolved or a command runs.
import * as vscode from 'vscode';
import { Ctx } from './context';
import { ExtensionCore } from './core';
import { registerCommands } from './commands';
import { CollectiveLensProvider, LENS_SELECTOR } from './lenses';
import { ScalingDiagnostics } from './diagnostics';
import { FindingsStore } from './findings-store';
import { registerStatusBar } from './status-bar';
import { PanelManager } from './panels/panel-manager';
import { TraceEditorProvider } from './trace-editor';
import { useL10n } from './glue/l10n';

let active: ExtensionCore | undefined;

/** What activate returns, for the integration tests: the live context. */
export interface ExtensionApi {
  readonly ctx: Ctx;
}

export function activate(context: vscode.ExtensionContext): ExtensionApi {
  // Text the pure glue builds (lens titles, chart notes, advice) follows the display language from here on.
  useL10n(vscode.l10n);
  const started = Date.now();
  // The services are built first, each from the core (and the findings) it needs, then assembled into Ctx.
  const core = new ExtensionCore(context);
  active = core;
  context.subscriptions.push(core);
  const findings = new FindingsStore();
  const panels = new PanelManager(core);
  const diagnostics = new ScalingDiagnostics(core, findings);
  core.push(findings, panels, diagnostics);
  const ctx = new Ctx(core, { panels, diagnostics, findings });
  registerCommands(ctx);
  const lenses = new CollectiveLensProvider(core, findings);
  ctx.push(
    vscode.languages.registerCodeLensProvider(LENS_SELECTOR, lenses),
    vscode.languages.registerCodeActionsProvider(
      [{ language: 'python' }, { language: 'json' }, { language: 'jsonc' }],
      diagnostics,
      ScalingDiagnostics.metadata,
    ),
  );
  registerStatusBar(core);
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
