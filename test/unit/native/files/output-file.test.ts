// The one output writer: a target is replaced whole or not at all, non-regular targets are refused and left as
// they were, and every failure is one line (a UserFileError) that leaves the old file intact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  checkOutputPath,
  writeOutput,
  writeOutputFile,
  writeOutputFileAsync,
} from '../../../../src/native/files/output-file';
import { UserFileError } from '../../../../src/native/files/file-errors';
import { makeFifo, makeNullDevice, mountTmpfs } from './mounts';

const fresh = (): string => mkdtempSync(join(tmpdir(), 'cp-out-'));

function oneLineRefusal(pattern: RegExp): (error: unknown) => boolean {
  return (error) => error instanceof UserFileError && !error.message.includes('\n') && pattern.test(error.message);
}

test('a file is replaced whole, keeps its permission bits, and no temporary is left', () => {
  const dir = fresh();
  const target = join(dir, 'out.json');
  writeFileSync(target, 'old');
  chmodSync(target, 0o600);
  writeOutputFile(target, '{"new": true}');
  assert.equal(readFileSync(target, 'utf8'), '{"new": true}');
  assert.equal(statSync(target).mode & 0o777, 0o600);
  assert.deepEqual(readdirSync(dir), ['out.json']);
});

test('a missing folder is refused before any work, in one line that names it', () => {
  const dir = fresh();
  assert.throws(
    () => checkOutputPath(join(dir, 'missing', 'x.json'), { flag: '--trace' }),
    oneLineRefusal(/--trace .*the folder '.*missing' does not exist/),
  );
  writeFileSync(join(dir, 'file'), 'x');
  assert.throws(() => checkOutputPath(join(dir, 'file', 'x.json')), oneLineRefusal(/not a folder|part of the path/));
});

test('folders, FIFOs and device nodes are refused and left as they were', (t) => {
  const dir = fresh();
  mkdirSync(join(dir, 'folder'));
  assert.throws(() => checkOutputPath(join(dir, 'folder')), oneLineRefusal(/a folder, not a regular file/));
  assert.throws(
    () => checkOutputPath('/dev/null', { flag: '--trace' }),
    oneLineRefusal(/--trace '\/dev\/null': a character device/),
  );
  const fifo = join(dir, 'pipe');
  const noFifo = makeFifo(fifo);
  if (noFifo) t.diagnostic(`FIFO case skipped: ${noFifo}`);
  else {
    assert.throws(() => writeOutputFile(fifo, 'text'), oneLineRefusal(/FIFO/));
    assert.ok(lstatSync(fifo).isFIFO(), 'the FIFO is still a FIFO');
  }
  const device = join(dir, 'null-device');
  const noDevice = makeNullDevice(device);
  if (noDevice) t.diagnostic(`device-node case skipped: ${noDevice}`);
  else {
    assert.throws(() => writeOutputFile(device, 'text'), oneLineRefusal(/character device/));
    assert.ok(lstatSync(device).isCharacterDevice(), 'the device node is still a device node');
  }
  const link = join(dir, 'link-to-null');
  symlinkSync('/dev/null', link);
  assert.throws(() => writeOutputFile(link, 'text'), oneLineRefusal(/symbolic link to a character device/));
  assert.ok(lstatSync(link).isSymbolicLink());
  assert.deepEqual(
    readdirSync(dir).sort(),
    ['folder', 'link-to-null', ...(noFifo ? [] : ['pipe']), ...(noDevice ? [] : ['null-device'])].sort(),
  );
});

test('a symbolic link to a regular file writes the file and keeps the link', () => {
  const dir = fresh();
  writeFileSync(join(dir, 'real.json'), 'old');
  symlinkSync('real.json', join(dir, 'link.json'));
  writeOutputFile(join(dir, 'link.json'), 'new');
  assert.ok(lstatSync(join(dir, 'link.json')).isSymbolicLink());
  assert.equal(readFileSync(join(dir, 'real.json'), 'utf8'), 'new');
});

test('- means stdout only where the command allows it', () => {
  assert.throws(() => checkOutputPath('-', { flag: '--out' }), oneLineRefusal(/cannot go to stdout/));
  assert.equal(checkOutputPath('-', { allowStdout: true }).stdout, true);
});

test('a full disk leaves the old file intact and says so in one line', (t) => {
  const mount = mountTmpfs('size=64k');
  if (typeof mount === 'string') return t.skip(mount);
  try {
    const target = join(mount.dir, 'trace.json');
    writeFileSync(target, 'the old trace');
    const checked = checkOutputPath(target);
    assert.throws(
      () => writeOutput(checked, 'x'.repeat(1024 * 1024)),
      oneLineRefusal(/the disk is full; the old file is unchanged/),
    );
    assert.equal(readFileSync(target, 'utf8'), 'the old trace');
    assert.deepEqual(readdirSync(mount.dir), ['trace.json']);
  } finally {
    mount.unmount();
  }
});

test('a read-only filesystem is refused when the path is checked, before any work', async (t) => {
  const mount = mountTmpfs('size=1m');
  if (typeof mount === 'string') return t.skip(mount);
  try {
    writeFileSync(join(mount.dir, 'old.json'), 'old');
    mount.remount('ro');
    assert.throws(
      () => checkOutputPath(join(mount.dir, 'old.json'), { flag: '--out' }),
      oneLineRefusal(/--out .*read-only/),
    );
    assert.throws(() => checkOutputPath(join(mount.dir, 'new.json')), oneLineRefusal(/read-only/));
    await assert.rejects(writeOutputFileAsync(join(mount.dir, 'old.json'), ['a', 'b']), oneLineRefusal(/read-only/));
    assert.equal(readFileSync(join(mount.dir, 'old.json'), 'utf8'), 'old');
  } finally {
    mount.unmount();
  }
});

test('the asynchronous writer writes chunks and refuses the same targets', async () => {
  const dir = fresh();
  await writeOutputFileAsync(join(dir, 'chunks.json'), ['[', new TextEncoder().encode('1'), ']']);
  assert.equal(readFileSync(join(dir, 'chunks.json'), 'utf8'), '[1]');
  await assert.rejects(writeOutputFileAsync('/dev/null', 'x'), oneLineRefusal(/character device/));
  await assert.rejects(writeOutputFileAsync(join(dir, 'no', 'x.json'), 'x'), oneLineRefusal(/does not exist/));
});
