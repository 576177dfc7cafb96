// Runs a panel bundle in headless Chromium inside a page that mimics a VS Code webview: the real HTML and CSP
// from src/extension/panels/html.ts, an acquireVsCodeApi shim that records posted messages, and Dark+ theme
// variables. Tests post host messages with `send` and read what the webview posted with `posted`.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as esbuild from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildPanelHtml, makeNonce } from '../../src/extension/panels/html';
import type { PanelKind, ToWebview, WebviewStrings } from '../../src/protocol';
import { englishL10n } from '../../src/extension/glue/l10n';
import { webviewStrings } from '../../src/extension/glue/webview-strings';
// Callbacks passed to page.evaluate run in the browser; this name exists there, not in Node's typings.
declare const window: any;

const ROOT = resolve(import.meta.dirname, '..', '..');
export const CHROME_PATH = process.env.CHROME_PATH || '/usr/bin/chromium';
export const CHROME_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Why browser tests cannot run here, or undefined when they can. With REQUIRE_E2E=1 a missing browser is a failure. */
export function chromiumMissing(): string | undefined {
  if (existsSync(CHROME_PATH)) return undefined;
  const reason = `Chromium not found at ${CHROME_PATH} (set CHROME_PATH or apt-get install chromium)`;
  if (process.env.REQUIRE_E2E === '1') throw new Error(`${reason}, and REQUIRE_E2E=1`);
  console.log(`# skipping browser tests: ${reason}`);
  return reason;
}

export const DARK_THEME: Readonly<Record<string, string>> = {
  '--vscode-font-family': 'sans-serif',
  '--vscode-font-size': '13px',
  '--vscode-editor-font-family': 'monospace',
  '--vscode-foreground': '#cccccc',
  '--vscode-descriptionForeground': '#9d9d9d',
  '--vscode-editor-background': '#1e1e1e',
  '--vscode-charts-blue': '#3794ff',
  '--vscode-charts-orange': '#d18616',
  '--vscode-charts-green': '#89d185',
  '--vscode-charts-purple': '#b180d7',
  '--vscode-charts-yellow': '#cca700',
  '--vscode-charts-red': '#f14c4c',
  '--vscode-charts-foreground': '#cccccc',
  '--vscode-charts-lines': '#808080',
  '--vscode-focusBorder': '#007fd4',
  '--vscode-editorHoverWidget-background': '#252526',
  '--vscode-editorHoverWidget-foreground': '#cccccc',
  '--vscode-editorHoverWidget-border': '#454545',
  '--vscode-panel-border': '#80808059',
  '--vscode-errorForeground': '#f48771',
  '--vscode-textLink-foreground': '#3794ff',
  '--vscode-editor-selectionBackground': '#264f78',
};

/** Bundles a panel once per process, the way scripts/build.mjs does, into a temporary folder. */
const bundleDirs = new Map<PanelKind, string>();
async function bundle(panel: PanelKind): Promise<string> {
  const cached = bundleDirs.get(panel);
  if (cached) return cached;
  const dir = mkdtempSync(join(tmpdir(), `cp-webview-${panel}-`));
  await esbuild.build({
    entryPoints: [{ in: join(ROOT, 'webview', panel, 'main.ts'), out: panel }],
    outdir: dir,
    bundle: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    logLevel: 'error',
  });
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  bundleDirs.set(panel, dir);
  return dir;
}

export interface PanelPage {
  readonly page: Page;
  send(message: ToWebview): Promise<void>;
  posted(): Promise<unknown[]>;
  /** Reloads the page as VS Code does when a panel is restored, and waits for its ready message. */
  reload(): Promise<void>;
  /** Uncaught page errors and console errors so far. */
  errors(): string[];
  cspViolations(): Promise<string[]>;
  close(): Promise<void>;
}

export async function openPanel(
  panel: PanelKind,
  viewport = { width: 1200, height: 800 },
  theme = DARK_THEME,
  /** The labels the host would send, in English unless a test passes a translation. */
  strings: WebviewStrings = webviewStrings(englishL10n),
): Promise<PanelPage> {
  const dir = await bundle(panel);
  const nonce = makeNonce();
  let origin = '';
  const server: Server = createServer((request, response) => {
    const url = request.url ?? '/';
    if (url === `/${panel}.html`) {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(
        buildPanelHtml({
          panel,
          cspSource: origin,
          scriptUri: `${origin}/${panel}.js`,
          nonce,
          title: `Test ${panel}`,
          strings,
        }),
      );
    } else if (/^\/[a-z]+\.js$/.test(url) && existsSync(join(dir, url.slice(1)))) {
      response.writeHead(200, { 'content-type': 'text/javascript' });
      response.end(readFileSync(join(dir, url.slice(1))));
    } else if (url === '/favicon.ico') {
      response.writeHead(204).end();
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const browser: Browser = await chromium.launch({ executablePath: CHROME_PATH, args: CHROME_ARGS });
  const page = await browser.newPage({ viewport });
  // Script errors are collected so a page that never gets ready explains why.
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (m) => {
    if (m.type() === 'error' || process.env.WEBVIEW_DEBUG) errors.push(`console.${m.type()}: ${m.text()}`);
  });
  // A string, not a function: tsx would wrap a function's inner names in helpers the page does not have.
  await page.addInitScript(`(() => {
    const vars = ${JSON.stringify(theme)};
    window.__posted = [];
    window.__csp = [];
    // Like VS Code, the state outlives a reload of the page (here through sessionStorage).
    window.__state = JSON.parse(sessionStorage.getItem('vscodeState') || 'null') || undefined;
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));
    let acquired = false;
    window.acquireVsCodeApi = function () {
      if (acquired) throw new Error('acquireVsCodeApi called twice');
      acquired = true;
      for (const name of Object.keys(vars)) document.documentElement.style.setProperty(name, vars[name]);
      if (document.body) document.body.classList.add('vscode-dark');
      return {
        postMessage: function (m) { window.__posted.push(JSON.parse(JSON.stringify(m))); },
        getState: function () { return window.__state; },
        setState: function (s) { window.__state = s; sessionStorage.setItem('vscodeState', JSON.stringify(s)); },
      };
    };
  })();`);
  await page.goto(`${origin}/${panel}.html`);
  try {
    await page.waitForFunction(
      () => (window as unknown as { __posted: { type: string }[] }).__posted.some((m) => m.type === 'ready'),
      undefined,
      { timeout: 10_000 },
    );
  } catch (error) {
    await browser.close();
    server.close();
    throw new Error(`the ${panel} panel never posted "ready": ${errors.join('\n') || String(error)}`, { cause: error });
  }
  return {
    page,
    // The message travels as a JSON string: Playwright's structured argument encoding is slow for large traces.
    send: async (message) => {
      await page.evaluate(
        (json) => window.dispatchEvent(new MessageEvent('message', { data: JSON.parse(json) })),
        JSON.stringify(message),
      );
    },
    posted: () => page.evaluate(() => (window as unknown as { __posted: unknown[] }).__posted),
    errors: () => errors,
    reload: async () => {
      await page.reload();
      await page.waitForFunction(() =>
        (window as unknown as { __posted: { type: string }[] }).__posted.some((m) => m.type === 'ready'),
      );
    },
    cspViolations: () => page.evaluate(() => (window as unknown as { __csp: string[] }).__csp),
    close: async () => {
      await browser.close();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** Hex colour to [r, g, b]. */
export function rgb(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1, 7), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}
