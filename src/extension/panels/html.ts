// Builds the HTML page of each webview panel. Pure (strings in, string out) so the CSP can be tested without
// VS Code: the panel classes pass webview.cspSource and asWebviewUri(...) results as plain strings.
import { randomBytes } from 'node:crypto';
import { WEBVIEW_STRINGS_ELEMENT_ID, webviewStringsJson, type PanelKind, type WebviewStrings } from '../../protocol';
import { PANEL_STYLES } from './panel-styles';

export interface PanelHtmlOptions {
  readonly panel: PanelKind;
  /** webview.cspSource, e.g. "https://*.vscode-cdn.net". The only origin the page may load from. */
  readonly cspSource: string;
  /** The panel's bundle, dist/webview/<panel>.js, as a webview URI string. */
  readonly scriptUri: string;
  /** A fresh nonce per page load (makeNonce()). */
  readonly nonce: string;
  readonly title: string;
  /** codicon.css as a webview URI, when the extension ships it; its font must come from cspSource too. */
  readonly codiconsUri?: string;
  /** The panels' labels in the display language (glue/webview-strings.ts), read by the bundle before it draws. */
  readonly strings: WebviewStrings;
  /** VS Code's display language (vscode.env.language, e.g. "de" or "zh-cn"): the page's lang, for screen readers. */
  readonly language?: string;
}

/** A 128-bit random nonce in base64, new for every page so that injected markup cannot guess it. */
export function makeNonce(): string {
  return randomBytes(16).toString('base64');
}

/** The Content-Security-Policy of every panel: nothing by default, scripts only by nonce, no eval, no remote hosts. */
export function panelCsp(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${cspSource} 'nonce-${nonce}'`,
    `img-src ${cspSource} data:`,
    `font-src ${cspSource}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

const escapeHtml = (value: string): string =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

function checkInputs(options: PanelHtmlOptions): void {
  if (!/^[A-Za-z0-9+/]{16,}={0,2}$/.test(options.nonce))
    throw new Error('the nonce must be at least 16 base64 characters');
  // VS Code gives one or more source expressions ("'self' https://*.vscode-cdn.net" in code-server). Each must be
  // 'self' or a bare host/scheme source: a semicolon, comma or other quote would let it add directives or keywords.
  const sources = options.cspSource.split(' ');
  if (!sources.every((s) => s === "'self'" || /^[^\s;,'"]+$/.test(s)))
    throw new Error(`invalid CSP source ${JSON.stringify(options.cspSource)}`);
  for (const uri of [options.scriptUri, options.codiconsUri]) {
    if (uri !== undefined && /["<>\s]/.test(uri)) throw new Error(`invalid resource URI ${JSON.stringify(uri)}`);
  }
}

/** A BCP 47 tag as VS Code names its display languages; anything else falls back to English. */
function pageLanguage(language: string | undefined): string {
  return language !== undefined && /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/.test(language) ? language : 'en';
}

/** The page for one panel; the bundle draws everything into #app from messages posted by the host. */
export function buildPanelHtml(options: PanelHtmlOptions): string {
  checkInputs(options);
  const { panel, nonce } = options;
  const codicons = options.codiconsUri
    ? `\n  <link rel="stylesheet" id="vscode-codicon-stylesheet" href="${escapeHtml(options.codiconsUri)}">`
    : '';
  return `<!DOCTYPE html>
<html lang="${pageLanguage(options.language)}">
<head>
  <meta charset="UTF-8">
  <meta http-equiv="Content-Security-Policy" content="${panelCsp(options.cspSource, nonce)}">
  <meta name="viewport" content="width=device-width, initial-scale=1.0">
  <title>${escapeHtml(options.title)}</title>${codicons}
  <style nonce="${nonce}">${PANEL_STYLES.common}${PANEL_STYLES[panel]}</style>
</head>
<body data-panel="${panel}">
  <div id="app" role="main" aria-label="${escapeHtml(options.title)}"></div>
  <script type="application/json" id="${WEBVIEW_STRINGS_ELEMENT_ID}" nonce="${nonce}">${webviewStringsJson(options.strings)}</script>
  <script type="module" nonce="${nonce}" src="${escapeHtml(options.scriptUri)}"></script>
</body>
</html>
`;
}
