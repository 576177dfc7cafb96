// The custom editor for the extension's trace files (*.cptrace.json): opens them straight into the timeline. The
// document is read-only; Export Trace writes copies.
import * as vscode from 'vscode';
import type { Ctx } from './context';
import { WiredWebview } from './panels/panel-wiring';

export const TRACE_EDITOR_VIEW_TYPE = 'collectiveProfiler.traceEditor';

class TraceDocument implements vscode.CustomDocument {
  constructor(readonly uri: vscode.Uri) {}
  dispose(): void {}
}

export class TraceEditorProvider implements vscode.CustomReadonlyEditorProvider<TraceDocument> {
  constructor(private readonly ctx: Ctx) {}

  static register(ctx: Ctx): vscode.Disposable {
    return vscode.window.registerCustomEditorProvider(TRACE_EDITOR_VIEW_TYPE, new TraceEditorProvider(ctx), {
      supportsMultipleEditorsPerDocument: true,
      webviewOptions: { retainContextWhenHidden: true },
    });
  }

  openCustomDocument(uri: vscode.Uri): TraceDocument {
    return new TraceDocument(uri);
  }

  async resolveCustomEditor(document: TraceDocument, panel: vscode.WebviewPanel): Promise<void> {
    const wired = new WiredWebview(this.ctx, 'timeline', panel.webview);
    panel.onDidDispose(() => {
      wired.dispose();
      if (this.ctx.panels.activeTraceView === wired) this.ctx.panels.setActiveTrace(undefined);
    });
    panel.onDidChangeViewState((e) => {
      if (e.webviewPanel.active && wired.trace) this.ctx.panels.setActiveTrace(wired);
    });
    try {
      const { loadTrace } = (await import('./lazy')).traceFiles;
      const { trace, warnings } = await loadTrace(document.uri);
      for (const w of warnings) this.ctx.log.warn(`${document.uri.fsPath}: ${w}`);
      wired.showTrace(trace, { uri: document.uri.toString(), label: document.uri.path.split('/').pop() ?? '' });
      this.ctx.panels.setActiveTrace(wired);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.ctx.log.error(`${document.uri.fsPath}: ${message}`);
      wired.post({ type: 'error', message });
    }
  }
}
