// Every number in the CLI's --json output names its unit (docs/cli.md): `timeUs`, `stepTimeMs`, `bytes`,
// `busbwGBps`, `overlapPct`. What has no unit is listed below by kind (counts, ratios, source positions), so a new
// field such as `phases: {exchange: 139}` (µs, but unnamed) fails here until it is named or listed with a reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliIo } from '../../../src/cli/command';
import { calibrateCommand } from '../../../src/cli/commands/calibrate';
import { checkCommand } from '../../../src/cli/commands/check';
import { compareCommand } from '../../../src/cli/commands/compare';
import { importCommand } from '../../../src/cli/commands/import';
import { profileCommand } from '../../../src/cli/commands/profile';
import { simulateCommand } from '../../../src/cli/commands/simulate';
import { sweepCommand } from '../../../src/cli/commands/sweep';
import { verifyCommand } from '../../../src/cli/commands/verify';
import { ROOT } from './run-cli';

/** A unit at the end of the name (microseconds, milliseconds, bytes, GB/s, Gbit/s, percent), maybe per something. */
const UNIT = /(Us|Ms|Bytes|bytes|GBps|Gbps|Pct)(Per[A-Z][A-Za-z]*)?$/;
const UNITLESS = new Set([
  // Counts.
  ...['ranks', 'nodes', 'gpusPerNode', 'worldSize', 'simulatedRanks', 'globalBatchSize', 'parameters'],
  ...['parameterGathers', 'collectives', 'microStep', 'evaluations', 'flagged', 'channels', 'elements', 'wrong'],
  // Ratios and multipliers (a measured over an expected busbw, a learning-rate factor, a loss difference).
  ...['ratio', 'threshold', 'lrMultiplier', 'intendedMultiplier', 'excessMultiplier', 'lrMultiplierAtWorldSize'],
  ...['maxLossGap', 'baseLr', 'lossCurve'],
  // Values in the dtype being reduced, and errors relative to them.
  ...['gradientMagnitude', 'maxSummedMagnitude', 'maxAbsError', 'maxRelError', 'maxFinite', 'scalar'],
  // Source positions of check findings.
  ...['line', 'column', 'endLine', 'endColumn'],
  // A profile sweep's knob values, in the unit `sweepKey` names (bucket_cap_mb, nodes).
  ...['value', 'best'],
]);
/**
 * Subtrees that repeat an input format rather than the CLI's own fields: a system file (`nic.gbps`, documented in
 * docs/system-files.md) and the header facts of an imported file, under the names that file uses.
 */
const INPUT_FORMATS = new Set(['system', 'meta']);

/** `path: key` for every number whose key neither names a unit nor is a known unitless kind. */
function unitlessNumbers(value: unknown, path = '', parentKey = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => unitlessNumbers(v, `${path}[]`, parentKey));
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, v]) => {
    if (INPUT_FORMATS.has(key)) return [];
    const numeric = typeof v === 'number' || (Array.isArray(v) && v.length > 0 && typeof v[0] === 'number');
    // The fields of an object named with a unit are in it (`phasesUs.exchange`, `bounds.launchUs.min`), and those of
    // a unitless one have none (`lossCurve.reference`, the loss per step).
    const named = UNIT.test(key) || UNITLESS.has(key) || UNIT.test(parentKey) || UNITLESS.has(parentKey);
    const own = numeric && !named ? [`${path}.${key}`] : [];
    return [...own, ...unitlessNumbers(v, `${path}.${key}`, key)];
  });
}

async function json(command: { run(args: readonly string[], io: CliIo): Promise<number> }, args: string[]) {
  let out = '';
  const code = await command.run(args, { stdout: (t) => (out += t), stderr: () => undefined });
  assert.ok(code === 0 || code === 1, `${args.join(' ')} exited ${code}`);
  return JSON.parse(out) as unknown;
}

test('the unit check flags a number without a unit and accepts counts, ratios and named units', () => {
  assert.deepEqual(
    unitlessNumbers({ timeUs: 1, phases: { exchange: 2 }, ranks: 8, bounds: { launchUs: { min: 1 } } }),
    ['.phases.exchange'],
  );
  assert.deepEqual(unitlessNumbers([{ scalingEfficiency: 0.9, system: { nic: { gbps: 400 } } }]), [
    '[].scalingEfficiency',
  ]);
});

test('every number of every --json output names its unit or is a count, a ratio or a position', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-json-units-'));
  try {
    const table = join(dir, 'predicted.txt');
    let text = '';
    await sweepCommand.run(['--system', 'dgx-h100', '--min-bytes', '1M', '--max-bytes', '64M'], {
      stdout: (t) => (text += t),
      stderr: () => undefined,
    });
    writeFileSync(table, text);
    const config = join(ROOT, 'examples', 'llama2-7b-ddp.collective.yaml');
    const outputs: [string, unknown][] = [
      ['simulate', await json(simulateCommand, ['--system', 'dgx-h100', '--bytes', '64M', '--json'])],
      ['sweep', await json(sweepCommand, ['--system', 'dgx-h100', '--max-bytes', '1M', '--factor', '8', '--json'])],
      ['profile', await json(profileCommand, [config, '--json', '--sweep', 'bucket_cap_mb=1..8'])],
      ['import', await json(importCommand, [table, '--json'])],
      ['compare', await json(compareCommand, [table, '--system', 'dgx-h100', '--json'])],
      ['calibrate', await json(calibrateCommand, [table, '--system', 'dgx-h100', '--json'])],
      ['verify', await json(verifyCommand, ['--ranks', '8', '--json'])],
      ['check', await json(checkCommand, [join(ROOT, 'examples', 'python'), '--json'])],
    ];
    for (const [name, output] of outputs) assert.deepEqual(unitlessNumbers(output), [], `${name} --json`);
    const profile = outputs[2][1] as { sweepKey?: string; phasesUs?: unknown };
    assert.equal(profile.sweepKey, 'bucket_cap_mb', 'the swept knob, whose unit value and best are in');
    assert.ok((outputs[0][1] as { phasesUs?: unknown }).phasesUs, 'simulate names its phases in µs');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
