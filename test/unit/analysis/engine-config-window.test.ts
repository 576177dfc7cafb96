// The third link of CP003's cross-file engine window (contracts/engine-config-window.ts, deepspeed-config-window.ts,
// entry-arguments.ts): the trainer's `self.strategy.backward(loss, model, optimizer)` is followed to the strategy
// the entry script builds, whose `backward` calls `model.backward(loss)` on the engine `deepspeed.initialize` builds
// from a config dictionary in view; the window is that config's, read at the entry script's argparse defaults. The
// finding is then an error, reported without hints. Silent twins: a window of 1 at the defaults, a config read from
// a file, `gradient_accumulation_steps` given as 1, the dynamic-batch path on by default, a default not decided, a
// strategy whose backward is not the engine's, and the window's global count passed in (the fix).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Program, type AnalysisResult } from '../../../src/analysis/index';
import { parser, py, summary } from './helpers';

const TOKENS = py`
  import torch.distributed as dist


  def token_info(mask, n_tokens=None):
      world = dist.get_world_size()
      if n_tokens is None:
          n_tokens = mask.sum().float()
          dist.all_reduce(n_tokens)
      return {"world": world, "n_tokens": n_tokens}
`;

const LOSSES = py`
  def token_mean(loss, mask, world=1, n_tokens=None):
      return (loss * mask).sum() / n_tokens * world
`;

const CONFIG = (extra = '') => py`
  def base_config(stage):
      config = {"zero_optimization": {"stage": stage}, "bf16": {"enabled": True}${extra}}
      return config
`;

const STRATEGY = (opts: { config?: string; backward?: string } = {}) => py`
  import deepspeed

  from .config import base_config


  class EngineStrategy:
      def __init__(self, micro_batch=1, global_batch=1, args=None):
          self.micro_batch = micro_batch
          self.global_batch = global_batch
          self.dynamic = getattr(args, "dynamic_batch", False)
          self.accum_steps = global_batch // micro_batch

      def backward(self, loss, model, optimizer):
          ${opts.backward ?? 'model.backward(loss)'}

      def wrap(self, model):
          engine, _, _, _ = deepspeed.initialize(model=model, config=${opts.config ?? 'self.train_config()'})
          return engine

      def train_config(self):
          cfg = base_config(2)
          if self.dynamic:
              cfg["gradient_accumulation_steps"] = 1
          else:
              cfg["train_micro_batch_size_per_gpu"] = self.micro_batch
              cfg["train_batch_size"] = self.global_batch
          return cfg
`;

const TRAINER = (info = 'token_info(keep)') => py`
  from lm.losses import token_mean
  from lm.tokens import token_info


  class Trainer:
      def __init__(self, model, strategy, optimizer, loader):
          self.model = model
          self.strategy = strategy
          self.optimizer = optimizer
          self.loader = loader

      def fit(self):
          for step, (ids, labels) in enumerate(self.loader):
              keep = (labels != -100).float()
              loss = token_mean(-self.model(ids), keep, **${info})
              self.strategy.backward(loss, self.model, self.optimizer)
              if step % self.strategy.accum_steps == 0:
                  print(loss.item())
`;

const ENTRY = (opts: { global?: string; arguments?: string } = {}) => py`
  import argparse

  from lm.engine import EngineStrategy
  from lm.trainer import Trainer


  def make_strategy(args):
      return EngineStrategy(micro_batch=args.micro_batch, global_batch=args.global_batch, args=args)


  def main(args):
      strategy = make_strategy(args)
      model = strategy.wrap(build_model())
      Trainer(model, strategy, None, make_loader(args)).fit()


  if __name__ == "__main__":
      parser = argparse.ArgumentParser()
      parser.add_argument("--micro_batch", type=int, default=4, help="per GPU")
      parser.add_argument("--global_batch", type=int, default=${opts.global ?? '64'})
      ${opts.arguments ?? 'parser.add_argument("--lr", type=float, default=1e-5)'}
      args = parser.parse_args()
      main(args)
`;

interface Variant {
  readonly hints?: boolean;
  readonly config?: string;
  readonly strategy?: string;
  readonly entry?: string;
  readonly trainer?: string;
}

