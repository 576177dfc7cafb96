// collectiveProfiler.ncclVersion through the real bundle: with NCCL 2.26 on two H100 nodes, a 2 MB bucket's lens
// predicts NVLSTree (the newest tables would pick tree/LL128 there), and the status bar stays as it was.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as fake from './fixtures/fake-vscode';
import { activateBundle, notBuilt } from './fixtures/activate-bundle';

const skip = notBuilt ?? false;
const SCRIPT = [
  'import torch.distributed as dist',
  'from torch.nn.parallel import DistributedDataParallel as DDP',
  '',
  'model = DDP(model, bucket_cap_mb=2)',
  '',
].join('\n');

before(() => {
  if (notBuilt) return;
  fake.recorded.settings.nodes = 2;
  fake.recorded.settings.ncclVersion = '2.26.2';
  activateBundle();
});

test("the ncclVersion setting makes lens predictions follow that release's choices", { skip }, async () => {
  const provider = fake.recorded.lensProviders[0];
  const doc = fake.document('/w/ddp.py', 'python', SCRIPT);
  // A prediction lens comes with its command from provide once the system is resolved, else it is resolved.
  const onLine = provider.provideCodeLenses(doc).filter((l) => l.range.start.line === 3);
  const resolved = (await Promise.all(onLine.map(async (l) => (l.command ? l : provider.resolveCodeLens!(l))))).find(
    (l) => l.command!.title.startsWith('≈'),
  );
  assert.ok(resolved, 'a prediction lens on the DDP line');
  assert.match(resolved.command!.title, /· NVLSTree\/Simple for 2 MiB buckets$/);
  assert.match(String(resolved.command!.tooltip), /2×8 H100 NVSwitch/);
});
