// Per-class summaries that carry a factor as well as a group, and through more than one class: a buffer is built with
// a process group and a pre-scaling factor in one file, and passes both on to the buckets it builds, whose method
// scales and sums. The program links the construction sites in rounds (class-links.ts) until the answers stop
// changing; a method asks for its factor only once its group is known.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program } from '../../../src/analysis/index';
import { analyzeProgram, parser, py, summary } from './helpers';

/** A bucket pre-scales its gradients by the factor it was built with, then sums them over its group. */
const BUCKET = py`
  import torch.distributed as dist


  class Bucket:
      def __init__(self, params, grad_data, data_parallel_group, gradient_scaling_factor):
          self.params = params
          self.grad_data = grad_data
          self.data_parallel_group = data_parallel_group
          self.gradient_scaling_factor = gradient_scaling_factor

      def start_grad_sync(self):
          self.grad_data *= self.gradient_scaling_factor
          dist.all_reduce(self.grad_data, group=self.data_parallel_group)

      def step(self, optimizer):
          self.start_grad_sync()
          optimizer.step()
`;
const SCALE_LINE = 12;
/** The line of ddp()'s `factor = ...`: a wrong factor is reported where it was chosen (chosen-place.ts). */
const CHOICE_LINE = 7;
const DDP_PATH = 'distributed/ddp.py';

/** The buffer keeps the same attribute names as its buckets and passes them on by keyword. */
const BUFFER = py`
  class GradBuffer:
      def __init__(self, params, data_parallel_group, gradient_scaling_factor):
          self.data_parallel_group = data_parallel_group
          self.gradient_scaling_factor = gradient_scaling_factor
          self.bucket = Bucket(
              params=params,
              grad_data=None,
              data_parallel_group=self.data_parallel_group,
              gradient_scaling_factor=self.gradient_scaling_factor,
          )
`;

/** Builds the buffer over the data-parallel group with context parallelism (dp × cp ranks). */
function ddp(factor: string, group = 'parallel_state.get_data_parallel_group(with_context_parallel=True)'): string {
  return py`
    from megatron.core import parallel_state
    from distributed.buffer import GradBuffer


    class DDP:
        def __init__(self, params):
            factor = ${factor}
            self.buffer = GradBuffer(params, ${group}, factor)
  `;
}

const DP_ONLY = '1.0 / parallel_state.get_data_parallel_world_size()';
const DP_AND_CP = '1.0 / parallel_state.get_data_parallel_world_size(with_context_parallel=True)';
const BUFFER_PATH = 'distributed/buffer.py';

test('class factors: a factor given to the constructor in another file is the divisor of the method', async () => {
  const built = BUCKET.replace('class Bucket', 'class GradBuffer').replace(/Bucket/g, 'GradBuffer');
  const withData = ddp(DP_ONLY).replace('GradBuffer(params, ', 'GradBuffer(params, None, ');
  const results = await analyzeProgram({ [BUFFER_PATH]: built, 'distributed/ddp.py': withData });
  assert.deepEqual(summary(results.get(BUFFER_PATH)!.findings), []);
  const findings = results.get(DDP_PATH)!.findings;
  assert.deepEqual(summary(findings), [`CP003@${CHOICE_LINE}`], findings.map((f) => f.message).join('\n'));
  assert.match(findings[0].message, /scaled by `self\.gradient_scaling_factor` \(1\/dp\) instead of 1\/\(dp×cp\)/);
  assert.match(findings[0].message, /effective learning rate is cp× the configured one/);
});

test('class factors: group and factor passed on through a second class reach the bucket', async () => {
  const results = await analyzeProgram({ [BUFFER_PATH]: `${BUCKET}\n\n${BUFFER}`, 'distributed/ddp.py': ddp(DP_ONLY) });
  const findings = results.get(DDP_PATH)!.findings;
  assert.deepEqual(summary(findings), [`CP003@${CHOICE_LINE}`], findings.map((f) => f.message).join('\n'));
  // The evidence runs from the choice through both constructions to the scaling in the other file.
  assert.deepEqual(
    findings[0].related.map((r) => `${r.file ?? DDP_PATH}:${r.range.startLine + 1}`),
    [`${DDP_PATH}:8`, `${BUFFER_PATH}:24`, `${BUFFER_PATH}:${SCALE_LINE}`, `${BUFFER_PATH}:13`, `${BUFFER_PATH}:11`],
  );
});

test('class factors: a factor that counts the replicas of the group is clean', async () => {
  const results = await analyzeProgram({
    [BUFFER_PATH]: `${BUCKET}\n\n${BUFFER}`,
    'distributed/ddp.py': ddp(DP_AND_CP),
  });
  assert.deepEqual(summary(results.get(BUFFER_PATH)!.findings), []);
  const plain = await analyzeProgram({
    [BUFFER_PATH]: `${BUCKET}\n\n${BUFFER}`,
    'distributed/ddp.py': ddp(DP_ONLY, 'parallel_state.get_data_parallel_group()'),
  });
  assert.deepEqual(summary(plain.get(BUFFER_PATH)!.findings), []);
});

