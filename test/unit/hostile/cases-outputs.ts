// Class 1, output paths: every flag that names a file to write, and the extension's writer, against targets that
// are not plain new files. The answer is exit 2 with one line naming the flag and the path, before any long work,
// and nothing outside the named path created, replaced or left behind.
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { existsSync, lstatSync, readdirSync, readFileSync, symlinkSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { mountTmpfs, makeFifo } from '../native/files/mounts';
import { writeFileAtomic } from '../../../src/extension/glue/atomic-write';
import {
  assertBounded,
  assertUserError,
  cli,
  fakePython,
  FIXTURES_REAL,
  LLAMA_CONFIG,
  notRoot,
  type HostileCase,
} from './round';

const SIMULATE = ['simulate', '--system', 'dgx-h100', '--bytes', '1M'];
const NCCL_LOG = join(FIXTURES_REAL, 'nccl-debug-a100-2node-graph-ib.log');
const NCCL_TESTS = join(FIXTURES_REAL, 'nccl-tests-a100-8gpu-2021.txt');

/** Files in `dir` whose names mark them as the writer's temporary files. */
function temporaries(dir: string): string[] {
  return readdirSync(dir).filter((name) => name.includes('.cp-tmp-'));
}

/** Fills a tmpfs so that no data block is left (inodes remain, so a probe file can still be created). */
function fill(dir: string): void {
  const chunk = Buffer.alloc(4096, 1);
  let i = 0;
  try {
    for (;;) writeFileSync(join(dir, `filler-${i++}`), chunk);
  } catch {
    // ENOSPC: the disk is full, as wanted.
  }
}

export const OUTPUT_CASES: readonly HostileCase[] = [
  {
    id: 'out-parent-is-file',
    cls: 1,
    input: 'simulate --trace notes.txt/trace.json, where notes.txt is a regular file',
    expect: 'exit 2, one line naming --trace and that the parent is not a folder; notes.txt unchanged',
    async run(dir) {
      writeFileSync(join(dir, 'notes.txt'), 'keep');
      const r = await cli([...SIMULATE, '--trace', join(dir, 'notes.txt', 'trace.json')]);
      assertUserError(r, { names: /--trace .*notes\.txt.*(not a folder|not a directory)/ });
      assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'keep');
    },
  },
  {
    id: 'out-dangling-link',
    cls: 1,
    input: 'profile --trace link.json, a symbolic link to a file in a folder that does not exist',
    expect: 'exit 2 naming --trace; the link stays a link and no folder is created',
    async run(dir) {
      symlinkSync(join(dir, 'gone', 'deeper', 'x.json'), join(dir, 'link.json'));
      const r = await cli(['profile', LLAMA_CONFIG, '--trace', join(dir, 'link.json')]);
      assertUserError(r, { names: /--trace .*link\.json/ });
      assert.ok(lstatSync(join(dir, 'link.json')).isSymbolicLink());
      assert.ok(!existsSync(join(dir, 'gone')));
    },
  },
  {
    id: 'out-symlink-loop',
    cls: 1,
    input: 'import --trace a.json where a.json -> b.json -> a.json',
    expect: 'exit 2, one line naming --trace and the loop; both links unchanged',
    async run(dir) {
      symlinkSync(join(dir, 'b.json'), join(dir, 'a.json'));
      symlinkSync(join(dir, 'a.json'), join(dir, 'b.json'));
      const trace = join(FIXTURES_REAL, 'kineto-a100-2rank-nccl2.17-gpu-excerpt.json');
      const r = await cli(['import', trace, '--trace', join(dir, 'a.json')]);
      assertUserError(r, { names: /--trace .*a\.json.*(symbolic links|loop)/i });
      assert.ok(lstatSync(join(dir, 'a.json')).isSymbolicLink());
    },
  },
  {
    id: 'out-readonly-mount',
    cls: 1,
    input: 'calibrate --out on a read-only tmpfs, as root',
    expect: 'exit 2 naming --out and the read-only file system, within seconds (before the fit)',
    skip: notRoot,
    async run() {
      const mount = mountTmpfs('size=64k');
      if (typeof mount === 'string') throw new Error(mount);
      try {
        mount.remount('ro');
        const r = await cli(['calibrate', NCCL_TESTS, '--system', 'dgx-a100', '--out', join(mount.dir, 'fit.json')], {
          limitMs: 30_000,
        });
        assertUserError(r, { names: /--out .*fit\.json.*read-only/ });
      } finally {
        mount.unmount();
      }
    },
  },
  {
    id: 'out-full-disk-write-system',
    cls: 1,
    input: 'import NCCL log --write-system old.json --force on a tmpfs with no free block',
    expect: 'exit 2, one line saying the old file is unchanged; old.json byte-identical; no temporary file left',
    skip: notRoot,
    async run() {
      const mount = mountTmpfs('size=64k');
      if (typeof mount === 'string') throw new Error(mount);
      try {
        const old = join(mount.dir, 'old.json');
        writeFileSync(old, '{"old": true}\n');
        fill(mount.dir);
        const r = await cli(['import', NCCL_LOG, '--gpu', 'A100-SXM', '--write-system', old, '--force']);
        assertUserError(r, { names: /old\.json.*(no space|unchanged)/i });
        assert.equal(readFileSync(old, 'utf8'), '{"old": true}\n');
        assert.deepEqual(temporaries(mount.dir), []);
      } finally {
        mount.unmount();
      }
    },
  },
  {
    id: 'out-full-disk-trace',
    cls: 1,
    input: 'simulate --trace old.json --force, the new trace larger than the space left on a 64 KiB tmpfs',
    expect: 'exit 2, one line; old.json byte-identical; no temporary file left',
    skip: notRoot,
    async run() {
      const mount = mountTmpfs('size=64k');
      if (typeof mount === 'string') throw new Error(mount);
      try {
        const old = join(mount.dir, 'old.json');
        writeFileSync(old, 'x'.repeat(1000));
        const r = await cli([
          'simulate',
          '--system',
          'dgx-h100',
          '--nodes',
          '4',
          '--bytes',
          '1G',
          '--algo',
          'ring',
          '--trace',
          old,
          '--force',
        ]);
        assertUserError(r, { names: /old\.json.*(no space|unchanged)/i });
        assert.equal(readFileSync(old, 'utf8'), 'x'.repeat(1000));
        assert.deepEqual(temporaries(mount.dir), []);
      } finally {
        mount.unmount();
      }
    },
  },
  {
    id: 'out-stdout-with-json',
    cls: 1,
    input: 'profile --json --trace - (two JSON documents asked for on one stdout)',
    expect: 'stdout is one parseable JSON document (the other goes to stderr), or exit 2 with one line',
    async run() {
      const r = await cli(['profile', LLAMA_CONFIG, '--json', '--trace', '-']);
      assertBounded(r);
      if (r.code === 2) return assertUserError(r, { names: /--trace|--json/ });
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotThrow(() => JSON.parse(r.stdout), 'stdout is one JSON document');
    },
  },
  {
    id: 'out-run-missing-folder',
    cls: 1,
    input: 'run --trace no/such/dir/t.json with a Python whose ranks would run',
    expect: 'exit 2 naming --trace before any rank starts',
    async run(dir) {
      const python = fakePython(dir, 'sleep 30');
      const r = await cli(['run', '--python', python, '--nproc', '2', '--trace', join(dir, 'no', 'such', 't.json')], {
        limitMs: 30_000,
      });
      assertUserError(r, { names: /--trace .*t\.json.*does not exist/ });
      assert.ok(!existsSync(join(dir, 'marks')), 'no rank started');
    },
  },
  {
    id: 'out-proc-file',
    cls: 1,
    input: 'simulate --trace /proc/self/status (a kernel file that reads as a regular file of size 0)',
    expect: 'exit 2 naming --trace; nothing written',
    async run() {
      const r = await cli([...SIMULATE, '--trace', '/proc/self/status', '--force']);
      assertUserError(r, { names: /--trace '\/proc\/self\/status'/ });
    },
  },
  {
    id: 'out-empty-name',
    cls: 1,
    input: "import --write-system '' (an empty file name)",
    expect: 'exit 2, one line naming --write-system',
    async run() {
      const r = await cli(['import', NCCL_LOG, '--gpu', 'A100-SXM', '--write-system', '']);
      assertUserError(r, { names: /--write-system/ });
    },
  },
  {
    id: 'out-socket',
    cls: 1,
    input: 'calibrate --out s.sock --force, a listening Unix socket',
    expect: 'exit 2 naming the socket; the socket is still there',
    async run(dir) {
      const path = join(dir, 's.sock');
      const server = createServer();
      await new Promise<void>((done) => server.listen(path, done));
      try {
        const r = await cli(['calibrate', NCCL_TESTS, '--system', 'dgx-a100', '--out', path, '--force']);
        assertUserError(r, { names: /--out .*s\.sock.*socket/ });
        assert.ok(lstatSync(path).isSocket());
      } finally {
        server.close();
      }
    },
  },
  {
    id: 'out-trace-over-input',
    cls: 1,
    input: 'import trace.json --trace trace.json --force (the imported trace is also the output)',
    expect: 'exit 2 naming --trace and that it is an input; trace.json unchanged',
    async run(dir) {
      const trace = join(dir, 'trace.json');
      copyFileSync(join(FIXTURES_REAL, 'kineto-a100-2rank-nccl2.17-gpu-excerpt.json'), trace);
      const before = readFileSync(trace, 'utf8');
      const r = await cli(['import', trace, '--trace', trace, '--force']);
      assertUserError(r, { names: /--trace .*trace\.json.*input/ });
      assert.equal(readFileSync(trace, 'utf8'), before);
    },
  },
  {
    id: 'out-overwrites-input',
    cls: 1,
    input: 'simulate --system box.json --trace box.json --force (the output is the input)',
    expect: 'exit 2 naming --trace and that it is an input; box.json unchanged',
    async run(dir) {
      const box = join(dir, 'box.json');
      copyFileSync(join(import.meta.dirname, '..', '..', '..', 'examples', 'systems', 'dgx-h100-2node.json'), box);
      const before = readFileSync(box, 'utf8');
      const r = await cli(['simulate', '--system', box, '--bytes', '1M', '--trace', box, '--force']);
      assertUserError(r, { names: /--trace .*box\.json.*input/ });
      assert.equal(readFileSync(box, 'utf8'), before);
    },
  },
  {
    id: 'out-longest-name',
    cls: 1,
    input: 'simulate --trace <250-character name>.json (a legal name, near NAME_MAX)',
    expect: 'exit 0, the file written under exactly that name, no temporary file left',
    async run(dir) {
      const name = `${'n'.repeat(245)}.json`;
      const r = await cli([...SIMULATE, '--trace', join(dir, name)]);
      assertBounded(r);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(JSON.parse(readFileSync(join(dir, name), 'utf8')).traceEvents);
      assert.deepEqual(temporaries(dir), []);
    },
  },
  {
    id: 'out-name-with-controls',
    cls: 1,
    input: "simulate --trace $'t\\nerror: forged\\e[2J.json' (newline and an escape sequence in the name)",
    expect: 'exit 0, the file written under that exact name; nothing printed acts on the terminal or forges a line',
    async run(dir) {
      const name = join(dir, 't\nerror: forged\u001b[2J.json');
      const r = await cli([...SIMULATE, '--trace', name]);
      assertBounded(r);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(existsSync(name));
      assert.ok(!r.stdout.includes('\u001b'), 'no raw escape in stdout');
      for (const line of `${r.stdout}\n${r.stderr}`.split('\n')) assert.ok(!line.startsWith('error: forged'));
    },
  },
  {
    id: 'out-extension-fifo',
    cls: 1,
    input: "the extension's save-trace writer (writeFileAtomic) onto a FIFO",
    expect: 'a one-line file error naming the FIFO; the FIFO is still a FIFO; the call returns (no writer waited for)',
    async run(dir) {
      const fifo = join(dir, 'saved.json');
      const why = makeFifo(fifo);
      if (why) throw new Error(why);
      await assert.rejects(
        writeFileAtomic(fifo, '{}'),
        (e: Error) => /FIFO/.test(e.message) && !e.message.includes('\n'),
      );
      assert.ok(lstatSync(fifo).isFIFO());
    },
  },
  {
    id: 'out-extension-full-disk',
    cls: 1,
    input: "the extension's export writer streaming chunks onto a full tmpfs over an existing export",
    expect: 'a one-line file error; the old export byte-identical; no temporary file left',
    skip: notRoot,
    async run() {
      const mount = mountTmpfs('size=64k');
      if (typeof mount === 'string') throw new Error(mount);
      try {
        const old = join(mount.dir, 'export.csv');
        writeFileSync(old, 'a,b\n1,2\n');
        fill(mount.dir);
        async function* rows(): AsyncGenerator<string> {
          for (let i = 0; i < 10_000; i++) yield `${i},${i * 2}\n`;
        }
        await assert.rejects(
          writeFileAtomic(old, rows()),
          (e: Error) => /export\.csv/.test(e.message) && !e.message.includes('\n'),
        );
        assert.equal(readFileSync(old, 'utf8'), 'a,b\n1,2\n');
        assert.deepEqual(temporaries(mount.dir), []);
      } finally {
        mount.unmount();
      }
    },
  },
  {
    id: 'out-extension-long-name',
    cls: 1,
    input: "the extension's writer onto a new file whose name is 250 characters long",
    expect: 'the file is written; no temporary file left',
    async run(dir) {
      const target = join(dir, `${'e'.repeat(246)}.csv`);
      await writeFileAtomic(target, 'x\n');
      assert.equal(readFileSync(target, 'utf8'), 'x\n');
      assert.deepEqual(temporaries(dir), []);
    },
  },
  {
    id: 'out-sysfs',
    cls: 1,
    input: 'profile --trace /sys/kernel/new.json (a read-only kernel file system)',
    expect: 'exit 2 naming --trace; nothing created',
    skip: () => (existsSync('/sys/kernel') ? undefined : 'no /sys/kernel here'),
    async run() {
      const r = await cli(['profile', LLAMA_CONFIG, '--trace', '/sys/kernel/new.json']);
      assertUserError(r, { names: /--trace '\/sys\/kernel\/new\.json'/ });
      assert.ok(!existsSync('/sys/kernel/new.json'));
    },
  },
];
