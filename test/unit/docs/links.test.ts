// The docs' relative links: each names a file or folder of the repository (and a heading, for #anchors), and the
// packaged .vsix holds everything its README and docs/ pages link to, so the links work in the unpacked extension.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
// @ts-expect-error: a plain .mjs script without type declarations.
import { isCheckedPage, linkProblems, relativeLinks, zipEntries, zipText } from '../../../scripts/check-vsix.mjs';
import { documentationFiles } from './shell-examples';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const VSIX = join(ROOT, 'collective-profiler.vsix');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchor(heading: string): string {
  return heading.trim().toLowerCase().replace(/`/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

test('relativeLinks finds links and images outside code, without anchors or external URLs', () => {
  const markdown = [
    'See [the CLI](docs/cli.md#exit-codes), ![a panel](media/screenshots/charts.png) and [Perfetto](https://ui.perfetto.dev).',
    'Not `[code](inline.md)`, nor [a heading](#install).',
    '```sh',
    'echo "[fenced](fenced.md)"',
    '```',
    '[folder](docs/rules/)',
    'A span over a line break is code too: `p if p is not None else',
    'x.shape[0]`, `(~p).sum()`, and so is `[one](over.md)',
    '`; not after a blank line: `x',
    '',
    '`.',
  ].join('\n');
  assert.deepEqual(relativeLinks(markdown), ['docs/cli.md', 'media/screenshots/charts.png', 'docs/rules/']);
});

test('every relative link of README.md, CONTRIBUTING.md and docs/ names something in the repository', () => {
  const broken: string[] = [];
  for (const file of documentationFiles(ROOT)) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const [target, hash] = match[1].split('#');
      if (/^[a-z][a-z0-9+.-]*:/i.test(match[1])) continue;
      const path = target === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURI(target));
      if (!existsSync(path)) {
        broken.push(`${file}: ${match[1]}`);
        continue;
      }
      if (hash !== undefined && path.endsWith('.md')) {
        const headings = [...readFileSync(path, 'utf8').matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => anchor(m[1]));
        if (!headings.includes(hash)) broken.push(`${file}: ${match[1]} (no heading '#${hash}' in ${relative(ROOT, path)})`);
      }
    }
  }
  assert.deepEqual(broken, []);
});

test('the vsix link check flags a README link to a file the package leaves out', () => {
  const names = ['extension/readme.md', 'extension/docs/cli.md', 'extension/docs/rules/CP001.md', 'extension/media/screenshots/charts.png', 'extension/schemas/system.schema.json'];
  const pages = new Map([
    ['extension/readme.md', '[cli](docs/cli.md) [rules](docs/rules/) ![c](media/screenshots/charts.png) [c](CONTRIBUTING.md)'],
    ['extension/docs/cli.md', '[schema](../schemas/system.schema.json) [src](../src/cli/main.ts) [up](../../outside.md)'],
  ]);
  assert.deepEqual(linkProblems(pages, names), [
    'extension/readme.md links to CONTRIBUTING.md, which the package does not hold',
    'extension/docs/cli.md links to ../src/cli/main.ts, which the package does not hold',
    'extension/docs/cli.md links to ../../outside.md, which the package does not hold',
  ]);
  assert.ok(isCheckedPage('extension/docs/native.md') && isCheckedPage('extension/readme.md') && !isCheckedPage('extension/examples/a.md'));
});

test('the packaged .vsix (when `npm run package` has run) holds every file its README and docs/ link to', { skip: existsSync(VSIX) ? false : 'no collective-profiler.vsix: run `npm run package` first' }, () => {
  const buffer = readFileSync(VSIX);
  const entries: { name: string }[] = zipEntries(buffer);
  const names = entries.map((e) => e.name);
  const pages = new Map(entries.filter((e) => isCheckedPage(e.name)).map((e) => [e.name, zipText(buffer, e) as string]));
  assert.ok(pages.has('extension/readme.md'), 'the package has a README');
  assert.ok(pages.size > 1, 'docs/ pages ship beside the README');
  assert.deepEqual(linkProblems(pages, names), []);
});
