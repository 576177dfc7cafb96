// `auto` chooses as NCCL does: its cost model, its enablement rules, its order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError, presetSystem, simulateCollective, sweepAllReduce, asBytes } from '../../../src/engine/index';

test('8× H100: LL for small messages, NVLS/Simple for large ones', () => {
  const system = presetSystem('dgx-h100')!;
  const small = simulateCollective(system, { bytes: asBytes(8 * 1024) });
  assert.equal(small.protocol, 'LL');
  const large = simulateCollective(system, { bytes: asBytes(1 << 30) });
  assert.equal(large.algorithm, 'nvls');
  assert.equal(large.protocol, 'Simple');
});

test('8× A100 (no NVLS): ring, moving from LL to Simple as messages grow', () => {
  const rows = sweepAllReduce(presetSystem('dgx-a100')!, {
    minBytes: asBytes(8),
    maxBytes: asBytes(8 * 2 ** 30),
    factor: 2,
  });
  assert.equal(rows[0].protocol, 'LL');
  assert.equal(rows.at(-1)!.algorithm, 'ring');
  assert.equal(rows.at(-1)!.protocol, 'Simple');
  assert.ok(rows.every((r) => r.algorithm !== 'nvls' && r.algorithm !== 'nvlstree'));
});

test('across H100 nodes: NVLSTree for large messages, never single-node NVLS', () => {
  const rows = sweepAllReduce(presetSystem('dgx-h100', { nodes: 2 })!, {
    minBytes: asBytes(1024),
    maxBytes: asBytes(4 * 2 ** 30),
    factor: 8,
  });
  assert.equal(rows.at(-1)!.algorithm, 'nvlstree');
  assert.ok(rows.every((r) => r.algorithm !== 'nvls'));
});

test('PCIe GPUs never get LL128; forcing it is an error', () => {
  const rows = sweepAllReduce(presetSystem('pcie-l40sx8')!, {
    minBytes: asBytes(8),
    maxBytes: asBytes(1 << 30),
    factor: 4,
  });
  assert.ok(rows.every((r) => r.protocol !== 'LL128'));
  assert.throws(
    () =>
      simulateCollective(presetSystem('pcie-l40sx8')!, {
        bytes: asBytes(1 << 20),
        algorithm: 'ring',
        protocol: 'LL128',
      }),
    EngineError,
  );
});

test('NVLS needs an NVSwitch with Hopper or newer, and is Simple-only', () => {
  assert.throws(
    () => simulateCollective(presetSystem('dgx-a100')!, { bytes: asBytes(1 << 20), algorithm: 'nvls' }),
    /NVLS/,
  );
  assert.throws(
    () => simulateCollective(presetSystem('dgx-h100')!, { bytes: asBytes(1 << 20), algorithm: 'nvls', protocol: 'LL' }),
    /Simple/,
  );
  assert.throws(
    () => simulateCollective(presetSystem('dgx-h100')!, { bytes: asBytes(1 << 20), algorithm: 'nvlstree' }),
    /across nodes/,
  );
});

test('forced algorithm with auto protocol picks that algorithm', () => {
  const result = simulateCollective(presetSystem('dgx-h100')!, { bytes: asBytes(1 << 30), algorithm: 'ring' });
  assert.equal(result.algorithm, 'ring');
  assert.equal(result.protocol, 'Simple');
});

test('busbw follows nccl-tests: algbw × 2(n−1)/n for AllReduce, (n−1)/n for the others', () => {
  const system = presetSystem('dgx-h100')!;
  const ar = simulateCollective(system, { bytes: asBytes(1 << 28) });
  assert.ok(Math.abs(ar.busbwGBps - ar.algbwGBps * 1.75) < 1e-9);
  const ag = simulateCollective(system, { bytes: asBytes(1 << 28), kind: 'allgather', algorithm: 'ring' });
  assert.ok(Math.abs(ag.busbwGBps - ag.algbwGBps * 0.875) < 1e-9);
});

test('NCCL_ALGO / NCCL_PROTO / NCCL_NVLS_ENABLE limit the choice as NCCL would', async () => {
  const { ncclEnvLimits, ncclChoiceUnder } = await import('../../../src/engine/nccl-env');
  const { resolveSystem } = await import('../../../src/engine/index');
  const system = resolveSystem(presetSystem('dgx-h100', { nodes: 2 })!);
  assert.deepEqual([...ncclEnvLimits({ NCCL_ALGO: 'Ring' }).algorithms!], ['ring']);
  // A negation leaves every other NCCL algorithm, CollNet's and PAT's too (they run only where the fabric has SHARP,
  // or one GPU per node).
  assert.deepEqual([...ncclEnvLimits({ NCCL_ALGO: '^nvls,nvlstree' }).algorithms!].sort(), [
    'collnetchain',
    'collnetdirect',
    'pat',
    'ring',
    'tree',
  ]);
  assert.deepEqual([...ncclEnvLimits({ NCCL_ALGO: 'CollNetDirect,ring' }).algorithms!].sort(), [
    'collnetdirect',
    'ring',
  ]);
  assert.deepEqual([...ncclEnvLimits({ NCCL_ALGO: 'allgather:ring;allreduce:tree' }).algorithms!], ['tree']);
  assert.deepEqual([...ncclEnvLimits({ NCCL_PROTO: 'LL128,Simple' }).protocols!].sort(), ['LL128', 'Simple']);
  const big = ncclChoiceUnder(system, 'allreduce', 1 << 30, 'fp32', ncclEnvLimits({ NCCL_NVLS_ENABLE: '0' }));
  assert.ok(big && big.algorithm !== 'nvlstree' && big.algorithm !== 'nvls');
  const ring = ncclChoiceUnder(
    system,
    'allreduce',
    8,
    'fp32',
    ncclEnvLimits({ NCCL_ALGO: 'ring', NCCL_PROTO: 'Simple' }),
  );
  assert.deepEqual(ring, { algorithm: 'ring', protocol: 'Simple' });
});

test('an unknown algorithm or protocol from an API caller is an EngineError that lists the names', () => {
  const system = presetSystem('dgx-h100')!;
  const bytes = asBytes(1 << 20);
  const badAlgorithm = { bytes, algorithm: 'rnig' } as unknown as Parameters<typeof simulateCollective>[1];
  assert.throws(
    () => simulateCollective(system, badAlgorithm),
    (e: unknown) => {
      assert.ok(e instanceof EngineError);
      assert.match((e as Error).message, /unknown algorithm 'rnig'; use auto or ring, /);
      return true;
    },
  );
  const badProtocol = { bytes, protocol: 'll' } as unknown as Parameters<typeof simulateCollective>[1];
  assert.throws(() => simulateCollective(system, badProtocol), /unknown protocol 'll'; use auto or LL, LL128, Simple/);
});
