// Wires one webview (a panel or a custom editor) to the protocol: its HTML with a nonce'd CSP, resource roots
// limited to the extension's media and dist folders, every incoming message validated before a handler sees it,
// and outgoing messages queued until the page says it is ready.
import * as vscode from 'vscode';
import type { PanelKind, ToWebview, FromWebview, Trace } from './protocol-types';
import { buildPanelHtml, makeNonce } from './html';
import { createMessageDispatcher, isInsideFolders, type MessageHandlers } from '../glue/message-dispatch';
import { traceMessages } from '../glue/trace-chunks';
import type { CoreServices } from '../core';
import { spanSelection } from '../glue/span-links';
import { webviewStrings } from '../glue/webview-strings';
import * as path from 'node:path';

/** A panel's title in the display language (read when the panel opens, never at load time). */
export function panelTitle(kind: PanelKind): string {
  switch (kind) {
    case 'timeline':
      return vscode.l10n.t('Collective Timeline');
    case 'charts':
      return vscode.l10n.t('Collective Charts');
    case 'topology':
      return vscode.l10n.t('Collective Topology');
  }
}

export const VIEW_TYPES: Readonly<Record<PanelKind, string>> = {
  timeline: 'collectiveProfiler.timeline',
  charts: 'collectiveProfiler.charts',
  topology: 'collectiveProfiler.topology',
};

/** Webview options shared by panels and the custom editor: scripts on, and only media/ and dist/ readable. */
export function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewOptions {
  return {
    enableScripts: true,
    enableCommandUris: false,
    localResourceRoots: [vscode.Uri.joinPath(extensionUri, 'media'), vscode.Uri.joinPath(extensionUri, 'dist')],
  };
}

function themeKind(): Extract<ToWebview, { type: 'theme' }>['kind'] {
  switch (vscode.window.activeColorTheme.kind) {
    case vscode.ColorThemeKind.Light:
      return 'light';
    case vscode.ColorThemeKind.HighContrast:
      return 'high-contrast';
    case vscode.ColorThemeKind.HighContrastLight:
      return 'high-contrast-light';
    default:
      return 'dark';
  }
}

/** A live webview speaking the protocol. */
export class WiredWebview implements vscode.Disposable {
  private ready = false;
  private readonly queue: ToWebview[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  /** The trace this webview shows, for Export Trace. */
  trace: Trace | undefined;
  sourceLabel: string | undefined;
  /** The last charts or topology data posted: a page that loads again is given it on its ready message. */
  private lastContent: ToWebview | undefined;

  constructor(
    private readonly ctx: CoreServices,
    readonly kind: PanelKind,
    readonly webview: vscode.Webview,
    extraHandlers: MessageHandlers = {},
  ) {
    webview.options = webviewOptions(ctx.extensionUri);
    const dist = vscode.Uri.joinPath(ctx.extensionUri, 'dist');
    webview.html = buildPanelHtml({
      panel: kind,
      cspSource: webview.cspSource,
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview', `${kind}.js`)).toString(),
      codiconsUri: webview.asWebviewUri(vscode.Uri.joinPath(dist, 'codicons', 'codicon.css')).toString(),
      nonce: makeNonce(),
      title: panelTitle(kind),
      strings: webviewStrings(vscode.l10n),
      language: vscode.env.language,
    });
    const handlers: MessageHandlers = {
      ready: () => this.flush(),
      log: (m) => this.forwardLog(m),
      openSource: (m) => openSource(ctx, m.file, m.line),
      selectSpan: (m) => this.selectSpan(m.spanIndex),
      exportTrace: () => {
        void vscode.commands.executeCommand('collectiveProfiler.exportTrace');
      },
      ...extraHandlers,
    };
    const dispatch = createMessageDispatcher(kind, handlers, {
      warn: (m) => ctx.log.warn(m),
      error: (m) => ctx.log.error(m),
    });
    this.disposables.push(
      webview.onDidReceiveMessage((raw) => {
        void dispatch(raw);
      }),
      vscode.window.onDidChangeActiveColorTheme(() => this.post({ type: 'theme', kind: themeKind() })),
    );
  }

  /** Posts now when the page is ready, else after its ready message. */
  post(message: ToWebview): void {
    if (message.type === 'charts' || message.type === 'topology') this.lastContent = message;
    if (this.ready) void this.webview.postMessage(message);
    else this.queue.push(message);
  }

  /** Replaces what the page shows; a large trace goes in chunks so no single message holds millions of spans. */
  showTrace(trace: Trace, source?: { uri: string; label: string }): void {
    this.trace = trace;
    this.sourceLabel = source?.label ?? trace.metadata.title;
    this.queue.length = 0;
    for (const m of traceMessages(trace, source)) this.post(m);
  }

  /** The page was torn down (hidden without retaining its context): queue messages until it says ready again. */
  awaitReady(): void {
    this.ready = false;
  }

  private flush(): void {
    this.ready = true;
    this.post({ type: 'theme', kind: themeKind() });
    // A page that loads again (shown after VS Code tore it down) gets the latest content even when the message
    // that carried it reached the old page as it went away: the hide event can come after that post.
    const pending = this.queue.splice(0);
    if (this.lastContent && !pending.includes(this.lastContent)) pending.unshift(this.lastContent);
    for (const m of pending) void this.webview.postMessage(m);
  }

  /** A span selected in the panel: its summary in the status bar, and its source line opened when it has one. */
  private async selectSpan(index: number): Promise<void> {
    const selection = this.trace ? spanSelection(this.trace, index) : undefined;
    if (!selection) {
      this.ctx.log.warn(`[${this.kind}] selected span ${index}, which the shown trace does not have`);
      return;
    }
    vscode.window.setStatusBarMessage(`$(pulse) ${selection.summary}`, 10_000);
    if (selection.source) await openSource(this.ctx, selection.source.file, selection.source.line);
  }

  private forwardLog(m: Extract<FromWebview, { type: 'log' }>): void {
    const line = `[${this.kind} webview] ${m.message}`;
    if (m.level === 'error') this.ctx.log.error(line);
    else if (m.level === 'warn') this.ctx.log.warn(line);
    else if (m.level === 'info') this.ctx.log.info(line);
    else this.ctx.log.debug(line);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** Opens the file a span came from, at its line, if the file lies inside the workspace. */
async function openSource(ctx: CoreServices, file: string, line: number): Promise<void> {
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const absolute = path.isAbsolute(file) ? file : path.join(folders[0] ?? '', file);
  if (!isInsideFolders(absolute, folders, path.resolve)) {
    ctx.log.warn(`Not opening ${file}: span sources open only inside the workspace folders.`);
    return;
  }
  const position = new vscode.Position(Math.max(0, line - 1), 0);
  await vscode.window.showTextDocument(vscode.Uri.file(absolute), {
    selection: new vscode.Range(position, position),
    viewColumn: vscode.ViewColumn.One,
  });
}
