// The extension's shared state, built once in activate: the log, the settings (re-read on change), the selected
// system, Workspace Trust, and the panels. Commands receive it instead of reaching for globals.
import * as vscode from 'vscode';
import { readSettings, type Settings } from './settings';
import { executableFromSettings } from './glue/trust';
import type { PanelManager } from './panels/panel-manager';
import type { SelectedSystem } from './system';
import type { ScalingDiagnostics } from './diagnostics';
import type { FindingsStore } from './findings-store';

/** The settings the selected system is resolved from; when this changes, so does the system. */
function systemKey(settings: Settings): string {
  return `${settings.system}|${settings.nodes}|${settings.ncclVersion}`;
}

export class Ctx implements vscode.Disposable {
  readonly log: vscode.LogOutputChannel;
  private current: Settings;
  private readonly settingsChanged = new vscode.EventEmitter<Settings>();
  /** Fires after the settings were re-read, e.g. to refresh lenses and diagnostics. */
  readonly onDidChangeSettings = this.settingsChanged.event;
  private readonly systemChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeSystem = this.systemChanged.event;
  private readonly disposables: vscode.Disposable[] = [];
  /** Set by the panel manager once it exists; panels are created lazily on first use. */
  panels!: PanelManager;
  /** The live diagnostics, which the workspace check reuses. */
  diagnostics: ScalingDiagnostics | undefined;
  /** The latest findings per document (filled by the diagnostics). */
  findings: FindingsStore | undefined;
  /** Memoised resolution of the selected system; cleared when the settings change. */
  selected: SelectedSystem | undefined;
  /** Bumped on every system change, so a resolution started before the change is not cached after it. */
  systemGeneration = 0;

  /** Warnings on the rows of measurement files whose busbw is well below the model (Compare with Model). */
  readonly measurementWarnings: vscode.DiagnosticCollection;

  constructor(readonly extension: vscode.ExtensionContext) {
    this.log = vscode.window.createOutputChannel('Collective Profiler', { log: true });
    this.measurementWarnings = vscode.languages.createDiagnosticCollection('collective-profiler-measurements');
    this.current = this.readAndReport();
    this.disposables.push(
      this.log,
      this.settingsChanged,
      this.systemChanged,
      this.measurementWarnings,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('collectiveProfiler')) return;
        const systemBefore = systemKey(this.current);
        this.current = this.readAndReport();
        this.settingsChanged.fire(this.current);
        if (systemKey(this.current) !== systemBefore) this.systemDidChange();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() =>
        this.log.info('Workspace trusted: Run on This Machine is now available.'),
      ),
    );
  }

  get settings(): Settings {
    return this.current;
  }

  get trusted(): boolean {
    return vscode.workspace.isTrusted;
  }

  get extensionUri(): vscode.Uri {
    return this.extension.extensionUri;
  }

  /** Forgets the resolved system and tells lenses and the status bar to recompute. */
  systemDidChange(): void {
    this.selected = undefined;
    this.systemGeneration++;
    this.systemChanged.fire();
  }

  /** The workspace folder a relative path in the settings is resolved against. */
  get workspaceRoot(): vscode.Uri | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri;
  }

  private readAndReport(): Settings {
    const config = vscode.workspace.getConfiguration('collectiveProfiler');
    const { settings, problems } = readSettings({
      get: (key) => config.get(key),
      globalValue: (key) => config.inspect(key)?.globalValue,
    });
    for (const p of problems) this.log.warn(`Setting ${p.key}: ${p.message}`);
    for (const key of ['native.pythonPath', 'native.torchrunPath']) {
      const inspection = config.inspect<string>(key);
      const { ignored } = executableFromSettings({ key: `collectiveProfiler.${key}`, ...inspection });
      if (ignored) this.log.warn(ignored);
    }
    return settings;
  }

  push(...items: vscode.Disposable[]): void {
    this.disposables.push(...items);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
