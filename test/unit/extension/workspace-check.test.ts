// Check Gradient Scaling in Workspace through the real bundle: files it did not fully analyse are counted apart
// and logged, never reported as clean, and a workspace past the file limit says that only part was checked.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as fake from './fixtures/fake-vscode';
import { activateBundle, notBuilt } from './fixtures/activate-bundle';

const skip = notBuilt ?? false;
const run = (id: string, ...args: unknown[]) => fake.commands.executeCommand(`collectiveProfiler.${id}`, ...args);

before(() => {
  if (!notBuilt) activateBundle();
});

const SUM_BUG =
  'import torch.distributed as dist\n\ndef sync(model):\n    for p in model.parameters():\n        dist.all_reduce(p.grad)\n';

test(
  'files with syntax errors or undecodable bytes are counted as not fully analysed and named in the log',
  { skip },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cp-ws-partial-'));
    writeFileSync(join(dir, 'broken.py'), `${SUM_BUG}\ndef broken(:\n    return )\n`);
    writeFileSync(
      join(dir, 'latin1.py'),
      Buffer.concat([Buffer.from('# caf'), Buffer.from([0xe9]), Buffer.from('\nloss.backward()\n')]),
    );
    writeFileSync(join(dir, 'model.py'), 'import torch\n\nclass Net(torch.nn.Module):\n    pass\n');
    fake.recorded.workspaceFiles = ['broken.py', 'latin1.py', 'model.py'].map((f) => join(dir, f));
    fake.recorded.messages.length = 0;
    fake.recorded.logs.length = 0;
    await run('checkGradientScalingInWorkspace');
    assert.deepEqual(fake.recorded.messages, [
      'warn Gradient scaling: 1 finding in 1 of 3 files (CP001 ×1); 2 files not fully analysed (see the log).',
    ]);
    assert.ok(
      fake.recorded.logs.includes(
        `warn Partly analysed: ${join(dir, 'broken.py')}:7: syntax error at line 7: lines 7-8 not analysed; findings come from the rest of the file`,
      ),
      fake.recorded.logs.join('\n'),
    );
    assert.ok(
      fake.recorded.logs.includes(
        `warn Partly analysed: ${join(dir, 'latin1.py')}: the file is not valid UTF-8; undecodable bytes were replaced`,
      ),
    );
  },
);

test('past 5,000 Python files only the first 5,000 are checked, and the summary says so', { skip }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-ws-many-'));
  const files: string[] = [];
  for (let i = 0; i < 5001; i++) {
    const sub = join(dir, `pkg${i % 50}`);
    if (i < 50) mkdirSync(sub);
    files.push(join(sub, `m${i}.py`));
    writeFileSync(files[i], `x = ${i}\n`);
  }
  fake.recorded.workspaceFiles = files;
  fake.recorded.messages.length = 0;
  await run('checkGradientScalingInWorkspace');
  assert.deepEqual(fake.recorded.messages, [
    'warn Gradient scaling: no findings in the first 5,000 Python files; there are more than 5,000 Python files, so check a folder from the Explorer for the rest.',
  ]);
});
