// The extension's core services, built first in activate: the log, the settings (re-read on change), the
// generation of the selected system, Workspace Trust and the measurement warnings. It depends on nothing else of
// the extension, so the services built on it (panels, diagnostics, lenses) take it, or a narrow view of it, in
// their constructors, and Ctx (context.ts) is assembled from finished services.
import * as vscode from 'vscode';
import { readSettings, type Settings } from './settings';
import { executableFromSettings } from './glue/trust';
import type { System, SystemSpec } from '../engine/index';

/** The selected system resolved (system.ts), or why it cannot be used. */
export type SelectedSystem =
  | {
      readonly ok: true;
      readonly spec: SystemSpec;
      readonly system: System;
      readonly label: string;
      readonly source: string;
    }
  | { readonly ok: false; readonly error: string; readonly source: string };

/** The settings the selected system is resolved from; when this changes, so does the system. */
function systemKey(settings: Settings): string {
  return `${settings.system}|${settings.nodes}|${settings.ncclVersion}`;
}

export class ExtensionCore implements vscode.Disposable {
  readonly log: vscode.LogOutputChannel;
  private current: Settings;
  private readonly settingsChanged = new vscode.EventEmitter<Settings>();
  /** Fires after the settings were re-read, e.g. to refresh lenses and diagnostics. */
  readonly onDidChangeSettings = this.settingsChanged.event;
  private readonly systemChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeSystem = this.systemChanged.event;
  private readonly disposables: vscode.Disposable[] = [];
  private generation = 0;
  private resolved: { readonly generation: number; readonly system: SelectedSystem } | undefined;

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

  /**
   * Bumped on every system change: a resolution of the selected system is cached with the generation it started
   * in (system.ts), so one started before a change is never served after it.
   */
  get systemGeneration(): number {
    return this.generation;
  }

  /** The selected system resolved in the current generation, if it was. */
  get resolvedSystem(): SelectedSystem | undefined {
    return this.resolved?.generation === this.generation ? this.resolved.system : undefined;
  }

  /** Keeps a resolution, unless the system changed while it was being made. */
  rememberSystem(generation: number, system: SelectedSystem): void {
    if (generation === this.generation) this.resolved = { generation, system };
  }

  /** Moves to a new system generation and tells lenses and the status bar to recompute. */
  systemDidChange(): void {
    this.generation++;
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

/** The core's public surface, which Ctx offers too: what services and helpers take instead of the whole Ctx. */
export type CoreServices = Pick<
  ExtensionCore,
  | 'log'
  | 'settings'
  | 'onDidChangeSettings'
  | 'onDidChangeSystem'
  | 'trusted'
  | 'extension'
  | 'extensionUri'
  | 'workspaceRoot'
  | 'measurementWarnings'
  | 'systemGeneration'
  | 'resolvedSystem'
  | 'rememberSystem'
  | 'systemDidChange'
  | 'push'
>;