async function check(v: Variant = {}): Promise<Map<string, AnalysisResult>> {
  const program = new Program(await parser(), { hints: v.hints ?? false });
  program.setFile('lm/tokens.py', TOKENS);
  program.setFile('lm/losses.py', LOSSES);
  program.setFile('lm/engine/__init__.py', 'from .strategy import EngineStrategy\n');
  program.setFile('lm/engine/config.py', v.config ?? CONFIG());
  program.setFile('lm/engine/strategy.py', v.strategy ?? STRATEGY());
  program.setFile('lm/trainer.py', v.trainer ?? TRAINER());
  program.setFile('train.py', v.entry ?? ENTRY());
  return program.analyzeAll();
}

const trainerFindings = (r: Map<string, AnalysisResult>) => summary(r.get('lm/trainer.py')!.findings);

/** Silent without hints, and the hint (a warning) with them: links 1 and 2 hold, only the engine's window fails. */
async function hintOnly(v: Variant): Promise<void> {
  assert.deepEqual(trainerFindings(await check(v)), []);
  const hinted = (await check({ ...v, hints: true })).get('lm/trainer.py')!.findings;
  assert.deepEqual(summary(hinted), ['CP003@16']);
  assert.equal(hinted[0].severity, 'warning');
}

test('CP003 (error, no hints): the engine built from a config whose window is 64 // (4 * N) at the defaults', async () => {
  const results = await check();
  assert.deepEqual(trainerFindings(results), ['CP003@16']);
  const f = results.get('lm/trainer.py')!.findings[0];
  assert.equal(f.severity, 'error');
  assert.match(
    f.message,
    /= 64 \/\/ \(4 \* N\) on N data-parallel ranks at the defaults of train\.py: above 1 for N = 1, 2, 4 or 8/,
  );
  const files = f.related.map((r) => r.file ?? 'here');
  assert.deepEqual(files.slice(-2), ['lm/engine/strategy.py', 'lm/engine/strategy.py']);
  for (const [path, r] of results) if (path !== 'lm/trainer.py') assert.deepEqual(summary(r.findings), [], path);
});

test('CP003 (error): a window the config gives, with the dynamic-batch flag defined and off by default', async () => {
  const entry = ENTRY({ arguments: 'parser.add_argument("--dynamic_batch", action="store_true")' });
  assert.deepEqual(trainerFindings(await check({ entry })), ['CP003@16']);
  const given = await check({ config: CONFIG(', "gradient_accumulation_steps": 8') });
  assert.deepEqual(trainerFindings(given), ['CP003@16']);
  assert.match(given.get('lm/trainer.py')!.findings[0].message, /`gradient_accumulation_steps` = 8/);
});

test('silent without hints: a window of 1 at the defaults (a hint with them)', async () => {
  await hintOnly({ entry: ENTRY({ global: '4' }) });
});

test('silent: a config read from a file, or gradient_accumulation_steps given as 1', async () => {
  await hintOnly({ strategy: STRATEGY({ config: '"ds_config.json"' }) });
  await hintOnly({ config: CONFIG(', "gradient_accumulation_steps": 1') });
});

test('silent: the dynamic-batch path on by default, or a default not decided (computed, set later, merged, inherited)', async () => {
  const on = ENTRY({ arguments: 'parser.add_argument("--dynamic_batch", action="store_false")' });
  await hintOnly({ entry: on });
  await hintOnly({ entry: ENTRY({ arguments: 'parser.set_defaults(dynamic_batch=True)' }) });
  await hintOnly({ entry: ENTRY({ global: 'int(os.environ["GLOBAL_BATCH"])' }) });
  const merged = ENTRY().replace('\n    main(args)', '\n    vars(args).update(load_yaml("run.yaml"))\n    main(args)');
  assert.notEqual(merged, ENTRY());
  await hintOnly({ entry: merged });
  const inherited = ENTRY().replace('ArgumentParser()', 'ArgumentParser(parents=[shared_parser()])');
  assert.notEqual(inherited, ENTRY());
  await hintOnly({ entry: inherited });
});

test('silent: a strategy whose backward is not handed to the engine', async () => {
  await hintOnly({ strategy: STRATEGY({ backward: 'loss.backward()' }) });
  await hintOnly({ strategy: STRATEGY({ backward: 'if optimizer:\n            model.backward(loss)' }) });
});

test('silent: the window global count passed in (the fix)', async () => {
  const trainer = TRAINER('token_info(keep, n_tokens=self.window_tokens)');
  assert.deepEqual(trainerFindings(await check({ trainer })), []);
  assert.deepEqual(trainerFindings(await check({ trainer, hints: true })), []);
});
