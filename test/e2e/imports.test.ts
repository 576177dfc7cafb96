/// <reference lib="dom" />
// Every real measurement file of ../shared/fixtures-real imported in real VS Code (code-server) as a user would:
// Import Measurements… from the palette, the path typed into VS Code's file dialog, then the charts panel read. The
// panel must name the hardware the file was measured on (or say that the file names none, and what was assumed
// instead), and for NCCL_DEBUG output show the topology, rings, trees and tuning cards the log holds (issue 14).
// One window, the files in sequence, one test and one screenshot per file under test-results/e2e/.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import {
  chartNotes,
  frameWith,
  launchBrowser,
  e2eSkipReason,
  openWorkbench,
  runCommand,
  screenshot,
  startCodeServer,
  type CodeServer,
} from './harness';
import { needSharedDir } from '../unit/requirements';
import { FIXTURES_REAL, HARDWARE, LOG_CONTENT, fixtureFiles } from '../shared/fixtures-real-expected';

const missing = e2eSkipReason('end-to-end imports');
const noFixtures = needSharedDir('fixtures-real');
if (noFixtures) console.log(`# SKIPPED end-to-end imports: ${noFixtures}`);

/** What the panel shows about one imported file: its title, the system it names, and its text cards. */
interface ImportedPanel {
  readonly title: string;
  readonly system: string;
  readonly notes: Record<string, string[]>;
}

describe(
  'Importing every real measurement file in VS Code',
  { skip: missing !== undefined || noFixtures !== false, timeout: 1_200_000 },
  () => {
    let server: CodeServer;
    let browser: Browser;
    let page: Page;

    /**
     * Runs Import Measurements… with no text editor open, so that VS Code asks for the file, types its path into the
     * dialog (in code-server a quick input that takes a path) and waits for the charts panel titled with its name.
     */
    async function importThroughDialog(file: string): Promise<ImportedPanel> {
      // No editor is open (the panels are webviews, not text editors), so the command asks for the file; the
      // charts panel of the previous file stays open and is told apart by its title below.
      await runCommand(page, 'Collective Profiler: Import Measurements');
      const input = page.locator('.quick-input-widget input');
      const widget = page.locator('.quick-input-widget');
      const path = join(FIXTURES_REAL, file);
      const listed = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: file }).first();
      // The dialog opens on the workspace folder and sets its value to that folder once it has read it, which can
      // replace a path typed before; it then lists the typed path's folder, and an Enter pressed while it is still
      // reading is dropped. So the path is typed again while the value is not it, and Enter pressed again while
      // the dialog stays open.
      for (let attempt = 1; ; attempt++) {
        await page.waitForFunction(
          () => document.querySelector<HTMLInputElement>('.quick-input-widget input')?.value.startsWith('/') ?? false,
          undefined,
          { timeout: 30_000 },
        );
        if ((await input.inputValue()) !== path) await input.fill(path);
        await listed.waitFor({ timeout: 10_000 }).catch(() => undefined);
        if ((await input.inputValue()) === path) {
          await page.keyboard.press('Enter');
          if (
            await widget.waitFor({ state: 'hidden', timeout: 10_000 }).then(
              () => true,
              () => false,
            )
          )
            break;
        }
        if (attempt === 4) {
          const shot = await screenshot(page, `missed-import-dialog-${file.replace(/[^\w.-]+/g, '-')}`);
          throw new Error(`the file dialog never accepted ${path} (screenshot ${shot})`);
        }
      }
      // The title names the file ("<file>: measured vs model on …" or "<file>: what the file holds"), so a panel
      // of the previous file whose frame lingers in the page is never read instead.
      const titled = `.toolbar .title:has-text("${file}:")`;
      const charts = await frameWith(page, titled, 120_000).catch(async (error: Error) => {
        const notes = await page
          .locator('.notification-toast')
          .allInnerTexts()
          .catch(() => [] as string[]);
        throw new Error(`${error.message}\nnotifications: ${notes.join(' | ')}\n${server.logTail()}`);
      });
      return {
        title: await charts.locator('.toolbar .title').innerText(),
        system: await charts.locator('.toolbar .muted').innerText(),
        notes: await chartNotes(page, titled),
      };
    }

    before(async () => {
      server = await startCodeServer({ trusted: true });
      browser = await launchBrowser();
      page = await openWorkbench(browser, server.url);
    });

    after(async () => {
      await browser?.close().catch(() => undefined);
      server?.stop();
    });

    test('every file of ../shared/fixtures-real has an expectation, so a new one cannot slip past', () => {
      assert.deepEqual(fixtureFiles(), Object.keys(HARDWARE).sort());
    });

    for (const file of fixtureFiles()) {
      test(`${file}: the panel names its hardware${LOG_CONTENT[file] ? ' and shows its NCCL_DEBUG topology' : ''}`, async () => {
        const { title, system, notes } = await importThroughDialog(file);
        await screenshot(page, `20-import-${file.replace(/[^\w.-]+/g, '-')}`);
        const cards = JSON.stringify(notes);
        const [hardware, holds, ...rest] = notes.Measurement ?? [];
        assert.ok(hardware, `a Measurement card: ${cards}`);
        const compared = rest.find((line) => line.startsWith('compared with'));
        assert.equal(
          compared !== undefined,
          /: measured vs model on /.test(title),
          `a comparison says what it was compared with: ${title} / ${cards}`,
        );
        const expected = HARDWARE[file];
        if (expected) {
          const named = /^measured on (.+?) \(named in the file\)/.exec(hardware);
          assert.ok(named, `the panel names the file's hardware: ${hardware}`);
          assert.match(named[1], expected);
          if (compared) assert.doesNotMatch(compared, /does not name/, compared);
        } else {
          assert.match(hardware, /^the file does not name the GPUs it ran on/);
          // What stands in for the unnamed hardware is said: the system compared with is an assumption.
          if (compared) {
            assert.match(
              compared,
              /^compared with the selected .+ as an assumption: the file does not name its hardware$/,
            );
            assert.match(system, /\(assumed\)$/, `the toolbar says the system is assumed: ${system}`);
          }
        }
        assert.match(holds ?? '', /^holds: /, cards);
        assert.doesNotMatch(holds, /\(0 sizes\)|unknown/, holds);
        for (const [section, line] of LOG_CONTENT[file] ?? []) {
          const card = Object.keys(notes).find((name) => section.test(name));
          assert.ok(card, `a card ${section} among ${Object.keys(notes).join(' | ')}`);
          assert.ok(
            notes[card].some((l) => line.test(l)),
            `the ${card} card has a line ${line}: ${notes[card].join(' | ')}`,
          );
        }
        if (!LOG_CONTENT[file])
          assert.equal(notes.Topology, undefined, 'only a file with NCCL_DEBUG output has a Topology card');
      });
    }
  },
);
