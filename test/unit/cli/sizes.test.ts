// Sizes in and out: flags parse sizes as nccl-tests parses -b/-e (K, M, G, T are powers of 1024, with or without
// B or iB, in any case; docs/cli.md#sizes-and-units), and every size printed goes through one formatter, which
// never writes "86.0 MiB" beside "86 MiB".
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { asBytes, formatBytes, parseBytes } from '../../../src/engine/index';
import { ROOT, runCli } from './run-cli';

test('sizes parse as nccl-tests parses -b and -e: K, M, G and T are powers of 1024', () => {
  const KiB = 1024;
  const cases: [string, number][] = [
    ['8', 8],
    ['64K', 64 * KiB],
    ['64k', 64 * KiB],
    ['8M', 8 * KiB ** 2],
    ['8MiB', 8 * KiB ** 2],
    ['8 MiB', 8 * KiB ** 2],
    ['1MB', KiB ** 2],
    ['1mb', KiB ** 2],
    ['1G', KiB ** 3],
    ['1GB', KiB ** 3],
    ['1T', KiB ** 4],
    ['1.5M', 1.5 * KiB ** 2],
  ];
  for (const [text, bytes] of cases) assert.equal(parseBytes(text), bytes, text);
  for (const text of ['-1', '1e3', 'MiB', '8 Mbit', '']) assert.equal(parseBytes(text), undefined, text);
});

test('one formatter: whole values without a trailing .0, three significant digits otherwise', () => {
  const cases: [number, string][] = [
    [0, '0 B'],
    [1000, '1000 B'],
    [1024, '1 KiB'],
    [1536, '1.5 KiB'],
    [86 * 2 ** 20, '86 MiB'],
    [86.5 * 2 ** 20, '86.5 MiB'],
    [3 * 2 ** 40, '3 TiB'],
  ];
  for (const [bytes, text] of cases) assert.equal(formatBytes(asBytes(bytes)), text, String(bytes));
});

test('sweep takes 1MB as 1,048,576 bytes, as docs/cli.md says', async () => {
  const run = await runCli(['sweep', '--system', 'dgx-h100', '--min-bytes', '1MB', '--max-bytes', '1MB']);
  assert.equal(run.code, 0, run.stderr);
  const rows = run.stdout.split('\n').filter((l) => /^\s+\d+\s+\d+\s/.test(l));
  assert.deepEqual(
    rows.map((r) => r.trim().split(/\s+/)[0]),
    ['1048576'],
  );
  assert.match(readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8'), /`1MB` is 1,048,576 bytes/);
});

test('the CLI and the extension print sizes only through formatBytes, never with their own KiB/MiB/GiB arithmetic', () => {
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
    );
  const handmade = /toFixed\(\d\)\}\s?[KMGT]iB|\/ (1024|2 \*\* (10|20|30))\)?\.toFixed/;
  const offenders = [...files(join(ROOT, 'src', 'cli')), ...files(join(ROOT, 'src', 'extension'))].filter((f) =>
    handmade.test(readFileSync(f, 'utf8')),
  );
  assert.deepEqual(offenders, []);
});
