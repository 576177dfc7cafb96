// --nccl on the CLI: the release whose choices simulate, sweep and compare follow, over the system file's own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CliIo } from '../../../src/cli/command';
import { simulateCommand } from '../../../src/cli/commands/simulate';
import { sweepCommand } from '../../../src/cli/commands/sweep';
import { UsageError } from '../../../src/cli/command';

async function cli(
  command: { run(args: readonly string[], io: CliIo): Promise<number> },
  args: string[],
): Promise<{ code: number; out: string }> {
  let out = '';
  const code = await command.run(args, { stdout: (t) => (out += t), stderr: () => undefined });
  return { code, out };
}

test('simulate --nccl: two H100 nodes at 2 MiB run tree/LL128 as 2.30 chooses and NVLSTree as 2.26 does', async () => {
  const head = await cli(simulateCommand, ['--system', 'dgx-h100', '--nodes', '2', '--bytes', '2MiB', '--json']);
  const old = await cli(simulateCommand, [
    '--system',
    'dgx-h100',
    '--nodes',
    '2',
    '--bytes',
    '2MiB',
    '--nccl',
    '2.26.2',
    '--json',
  ]);
  assert.deepEqual([head.code, old.code], [0, 0]);
  const pick = (out: string) => {
    const r = JSON.parse(out) as { algorithm: string; protocol: string };
    return `${r.algorithm}/${r.protocol}`;
  };
  assert.equal(pick(head.out), 'tree/LL128');
  assert.equal(pick(old.out), 'nvlstree/Simple');
});

test('sweep --nccl names the release in its header, and a malformed release is a usage error', async () => {
  const { out } = await cli(sweepCommand, [
    '--system',
    'dgx-h100',
    '--nodes',
    '2',
    '--min-bytes',
    '1M',
    '--max-bytes',
    '1M',
    '--nccl',
    '2.21.5',
  ]);
  assert.match(out.split('\n')[0], /algorithms as NCCL 2\.21\.5 chooses$/);
  await assert.rejects(
    cli(simulateCommand, ['--system', 'dgx-h100', '--bytes', '1M', '--nccl', 'latest']),
    (e: unknown) => e instanceof UsageError && /ncclVersion must look like 2\.26\.2, got 'latest'/.test(e.message),
  );
});
