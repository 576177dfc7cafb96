// calibrate on every published run stays inside the hardware's bounds; the suspect run (DOCA host stack) is
// reported as unexplained, naming the network path, and no fitted file is written for it without --force.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { CliIo } from '../../../src/cli/command';
import { calibrateCommand } from '../../../src/cli/commands/calibrate';
import { needShared } from '../requirements';

const CALIBRATION = resolve(import.meta.dirname, '..', '..', '..', '..', 'shared', 'calibration', 'nccl-tests');
const skip = needShared(CALIBRATION, '../shared/calibration');
const datasets = skip ? [] : readdirSync(CALIBRATION).filter((f) => f.endsWith('.json'));
/**
 * Every run is calibrated from its own system file. The DGX preset no longer fits the A100 run: it starts one process
 * per GPU, while the Azure benchmark ran one process for all eight (`-g 8`), which only its system file records.
 */
const SYSTEM: Record<string, string> = {};

interface Report {
  system: { overrides?: Record<string, number> };
  bounds: Record<string, { min: number; max: number | null }>;
  unexplained?: { sentence: string; parts: { part: string }[] };
}

async function calibrate(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = { stdout: (t) => (out += t), stderr: (t) => (err += t) };
  const code = await calibrateCommand.run(args, io);
  return { code, out, err };
}

for (const file of datasets) {
  test(`calibrate keeps every fitted value of ${file} inside the hardware's bounds`, { skip }, async () => {
    const system = SYSTEM[file] ? ['--system', SYSTEM[file]] : [];
    const { code, out } = await calibrate([join(CALIBRATION, file), ...system, '--json']);
    const report = JSON.parse(out) as Report;
    // The written file keeps four significant digits, so a value at a bound may sit a hair past it.
    for (const [name, value] of Object.entries(report.system.overrides ?? {})) {
      const bound = report.bounds[name];
      if (!bound) continue;
      // JSON turns an unbounded Infinity into null.
      assert.ok(
        value >= bound.min * 0.9995 && (bound.max === null || value <= bound.max * 1.0005),
        `${name} = ${value} outside ${bound.min} .. ${bound.max}`,
      );
    }
    if (file.includes('suspect')) {
      assert.equal(code, 1, 'an unexplained run exits 1');
      assert.ok(report.unexplained, 'the suspect run is explained by a healthy system');
      assert.ok(
        ['NIC', 'GPU-to-NIC PCIe path'].includes(report.unexplained.parts[0]?.part ?? ''),
        report.unexplained.sentence,
      );
    } else {
      assert.equal(report.unexplained, undefined, report.unexplained?.sentence);
      assert.equal(code, 0);
    }
  });
}

test('calibrate writes no fitted file for the suspect run unless --force', { skip }, async () => {
  const suspect = datasets.find((f) => f.includes('suspect'))!;
  const dir = mkdtempSync(join(tmpdir(), 'cp-calibrate-physical-'));
  try {
    const out = join(dir, 'fitted.json');
    const refused = await calibrate([join(CALIBRATION, suspect), '--out', out]);
    assert.equal(refused.code, 1);
    assert.match(
      refused.err,
      /^The measured run is slower than any healthy system of this kind at these sizes .*: the (NIC|GPU-to-NIC PCIe path) would have to run at /,
    );
    assert.equal(existsSync(out), false, 'a fit that explains nothing was written');
    const forced = await calibrate([join(CALIBRATION, suspect), '--out', out, '--force']);
    assert.equal(forced.code, 1, 'still unexplained');
    assert.equal(existsSync(out), true, '--force writes the best bounded fit');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
