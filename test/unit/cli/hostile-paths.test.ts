// The CLI end to end against hostile paths and text: outputs into missing folders, onto devices and FIFOs, inputs
// that are devices, FIFOs or links to them, and names full of control characters. Each is one line on stderr with
// exit 2 (or, for `check`, a file named as not analysed with exit 1), in bounded time, and nothing is replaced.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { runCli } from './run-cli';
import { makeFifo } from '../native/files/mounts';
import { terminalInline, terminalMessage, terminalSafe } from '../../../src/cli/terminal-text';

const fresh = (): string => mkdtempSync(join(tmpdir(), 'cp-hostile-'));

/** Exit 2, and stderr is exactly one line starting with "error:". */
function oneLineError(r: { code: number | null; stderr: string }, pattern: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0], /^error: /);
  assert.match(lines[0], pattern);
}

test('outputs: a missing folder, a device, a FIFO and a folder are refused before any work, and left as they were', async (t) => {
  const dir = fresh();
  const simulate = ['simulate', '--system', 'dgx-h100', '--bytes', '1M'];
  oneLineError(
    await runCli([...simulate, '--trace', join(dir, 'no', 'such', 'trace.json')]),
    /--trace '.*trace\.json': the folder '.*such' does not exist$/,
  );
  oneLineError(
    await runCli([...simulate, '--trace', '/dev/null']),
    /a character device, not a regular file; refusing to replace it/,
  );
  mkdirSync(join(dir, 'folder.json'));
  oneLineError(await runCli([...simulate, '--trace', join(dir, 'folder.json')]), /a folder, not a regular file/);
  const fifo = join(dir, 'pipe.json');
  const why = makeFifo(fifo);
  if (why) t.diagnostic(`FIFO case skipped: ${why}`);
  else {
    oneLineError(await runCli([...simulate, '--trace', fifo]), /FIFO/);
    assert.ok(lstatSync(fifo).isFIFO());
  }
  oneLineError(
    await runCli(['calibrate', join(dir, 'absent.txt'), '--system', 'dgx-h100', '--out', '/dev/null']),
    /--out '\/dev\/null': a character device/,
  );
});

test('--trace - streams the trace to stdout and moves the summary to stderr', async () => {
  const r = await runCli(['simulate', '--system', 'dgx-h100', '--bytes', '1M', '--trace', '-']);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(Array.isArray(JSON.parse(r.stdout).traceEvents), 'stdout is one JSON trace');
  assert.match(r.stderr, /written to stdout/);
});

