// Every real measurement file (../shared/fixtures-real, read in place): the panel model names the hardware the
// file says it was measured on (or says the file names none), says what the file holds, shows what an
// NCCL_DEBUG log contains, and turns corrupted, failed or cut-off runs into editor errors (issue 14, item 4).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { join, resolve } from 'node:path';
import { importMeasurementFile } from '../../../src/native/import-file';
import { measurementView, ncclFactsOf } from '../../../src/extension/glue/measurement-view';

const FIXTURES = resolve(import.meta.dirname, '..', '..', '..', '..', 'shared', 'fixtures-real');
const skip = existsSync(FIXTURES) ? false : 'the real fixtures (../shared/fixtures-real) are not here';

/** What each file's own text names as its hardware (undefined: the file names none), from its .source.md. */
const HARDWARE: Readonly<Record<string, RegExp | undefined>> = {
  'deepspeed-commslogger-summary-2022.txt': undefined,
  'deepspeed-commslogger-summary-debug-2022.txt': undefined,
  'deepspeed-commslogger-verbose-2022.log': undefined,
  'kineto-128rank-sendrecv-sampled-rank0.json.gz': undefined,
  'kineto-a100-2rank-nccl2.17-cpu-excerpt.json': /^2 × NVIDIA A100-PG509-200$/,
  'kineto-a100-2rank-nccl2.17-full.json.gz': /^2 × NVIDIA A100-PG509-200$/,
  'kineto-a100-2rank-nccl2.17-gpu-excerpt.json': /^2 × NVIDIA A100-PG509-200$/,
  'kineto-a100-8rank-2022-ncclworkelem-gpu-excerpt.json': /^8 × NVIDIA A100-PG509-200$/,
  'kineto-b200-8rank-nccl2.27-allgather-excerpt.json': /^8 × NVIDIA B200$/,
  'kineto-mi300-8rank-rccl-generic-excerpt.json': /^8 × AMD Instinct MI300X$/,
  'nccl-debug-a100-2gpu-graph-tuning.log': /^2 × NVIDIA A100 80GB PCIe on 1 node$/,
  'nccl-debug-a100-2node-graph-ib.log': /^2 × NVIDIA A100-PCIE-40GB on 2 nodes$/,
  'nccl-debug-a100-8gpu-multinode-ofi.log': undefined,
  'nccl-debug-rtx5090-2rank-tuning.log': undefined,
  'nccl-tests-a100-16gpu-2024-all_gather.txt': /^16 × NVIDIA A100-SXM4-40GB on 2 nodes$/,
  'nccl-tests-a100-2160gpu-2024.txt': /^2160 × NVIDIA A100-SXM4-40GB on 540 nodes$/,
  'nccl-tests-a100-8gpu-2021.txt': /^8 × A100-SXM4-40GB on 1 node$/,
  'nccl-tests-a100-8gpu-2024.txt': /^8 × NVIDIA A100-SXM4-40GB on 2 nodes$/,
  'nccl-tests-gh200-16gpu-2026-wrong-truncated.txt': /^16 × NVIDIA GH200 120GB on 4 nodes$/,
  'nccl-tests-gh200-8gpu-2026.txt': /^8 × NVIDIA GH200 120GB on 2 nodes$/,
  'nccl-tests-h100-16gpu-2025.txt': /^16 × NVIDIA H100 80GB HBM3 on 2 nodes$/,
  'nccl-tests-h100-2gpu-2026.txt': /^2 × NVIDIA H100 80GB HBM3 on 2 nodes$/,
  'nccl-tests-k80-4gpu-2022.txt': /^4 × Tesla K80 on 1 node$/,
  'nccl-tests-rtx5090-2rank-2026-broadcast.txt': /^2 × NVIDIA GeForce RTX 5090 on 1 node$/,
  'nccl-tests-t4-2gpu-2023.txt': /^2 × Tesla T4 on 2 nodes$/,
  'nccl-tests-v100-12gpu-2020-all_gather.txt': /^12 × Tesla V100-SXM3-32GB on 1 node$/,
  'nccl-tests-v100-12gpu-2020-reduce_scatter.txt': /^12 × Tesla V100-SXM3-32GB on 1 node$/,
  'nccl-tests-v100-12gpu-2020.txt': /^12 × Tesla V100-SXM3-32GB on 1 node$/,
};