test('class factors: sites that pass different factors, or a factor the analysis cannot name, say nothing', async () => {
  const expert = py`
    from megatron.core import parallel_state
    from distributed.buffer import GradBuffer


    def build_expert(params):
        return GradBuffer(params, parallel_state.get_data_parallel_group(with_context_parallel=True), 1.0)
  `;
  const two = await analyzeProgram({
    [BUFFER_PATH]: `${BUCKET}\n\n${BUFFER}`,
    'distributed/ddp.py': ddp(DP_ONLY),
    'distributed/expert.py': expert,
  });
  assert.deepEqual(summary(two.get(BUFFER_PATH)!.findings), []);
  const unnamed = await analyzeProgram({
    [BUFFER_PATH]: `${BUCKET}\n\n${BUFFER}`,
    'distributed/ddp.py': ddp('1.0 / config.grad_scale'),
  });
  assert.deepEqual(summary(unnamed.get(BUFFER_PATH)!.findings), []);
});

test('class factors: an attribute of an unrelated class of the file is another object, a subclass the same', async () => {
  const file = py`
    import torch.distributed as dist
    from megatron.core import parallel_state


    class Syncer:
        def __init__(self, optimizer):
            self.optimizer = optimizer
            self.group = parallel_state.get_data_parallel_group()

        def step(self, grads):
            grads.mul_(1.0 / parallel_state.get_data_parallel_world_size())
            dist.all_reduce(grads, group=self.group)
            self.optimizer.step()


    class Other:
        def __init__(self):
            self.group = parallel_state.get_data_parallel_group(with_context_parallel=True)
  `;
  const alone = await analyzeProgram({ 'sync.py': file });
  assert.deepEqual(summary(alone.get('sync.py')!.findings), []);
  const subclass = await analyzeProgram({ 'sync.py': file.replace('class Other:', 'class Other(Syncer):') });
  assert.deepEqual(summary(subclass.get('sync.py')!.findings), ['CP003@11']);
});

test('class factors: in the editor, an edit of the file that passes the factor re-decides the bucket', async () => {
  const program = new Program(await parser());
  program.setFile(BUFFER_PATH, `${BUCKET}\n\n${BUFFER}`);
  program.setFile('distributed/ddp.py', ddp(DP_ONLY));
  await program.prepareAsync(() => Promise.resolve());
  assert.deepEqual(summary(program.analyzeFile(DDP_PATH).findings), [`CP003@${CHOICE_LINE}`]);
  // The editor analyses the edited document first, then the others it shows; the finding is the choosing file's.
  for (const [factor, expected] of [
    [DP_AND_CP, []],
    [DP_ONLY, [`CP003@${CHOICE_LINE}`]],
    [DP_AND_CP, []],
  ] as const) {
    program.setFile('distributed/ddp.py', ddp(factor));
    assert.deepEqual(summary(program.analyzeFile('distributed/ddp.py').findings), expected, factor);
    assert.deepEqual(summary(program.analyzeFile(BUFFER_PATH).findings), []);
  }
});

/** A second construction site in another file, with its own group and factor. */
function secondSite(group: string, factor: string): string {
  return py`
    from megatron.core import parallel_state
    from distributed.buffer import GradBuffer


    def build_other(params):
        return GradBuffer(params, ${group}, ${factor})
  `;
}

test('class factors: sites that disagree keep each object group and factor together', async () => {
  const files = (ddpFactor: string) => ({
    [BUFFER_PATH]: `${BUCKET}\n\n${BUFFER}`,
    'distributed/ddp.py': ddp(ddpFactor),
    'distributed/other.py': secondSite('parallel_state.get_data_parallel_group()', DP_ONLY),
  });
  // Each site pairs its group with the divisor that counts it: a group of one site with the factor of the other
  // (dp × cp with 1/dp) would be a wrong divisor, and must not be combined.
  const clean = await analyzeProgram(files(DP_AND_CP));
  assert.deepEqual(summary(clean.get(BUFFER_PATH)!.findings), []);
  const bug = await analyzeProgram(files(DP_ONLY));
  const findings = bug.get(DDP_PATH)!.findings;
  assert.deepEqual(summary(findings), [`CP003@${CHOICE_LINE}`], findings.map((f) => f.message).join('\n'));
  assert.deepEqual(summary(bug.get(BUFFER_PATH)!.findings), []);
  assert.deepEqual(summary(bug.get('distributed/other.py')!.findings), []);
  assert.match(findings[0].message, /dp×cp ranks/);
});

test('class factors: a site in test code names no training object', async () => {
  const results = await analyzeProgram({
    [BUFFER_PATH]: `${BUCKET}\n\n${BUFFER}`,
    'distributed/ddp.py': ddp(DP_AND_CP),
    'tests/test_buffer.py': secondSite('parallel_state.get_data_parallel_group(with_context_parallel=True)', DP_ONLY),
  });
  assert.deepEqual(summary(results.get(BUFFER_PATH)!.findings), []);
});
