// A wrong pre-scaling factor that reaches a reduction through constructor arguments is reported where its value was
// chosen (chosen-place.ts), with the construction sites, the scaling and the reduction as its evidence: in another
// file, in the same file, and in `check`'s text and SARIF outputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Program } from '../../../src/analysis/index';
import { checkCommand } from '../../../src/cli/commands/check';
import { analyzeProgram, parser, py, summary } from './helpers';

/** A reducer scales by the factor it was built with, then sums over its group, then steps. */
const REDUCER = py`
  import torch.distributed as dist


  class GradReducer:
      def __init__(self, grads, group, scale):
          self.grads = grads
          self.group = group
          self.scale = scale

      def sync(self, optimizer):
          self.grads.mul_(self.scale)
          dist.all_reduce(self.grads, group=self.group)
          optimizer.step()
`;
const REDUCER_PATH = 'train/reducer.py';
const SCALE_LINE = 11;

/** Picks the size in one statement and the factor in the next, then builds the reducer over dp × cp ranks. */
function wrapper(size: string): string {
  return py`
    from megatron.core import parallel_state
    from train.reducer import GradReducer


    class Wrapper:
        def __init__(self, grads):
            world = ${size}
            scale = 1.0 / world
            self.reducer = GradReducer(grads, parallel_state.get_data_parallel_group(with_context_parallel=True), scale)
  `;
}
const WRAPPER_PATH = 'train/wrapper.py';
const SIZE_LINE = 7;
const DP = 'parallel_state.get_data_parallel_world_size()';
const DP_CP = 'parallel_state.get_data_parallel_world_size(with_context_parallel=True)';

test('chosen place: a factor chosen in another file is reported there, with the chain to the reduction', async () => {
  const results = await analyzeProgram({ [REDUCER_PATH]: REDUCER, [WRAPPER_PATH]: wrapper(DP) });
  assert.deepEqual(summary(results.get(REDUCER_PATH)!.findings), []);
  const findings = results.get(WRAPPER_PATH)!.findings;
  // The size picked on its own line is the choice: the factor's line only divides by it.
  assert.deepEqual(summary(findings), [`CP003@${SIZE_LINE}`], findings.map((f) => f.message).join('\n'));
  const f = findings[0];
  assert.match(
    f.message,
    /^The factor 1\/dp chosen here is passed through `GradReducer` to train\/reducer\.py:11, where /,
  );
  assert.match(f.message, /sums the gradients over `self\.group` \(dp×cp ranks\)/);
  assert.match(f.message, /effective learning rate is cp× the configured one/);
  assert.deepEqual(
    f.related.map((r) => [r.file, r.range.startLine + 1, r.message]),
    [
      [undefined, 9, 'passed to `GradReducer` here'],
      [REDUCER_PATH, SCALE_LINE, 'the factor 1/dp is applied here'],
      [REDUCER_PATH, 12, 'the reduction (`dist.all_reduce`)'],
      [REDUCER_PATH, 13, '`optimizer.step` applies the gradients'],
    ],
  );
});

test('chosen place: the factor that counts every replica of the group is clean in both files', async () => {
  const results = await analyzeProgram({ [REDUCER_PATH]: REDUCER, [WRAPPER_PATH]: wrapper(DP_CP) });
  assert.deepEqual(
    [...results.values()].flatMap((r) => summary(r.findings)),
    [],
  );
});

test('chosen place: a constructor chain inside one file is reported at the choice, its evidence in that file', async () => {
  const file = `${REDUCER}\n\n${wrapper(DP).replace(/^from train\.reducer import GradReducer\n/m, '')}`;
  const findings = (await analyzeProgram({ 'train/all.py': file })).get('train/all.py')!.findings;
  const sizeLine = file.split('\n').findIndex((l) => l.includes('world = ')) + 1;
  assert.deepEqual(summary(findings), [`CP003@${sizeLine}`], findings.map((f) => f.message).join('\n'));
  assert.match(findings[0].message, /passed through `GradReducer` to line 11, where /);
  assert.ok(findings[0].related.every((r) => r.file === undefined));
});

