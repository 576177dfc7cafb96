// What commands receive: the core services and the ones built on them, each finished before Ctx exists. Handlers
// take Ctx instead of reaching for globals; the services themselves take only the narrow part of the core they use,
// so no service imports Ctx and nothing is filled in after construction.
import type * as vscode from 'vscode';
import type { CoreServices, ExtensionCore, SelectedSystem } from './core';
import type { Settings } from './settings';
import type { PanelManager } from './panels/panel-manager';
import type { ScalingDiagnostics } from './diagnostics';
import type { FindingsStore } from './findings-store';

/** The services activate builds on top of the core. */
export interface ExtensionServices {
  /** The webview panels, created lazily on first use. */
  readonly panels: PanelManager;
  /** The live diagnostics, which the workspace check reuses. */
  readonly diagnostics: ScalingDiagnostics;
  /** The latest findings per document (filled by the diagnostics). */
  readonly findings: FindingsStore;
}

export class Ctx implements CoreServices, ExtensionServices {
  readonly panels: PanelManager;
  readonly diagnostics: ScalingDiagnostics;
  readonly findings: FindingsStore;

  constructor(
    readonly core: ExtensionCore,
    services: ExtensionServices,
  ) {
    this.panels = services.panels;
    this.diagnostics = services.diagnostics;
    this.findings = services.findings;
  }

  get log(): vscode.LogOutputChannel {
    return this.core.log;
  }
  get settings(): Settings {
    return this.core.settings;
  }
  get onDidChangeSettings(): vscode.Event<Settings> {
    return this.core.onDidChangeSettings;
  }
  get onDidChangeSystem(): vscode.Event<void> {
    return this.core.onDidChangeSystem;
  }
  get trusted(): boolean {
    return this.core.trusted;
  }
  get extension(): vscode.ExtensionContext {
    return this.core.extension;
  }
  get extensionUri(): vscode.Uri {
    return this.core.extensionUri;
  }
  get workspaceRoot(): vscode.Uri | undefined {
    return this.core.workspaceRoot;
  }
  get measurementWarnings(): vscode.DiagnosticCollection {
    return this.core.measurementWarnings;
  }
  get systemGeneration(): number {
    return this.core.systemGeneration;
  }
  get resolvedSystem(): SelectedSystem | undefined {
    return this.core.resolvedSystem;
  }
  rememberSystem(generation: number, system: SelectedSystem): void {
    this.core.rememberSystem(generation, system);
  }
  systemDidChange(): void {
    this.core.systemDidChange();
  }
  push(...items: vscode.Disposable[]): void {
    this.core.push(...items);
  }
}
