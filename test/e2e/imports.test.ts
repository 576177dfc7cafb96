/// <reference lib="dom" />
// Every real measurement file of ../shared/fixtures-real imported in real VS Code (code-server) as a user would:
// Import Measurements… from the palette, the path typed into VS Code's file dialog, then the charts panel read. The
// panel must name the hardware the file was measured on (or say that the file names none, and what was assumed
// instead), and for NCCL_DEBUG output show the topology, rings, trees and tuning cards the log holds (issue 14).
// One window, the files in sequence, one test and one screenshot per file under test-results/e2e/.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { chartNotes, frameWith, e2eSkipReason, runCommand, screenshot } from './harness';
import { vsCodeSession } from './session';
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
    /** Names listed in one of the two folders the dialog shows and not in the other, to tell which it lists. */
    let workspaceOnly: string[] = [];
    let fixturesOnly: string[] = [];
    const vs = vsCodeSession({ trusted: true }, (server) => {
      const workspace = readdirSync(server.workspace);
      const fixtures = readdirSync(FIXTURES_REAL);
      workspaceOnly = workspace.filter((name) => !fixtures.includes(name));
      fixturesOnly = fixtures.filter((name) => !workspace.includes(name));
    });

    /**
     * Runs Import Measurements… with no text editor open, so that VS Code asks for the file, types its path into the
     * dialog (in code-server a quick input that takes a path) and waits for the charts panel titled with its name.
     */
    async function importThroughDialog(file: string): Promise<ImportedPanel> {
      const { page, server } = vs;
      // No editor is open (the panels are webviews, not text editors), so the command asks for the file; the
      // charts panel of the previous file stays open and is told apart by its title below.
      const commandAt = Date.now();
      await runCommand(page, 'Collective Profiler: Import Measurements');
      const input = page.locator('.quick-input-widget input');
      const path = join(FIXTURES_REAL, file);
      // code-server's file dialog (VS Code's SimpleFileDialog) opens on the workspace folder and, once it has read
      // it, sets its value to that folder: a path typed before then is replaced. A typed path makes it read the
      // path's folder; an Enter pressed before that folder is listed only navigates there (the dialog's
      // tryUpdateItems) and leaves the dialog open. Its list is virtual, so the file's own row is drawn only when
      // it is near the top: waiting for that row waited out its timeout for most files. So the path is typed once
      // the workspace folder is listed, and Enter pressed once rows of the typed folder are listed, each step
      // polled as it happens; a reset value is typed again, and Enter is pressed again only when the dialog stayed
      // open for a while after it (the dialog ignores an Enter while it is accepting, and waits out its own
      // busy state before it accepts).
      const started = Date.now();
      const events: string[] = [];
      const mark = (what: string) => events.push(`${what}@${Date.now() - started}`);
      let listedFolder: 'none' | 'workspace' | 'fixtures' = 'none';
      let enteredAt = 0;
      let shownAt = 0;
      for (;;) {
        const state = await page.evaluate(
          ({ workspaceOnly, fixturesOnly }) => {
            const box = document.querySelector<HTMLElement>('.quick-input-widget');
            const rows = Array.from(box?.querySelectorAll('.quick-input-list .monaco-list-row') ?? []).map(
              (row) => row.getAttribute('aria-label') ?? row.textContent ?? '',
            );
            return {
              open: box !== null && box.offsetParent !== null && getComputedStyle(box).display !== 'none',
              value: box?.querySelector<HTMLInputElement>('input')?.value ?? '',
              workspace: rows.some((row) => workspaceOnly.some((name) => row.includes(name))),
              fixtures: rows.some((row) => fixturesOnly.some((name) => row.includes(name))),
            };
          },
          { workspaceOnly, fixturesOnly },
        );
        if (enteredAt > 0 && !state.open) {
          mark('accepted');
          break;
        }
        if (!shownAt && state.open && state.value.startsWith('/')) {
          shownAt = Date.now();
          mark('shown');
        }
        const folder = state.fixtures ? 'fixtures' : state.workspace ? 'workspace' : 'none';
        if (folder !== listedFolder) mark(`listed-${(listedFolder = folder)}`);
        if (state.open && state.value.startsWith('/')) {
          if (state.value !== path && (listedFolder !== 'none' || enteredAt > 0)) {
            await input.fill(path);
            mark('typed');
          } else if (state.value === path && listedFolder === 'fixtures' && Date.now() - enteredAt > 5_000) {
            await page.keyboard.press('Enter');
            mark(enteredAt > 0 ? 'enter-again' : 'enter');
            enteredAt = Date.now();
          }
        }
        if (Date.now() - started > 90_000) {
          const shot = await screenshot(page, `missed-import-dialog-${file.replace(/[^\w.-]+/g, '-')}`);
          throw new Error(`the file dialog never accepted ${path}: ${events.join(' ')} (screenshot ${shot})`);
        }
        await page.waitForTimeout(50);
      }
      const acceptedAt = Date.now();
      console.log(
        `# ${file}: the palette took ${started - commandAt} ms, the dialog ${acceptedAt - started} ms: ${events.join(' ')}`,
      );
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
      console.log(`# ${file}: the panel showed ${Date.now() - acceptedAt} ms after the dialog`);
      return {
        title: await charts.locator('.toolbar .title').innerText(),
        system: await charts.locator('.toolbar .muted').innerText(),
        notes: await chartNotes(page, titled),
      };
    }

    test('every file of ../shared/fixtures-real has an expectation, so a new one cannot slip past', () => {
      assert.deepEqual(fixtureFiles(), Object.keys(HARDWARE).sort());
    });

    for (const file of fixtureFiles()) {
      test(`${file}: the panel names its hardware${LOG_CONTENT[file] ? ' and shows its NCCL_DEBUG topology' : ''}`, async () => {
        const { title, system, notes } = await importThroughDialog(file);
        await screenshot(vs.page, `20-import-${file.replace(/[^\w.-]+/g, '-')}`);
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
              /^compared with the selected .+ as an assumption: the file does not name its hardware; no size is judged in Problems/,
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
