// The set-up every end-to-end suite shares: code-server on a fresh copy of the workspace with the packaged extension,
// Chromium, and the workbench opened once its extensions have activated; stopped after the suite. Each suite used
// to repeat these hooks; a suite now names only what differs (trust, theme, settings, extra files).
import { after, before } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openWorkbench, startCodeServer, type CodeServer } from './harness';

/** The colour themes the suites run in, by VS Code's theme name (dark is VS Code's default). */
export const THEMES = { dark: 'Default Dark Modern', light: 'Default Light Modern' } as const;
export type ThemeName = keyof typeof THEMES;

/** A running code-server, the browser and the workbench page: read by the tests, set once the suite's before ran. */
export interface VsCodeSession {
  readonly server: CodeServer;
  readonly browser: Browser;
  readonly page: Page;
}

/**
 * Registers the suite's before and after hooks (call it in a describe body) and returns the session they start.
 * `prepare` runs once code-server is up, before the browser opens it: a suite reads its workspace there.
 */
export function vsCodeSession(
  options: Parameters<typeof startCodeServer>[0],
  prepare?: (server: CodeServer) => void,
): VsCodeSession {
  let server: CodeServer | undefined;
  let browser: Browser | undefined;
  let page: Page | undefined;
  before(async () => {
    server = await startCodeServer(options);
    prepare?.(server);
    browser = await launchBrowser();
    page = await openWorkbench(browser, server.url);
  });
  after(async () => {
    await browser?.close().catch(() => undefined);
    server?.stop();
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`the suite's ${what} is read before its before hook started it`);
    return value;
  };
  return {
    get server() {
      return started(server, 'code-server');
    },
    get browser() {
      return started(browser, 'browser');
    },
    get page() {
      return started(page, 'workbench page');
    },
  };
}
