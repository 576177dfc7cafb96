// CHANGELOG.md follows Keep a Changelog 1.1.0: a title, then one `## [Unreleased]` or `## [x.y.z] - YYYY-MM-DD`
// section per version, newest first, each holding only the six kinds of change, once each, each a list.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const KINDS = ['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'];
const VERSION = /^## \[(Unreleased|\d+\.\d+\.\d+(?:-[\w.]+)?)\](?: - (\d{4}-\d{2}-\d{2}))?$/;

/** The problems of a changelog's structure, one sentence each (empty when it follows Keep a Changelog). */
function changelogProblems(text: string): string[] {
  const problems: string[] = [];
  const lines = text.split('\n');
  if (lines[0] !== '# Changelog') problems.push('the first line is not "# Changelog"');
  if (!text.includes('https://keepachangelog.com/')) problems.push('the preamble does not name Keep a Changelog');
  let version: string | undefined;
  let kinds: string[] = [];
  let kind: string | undefined;
  let items = 0;
  const versions: string[] = [];
  const closeKind = (): void => {
    if (kind && items === 0) problems.push(`${version} / ${kind} has no entries`);
  };
  lines.forEach((line, i) => {
    const at = `line ${i + 1}`;
    if (line.startsWith('## ')) {
      closeKind();
      const match = VERSION.exec(line);
      if (!match) problems.push(`${at}: "${line}" is not "## [Unreleased]" or "## [x.y.z] - YYYY-MM-DD"`);
      else if (match[1] !== 'Unreleased' && !match[2]) problems.push(`${at}: release ${match[1]} has no date`);
      else if (match[1] === 'Unreleased' && versions.length > 0) problems.push(`${at}: [Unreleased] is not first`);
      version = match?.[1] ?? line;
      versions.push(version);
      kinds = [];
      kind = undefined;
    } else if (line.startsWith('### ')) {
      closeKind();
      kind = line.slice(4).trim();
      items = 0;
      if (!version) problems.push(`${at}: "${line}" comes before any version`);
      if (!KINDS.includes(kind)) problems.push(`${at}: "${kind}" is not one of ${KINDS.join(', ')}`);
      if (kinds.includes(kind)) problems.push(`${at}: ${version} has two "${kind}" sections`);
      kinds.push(kind);
    } else if (line.startsWith('#')) {
      if (i > 0 && /^#{1,6} /.test(line)) problems.push(`${at}: heading "${line}" at a level Keep a Changelog has no use for`);
    } else if (/^- /.test(line)) {
      if (!kind) problems.push(`${at}: an entry outside an Added/Changed/… section`);
      items++;
    }
  });
  closeKind();
  if (versions.length === 0) problems.push('no version section');
  return problems;
}

test('CHANGELOG.md follows Keep a Changelog', () => {
  assert.deepEqual(changelogProblems(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8')), []);
});

test('the changelog check catches a misplaced, misnamed or empty section', () => {
  const good = '# Changelog\n\n[Keep a Changelog](https://keepachangelog.com/en/1.1.0/)\n\n## [Unreleased]\n\n### Added\n- a\n';
  assert.deepEqual(changelogProblems(good), []);
  assert.deepEqual(changelogProblems(`${good}\n## [0.1.0] - 2026-12-01\n\n### Fixed\n- b\n`), []);
  assert.deepEqual(changelogProblems(good.replace('### Added', '### New')), [
    'line 7: "New" is not one of Added, Changed, Deprecated, Removed, Fixed, Security',
  ]);
  assert.deepEqual(changelogProblems(`${good}### Added\n- c\n`), ['line 9: Unreleased has two "Added" sections']);
  assert.deepEqual(changelogProblems(`${good}\n## [0.1.0]\n### Fixed\n`), [
    'line 10: release 0.1.0 has no date',
    '0.1.0 / Fixed has no entries',
  ]);
  assert.deepEqual(changelogProblems(good.replace('## [Unreleased]', '## Next')), [
    'line 5: "## Next" is not "## [Unreleased]" or "## [x.y.z] - YYYY-MM-DD"',
  ]);
});
