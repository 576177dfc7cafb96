// One call, one size (issue 14): the bytes a Python call site moves, decided in one place for the lens, the
// Profile command and the panel. A scalar all_reduce moves 4 bytes, not a 25 MB default.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { callSize } from '../../../src/extension/glue/call-size';
import { pythonLensSites } from '../../../src/extension/glue/lens-sites';

const DEFAULT = 25 * 1024 * 1024;

function sizeOfLine(source: string, line: number) {
  const sites = pythonLensSites(source);
  const site = sites.find((s) => s.line === line && s.kind !== 'bucket');
  assert.ok(site, `a site on line ${line}`);
  return callSize(source, sites, site, DEFAULT);
}

test('a reduced loss is a 0-d fp32 tensor: 4 bytes, found through the names it was assigned to', () => {
  const source = [
    'import torch.distributed as dist',
    'out = model(x)',
    'loss = criterion(out, y)',
    'reported = loss.detach()',
    'dist.all_reduce(reported, op=dist.ReduceOp.SUM)',
    'dist.all_reduce(loss)',
    'dist.all_reduce(out.mean())',
    'dist.all_reduce(F.cross_entropy_loss(out, y).half())',
  ].join('\n');
  const reported = sizeOfLine(source, 4);
  assert.deepEqual([reported.bytes, reported.source], [4, 'tensor']);
  assert.match(reported.why, /reported = loss\.detach\(\) on line 4: loss = criterion\(out, y\) on line 3/);
  assert.equal(sizeOfLine(source, 5).bytes, 4);
  assert.equal(sizeOfLine(source, 6).bytes, 4);
  assert.equal(sizeOfLine(source, 7).bytes, 2, 'a half-precision loss');
});

test('literal tensors count their elements and dtype', () => {
  const source = [
    'import torch',
    'counts = torch.tensor([correct, total], device="cuda")',
    'dist.all_reduce(counts)',
    'buf = torch.zeros(1024, 1024, dtype=torch.float16)',
    'dist.all_reduce(buf)',
    'flag = torch.tensor(1)',
    'dist.all_reduce(flag)',
    'stats = torch.tensor([1.0, 2.0, 3.0])',
    'dist.all_reduce(stats)',
  ].join('\n');
  assert.equal(sizeOfLine(source, 2).bytes, 8, 'two fp32 elements');
  assert.equal(sizeOfLine(source, 4).bytes, 2 * 1024 * 1024);
  assert.equal(sizeOfLine(source, 6).bytes, 8, 'an int64 element');
  assert.equal(sizeOfLine(source, 8).bytes, 12);
});

test('an unknown tensor and a DDP wrapper say where their size came from', () => {
  const source = [
    'for p in model.parameters():',
    '    dist.all_reduce(p.grad)',
    'ddp = DistributedDataParallel(model, bucket_cap_mb=100)',
    'other = DistributedDataParallel(model)',
  ].join('\n');
  const grad = sizeOfLine(source, 1);
  assert.deepEqual([grad.bytes, grad.source], [DEFAULT, 'default']);
  assert.match(grad.why, /assumed/);
  assert.deepEqual([sizeOfLine(source, 2).bytes, sizeOfLine(source, 2).source], [100 * 1024 * 1024, 'bucket']);
  const other = sizeOfLine(source, 3);
  assert.deepEqual(
    [other.bytes, other.source],
    [DEFAULT, 'default'],
    "a wrapper without bucket_cap_mb is DDP's default, not another call's",
  );
});
