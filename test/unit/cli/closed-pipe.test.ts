// A reader that stops early (`sweep --factor 1.01 | head`) must not make the CLI crash on EPIPE: it stops quietly
// with 141, the status of a program killed by SIGPIPE, and prints nothing on stderr.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { builtCli, ROOT } from './run-cli';

test('sweep into a reader that closes the pipe after one line exits 141 with nothing on stderr', async () => {
  const cli = await builtCli();
  // About 500 KB of rows, several times what the pipe and the reader's buffers hold, so the writer is still writing
  // when the reader closes even on a loaded machine (at --factor 1.01, 250 KB, a CI run once drained it all: exit 0).
  const child = spawn(process.execPath, [cli, 'sweep', '--system', 'dgx-h100', '--factor', '1.005'], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // Read the first chunk, then close our end of the pipe, as `head -1` does.
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.stdout.destroy();
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  assert.equal(stderr, '', 'no stack trace, no message');
  assert.equal(code, 141);
});
