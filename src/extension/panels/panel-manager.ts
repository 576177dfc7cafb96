// Owns the three panels (timeline, charts, topology): one of each, reused and revealed, restored after a reload
// by their serializers. Traces the user has not saved are kept in the extension's storage so that a restored
// timeline can load them again; charts and topology carry their data in the webview state.
import * as vscode from 'vscode';
import { validatePanelState, type TrainingChanges } from '../../protocol';
import type { ChartsData, PanelKind, TopologyData, Trace } from './protocol-types';
import { panelTitle, VIEW_TYPES, WiredWebview, webviewOptions } from './panel-wiring';
import { readTraceFile, serializeTraceFile } from '../glue/trace-file';
import { writeFileAtomic, removeStaleTemps } from '../glue/atomic-write';
import type { CoreServices } from '../core';
import { sourceExtent, type SourceExtent } from '../glue/span-links';
import * as path from 'node:path';
import { asMicros } from '../../engine/index';
import { restoredRerun, rerunCommandId } from '../glue/charts-rerun';

/**
 * The timeline keeps its page while hidden (a large trace is costly to send again); the charts and topology reload
 * from their saved state when shown again.
 */
const RETAINS_CONTEXT: Readonly<Record<PanelKind, boolean>> = { timeline: true, charts: false, topology: false };

export class PanelManager implements vscode.Disposable {
  private readonly open = new Map<PanelKind, { panel: vscode.WebviewPanel; wired: WiredWebview }>();
  private readonly disposables: vscode.Disposable[] = [];
  /** The webview whose trace Export Trace writes: the last one focused or filled. */
  activeTraceView: WiredWebview | undefined;
  /**
   * Runs the charts panel's training profile or sweep again with changed assumptions; after a reload, rebuilt from
   * what the panel's saved assumptions name (the config and the changes made so far).
   */
  private chartsRerun: ((changes: TrainingChanges) => PromiseLike<unknown>) | undefined;

  constructor(private readonly ctx: CoreServices) {
    for (const kind of Object.keys(VIEW_TYPES) as PanelKind[]) {
      this.disposables.push(
        vscode.window.registerWebviewPanelSerializer(VIEW_TYPES[kind], {
          deserializeWebviewPanel: (panel, state) => this.restore(kind, panel, state),
        }),
      );
    }
  }

  /** Shows a trace in the timeline. Unsaved traces are stored so the panel survives a window reload. */
  async showTrace(trace: Trace, source?: { uri: string; label: string }): Promise<void> {
    const stored = source ?? (await this.store(trace));
    const wired = this.reveal('timeline');
    wired.showTrace(trace, stored);
    this.setActiveTrace(wired);
  }

  /**
   * Shows chart data. With `background`, an open charts panel is updated without coming to the front and none is
   * created, so a command whose answer is the timeline keeps the timeline visible.
   */
  showCharts(
    data: ChartsData,
    options: { background?: boolean; rerun?: (changes: TrainingChanges) => PromiseLike<unknown> } = {},
  ): void {
    if (options.background) {
      this.open.get('charts')?.wired.post({ type: 'charts', data });
      return;
    }
    // The panel's Assumptions card re-runs whatever produced the data it shows, and nothing once other data came.
    this.chartsRerun = options.rerun;
    this.reveal('charts').post({ type: 'charts', data });
  }

  /** Tells the charts panel, when open, that what it asked for failed; it keeps its charts. */
  showChartsError(message: string): void {
    this.open.get('charts')?.wired.post({ type: 'error', message });
  }

  /** The charts panel's Assumptions card asked for a re-run with changed values (validated by the dispatcher). */
  private async rerunCharts(changes: TrainingChanges): Promise<void> {
    if (!this.chartsRerun) {
      this.showChartsError(
        vscode.l10n.t(
          'This panel was restored after a reload: run Profile Training Config or Sweep Bucket Size again to change its assumptions.',
        ),
      );
      return;
    }
    await this.chartsRerun(changes);
  }

  showTopology(data: TopologyData): void {
    this.reveal('topology').post({ type: 'topology', data });
  }

  /**
   * Shows the spans that came from `file`:`line` in the timeline that shows a trace (the reveal message), and
   * returns their extent; undefined when no trace is shown or none of its spans came from there.
   */
  revealSource(file: string, line: number): SourceExtent | undefined {
    const wired = this.activeTraceView;
    if (!wired?.trace) return undefined;
    const extent = sourceExtent(wired.trace, file, line, path.resolve);
    if (!extent) return undefined;
    for (const { panel, wired: candidate } of this.open.values())
      if (candidate === wired) panel.reveal(undefined, true);
    wired.post({ type: 'reveal', startUs: asMicros(extent.startUs), endUs: asMicros(extent.endUs) });
    return extent;
  }

  setActiveTrace(view: WiredWebview | undefined): void {
    this.activeTraceView = view;
    void vscode.commands.executeCommand('setContext', 'collectiveProfiler.hasTrace', Boolean(view?.trace));
  }

