// Small realistic cases for each pattern the analysis follows, positive and negative. A trailing `#!` marks the
// line where the finding is expected; cases without a marker must give nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

interface Case {
  readonly name: string;
  readonly code?: string;
  readonly text: string;
}

const CASES: Case[] = [
  {
    name: 'named_parameters loop, SUM all_reduce without division',
    code: 'CP001',
    text: py`
      import torch.distributed as dist
      def sync(model):
          for name, p in model.named_parameters():
              if p.requires_grad and p.grad is not None:
                  dist.all_reduce(p.grad)  #!
    `,
  },
  {
    name: 'world size read once into an attribute, divided after the SUM',
    text: py`
      import torch.distributed as dist
      class Syncer:
          def __init__(self, model):
              self.model = model
              self.world_size = dist.get_world_size()
          def __call__(self):
              for p in self.model.parameters():
                  dist.all_reduce(p.grad.data)
                  p.grad.data.div_(self.world_size)
    `,
  },
  {
    name: 'mul_(1 / ws) after the reduction averages',
    text: py`
      import torch.distributed as dist
      def sync(params):
          ws = dist.get_world_size()
          for p in params:
              dist.all_reduce(p.grad)
              p.grad.mul_(1.0 / ws)
    `,
  },
  {
    name: 'parameters_to_vector of the gradients, summed, written back',
    code: 'CP001',
    text: py`
      import torch.distributed as dist
      from torch.nn.utils import parameters_to_vector, vector_to_parameters
      def sync(model):
          grads = [p.grad for p in model.parameters()]
          vec = parameters_to_vector(grads)
          dist.all_reduce(vec)  #!
          vector_to_parameters(vec, grads)
    `,
  },
  {
    name: 'torch.cat bucket divided by the world size after the reduction',
    text: py`
      import torch
      import torch.distributed as dist
      def sync(model):
          grads = [p.grad.view(-1) for p in model.parameters()]
          flat = torch.cat(grads)
          dist.all_reduce(flat)
          flat /= dist.get_world_size()
    `,
  },
  {
    name: 'average_gradients helper with average=True by default',
    text: py`
      import torch.distributed as dist
      def average_gradients(model, average=True):
          for p in model.parameters():
              dist.all_reduce(p.grad)
              if average:
                  p.grad /= dist.get_world_size()
      def step(model, loss, opt):
          loss.backward()
          average_gradients(model)
          opt.step()
    `,
  },
  {
    name: 'average_gradients helper called with average=False explicitly',
    code: 'CP001',
    text: py`
      import torch.distributed as dist
      def average_gradients(model, average=True):
          for p in model.parameters():
              dist.all_reduce(p.grad)
              if average:
                  p.grad /= dist.get_world_size()
      def step(model, loss, opt):
          loss.backward()
          average_gradients(model, average=False)  #!
          opt.step()
    `,
  },
  {
    name: 'helper called once with avg and once with the default sum: only the default call is flagged',
    code: 'CP001',
    text: py`
      import torch.distributed as dist
      def reduce_gradients(model, _type='sum'):
          for w in model.parameters():
              dist.all_reduce(w.grad.data)
              if _type == 'avg':
                  w.grad.data /= dist.get_world_size()
      def a(model):
          reduce_gradients(model, 'avg')
      def b(model):
          reduce_gradients(model)  #!
    `,
  },
  {
    name: 'an unknown divisor keeps the analysis silent',
    text: py`
      import torch.distributed as dist
      def sync(model, cfg):
          for p in model.parameters():
              dist.all_reduce(p.grad)
              p.grad /= cfg.grad_divisor
    `,
  },
  {
    name: 'ReduceOp.AVG is an average',
    text: py`
      import torch.distributed as dist
      def sync(model):
          for p in model.parameters():
              dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)
    `,
  },
  {
    name: 'all_reduce of a metric dictionary is not a gradient',
    text: py`
      import torch
      import torch.distributed as dist
      def log_stats(stats):
          t = torch.tensor([stats["loss"], stats["tokens"]])
          dist.all_reduce(t)
          return t
    `,
  },
  {
    name: 'Horovod allreduce of gradients with the default average',
    text: py`
      import horovod.torch as hvd
      def sync(model):
          for p in model.parameters():
              p.grad.data = hvd.allreduce(p.grad.data)
    `,
  },
  {
    name: 'Horovod grouped_allreduce with op=hvd.Sum',
    code: 'CP001',
    text: py`
      import horovod.torch as hvd
      def sync(model):
          grads = [p.grad for p in model.parameters()]
          summed = hvd.grouped_allreduce(grads, op=hvd.Sum)  #!
          for p, g in zip(model.parameters(), summed):
              p.grad.copy_(g)
    `,
  },
  {
    name: 'Horovod Sum divided by hvd.size()',
    text: py`
      import horovod.torch as hvd
      def sync(model):
          for p in model.parameters():
              p.grad.data = hvd.allreduce(p.grad.data, op=hvd.Sum) / hvd.size()
    `,
  },
  {
    name: 'JAX pmean inside pmap',
    text: py`
      import jax
      def step(params, batch, loss_fn):
          grads = jax.grad(loss_fn)(params, batch)
          return jax.lax.pmean(grads, "i")
      p_step = jax.pmap(step, axis_name="i")
    `,
  },
  {
    name: 'JAX psum divided by psum(1) over the same axis',
    text: py`
      import jax
      from jax import lax
      def step(params, batch, loss_fn):
          grads = jax.grad(loss_fn)(params, batch)
          n = lax.psum(1, "i")
          return jax.tree_util.tree_map(lambda g: lax.psum(g, "i") / n, grads)
    `,
  },
  {
    name: 'JAX psum of gradients in shard_map',
    code: 'CP004',
    text: py`
      import jax
      from jax.experimental.shard_map import shard_map
      def step(params, batch, loss_fn, mesh, P):
          def inner(p, b):
              grads = jax.grad(loss_fn)(p, b)
              return jax.lax.psum(grads, "data")  #!
          return shard_map(inner, mesh, in_specs=(P(), P("data")), out_specs=P())(params, batch)
    `,
  },
  {
    name: 'torch_xla all_reduce with scale=1/world size',
    text: py`
      import torch_xla.core.xla_model as xm
      def sync(model):
          grads = [p.grad for p in model.parameters()]
          xm.all_reduce(xm.REDUCE_SUM, grads, scale=1.0 / xm.xrt_world_size())
    `,
  },
  {
    name: 'Accelerate reduce of gradients with reduction=sum',
    code: 'CP001',
    text: py`
      from accelerate import Accelerator
      accelerator = Accelerator()
      def sync(grads):
          return accelerator.reduce(grads, reduction="sum")  #!
    `,
  },
  {
    name: 'Accelerate reduce of the loss for logging',
    text: py`
      from accelerate import Accelerator
      accelerator = Accelerator()
      def log_loss(loss):
          return accelerator.reduce(loss.detach(), reduction="sum") / accelerator.num_processes
    `,
  },
  {
    name: 'DDP with the loss multiplied by the world size on purpose',
    text: py`
      from torch.nn.parallel import DistributedDataParallel as DDP
      def train(model, loader, opt, world_size):
          model = DDP(model)
          for x, y in loader:
              loss = model(x, y).sum() / len(x)
              loss = loss * world_size
              loss.backward()
              opt.step()
    `,
  },
  {
    name: 'DDP with global token normalisation and no compensation',
    code: 'CP002',
    text: py`
      import torch.distributed as dist
      from torch.nn.parallel import DistributedDataParallel as DDP
      def train(model, loader, opt):
          model = DDP(model)
          for batch in loader:
              num_tokens = batch["mask"].sum()
              dist.all_reduce(num_tokens)
              loss = model(batch).loss_sum
              loss = loss / num_tokens  #!
              loss.backward()
              opt.step()
    `,
  },
  {
    name: 'DDP with a grad-accumulation division of the loss',
    text: py`
      from torch.nn.parallel import DistributedDataParallel as DDP
      def train(model, loader, opt, accumulation_steps):
          model = DDP(model)
          for i, (x, y) in enumerate(loader):
              loss = model(x, y) / accumulation_steps
              loss.backward()
              if (i + 1) % accumulation_steps == 0:
                  opt.step()
    `,
  },
  {
    name: 'MPI allreduce of flat gradients divided by the communicator size',
    text: py`
      import numpy as np
      from mpi4py import MPI
      def sync_grads(flat_grads):
          comm = MPI.COMM_WORLD
          out = np.zeros_like(flat_grads)
          comm.Allreduce(flat_grads, out, op=MPI.SUM)
          return out / comm.Get_size()
    `,
  },
  {
    name: 'lr divided by the world size compensates a sum',
    text: py`
      import torch
      import torch.distributed as dist
      def build(model, base_lr):
          return torch.optim.SGD(model.parameters(), lr=base_lr / dist.get_world_size())
      def sync(model):
          for p in model.parameters():
              dist.all_reduce(p.grad)
    `,
  },
  {
    name: 'process-group size from group.size() with a matching group',
    text: py`
      import torch.distributed as dist
      def sync(model, group):
          n = dist.get_world_size(group=group)
          for p in model.parameters():
              dist.all_reduce(p.grad, group=group)
              p.grad /= n
    `,
  },
  {
    name: 'divided by the local GPU count from LOCAL_WORLD_SIZE',
    code: 'CP003',
    text: py`
      import os
      import torch.distributed as dist
      def sync(model):
          local = int(os.environ["LOCAL_WORLD_SIZE"])
          for p in model.parameters():
              dist.all_reduce(p.grad)
              p.grad /= local  #!
    `,
  },
  {
    name: 'TF replica context all_reduce SUM of gradients',
    code: 'CP001',
    text: py`
      import tensorflow as tf
      def step(tape, loss, model, opt):
          grads = tape.gradient(loss, model.trainable_variables)
          ctx = tf.distribute.get_replica_context()
          grads = ctx.all_reduce(tf.distribute.ReduceOp.SUM, grads)  #!
          opt.apply_gradients(zip(grads, model.trainable_variables), experimental_aggregate_gradients=False)
    `,
  },
];

for (const c of CASES) {
  test(c.name, async () => {
    const lines = c.text.split('\n');
    const marked = lines.findIndex((l) => /#!\s*$/.test(l));
    const want = c.code ? [`${c.code}@${marked + 1}`] : [];
    const findings = await analyze(c.text);
    assert.deepEqual(summary(findings), want, findings.map((f) => f.message).join('\n'));
  });
}
