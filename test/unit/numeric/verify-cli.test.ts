import { test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyCommand } from '../../../src/cli/commands/verify';
import { UsageError } from '../../../src/cli/command';

async function run(args: string[]): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await verifyCommand.run(args, { stdout: (t) => (out += `${t}\n`), stderr: (t) => (out += `${t}\n`) });
  return { code, out };
}

test('verify: fp16 sum over 512 ranks reports overflow and exits 1', async () => {
  const { code, out } = await run([
    '--ranks',
    '512',
    '--dtype',
    'fp16',
    '--op',
    'sum',
    '--algo',
    'ring',
    '--elements',
    '1024',
  ]);
  assert.equal(code, 1);
  assert.match(out, /#wrong\s+[1-9]\d* of 1024/);
  assert.match(out, /overflow\s+[1-9]\d* elements, first at index \d+/);
  assert.match(out, /FAIL/);
});

test('verify: the averaged fp16 reduction passes and exits 0', async () => {
  const { code, out } = await run(['--ranks', '512', '--dtype', 'fp16', '--op', 'avg', '--elements', '1024']);
  assert.equal(code, 0);
  assert.match(out, /overflow\s+none/);
  assert.match(out, /#wrong\s+0 of 1024/);
});

test('verify --json prints the result without buffers', async () => {
  const { code, out } = await run([
    '--ranks',
    '64',
    '--dtype',
    'bf16',
    '--algo',
    'tree',
    '--elements',
    '256',
    '--magnitude',
    '1e2',
    '--json',
  ]);
  assert.equal(code, 0);
  const json = JSON.parse(out);
  assert.equal(json.algorithm, 'tree');
  assert.equal(json.ranks, 64);
  assert.equal(json.wrong, 0);
  assert.equal(json.overflow, null);
  assert.equal(json.pass, true);
  assert.equal(typeof json.maxAbsError, 'number');
  assert.equal(json.outputs, undefined);
});

test('verify: bad flags are usage errors', async () => {
  await assert.rejects(run(['--dtype', 'fp16']), UsageError); // --ranks missing
  await assert.rejects(run(['--ranks', '12', '--gpus-per-node', '8', '--algo', 'tree']), /multiple of gpusPerNode/);
  await assert.rejects(run(['--ranks', '8', '--dtype', 'fp64']), /--dtype 'fp64' must be one of/);
  await assert.rejects(run(['--ranks', '8', '--bogus', '1']), /unknown flag --bogus/);
});
