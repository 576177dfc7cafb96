// The one input reader: devices, FIFOs, folders and links to them are refused at once (a FIFO must not hang),
// files over their kind's limit are refused before they are read, and the limits are the ones docs/limits.md lists.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  INPUT_LIMITS_BYTES,
  readInputBytes,
  readInputText,
  type InputKind,
} from '../../../../src/native/files/input-file';
import { formatLimitBytes } from '../../../../src/native/files/input-limits';
import { UserFileError } from '../../../../src/native/files/file-errors';
import { ROOT } from '../../cli/run-cli';
import { makeFifo } from './mounts';

const fresh = (): string => mkdtempSync(join(tmpdir(), 'cp-in-'));

function refusal(pattern: RegExp): (error: unknown) => boolean {
  return (error) => error instanceof UserFileError && !error.message.includes('\n') && pattern.test(error.message);
}

test('a regular file is read whole', () => {
  const dir = fresh();
  writeFileSync(join(dir, 'a.yaml'), 'gpu: H100-SXM\n');
  assert.equal(readInputText(join(dir, 'a.yaml'), { kind: 'config' }), 'gpu: H100-SXM\n');
  // /proc files report size 0 yet have content: the budgeted read does not trust the size.
  if (process.platform === 'linux') assert.ok(readInputText('/proc/self/status', { kind: 'config' }).includes('Name:'));
});

test('files of every size come back byte for byte, in pieces of at most 1 MiB after the first', () => {
  const dir = fresh();
  // Empty, one byte, a pooled size, just over the 1 MiB piece, and several pieces: the reader keeps the stat-sized
  // first buffer and adds 1 MiB pieces only when a file holds more than its stat said.
  for (const sizeBytes of [0, 1, 4095, 1024 * 1024 + 1, 3 * 1024 * 1024 + 17]) {
    const bytes = Buffer.alloc(sizeBytes);
    for (let i = 0; i < sizeBytes; i++) bytes[i] = (i * 31 + (i >> 12)) & 0xff;
    const path = join(dir, `f${sizeBytes}.py`);
    writeFileSync(path, bytes);
    const progress: number[] = [];
    const read = readInputBytes(path, { kind: 'source' }, (readBytes) => progress.push(readBytes));
    assert.ok(read.equals(bytes), `${sizeBytes} bytes read back`);
    assert.equal(progress.at(-1) ?? 0, sizeBytes);
  }
  // A /proc file's stat says 0 bytes: every byte past the first buffer's two comes in later pieces.
  if (process.platform === 'linux')
    assert.ok(readInputBytes('/proc/self/cmdline', { kind: 'config' }).equals(readFileSync('/proc/self/cmdline')));
});

test('devices, folders, FIFOs and links to devices are refused at once', (t) => {
  const dir = fresh();
  const started = performance.now();
  for (const device of ['/dev/zero', '/dev/urandom', '/dev/null']) {
    assert.throws(
      () => readInputBytes(device, { kind: 'config', what: 'system file' }),
      refusal(/system file '\/dev\/\w+': a character device, not a regular file/),
    );
  }
  assert.throws(() => readInputBytes(dir, { kind: 'source' }), refusal(/a folder, not a regular file/));
  symlinkSync('/dev/zero', join(dir, 'zero.json'));
  assert.throws(() => readInputBytes(join(dir, 'zero.json'), { kind: 'measurement' }), refusal(/character device/));
  const fifo = join(dir, 'pipe.py');
  const noFifo = makeFifo(fifo);
  if (noFifo) t.diagnostic(`FIFO case skipped: ${noFifo}`);
  else assert.throws(() => readInputBytes(fifo, { kind: 'source' }), refusal(/FIFO/));
  assert.throws(
    () => readInputBytes(join(dir, 'missing.yaml'), { kind: 'config' }),
    refusal(/cannot read '.*missing.yaml': no such file/),
  );
  // Nothing above may block: a FIFO with no writer would wait forever if it were opened for a blocking read.
  assert.ok(performance.now() - started < 5000);
});

test("a sparse file over its kind's limit is refused before it is read", () => {
  const dir = fresh();
  for (const kind of ['config', 'source', 'dataset'] as InputKind[]) {
    const path = join(dir, `${kind}.big`);
    writeFileSync(path, '');
    truncateSync(path, INPUT_LIMITS_BYTES[kind] + 1);
    const started = performance.now();
    assert.throws(
      () => readInputBytes(path, { kind }),
      refusal(
        new RegExp(
          `over the ${formatLimitBytes(INPUT_LIMITS_BYTES[kind]).replace('.', '\\.')} limit for ${kind} files`,
        ),
      ),
    );
    assert.ok(performance.now() - started < 1000, 'refused from the size alone');
  }
});

test('docs/limits.md lists every input limit as the code has it', () => {
  const doc = readFileSync(join(ROOT, 'docs', 'limits.md'), 'utf8');
  for (const [kind, bytes] of Object.entries(INPUT_LIMITS_BYTES)) {
    assert.match(
      doc,
      new RegExp(`\\| \`${kind}\` \\| ${formatLimitBytes(bytes).replace('.', '\\.')} \\|`),
      `${kind} is missing or differs in docs/limits.md`,
    );
  }
});
