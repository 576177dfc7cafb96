// A reader that stops early (`sweep --factor 1.01 | head`) must not make the CLI crash on EPIPE: it stops quietly
// with 141, the status of a program killed by SIGPIPE, and prints nothing on stderr.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtCli, ROOT } from './run-cli';

test('sweep into `head -c 100` exits 141 with nothing on stderr', async () => {
  const cli = await builtCli();
  // The pipeline is the user's own: `head` reads at most 100 bytes and exits, so whatever the machine's load, the
  // reader is gone after one read. About 500 KB of rows is many times the 64 KiB a pipe holds, so the writer is
  // bound to write again into the closed pipe. (A reader in this process that closed after its first 'data' event
  // once drained all the rows on a loaded run, because one poll can deliver several reads.)
  const script = `"$0" "$1" sweep --system dgx-h100 --factor 1.005 2>"$2" | head -c 100 >/dev/null; echo "\${PIPESTATUS[0]}"`;
  const folder = mkdtempSync(join(tmpdir(), 'cp-pipe-'));
  const stderrFile = join(folder, 'stderr.txt');
  const run = spawnSync('bash', ['-c', script, process.execPath, cli, stderrFile], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  const stderr = readFileSync(stderrFile, 'utf8');
  rmSync(folder, { recursive: true, force: true });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(stderr, '', 'no stack trace, no message');
  assert.equal(run.stdout.trim(), '141');
});