/** NCCL_DEBUG content each log must show: section titles and a line each must contain. */
const LOG_CONTENT: Readonly<Record<string, readonly [section: RegExp, line: RegExp][]>> = {
  'nccl-debug-a100-2gpu-graph-tuning.log': [
    [/^Topology$/, /NVL 240 GB\/s/],
    [/^Channels$/, /graph pattern/],
    [/^Rings \(48\)$/, /0 -> 1 -> 0/],
    [/^Trees/, /./],
    [/^Tuning table/, /^AllReduce: .*Ring\/LL [\d.]+ µs, [\d.]+ GB\/s/],
  ],
  'nccl-debug-a100-2node-graph-ib.log': [
    [/^Topology$/, /network: IB with GPUDirect RDMA/],
    [/^Channels$/, /^2 channels/],
    [/^Rings \(2\)$/, /1 -> 0 -> 1/],
    [/^Trees \(1\)$/, /->0->/],
  ],
  'nccl-debug-a100-8gpu-multinode-ofi.log': [
    [/^Topology$/, /^8 ranks on 2 nodes, 4 per node$/],
    [/^Channels$/, /NVLS: not available, 0 NVLS channels/],
    [/^Trees \(8\)$/, /->/],
  ],
  'nccl-debug-rtx5090-2rank-tuning.log': [
    [/^Topology$/, /NCCL_P2P_DISABLE=1/],
    [/^Tuning table/, /^Broadcast: Ring\/LL 9\.3 µs, 1\.2 GB\/s/],
    [/^NCCL's choices per call$/, /^Broadcast: RING\/LL for 1 KiB to 16 KiB, RING\/SIMPLE for 32 KiB to /],
  ],
  'nccl-tests-t4-2gpu-2023.txt': [
    [/^Topology$/, /network: AWS Libfabric/],
    [/^Trees \(2\)$/, /->/],
  ],
};

const files = existsSync(FIXTURES)
  ? readdirSync(FIXTURES)
      .filter((f) => !f.endsWith('.md'))
      .sort()
  : [];

test('every real fixture file has an expectation here, so a new one cannot slip past', { skip }, () => {
  assert.deepEqual(files, Object.keys(HARDWARE).sort());
});

for (const file of files) {
  test(`${file}: the panel names the hardware it was measured on and what the file holds`, { skip }, () => {
    const path = join(FIXTURES, file);
    const result = importMeasurementFile(path);
    const raw = readFileSync(path);
    const text = (file.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
    const view = measurementView(result, ncclFactsOf(result, text));
    const expected = HARDWARE[file];
    if (expected) {
      assert.match(view.measuredOn ?? '', expected);
      assert.match(view.hardware, /^measured on .* \(named in the file\)/);
    } else {
      assert.equal(view.measuredOn, undefined);
      assert.match(view.hardware, /^the file does not name the GPUs it ran on/);
    }
    assert.doesNotMatch(view.contents, /\(0 sizes\)|unknown/, view.contents);
    for (const [title, line] of LOG_CONTENT[file] ?? []) {
      const section = view.sections.find((s) => title.test(s.title));
      assert.ok(section, `${file}: a section ${title} among ${view.sections.map((s) => s.title).join(', ')}`);
      assert.ok(
        section.lines.some((l) => line.test(l)),
        `${file}: ${title} has a line ${line}:\n${section.lines.join('\n')}`,
      );
    }
    if (!LOG_CONTENT[file]) assert.deepEqual(view.sections, [], 'only NCCL_DEBUG output has log sections');
  });
}

test('init-only and choice-only NCCL logs say what they hold', { skip }, () => {
  const view = (file: string) => {
    const path = join(FIXTURES, file);
    const result = importMeasurementFile(path);
    return measurementView(result, ncclFactsOf(result, readFileSync(path, 'utf8')));
  };
  assert.match(
    view('nccl-debug-a100-8gpu-multinode-ofi.log').contents,
    /^NCCL initialisation only \(\d+ INFO lines\): no collective was timed or logged$/,
  );
  assert.match(
    view('nccl-debug-rtx5090-2rank-tuning.log').contents,
    /^72 Broadcast calls with NCCL's algorithm choice, 1 KiB to 128 MiB \(the log has no timings\)$/,
  );
});

test('#wrong > 0, failed validation and a truncated run are errors on their lines', { skip }, () => {
  const path = join(FIXTURES, 'nccl-tests-gh200-16gpu-2026-wrong-truncated.txt');
  const lines = readFileSync(path, 'utf8').split('\n');
  const { errors } = measurementView(importMeasurementFile(path));
  const wrong = errors.filter((e) => /#wrong/.test(e.message));
  assert.equal(wrong.length, 6);
  for (const e of wrong) {
    const columns = lines[e.line].trim().split(/\s+/);
    assert.ok(
      Number(columns[columns.length - 1]) > 0 || Number(columns[8]) > 0,
      `line ${e.line + 1} is a row with #wrong > 0: ${lines[e.line]}`,
    );
  }
  assert.ok(
    errors.some((e) => /truncated/.test(e.message)),
    'the truncated run is an error',
  );
  const failed = measurementView(
    importMeasurementFile(join(FIXTURES, 'nccl-tests-v100-12gpu-2020-all_gather.txt')),
  ).errors;
  assert.ok(failed.some((e) => /failed validation \(4 out-of-bounds values\)/.test(e.message)));
  assert.deepEqual(
    measurementView(importMeasurementFile(join(FIXTURES, 'nccl-tests-h100-16gpu-2025.txt'))).errors,
    [],
    'a healthy run has none',
  );
});
