import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync, readdirSync, rmSync, utimesSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  writeFileAtomic,
  overwriteDecision,
  removeStaleTemps,
  TEMP_MARKER,
} from '../../../src/extension/glue/atomic-write';

const WRITER = join(import.meta.dirname, 'fixtures', 'slow-writer.ts');
const OLD = '{"traceEvents": [], "note": "the user\'s old trace"}\n';

/** Starts the slow writer, waits until it is mid-write, kills it with SIGKILL, and returns what it printed. */
function killMidWrite(mode: 'atomic' | 'plain', target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, mode, target], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('WRITING')) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('exit', (code, signal) =>
      out.includes('DONE')
        ? reject(new Error('the writer finished before it was killed'))
        : resolve(`${code}/${signal}`),
    );
  });
}

test('a write killed mid-way leaves the old file intact (atomic), where an in-place write destroys it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-atomic-'));
  try {
    const target = join(dir, 'run.cptrace.json');
    writeFileSync(target, OLD);
    assert.equal(await killMidWrite('atomic', target), 'null/SIGKILL');
    assert.equal(readFileSync(target, 'utf8'), OLD);
    const leftovers = readdirSync(dir).filter((n) => n.includes(TEMP_MARKER));
    assert.equal(leftovers.length, 1, 'the killed write left its temporary file, not the target, half-written');

    // The control: the same kill during a plain overwrite loses the user's file. This is what the test guards against.
    const plain = join(dir, 'plain.json');
    writeFileSync(plain, OLD);
    await killMidWrite('plain', plain);
    assert.notEqual(readFileSync(plain, 'utf8'), OLD);

    // Stale temporaries are cleaned up later.
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(join(dir, leftovers[0]), old, old);
    assert.equal(await removeStaleTemps(dir), 1);
    assert.deepEqual(
      readdirSync(dir).filter((n) => n.includes(TEMP_MARKER)),
      [],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a completed atomic write replaces the file and leaves no temporary behind', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-atomic-'));
  try {
    const target = join(dir, 'out.json');
    writeFileSync(target, OLD);
    let temp = '';
    await writeFileAtomic(target, '{"new": true}', {
      onTempCreated: (t) => {
        temp = t;
      },
    });
    assert.equal(readFileSync(target, 'utf8'), '{"new": true}');
    assert.ok(temp.startsWith(dir) && temp !== target);
    assert.deepEqual(readdirSync(dir), ['out.json']);
    await writeFileAtomic(join(dir, 'chunks.json'), ['[', '1', ']']);
    assert.equal(readFileSync(join(dir, 'chunks.json'), 'utf8'), '[1]');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a failing write removes its temporary and keeps the old file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-atomic-'));
  try {
    const target = join(dir, 'keep.json');
    writeFileSync(target, OLD);
    async function* failing() {
      yield 'partial';
      throw new Error('serializer failed');
    }
    await assert.rejects(writeFileAtomic(target, failing()), /serializer failed/);
    assert.equal(readFileSync(target, 'utf8'), OLD);
    assert.deepEqual(readdirSync(dir), ['keep.json']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("an existing file is never overwritten without the user's yes, and a folder is refused", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-atomic-'));
  try {
    const file = join(dir, 'a.json');
    writeFileSync(file, OLD);
    mkdirSync(join(dir, 'folder.json'));
    assert.equal(await overwriteDecision(join(dir, 'new.json'), false), 'write');
    assert.equal(await overwriteDecision(file, false), 'ask');
    assert.equal(await overwriteDecision(file, true), 'write');
    assert.equal(await overwriteDecision(join(dir, 'folder.json'), true), 'refuse');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