test('chosen place: an ignore comment on the choosing line silences the finding moved there', async () => {
  const silenced = wrapper(DP).replace(`world = ${DP}`, `world = ${DP}  # collective-profiler: ignore[CP003]`);
  const results = await analyzeProgram({ [REDUCER_PATH]: REDUCER, [WRAPPER_PATH]: silenced });
  assert.deepEqual(
    [...results.values()].flatMap((r) => summary(r.findings)),
    [],
  );
});

test('chosen place: a divisor the method reads from the group it was given stays where it divides', async () => {
  // The wrapper chose the group, not the divisor: `get_world_size(group=self.group)` counts dp × cp ranks, and the
  // fix (divide by the replicas) is in the reducer.
  const reducer = REDUCER.replace(
    'self.grads.mul_(self.scale)',
    'self.grads.div_(dist.get_world_size(group=self.group))',
  );
  const wrap = wrapper(DP).replace(
    'parallel_state.get_data_parallel_group(with_context_parallel=True)',
    'parallel_state.get_data_parallel_group(with_context_parallel=True)',
  );
  const seq = wrap.replace(
    'parallel_state.get_data_parallel_group(with_context_parallel=True)',
    'groups._get_sequence_data_parallel_group()',
  );
  const results = await analyzeProgram({
    [REDUCER_PATH]: reducer,
    [WRAPPER_PATH]: `from utils import groups\n${seq}`,
  });
  assert.deepEqual(summary(results.get(WRAPPER_PATH)!.findings), []);
  assert.deepEqual(summary(results.get(REDUCER_PATH)!.findings), [`CP003@${SCALE_LINE}`]);
});

test('chosen place: the editor shows the finding on the choosing file and re-decides it on an edit', async () => {
  const program = new Program(await parser());
  program.setFile(REDUCER_PATH, REDUCER);
  program.setFile(WRAPPER_PATH, wrapper(DP));
  await program.prepareAsync(() => Promise.resolve());
  assert.deepEqual(summary(program.analyzeFile(REDUCER_PATH).findings), []);
  assert.deepEqual(summary(program.analyzeFile(WRAPPER_PATH).findings), [`CP003@${SIZE_LINE}`]);
  program.setFile(WRAPPER_PATH, wrapper(DP_CP));
  assert.deepEqual(summary(program.analyzeFile(WRAPPER_PATH).findings), []);
  program.setFile(WRAPPER_PATH, `\n${wrapper(DP)}`);
  assert.deepEqual(summary(program.analyzeFile(WRAPPER_PATH).findings), [`CP003@${SIZE_LINE + 1}`]);
});

test('chosen place: check prints the chain in text and as a SARIF code flow from the choice to the step', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-chosen-'));
  mkdirSync(join(dir, 'train'));
  writeFileSync(join(dir, REDUCER_PATH), REDUCER);
  writeFileSync(join(dir, WRAPPER_PATH), wrapper(DP));
  const run = async (args: string[]) => {
    let out = '';
    await checkCommand.run(args, { stdout: (t) => (out += `${t}\n`), stderr: () => undefined });
    return out;
  };
  const text = await run([join(dir, 'train')]);
  assert.match(text, /wrapper\.py:7:\d+: CP003 The factor 1\/dp chosen here/);
  assert.match(text, /\n {4}\S*train\/reducer\.py:11:\d+: the factor 1\/dp is applied here\n/);
  const sarif = JSON.parse(await run([join(dir, 'train'), '--sarif']));
  const [result] = sarif.runs[0].results;
  const flow = result.codeFlows[0].threadFlows[0].locations.map(
    (l: { location: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } } }) =>
      `${l.location.physicalLocation.artifactLocation.uri.split('/').pop()}:${l.location.physicalLocation.region.startLine}`,
  );
  assert.deepEqual(flow, ['wrapper.py:7', 'wrapper.py:9', 'reducer.py:11', 'reducer.py:12', 'reducer.py:13']);
});
