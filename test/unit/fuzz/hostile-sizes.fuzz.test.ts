// Fuzzes the bounds of issue 15: hostile sizes (past a limit, past 2^53, non-finite, malformed) through every
// counted flag and every limited config key, and non-regular files (FIFOs, devices, links to them, folders, sparse
// files past a limit, dangling links) through every reader and as every output target. Each must be refused with
// a one-line typed error in bounded time, and no path may be changed. `npm run fuzz` runs it with the others.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { lstatSync, mkdirSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { LIMITS, type Limit, type LimitName } from '../../../src/config/limits';
import { ConfigError } from '../../../src/config/positioned';
import { readTrainingConfig } from '../../../src/config/training-config';
import { assembleTrainingRun } from '../../../src/config/training-run';
import { UsageError } from '../../../src/cli/command';
import { COMMANDS } from '../../../src/cli/commands/index';
import { UserFileError } from '../../../src/native/files/file-errors';
import { INPUT_LIMITS_BYTES, readInputBytes, type InputKind } from '../../../src/native/files/input-file';
import { writeOutputFile } from '../../../src/native/files/output-file';
import { importMeasurementFile } from '../../../src/native/import-file';
import { makeFifo, makeNullDevice } from '../native/files/mounts';
import { checkInput, fuzz, reportCounts, runsFor, FUZZ_SEED, INPUT_TIME_LIMIT_MS } from './harness';
import { FUZZ_PLAN } from './plan';

after(() => reportCounts('hostile-sizes'));

const io = { stdout: (): void => undefined, stderr: (): void => undefined };
const command = (name: string) => COMMANDS.find((c) => c.name === name)!;

/** Values no counted flag may accept, built from the limit so they stay hostile when a limit changes. */
function hostileValues(limit: Limit): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      String(limit.max + 1),
      String(limit.max * 10),
      String(2 ** 53 + 1),
      '1e400',
      'Infinity',
      'NaN',
      '-1',
      '0',
      '9'.repeat(400),
      '1e308',
      ' ',
      '0x10',
    ),
    fc.integer({ min: 1, max: 1e6 }).map((k) => String(limit.max + k)),
  );
}

/** The counted flags, each with the arguments that make the command otherwise valid. */
const FLAGS: readonly { command: string; flag: string; limit: LimitName; base: string[] }[] = [
  { command: 'simulate', flag: 'nodes', limit: 'nodes', base: ['--system', 'dgx-h100', '--bytes', '1M'] },
  { command: 'simulate', flag: 'gpus-per-node', limit: 'gpusPerNode', base: ['--system', 'dgx-h100', '--bytes', '1M'] },
  { command: 'simulate', flag: 'bytes', limit: 'bytes', base: ['--system', 'dgx-h100'] },
  { command: 'sweep', flag: 'max-bytes', limit: 'bytes', base: ['--system', 'dgx-h100'] },
  { command: 'verify', flag: 'ranks', limit: 'ranks', base: [] },
  { command: 'verify', flag: 'elements', limit: 'elements', base: ['--ranks', '8'] },
  { command: 'verify', flag: 'channels', limit: 'channels', base: ['--ranks', '8'] },
  { command: 'run', flag: 'nproc', limit: 'processes', base: ['--python', '/nonexistent/python3'] },
  { command: 'run', flag: 'iters', limit: 'iterations', base: ['--python', '/nonexistent/python3'] },
  { command: 'run', flag: 'timeout', limit: 'timeoutSeconds', base: ['--python', '/nonexistent/python3'] },
  { command: 'run', flag: 'sizes', limit: 'bytes', base: ['--python', '/nonexistent/python3'] },
];

test('hostile sizes through every counted flag are one-line usage errors', async () => {
  const samples = fc.sample(
    fc.tuple(fc.constantFrom(...FLAGS), fc.nat()).chain(([f]) => hostileValues(LIMITS[f.limit]).map((v) => ({ f, v }))),
    { numRuns: runsFor(Math.max(FLAGS.length, FUZZ_PLAN.hostileSizes)), seed: FUZZ_SEED },
  );
  for (const { f, v } of samples) {
    const started = performance.now();
    const args = [...f.base, `--${f.flag}=${v}`];
    const outcome = await command(f.command)
      .run(args, io)
      .then(
        (code) => code,
        (error: unknown) => error,
      );
    const what = `${f.command} ${args.join(' ')}`;
    assert.ok(outcome instanceof UsageError, `${what}: ${String(outcome)}`);
    assert.ok(!(outcome as Error).message.includes('\n'), what);
    assert.ok(performance.now() - started < INPUT_TIME_LIMIT_MS, `${what} took ${performance.now() - started} ms`);
  }
});

const LIMITED_KEYS = (Object.entries(LIMITS) as [LimitName, Limit][]).flatMap(([name, limit]) =>
  limit.keys.map((key) => ({ name, key, limit })),
);

