// End-to-end scenarios in real VS Code (code-server) driven from Chromium, as a user meets the extension.
// Skipped with a printed reason where Chromium or code-server is missing, unless REQUIRE_E2E=1 (CI), which fails.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser, FrameLocator, Page } from 'playwright-core';
import { ROOT, launchBrowser, missingPrerequisite, openFile, openWorkbench, runCommand, screenshot, startCodeServer, type CodeServer } from './harness';

const missing = missingPrerequisite();
if (missing && process.env.REQUIRE_E2E === '1') throw new Error(`REQUIRE_E2E=1 but the end-to-end suite cannot run: ${missing}`);
if (missing) console.log(`# SKIPPED end-to-end suite: ${missing}`);

const SHARED = join(ROOT, '..', 'shared');
const extraFiles = {
  'all_reduce_perf.txt': join(SHARED, 'fixtures-real', 'nccl-tests-a100-8gpu-2021.txt'),
  'llama2-7b.collective.yaml': join(ROOT, 'examples', 'llama2-7b-ddp.collective.yaml'),
};

/** The innermost frame of the webview panel whose tab has this title. */
function webviewFrame(page: Page): FrameLocator {
  return page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
}

async function lensTexts(page: Page): Promise<string[]> {
  return page.locator('.contentWidgets .codelens-decoration a, .codelens-decoration a').allTextContents();
}

async function problems(page: Page): Promise<string[]> {
  return page.locator('.markers-panel .monaco-list-row').allTextContents();
}

describe('Collective Profiler in VS Code', { skip: missing !== undefined, timeout: 600_000 }, () => {
  let server: CodeServer;
  let browser: Browser;
  let page: Page;

  before(async () => {
    server = await startCodeServer({ trusted: true, extraFiles });
    browser = await launchBrowser();
    page = await openWorkbench(browser, server.url);
  });

  after(async () => {
    await browser?.close().catch(() => undefined);
    server?.stop();
  });

  test('the sum-vs-average diagnostic appears in Problems at the right line, and its quick fix removes it', async () => {
    await openFile(page, 'train.py');
    await runCommand(page, 'View: Focus Problems');
    await page.locator('.markers-panel .monaco-list-row').filter({ hasText: 'CP001' }).first().waitFor({ timeout: 60_000 });
    const rows = await problems(page);
    await screenshot(page, '01-diagnostic');
    const row = rows.find((r) => r.includes('CP001'));
    assert.ok(row, `a CP001 problem is listed: ${rows.join(' | ')}`);
    assert.match(row, /\[Ln 16, Col \d+\]/, `the problem is on line 16: ${row}`);

    // Put the cursor on the flagged call and open the lightbulb menu, as a person would with Ctrl+.
    await page.locator('.monaco-editor .view-line').filter({ hasText: 'dist.all_reduce(param.grad)' }).first().click();
    await page.keyboard.press('Control+.');
    await page.waitForTimeout(1500);
    await screenshot(page, '01-quick-fix-menu');
    const fix = page.locator('.action-widget .monaco-list-row').filter({ hasText: /ReduceOp\.AVG|world size/i }).first();
    await fix.waitFor({ timeout: 20_000 });
    await fix.click();
    await page.waitForFunction(() => !Array.from(document.querySelectorAll('.markers-panel .monaco-list-row')).some((r) => r.textContent?.includes('CP001')), undefined, { timeout: 30_000 });
    const editorText = await page.locator('.monaco-editor .view-lines').first().textContent();
    assert.match(editorText ?? '', /ReduceOp\.AVG|get_world_size/, 'the code changed');
    await screenshot(page, '01-fixed');
  });
});
