// "Is my bandwidth normal?" on the published calibration datasets: compare flags the suspect run's sizes
// ≥ 1 MiB and none of the healthy runs' sizes ≥ 1 MiB; calibrate then sweep halves the unfitted median error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { CliIo } from '../../../src/cli/command';
import { compareCommand } from '../../../src/cli/commands/compare';
import { calibrateCommand } from '../../../src/cli/commands/calibrate';
import { sweepCommand } from '../../../src/cli/commands/sweep';
import { medianRelativeError } from '../../../src/native/compare';
import { needShared } from '../requirements';

const CALIBRATION = resolve(import.meta.dirname, '..', '..', '..', '..', 'shared', 'calibration', 'nccl-tests');
const skip = needShared(CALIBRATION, '../shared/calibration');
const MiB = 1 << 20;

async function cli(
  command: { run(args: readonly string[], io: CliIo): Promise<number> },
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await command.run(args, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

interface CompareJson {
  rows: {
    bytes: number;
    measuredBusbwGBps: number;
    expectedBusbwGBps: number;
    ratio: number;
    flagged: boolean;
    measuredTimeUs: number;
  }[];
  flagged: number;
}

const datasets = skip ? [] : readdirSync(CALIBRATION).filter((f) => f.endsWith('.json'));

async function suspectRows(): Promise<{ code: number; large: CompareJson['rows'] }> {
  const suspect = datasets.find((f) => f.includes('suspect'))!;
  const { code, out } = await cli(compareCommand, [join(CALIBRATION, suspect), '--json']);
  return { code, large: (JSON.parse(out) as CompareJson).rows.filter((r) => r.bytes >= MiB) };
}

test(
  'compare flags the suspect run: every size from 4 MiB up, where it runs at a fraction of the healthy twin',
  { skip },
  async () => {
    const { code, large } = await suspectRows();
    assert.equal(code, 1, 'flagged sizes are findings (exit 1)');
    assert.ok(large.length >= 10);
    const missed = large
      .filter((r) => r.bytes >= 4 * MiB && !r.flagged)
      .map((r) => `${r.bytes} B at ${r.ratio.toFixed(2)}`);
    assert.deepEqual(missed, [], 'suspect sizes the model did not flag');
  },
);

// The issue asks for every size >= 1 MiB. At 1 and 2 MiB the suspect run is at 0.63 and 0.58 of its healthy twin
// (nccl-tests 309 on the same hardware); the engine's tree/LL128 prediction there now lands within about 7 % of
// that healthy run, so those sizes fall below 0.69 of the model (the multi-node mid-size band) as well.
test(
  'compare flags every size >= 1 MiB of the suspect run and its verdict names the GPU-to-NIC path or the NIC',
  { skip },
  async () => {
    const { large } = await suspectRows();
    const missed = large.filter((r) => !r.flagged).map((r) => `${r.bytes} B at ${r.ratio.toFixed(2)}`);
    assert.deepEqual(missed, [], 'suspect sizes the model did not flag');
    const suspect = datasets.find((f) => f.includes('suspect'))!;
    const { out } = await cli(compareCommand, [join(CALIBRATION, suspect), '--json']);
    const verdict = (JSON.parse(out) as { verdict?: { cause: string; part: string; sentence: string } }).verdict;
    assert.equal(verdict?.cause, 'hardware');
    assert.ok(['GPU-to-NIC PCIe path', 'NIC'].includes(verdict!.part), verdict!.sentence);
    const text = await cli(compareCommand, [join(CALIBRATION, suspect)]);
    assert.match(text.out, /# verdict: .*GPU-to-NIC PCIe path|# verdict: .*NIC/);
  },
);

// The 4-node VM run (NCCL 2.26.2, custom NCCL_TOPO_FILE) switched to NVLSTree at 2 MiB, where NCCL 2.26's model
// keeps tree/LL128 to 8 MiB; at 8 MiB it is at 0.695 of tree/LL128 and is excused because NCCL rates NVLSTree within
// 10 % there and the run is normal for it. Its multi-node mid-size band (0.69) already admits it; under the old flat
// 0.7 (--threshold 0.7) the near tie is what excuses it.
// NCCL 2.26 on the network search's channels (8 at 48 GB/s, one per NDR NIC) leaves tree/LL128 for NVLSTree at
// 2 MiB, where the measured time jumps; with NVLSTree's chunks (64 KiB per head from four nodes on) the rows from
// 2 to 8 MiB are judged against the pair that ran, and none is near the band's edge.
test(
  "compare judges the 4-node VM run's 2-8 MiB rows against NVLSTree, the pair NCCL 2.26 picks there",
  { skip },
  async () => {
    const { out } = await cli(compareCommand, [
      join(CALIBRATION, 'h100-32gpu-nvswitch-4node-ib-ndr-nccltests309-qoofyk-vm.json'),
      '--json',
    ]);
    const result = JSON.parse(out) as {
      ncclVersion: string;
      rows: (CompareJson['rows'][number] & { algorithm: string })[];
    };
    assert.equal(result.ncclVersion, '2.26.2');
    for (const bytes of [2 * MiB, 4 * MiB, 8 * MiB]) {
      const row = result.rows.find((r) => r.bytes === bytes)!;
      assert.equal(row.algorithm, 'nvlstree', `${bytes} B`);
      assert.ok(row.ratio > 0.85 && !row.flagged, `${bytes} B at ${row.ratio.toFixed(3)}`);
    }
  },
);

for (const file of datasets.filter((f) => !f.includes('suspect'))) {
  test(`compare flags no size of the healthy run ${file}, within the model's uncertainty bands`, { skip }, async () => {
    const { code, out } = await cli(compareCommand, [join(CALIBRATION, file), '--json']);
    const result = JSON.parse(out) as CompareJson & { verdict?: unknown };
    const large = result.rows.filter((r) => r.bytes >= MiB);
    assert.ok(large.length > 0);
    const flagged = result.rows.filter((r) => r.flagged).map((r) => `${r.bytes} B at ${r.ratio.toFixed(2)}`);
    assert.deepEqual(flagged, [], 'healthy sizes flagged as slow');
    assert.equal(code, 0);
    assert.equal(result.verdict, undefined);
    // The ratio comes from times; it agrees with the printed busbw up to nccl-tests' two-decimal rounding.
    for (const r of large)
      assert.ok(Math.abs(r.ratio / (r.measuredBusbwGBps / r.expectedBusbwGBps) - 1) < 0.05, `${r.bytes} B`);
  });
}

// One single-process NVSwitch run, one PCIe box without P2P, one single-node NVLS run (H100 -g 8) and one
// two-node run over InfiniBand (NVLSTree/tree), whose fit moves the GPU-to-NIC PCIe and NIC parameters.
const CALIBRATED: readonly (readonly [string, string | undefined])[] = [
  // The A100 run's command is not recorded in the dataset; its system file gives the process layout (`-g 8`).
  ['a100-8gpu-nvswitch-1node-azure-ndv4.json', 'calibration/systems/a100-8gpu-nvswitch-1node-azure-ndv4.json'],
  ['rtx4090-8gpu-pcie4-1node-blogchlc-nop2p.json', undefined],
  ['h100-8gpu-nvswitch-1node-nccltests290.json', undefined],
  ['h100-16gpu-nvswitch-2node-ib-ndr-nccltests309-qoofyk.json', undefined],
];

for (const [dataset, system] of CALIBRATED) {
  test(
    `calibrate ${dataset}, then sweep on the fitted system, halves the median error (or reaches 5 %)`,
    { skip },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'cp-calibrate-'));
      try {
        const measured = join(CALIBRATION, dataset);
        const systemArgs = system ? ['--system', system] : [];
        const fitted = join(dir, 'fitted.json');
        const cal = await cli(calibrateCommand, [measured, ...systemArgs, '--out', fitted, '--json']);
        assert.equal(cal.code, 0, cal.err);
        const report = JSON.parse(cal.out) as { medianErrorBeforePct: number; medianErrorAfterPct: number };
        // The fitted file exists and is not overwritten without --force.
        await assert.rejects(cli(calibrateCommand, [measured, ...systemArgs, '--out', fitted]), /exists; pass --force/);

        const { out: compareOut } = await cli(compareCommand, [measured, ...systemArgs, '--json']);
        const unfitted = JSON.parse(compareOut) as CompareJson;
        const unfittedSystem = system ?? join(import.meta.dirname, '..', '..', '..', 'calibration', 'systems', dataset);
        const sweepRows = async (system: string): Promise<Map<number, number>> => {
          const sizes = unfitted.rows.map((r) => r.bytes);
          const { code, out, err } = await cli(sweepCommand, [
            '--system',
            system,
            '--min-bytes',
            String(Math.min(...sizes)),
            '--max-bytes',
            String(Math.max(...sizes)),
            '--json',
          ]);
          assert.equal(code, 0, err);
          return new Map((JSON.parse(out) as { bytes: number; timeUs: number }[]).map((r) => [r.bytes, r.timeUs]));
        };
        const errorOf = (sweep: Map<number, number>): number =>
          medianRelativeError(
            unfitted.rows.map((r) => ({ measuredTimeUs: r.measuredTimeUs, expectedTimeUs: sweep.get(r.bytes)! })),
          );
        const before = errorOf(await sweepRows(unfittedSystem));
        const after = errorOf(await sweepRows(fitted));
        assert.ok(
          Math.abs(before - report.medianErrorBeforePct / 100) < 1e-9,
          'sweep and calibrate agree on the unfitted error',
        );
        assert.ok(after <= before / 2 || after <= 0.05, `median error ${before.toFixed(3)} -> ${after.toFixed(3)}`);
        assert.ok(
          after <= before + 1e-3,
          `the fit made the median error worse: ${before.toFixed(3)} -> ${after.toFixed(3)}`,
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}

// The forced-ring two-node run reaches 392 GB/s bus bandwidth at 8 GiB, above the 8 × 48 GB/s that NCCL's PCIe
// Gen5 figure allows between each GPU and its NIC; only a fit that can widen that hop and the NIC behind it gets
// there. (Its sweep would not force Ring, so the figures here are calibrate's own, which force it as compare does.)
// Its LL128 rows from 16 to 64 MiB sit at NCCL's per-channel LL128 ceiling (8 search channels × 36.7 GB/s, one per
// NDR NIC), which the barrier-per-step ring reaches late (docs/calibration.md, known weaknesses); no hardware
// parameter moves them, so the fit lowers the median error without halving it.
test(
  'calibrate a forced-ring two-node run fits the GPU-to-NIC path and lowers the median error',
  { skip },
  async () => {
    const dataset = 'h100-16gpu-nvswitch-2node-ib-ndr-nccltests309-gjaion-ring.json';
    const cal = await cli(calibrateCommand, [join(CALIBRATION, dataset), '--json']);
    assert.equal(cal.code, 0, cal.err);
    const report = JSON.parse(cal.out) as {
      medianErrorBeforePct: number;
      medianErrorAfterPct: number;
      parameters: Record<string, { from: number; to: number }>;
    };
    const [before, after] = [report.medianErrorBeforePct / 100, report.medianErrorAfterPct / 100];
    assert.ok(after < before - 0.005, `median error ${before.toFixed(3)} -> ${after.toFixed(3)}`);
    assert.ok(
      report.parameters.pcieGBps && report.parameters.pcieGBps.to > report.parameters.pcieGBps.from,
      `the GPU-to-NIC PCIe hop was not widened: ${JSON.stringify(report.parameters)}`,
    );
  },
);

const TUNING_LOG = resolve(CALIBRATION, '..', '..', 'fixtures-real', 'nccl-debug-a100-2gpu-graph-tuning.log');

test(
  'compare on an NCCL_DEBUG=INFO run judges each size against the pair NCCL logged for it',
  { skip: needShared(TUNING_LOG) },
  async () => {
    const { out } = await cli(compareCommand, [TUNING_LOG, '--json']);
    const result = JSON.parse(out) as {
      ncclVersion: string;
      rows: { bytes: number; algorithm: string; protocol: string; chosenBy: string; flagged: boolean }[];
    };
    assert.equal(result.ncclVersion, '2.27.7');
    assert.equal(result.rows.length, 11);
    assert.deepEqual(
      [...new Set(result.rows.map((r) => `${r.algorithm}/${r.protocol}/${r.chosenBy}`))],
      ['ring/Simple/nccl-log'],
    );
    assert.deepEqual(
      result.rows.filter((r) => r.flagged).map((r) => r.bytes),
      [],
    );
  },
);