test('inputs: devices, FIFOs and links to devices are refused at once, with exit 2', async (t) => {
  const dir = fresh();
  const started = performance.now();
  oneLineError(
    await runCli(['simulate', '--system', '/dev/zero', '--bytes', '1M']),
    /system file '\/dev\/zero': a character device, not a regular file/,
  );
  symlinkSync('/dev/urandom', join(dir, 'random.json'));
  oneLineError(await runCli(['import', join(dir, 'random.json')]), /random\.json': a character device/);
  writeFileSync(join(dir, 'run.collective.yaml'), 'model: {config: model.json}\nsystem: {preset: dgx-h100}\n');
  symlinkSync('/dev/zero', join(dir, 'model.json'));
  oneLineError(
    await runCli(['profile', join(dir, 'run.collective.yaml')]),
    /run\.collective\.yaml:1:\d+: cannot read model config 'model\.json': a character device, not a regular file/,
  );
  const fifo = join(dir, 'system.yaml');
  const why = makeFifo(fifo);
  if (why) t.diagnostic(`FIFO case skipped: ${why}`);
  else oneLineError(await runCli(['simulate', '--system', fifo, '--bytes', '1M']), /FIFO/);
  assert.ok(performance.now() - started < 30_000, 'nothing waited on a device or a FIFO');
});

test('check names a FIFO or a device link among the Python files as not analysed, exit 1', async (t) => {
  const dir = fresh();
  writeFileSync(join(dir, 'train.py'), 'import torch\n');
  symlinkSync('/dev/zero', join(dir, 'zero.py'));
  const why = makeFifo(join(dir, 'pipe.py'));
  if (why) t.diagnostic(`FIFO case skipped: ${why}`);
  const r = await runCli(['check', dir]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /zero\.py: not analysed: cannot read: a character device, not a regular file/);
  if (!why) assert.match(r.stdout, /pipe\.py: not analysed: cannot read: a FIFO \(named pipe\), not a regular file/);
  assert.equal((await runCli(['check', dir, '--exit-zero'])).code, 0);
});

test('text from input cannot act on the terminal or forge an error line', async () => {
  const dir = fresh();
  // Arguments cannot hold NUL; a file can, and its values are quoted in the errors.
  writeFileSync(
    join(dir, 'forged.system.json'),
    JSON.stringify({
      gpu: 'x\u001b[2J\u0000\r\nerror: all good\u202e',
      nodes: 1,
      gpusPerNode: 8,
      intraNode: 'nvswitch',
    }),
  );
  for (const args of [
    ['--system', 'x\u001b[2J\r\nerror: all good\u202e'],
    ['--system', join(dir, 'forged.system.json')],
  ]) {
    const r = await runCli(['simulate', ...args, '--bytes', '1M']);
    assert.equal(r.code, 2, r.stderr);
    // eslint-disable-next-line no-control-regex -- the assertion is that no control character got through.
    assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f\u202e]/.test(r.stderr), JSON.stringify(r.stderr));
    assert.deepEqual(r.stderr.split('\n').filter((line) => line.startsWith('error:')).length, 1, r.stderr);
  }
  const name = join(dir, 'a\nerror: forged.py');
  writeFileSync(name, Buffer.from([0x69, 0x6d, 0x70, 0x6f, 0x72, 0x74, 0x20, 0xff, 0x0a]));
  symlinkSync('/dev/zero', join(dir, 'b\u001b[31m.py'));
  const c = await runCli(['check', dir]);
  assert.equal(c.code, 1);
  assert.ok(!c.stdout.split('\n').some((line) => line.startsWith('error:')), c.stdout);
  assert.match(c.stdout, /b\\u001b\[31m\.py: not analysed/);
  assert.equal(readFileSync(name, 'latin1').length, 9);
});

test('file names and labels from input stay on their line in stdout (import, simulate)', async () => {
  const dir = fresh();
  // A sweep's own output is a file `import` reads; its name carries a newline and a forged line.
  const sweep = await runCli([
    'sweep',
    '--system',
    'dgx-h100',
    '--min-bytes',
    '8',
    '--max-bytes',
    '64',
    '--factor',
    '8',
  ]);
  assert.equal(sweep.code, 0, sweep.stderr);
  const name = join(dir, 'run\nerror: forged.txt');
  writeFileSync(name, sweep.stdout);
  const imported = await runCli(['import', name]);
  assert.equal(imported.code, 0, imported.stderr);
  assert.ok(!imported.stdout.split('\n').some((line) => line.startsWith('error:')), imported.stdout);
  assert.match(imported.stdout, /run\\u000aerror: forged\.txt/);
  // A system file's label is printed in simulate's header.
  const system = join(dir, 'forged.system.json');
  writeFileSync(
    system,
    JSON.stringify({ name: 'box\nerror: forged', gpu: 'H100-SXM', nodes: 1, gpusPerNode: 8, intraNode: 'nvswitch' }),
  );
  const simulated = await runCli(['simulate', '--system', system, '--bytes', '1M']);
  assert.equal(simulated.code, 0, simulated.stderr);
  assert.ok(!simulated.stdout.split('\n').some((line) => line.startsWith('error:')), simulated.stdout);
});

test('the escaping keeps layout but shows every control character', () => {
  assert.equal(terminalSafe('a\tb\nc\u001b[0m\u0000'), 'a\tb\nc\\u001b[0m\\u0000');
  assert.equal(terminalInline('a\nb'), 'a\\u000ab');
  assert.equal(terminalMessage('one\nerror: two\n'), 'one\n  error: two\n');
  assert.equal(terminalSafe('\u202eevil\u2066'), '\\u202eevil\\u2066');
});