test('hostile values under every limited config key are refused with a position', () => {
  const values = (limit: Limit): fc.Arbitrary<string> =>
    fc.constantFrom(String(limit.max + 1), '1e400', '.inf', '-.inf', String(2 ** 53 + 1), String(limit.max * 1000));
  fuzz(
    fc.constantFrom(...LIMITED_KEYS).chain((k) => values(k.limit).map((v) => ({ ...k, v }))),
    FUZZ_PLAN.hostileConfigValues,
    ({ key, v }) => {
      const text = `model: {preset: gpt2}\nsystem: {preset: dgx-h100}\ntraining:\n  ${key}: ${v}\n${key}: ${v}\n`;
      const accepted = checkInput('limited config key', text, () =>
        assembleTrainingRun([readTrainingConfig(text, 'fuzz.collective.yaml').part]),
      );
      assert.ok(!accepted, `${key}: ${v} was accepted`);
    },
  );
});

/** Every kind of non-regular (or over-limit) path, made once in a temporary folder. */
function hostilePaths(): { label: string; path: string }[] {
  const dir = mkdtempSync(join(tmpdir(), 'cp-fuzz-files-'));
  const paths = [
    { label: 'folder', path: dir },
    { label: '/dev/zero', path: '/dev/zero' },
    { label: '/dev/urandom', path: '/dev/urandom' },
    { label: '/dev/null', path: '/dev/null' },
  ];
  symlinkSync('/dev/zero', join(dir, 'zero-link.json'));
  paths.push({ label: 'link to /dev/zero', path: join(dir, 'zero-link.json') });
  symlinkSync(join(dir, 'absent'), join(dir, 'dangling.json'));
  paths.push({ label: 'dangling link', path: join(dir, 'dangling.json') });
  if (!makeFifo(join(dir, 'pipe.json'))) paths.push({ label: 'FIFO', path: join(dir, 'pipe.json') });
  if (!makeNullDevice(join(dir, 'device.json'))) paths.push({ label: 'device node', path: join(dir, 'device.json') });
  writeFileSync(join(dir, 'sparse.json'), '');
  truncateSync(join(dir, 'sparse.json'), INPUT_LIMITS_BYTES['streamed-trace'] + 1);
  paths.push({ label: 'sparse file past every limit', path: join(dir, 'sparse.json') });
  mkdirSync(join(dir, 'sub'));
  return paths;
}

test('non-regular and over-limit files are refused by every reader and as every output target', async () => {
  const paths = hostilePaths();
  const kinds = Object.keys(INPUT_LIMITS_BYTES) as InputKind[];
  const readers: { label: string; read: (path: string) => unknown }[] = [
    ...kinds.map((kind) => ({ label: `reader ${kind}`, read: (path: string) => readInputBytes(path, { kind }) })),
    { label: 'import', read: (path: string) => importMeasurementFile(path) },
    { label: 'output', read: (path: string) => writeOutputFile(path, '{}') },
  ];
  const runs = Math.max(paths.length * readers.length, FUZZ_PLAN.nonRegularFiles);
  for (const { p, r } of fc.sample(fc.record({ p: fc.constantFrom(...paths), r: fc.constantFrom(...readers) }), {
    numRuns: runsFor(runs),
    seed: FUZZ_SEED,
  })) {
    // A large regular file is a fine output target (it is replaced whole); only reading it is refused.
    if (r.label === 'output' && p.label.startsWith('sparse')) continue;
    const before = lstatSync(p.path, { throwIfNoEntry: false });
    const started = performance.now();
    let outcome: unknown;
    try {
      outcome = r.read(p.path);
    } catch (error) {
      outcome = error;
    }
    const what = `${r.label} on ${p.label}`;
    assert.ok(outcome instanceof UserFileError || outcome instanceof ConfigError, `${what}: ${String(outcome)}`);
    assert.ok(!(outcome as Error).message.includes('\n'), what);
    assert.ok(performance.now() - started < INPUT_TIME_LIMIT_MS, `${what} took ${performance.now() - started} ms`);
    const after = lstatSync(p.path, { throwIfNoEntry: false });
    assert.equal(after?.mode, before?.mode, `${what} changed the path`);
    assert.equal(after?.ino, before?.ino, `${what} replaced the path`);
  }
  // The hostile CLI inputs end to end: a FIFO or device as a system file is refused, not read.
  for (const p of paths.filter((x) => x.label !== 'folder')) {
    const outcome = await command('simulate')
      .run(['--system', p.path, '--bytes', '1M'], io)
      .then(
        (code) => code,
        (error: unknown) => error,
      );
    assert.ok(
      outcome instanceof UsageError || outcome instanceof UserFileError,
      `simulate --system ${p.label}: ${String(outcome)}`,
    );
  }
});