  private reveal(kind: PanelKind): WiredWebview {
    const existing = this.open.get(kind);
    if (existing) {
      existing.panel.reveal(undefined, true);
      return existing.wired;
    }
    const panel = vscode.window.createWebviewPanel(
      VIEW_TYPES[kind],
      panelTitle(kind),
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      {
        ...webviewOptions(this.ctx.extensionUri),
        retainContextWhenHidden: RETAINS_CONTEXT[kind],
      },
    );
    return this.adopt(kind, panel);
  }

  private adopt(kind: PanelKind, panel: vscode.WebviewPanel): WiredWebview {
    panel.iconPath = vscode.Uri.joinPath(this.ctx.extensionUri, 'media', 'icon.png');
    const wired = new WiredWebview(
      this.ctx,
      kind,
      panel.webview,
      kind === 'charts' ? { rerunTraining: (m) => this.rerunCharts(m.changes) } : {},
    );
    this.open.set(kind, { panel, wired });
    panel.onDidChangeViewState((e) => {
      if (e.webviewPanel.active && wired.trace) this.setActiveTrace(wired);
      // A hidden webview that does not retain its context is torn down, and a message posted to it is lost (a
      // re-run's charts, posted right after the timeline came to the front, were). Shown again, its page loads
      // anew and says ready; messages wait for that.
      if (!e.webviewPanel.visible && !RETAINS_CONTEXT[kind]) wired.awaitReady();
    });
    panel.onDidDispose(() => {
      wired.dispose();
      if (kind === 'charts') this.chartsRerun = undefined;
      this.open.delete(kind);
      if (this.activeTraceView === wired) this.setActiveTrace(undefined);
    });
    return wired;
  }

  /** Restores a panel after a reload from the state its webview saved (validated: the webview is untrusted). */
  private async restore(kind: PanelKind, panel: vscode.WebviewPanel, raw: unknown): Promise<void> {
    const wired = this.adopt(kind, panel);
    const state = validatePanelState(raw);
    if (!state || state.panel !== kind) {
      wired.post({ type: 'error', message: vscode.l10n.t('Nothing to restore: run a profile or open a trace again.') });
      return;
    }
    try {
      if (state.panel === 'timeline' && state.source) {
        const uri = vscode.Uri.parse(state.source.uri, true);
        if (uri.scheme !== 'file') throw new Error(vscode.l10n.t('cannot reload a trace from {0}:', uri.scheme));
        const trace = readTraceFile(
          new TextDecoder().decode(await vscode.workspace.fs.readFile(uri)),
          uri.fsPath,
        ).trace;
        wired.showTrace(trace, state.source);
        this.setActiveTrace(wired);
      } else if (state.panel === 'charts' && state.data) {
        this.chartsRerun = this.rerunAfterReload(state.data.assumptions);
        wired.post({ type: 'charts', data: state.data });
      } else if (state.panel === 'topology' && state.data) {
        wired.post({ type: 'topology', data: state.data });
      }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.ctx.log.warn(`Restoring the ${kind} panel: ${message}`);
      wired.post({ type: 'error', message: vscode.l10n.t('Could not restore this panel: {0}', message) });
    }
  }

  /**
   * The re-run of a restored charts panel: the command its assumptions name, on their config (a file), with the
   * changes made before the reload under the new ones. Undefined when the saved state names none or a bad one.
   */
  private rerunAfterReload(assumptions: unknown): ((changes: TrainingChanges) => PromiseLike<unknown>) | undefined {
    const rerun = restoredRerun(assumptions);
    if (!rerun) return undefined;
    let uri: vscode.Uri;
    try {
      uri = vscode.Uri.parse(rerun.configUri, true);
    } catch {
      return undefined;
    }
    if (uri.scheme !== 'file') return undefined;
    return (next) => vscode.commands.executeCommand(rerunCommandId(rerun.command), uri, { ...rerun.changes, ...next });
  }

  /** Keeps the last traces in global storage (atomically written) so restored timelines can reload them. */
  private async store(trace: Trace): Promise<{ uri: string; label: string } | undefined> {
    try {
      const folder = vscode.Uri.joinPath(this.ctx.extension.globalStorageUri, 'traces');
      await vscode.workspace.fs.createDirectory(folder);
      await removeStaleTemps(folder.fsPath);
      const name = `${Date.now().toString(36)}.cptrace.json`;
      const file = vscode.Uri.joinPath(folder, name);
      await writeFileAtomic(file.fsPath, serializeTraceFile(trace));
      await this.pruneStore(folder, 20);
      return { uri: file.toString(), label: trace.metadata.title };
    } catch (error) {
      this.ctx.log.warn(
        `Could not keep the trace for reloads: ${error instanceof Error ? error.message : String(error)}`,
      );
      return undefined;
    }
  }

  private async pruneStore(folder: vscode.Uri, keep: number): Promise<void> {
    const entries = (await vscode.workspace.fs.readDirectory(folder))
      .map(([n]) => n)
      .filter((n) => n.endsWith('.cptrace.json'))
      .sort();
    for (const name of entries.slice(0, Math.max(0, entries.length - keep))) {
      await vscode.workspace.fs.delete(vscode.Uri.joinPath(folder, name)).then(undefined, () => undefined);
    }
  }

  dispose(): void {
    for (const { panel } of this.open.values()) panel.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
