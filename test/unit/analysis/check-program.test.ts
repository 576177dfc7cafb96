// `check` on a folder analyses its Python files as one program: a summing helper in one file is reported at the
// call in another, with the evidence (the update, the helper) under the finding, in JSON and as SARIF codeFlows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { checkCommand } from '../../../src/cli/commands/check';
import { py } from './helpers';

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await checkCommand.run(args, { stdout: (t) => (out += `${t}\n`), stderr: (t) => (err += `${t}\n`) });
  return { code, out, err };
}

const dir = mkdtempSync(join(tmpdir(), 'cp-program-'));
mkdirSync(join(dir, 'pkg', 'utils'), { recursive: true });
mkdirSync(join(dir, 'tests'));
writeFileSync(
  join(dir, 'pkg', 'utils', 'distributed.py'),
  py`
  import torch.distributed as dist

  def reduce_gradients(model, _type='sum'):
      for param in model.parameters():
          dist.all_reduce(param.grad.data)
          if _type == 'avg':
              param.grad.data /= dist.get_world_size()
`,
);
writeFileSync(
  join(dir, 'train.py'),
  py`
  from pkg.utils.distributed import reduce_gradients

  def train(model, optimizer, loader):
      for x, y in loader:
          model(x, y).backward()
          reduce_gradients(model)
          optimizer.step()
`,
);
// The same sum in a test is a hint.
writeFileSync(
  join(dir, 'tests', 'test_sync.py'),
  py`
  import torch.distributed as dist
  def test_sync(model, optimizer):
      for p in model.parameters():
          dist.all_reduce(p.grad)
      optimizer.step()
`,
);
const shown = (...parts: string[]) => relative(process.cwd(), join(dir, ...parts));

test('a folder is one program: the helper is reported at its caller, with the evidence indented below', async () => {
  const r = await run([dir]);
  assert.equal(r.code, 1);
  const lines = r.out.trim().split('\n');
  assert.equal(lines.length, 3, r.out);
  assert.ok(lines[0].startsWith(`${shown('train.py')}:6:9: CP001 \`reduce_gradients\``), lines[0]);
  assert.equal(lines[1], `    ${shown('train.py')}:7:9: \`optimizer.step\` applies the gradients`);
  assert.ok(lines[2].startsWith(`    ${shown('pkg', 'utils', 'distributed.py')}:5:9: `), lines[2]);
});

test('--json names the related file; --sarif carries the evidence as a codeFlow', async () => {
  const items = JSON.parse((await run([dir, '--json'])).out) as { file: string; related: { file?: string }[] }[];
  assert.deepEqual(
    items.map((i) => i.file),
    [shown('train.py')],
  );
  assert.deepEqual(
    items[0].related.map((x) => x.file),
    [undefined, shown('pkg', 'utils', 'distributed.py')],
  );
  const sarif = JSON.parse((await run([dir, '--sarif'])).out);
  const flow = sarif.runs[0].results[0].codeFlows[0].threadFlows[0].locations.map(
    (l: { location: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } } }) =>
      `${l.location.physicalLocation.artifactLocation.uri}:${l.location.physicalLocation.region.startLine}`,
  );
  assert.deepEqual(flow, [
    `${shown('train.py')}:6`,
    `${shown('train.py')}:7`,
    `${shown('pkg', 'utils', 'distributed.py')}:5`,
  ]);
});

test('--hints also reports what is suspected: the sum in test code', async () => {
  const items = JSON.parse((await run([dir, '--json', '--hints'])).out) as { file: string; code: string }[];
  assert.deepEqual(items.map((i) => `${i.file} ${i.code}`).sort(), [
    `${shown('tests', 'test_sync.py')} CP001`,
    `${shown('train.py')} CP001`,
  ]);
});
