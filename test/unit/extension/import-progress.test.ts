// Import Measurements… on a large file, through the real bundle: the notification shows the bytes read, then the
// parse (in the engine worker), and Cancel stops it with nothing shown or kept.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as fake from './fixtures/fake-vscode';
import { activateBundle, notBuilt } from './fixtures/activate-bundle';
import { asBytes, presetSystem, resolveSystem, sweepAllReduce } from '../../../src/engine/index';
import { formatFileSize } from '../../../src/extension/glue/file-limits';

const skip = notBuilt ?? false;
before(() => {
  if (!notBuilt) activateBundle();
});
const run = (id: string, ...args: unknown[]) => fake.commands.executeCommand(`collectiveProfiler.${id}`, ...args);

/** An nccl-tests table after 12 MiB of log lines, the way a long NCCL_DEBUG run prints it. */
function longLog(dir: string): string {
  const system = resolveSystem(presetSystem('dgx-h100', { nodes: 1 })!);
  const rows = sweepAllReduce(system, { minBytes: asBytes(1 << 20), maxBytes: asBytes(1 << 26), factor: 2 });
  const table = [
    '# nThread 1 nGpus 8 minBytes 1048576 maxBytes 67108864 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0',
    '#',
    '#                                                              out-of-place                       in-place',
    '#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong',
    '#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)',
    ...rows.map(
      (r) =>
        `${String(r.bytes).padStart(12)} ${String(r.bytes / 4).padStart(12)}     float     sum      -1 ${r.timeUs.toFixed(1).padStart(8)} ${r.algbwGBps.toFixed(2).padStart(7)} ${r.busbwGBps.toFixed(2).padStart(7)}      0 ${r.timeUs.toFixed(1).padStart(8)} ${r.algbwGBps.toFixed(2).padStart(7)} ${r.busbwGBps.toFixed(2).padStart(7)}      0`,
    ),
    '# Out of bounds values : 0 OK',
    `# Avg bus bandwidth    : ${rows[0].busbwGBps.toFixed(2)}`,
  ].join('\n');
  const path = join(dir, 'long-run.txt');
  writeFileSync(path, `${'# a line of the run before its table, repeated\n'.repeat(280_000)}${table}\n`);
  return path;
}

test('a large import reports the bytes read and then the parse, and shows its charts', { skip }, async () => {
  const path = longLog(mkdtempSync(join(tmpdir(), 'cp-import-progress-')));
  fake.recorded.progressReports.length = 0;
  fake.recorded.panels.length = 0;
  fake.recorded.messages.length = 0;
  await run('importMeasurements', fake.Uri.file(path));
  const messages = fake.recorded.progressReports.map((r) => r.message ?? '');
  const reads = messages.filter((m) => m.startsWith('read '));
  assert.ok(reads.length >= 3, `one report per 4 MiB piece: ${messages.join(' | ')}`);
  const size = formatFileSize(statSync(path).size);
  assert.equal(reads.at(-1), `read ${size} of ${size}`);
  assert.equal(messages.at(-1), `parsing ${size}`);
  const increments = fake.recorded.progressReports.map((r) => r.increment ?? 0);
  assert.ok(Math.abs(increments.reduce((a, b) => a + b, 0) - 50) < 1e-9, 'reading fills half the bar');
  assert.ok(
    fake.recorded.panels.some((p) => p.viewType === 'collectiveProfiler.charts'),
    'the charts open',
  );
  assert.ok(
    fake.recorded.messages.some((m) => m.includes('long-run.txt')),
    fake.recorded.messages.join('\n'),
  );
});

test('Cancel while the file is read stops the import: no panel, no message, no problems kept', { skip }, async () => {
  const path = longLog(mkdtempSync(join(tmpdir(), 'cp-import-cancel-')));
  const pieces = Math.ceil(statSync(path).size / (4 * 2 ** 20));
  for (const cancelAt of [1, pieces + 1]) {
    // 1: after the first 4 MiB piece, so the read stops; pieces + 1: the parse's report, so the worker is terminated.
    fake.recorded.progressReports.length = 0;
    fake.recorded.panels.length = 0;
    fake.recorded.messages.length = 0;
    fake.recorded.logs.length = 0;
    fake.recorded.cancelAtReport = cancelAt;
    try {
      await run('importMeasurements', fake.Uri.file(path));
    } finally {
      fake.recorded.cancelAtReport = undefined;
    }
    assert.equal(fake.recorded.progressReports.length, cancelAt, 'nothing is reported after Cancel');
    assert.deepEqual(fake.recorded.panels, [], `cancel at report ${cancelAt}: no panel opens`);
    assert.deepEqual(fake.recorded.messages, [], `cancel at report ${cancelAt}: no message`);
    assert.equal(fake.recorded.diagnostics.get(fake.Uri.file(path).toString())?.length ?? 0, 0);
    assert.ok(
      fake.recorded.logs.some((l) => /importMeasurements: cancelled/.test(l)),
      fake.recorded.logs.join('\n'),
    );
  }
});
