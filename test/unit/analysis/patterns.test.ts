// Small realistic cases for each pattern the analysis follows, positive and negative. A trailing `#!` marks the
// line where the finding is expected; cases without a marker must give nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze, py, summary } from './helpers';

interface Case {
  readonly name: string;
  readonly code?: string;
  readonly text: string;
  /** A case the analysis suspects but cannot prove: silent by default, reported with the `hints` option. */
  readonly hint?: boolean;
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

      def apply(model, optimizer, grads):
          for p, g in zip(model.parameters(), sync(grads)):
              p.grad = g
          optimizer.step()
    `,
  },
  {
    name: 'summed gradients returned to no update in view (a comparison in a test, a gather of fragments)',
    text: py`
      import torch
      import torch.distributed as dist
      def full_grad(fragment, offset, numel):
          buffer = torch.zeros(numel)
          buffer.narrow(0, offset, fragment.numel()).copy_(fragment.grad)
          dist.all_reduce(buffer)
          return buffer
      def test_grads_match(layer, reference):
          grads = {n: p.grad.clone() for n, p in layer.named_parameters()}
          for n in grads:
              dist.all_reduce(grads[n])
          torch.testing.assert_close(grads, reference)
    `,
  },
  {
    name: 'gradients summed over a group held in an attribute, a parameter or returned by a helper, when it is not data-parallel',
    text: py`
      import torch.distributed as dist
      from megatron.core import parallel_state
      class Embedding:
          def __init__(self):
              self.embd_group = parallel_state.get_embedding_group()
              self.cp_group = parallel_state.get_context_parallel_group()
          def sync_tied(self, weight):
              dist.all_reduce(weight.grad, group=self.embd_group)
          def sync_cp(self, weight):
              dist.all_reduce(weight.grad, group=self.cp_group)
      def reduce_from_tp(input_, group):
          dist.all_reduce(input_.grad, group=group)
      def allreduce_pp_grads(model, pp_group):
          for p in model.parameters():
              dist.all_reduce(p.grad, group=pp_group)
      def tied_grads(weight_group_list):
          for weight, group in weight_group_list:
              dist.all_reduce(weight.grad, group=group)
    `,
  },
  {
    name: 'an attribute gradient summed in one method and divided in the method (or closure) that calls it',
    text: py`
      import torch.distributed as torch_distrib
      class Model:
          def manual_sync_grad(self):
              torch_distrib.all_reduce(self.layer.weight.grad.data, async_op=False)
              return True
          def training_step(self, batch):
              world_size = torch_distrib.get_world_size()
              def make_manual_backward(loss):
                  self.manual_backward(loss)
                  assert self.manual_sync_grad()
                  self.layer.weight.grad /= world_size
              make_manual_backward(self(batch))
              self.optimizer.step()
    `,
  },
  {
    name: 'DDP wraps one model; the loss divided by the world size belongs to another, unwrapped reference model',
    text: py`
      import torch.distributed as dist
      from torch.nn.parallel import DistributedDataParallel as DDP
      bn = BatchNorm2d(8)
      sbn = DDP(SyncBatchNorm(8))
      world = dist.get_world_size()
      out_bn = bn(inp)
      out_bn.backward(grad / world)
      out_sbn = sbn(inp)
      out_sbn.backward(grad)
      optimizer.step()
    `,
  },
  {
    name: 'TF nccl.all_sum of the tower gradients, never divided by the tower count (tensorpack 890df78)',
    code: 'CP001',
    text: py`
      import tensorflow as tf
      from tensorflow.contrib import nccl
      def _allreduce_grads(tower_grads):
          new_tower_grads = []
          for grad_and_vars in zip(*tower_grads):
              grads = [g for g, _ in grad_and_vars]
              summed = nccl.all_sum(grads)  #!
              new_tower_grads.append([(g, v) for (_, v), g in zip(grad_and_vars, summed)])
          return new_tower_grads
    `,
  },
  {
    name: 'TF nccl.all_sum of the tower gradients multiplied by 1/towers (tensorpack 461d20c)',
    text: py`
      import tensorflow as tf
      from tensorflow.contrib import nccl
      def _allreduce_grads(tower_grads):
          nr_tower = len(tower_grads)
          new_tower_grads = []
          for grad_and_vars in zip(*tower_grads):
              grads = [g for g, _ in grad_and_vars]
              summed = nccl.all_sum(grads)
              grads_for_a_var = []
              for (_, v), g in zip(grad_and_vars, summed):
                  g = tf.multiply(g, 1.0 / nr_tower)
                  grads_for_a_var.append((g, v))
              new_tower_grads.append(grads_for_a_var)
          return new_tower_grads
    `,
  },
  {
    name: 'psum of gradients divided leaf by leaf in a nested_map lambda (trax)',
    text: py`
      import jax
      import jax.numpy as jnp
      from trax import fastmath
      def _average_multidevice_gradients(gradients, n):
          gradients_psum = fastmath.psum(gradients, 'batch')
          n = jnp.array(n, dtype=jnp.float32)
          return fastmath.nested_map(lambda g: g / n, gradients_psum)
      def train_step(opt, weights, batch, n):
          grads = jax.grad(loss)(weights, batch)
          grads = _average_multidevice_gradients(grads, n)
          return opt.apply_gradients(weights, grads)
      step = jax.pmap(train_step, axis_name='batch')
    `,
  },
  {
    name: 'a loss multiplied by an integer that can be the hard-coded rank count, under DDP: not provable',
    text: py`
      import torch
      from torch.nn.parallel import DistributedDataParallel as DDP
      model = DDP(model)
      output = model(data)
      output.backward(grad * 2 / global_batch_size)
      optimizer.step()
    `,
  },
  {
    name: 'gradients summed over the data-parallel group returned by a helper, never divided',
    code: 'CP001',
    text: py`
      import torch.distributed as dist
      from megatron.core import mpu
      def allreduce_grads(model):
          group = mpu.get_data_parallel_group()
          for p in model.parameters():
              dist.all_reduce(p.grad, group=group)  #!
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
  {
    name: 'a sync helper method called through self',
    code: 'CP001',
    text: py`
      import torch.distributed as dist


      class DistTrainer:
          def __init__(self, model, optimizer):
              self.model = model
              self.optimizer = optimizer

          def _sync_grads(self):
              for p in self.model.parameters():
                  if p.grad is not None:
                      dist.all_reduce(p.grad.data)  #!

          def step(self, batch):
              loss = self.model(batch)
              self.optimizer.zero_grad()
              loss.backward()
              self._sync_grads()
              self.optimizer.step()
    `,
  },
  {
    name: 'asynchronous all_reduce handles without a division',
    code: 'CP001',
    text: py`
      import torch.distributed as dist


      def allreduce_grads(model):
          handles = []
          for p in model.parameters():
              handles.append(dist.all_reduce(p.grad, async_op=True))  #!
          for h in handles:
              h.wait()
    `,
  },
  {
    name: 'compressed gradients rescaled by an unknown scaler: silent',
    text: py`
      import torch
      import torch.distributed as dist


      def sync(model, world_size):
          for p in model.parameters():
              scaler = p.grad.abs().max()
              dist.all_reduce(scaler, op=dist.ReduceOp.MAX)
              tern = torch.sign(p.grad) * (torch.rand_like(p.grad) < p.grad.abs() / scaler).float()
              dist.all_reduce(tern)
              p.grad = scaler * tern / world_size
    `,
  },
  {
    name: 'optimizer param_groups loop without a division',
    code: 'CP001',
    text: py`
      import torch.distributed as dist


      def sync_optimizer_grads(optimizer):
          for group in optimizer.param_groups:
              for p in group["params"]:
                  if p.grad is None:
                      continue
                  dist.all_reduce(p.grad)  #!
    `,
  },
  {
    name: 'parameter-server reduce to rank 0, divided there',
    text: py`
      import torch.distributed as dist


      def push_pull(model, rank, world_size):
          for p in model.parameters():
              dist.reduce(p.grad.data, dst=0)
              if rank == 0:
                  p.grad.data /= world_size
              dist.broadcast(p.grad.data, src=0)
    `,
  },
  {
    name: 'division by args.world_size under a distributed flag',
    text: py`
      import torch.distributed as dist


      def reduce_grads(model, args):
          if args.distributed:
              for p in model.parameters():
                  dist.all_reduce(p.grad)
                  p.grad.div_(args.world_size)
    `,
  },
  {
    name: 'DDP with the loss divided by the global batch size',
    code: 'CP002',
    text: py`
      import torch.distributed as dist
      from torch.nn.parallel import DistributedDataParallel as DDP


      def train(model, loader, optimizer, args):
          model = DDP(model)
          global_batch_size = args.batch_size * dist.get_world_size()
          for x, y in loader:
              loss = model(x, y).sum() / global_batch_size  #!
              loss.backward()
              optimizer.step()
    `,
  },
  {
    name: 'Horovod op=hvd.Sum with the loss pre-divided by hvd.size()',
    text: py`
      import horovod.torch as hvd


      def build(model, optimizer):
          return hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters(), op=hvd.Sum)


      def train(model, optimizer, loader, criterion):
          optimizer = build(model, optimizer)
          for x, y in loader:
              optimizer.zero_grad()
              loss = criterion(model(x), y) / hvd.size()
              loss.backward()
              optimizer.step()
    `,
  },
  {
    name: 'Keras Horovod DistributedOptimizer with op=hvd.Sum',
    code: 'CP001',
    text: py`
      import tensorflow as tf
      import horovod.tensorflow.keras as hvd

      hvd.init()
      model = tf.keras.applications.ResNet50(weights=None)
      opt = tf.keras.optimizers.SGD(0.01)
      opt = hvd.DistributedOptimizer(opt, op=hvd.Sum)  #!
      model.compile(loss="sparse_categorical_crossentropy", optimizer=opt)
    `,
  },
  {
    name: 'JAX psum divided by the local device count',
    code: 'CP003',
    text: py`
      import jax
      import jax.numpy as jnp

      n_devices = jax.local_device_count()


      @jax.pmap
      def update(params, x, y):
          def loss(p):
              return jnp.mean((x @ p - y) ** 2)
          grads = jax.grad(loss)(params)
          grads = jax.lax.psum(grads, axis_name="i") / n_devices  #!
          return params - 0.01 * grads
    `,
  },
  {
    name: 'a module-level WORLD_SIZE divisor',
    text: py`
      import os
      import torch.distributed as dist

      WORLD_SIZE = int(os.environ["WORLD_SIZE"])


      def average_gradients(model):
          for param in model.parameters():
              dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
              param.grad.data /= WORLD_SIZE
    `,
  },
  {
    name: 'DDP plus a manual sum-and-divide: redundant but the scale is right',
    text: py`
      import torch.distributed as dist
      from torch.nn.parallel import DistributedDataParallel as DDP


      def average_gradients(model):
          size = float(dist.get_world_size())
          for param in model.parameters():
              dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
              param.grad.data /= size


      def train(model, loader, optimizer, loss_fn, rank):
          model = DDP(model, device_ids=[rank])
          for x, y in loader:
              optimizer.zero_grad()
              loss_fn(model(x), y).backward()
              average_gradients(model)
              optimizer.step()
    `,
  },
  {
    name: 'MpiAdam with its default scale_grad_by_procs=True',
    text: py`
      import numpy as np
      from mpi4py import MPI


      class MpiAdam(object):
          def __init__(self, var_list, beta1=0.9, beta2=0.999, epsilon=1e-08, scale_grad_by_procs=True, comm=None):
              self.var_list = var_list
              self.beta1 = beta1
              self.scale_grad_by_procs = scale_grad_by_procs
              self.comm = MPI.COMM_WORLD if comm is None else comm

          def update(self, localg, stepsize):
              globalg = np.zeros_like(localg)
              self.comm.Allreduce(localg, globalg, op=MPI.SUM)
              if self.scale_grad_by_procs:
                  globalg /= self.comm.Get_size()
              return globalg * stepsize


      class DDPG(object):
          def _create_network(self):
              self.Q_adam = MpiAdam(self._vars('main/Q'))
              self.pi_adam = MpiAdam(self._vars('main/pi'))

          def _update(self, Q_grad, pi_grad):
              self.Q_adam.update(Q_grad, self.Q_lr)
              self.pi_adam.update(pi_grad, self.pi_lr)
    `,
  },
  {
    name: 'single-node spawn with nprocs=world_size: the world size is not a per-node count',
    text: py`
      import torch.distributed as dist
      import torch.multiprocessing as mp


      def train(rank, world_size, model, loader, optimizer):
          dist.init_process_group("nccl", rank=rank, world_size=world_size)
          for x, y in loader:
              loss = model(x, y)
              loss.backward()
              for p in model.parameters():
                  dist.all_reduce(p.grad.data)
                  p.grad.data /= world_size
              optimizer.step()


      if __name__ == "__main__":
          world_size = 4
          mp.spawn(train, args=(world_size,), nprocs=world_size, join=True)
    `,
  },
  {
    name: 'DDP with the loss averaged by a reduce_mean helper before backward (reported at the call)',
    code: 'CP002',
    text: py`
      import torch.distributed as dist
      from torch.nn.parallel import DistributedDataParallel as DDP


      def reduce_mean(tensor, nprocs):
          rt = tensor.clone()
          dist.all_reduce(rt, op=dist.ReduceOp.SUM)
          rt /= nprocs
          return rt


      def train(model, loader, optimizer, criterion, args):
          model = DDP(model, device_ids=[args.local_rank])
          for images, target in loader:
              output = model(images)
              loss = criterion(output, target)
              dist.barrier()
              loss = reduce_mean(loss, args.nprocs)  #!
              optimizer.zero_grad()
              loss.backward()
              optimizer.step()
    `,
  },
  {
    name: 'DDP with reduce_mean only for the logged loss',
    text: py`
      import torch.distributed as dist
      from torch.nn.parallel import DistributedDataParallel as DDP


      def reduce_mean(tensor, nprocs):
          rt = tensor.clone()
          dist.all_reduce(rt, op=dist.ReduceOp.SUM)
          rt /= nprocs
          return rt


      def train(model, loader, optimizer, criterion, args):
          model = DDP(model, device_ids=[args.local_rank])
          for images, target in loader:
              output = model(images)
              loss = criterion(output, target)
              dist.barrier()
              reduced_loss = reduce_mean(loss, args.nprocs)
              optimizer.zero_grad()
              loss.backward()
              optimizer.step()
    `,
  },
  {
    name: 'TF tutorial compute_loss with compute_average_loss',
    text: py`
      import tensorflow as tf

      strategy = tf.distribute.MirroredStrategy()
      GLOBAL_BATCH_SIZE = 64 * strategy.num_replicas_in_sync

      with strategy.scope():
          loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=tf.keras.losses.Reduction.NONE)

          def compute_loss(labels, predictions, model_losses):
              per_example_loss = loss_object(labels, predictions)
              loss = tf.nn.compute_average_loss(per_example_loss, global_batch_size=GLOBAL_BATCH_SIZE)
              if model_losses:
                  loss += tf.nn.scale_regularization_loss(tf.add_n(model_losses))
              return loss


      def train_step(inputs):
          images, labels = inputs
          with tf.GradientTape() as tape:
              predictions = model(images, training=True)
              loss = compute_loss(labels, predictions, model.losses)
          gradients = tape.gradient(loss, model.trainable_variables)
          optimizer.apply_gradients(zip(gradients, model.trainable_variables))
          return loss


      @tf.function
      def distributed_train_step(dataset_inputs):
          per_replica_losses = strategy.run(train_step, args=(dataset_inputs,))
          return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)
    `,
  },
  {
    name: 'TF compute_loss helper with a per-replica reduce_mean',
    code: 'CP001',
    text: py`
      import tensorflow as tf

      strategy = tf.distribute.MirroredStrategy()
      GLOBAL_BATCH_SIZE = 64 * strategy.num_replicas_in_sync

      with strategy.scope():
          loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=tf.keras.losses.Reduction.NONE)

          def compute_loss(labels, predictions, model_losses):
              per_example_loss = loss_object(labels, predictions)
              loss = tf.reduce_mean(per_example_loss)  #!
              if model_losses:
                  loss += tf.nn.scale_regularization_loss(tf.add_n(model_losses))
              return loss


      def train_step(inputs):
          images, labels = inputs
          with tf.GradientTape() as tape:
              predictions = model(images, training=True)
              loss = compute_loss(labels, predictions, model.losses)
          gradients = tape.gradient(loss, model.trainable_variables)
          optimizer.apply_gradients(zip(gradients, model.trainable_variables))
          return loss


      @tf.function
      def distributed_train_step(dataset_inputs):
          per_replica_losses = strategy.run(train_step, args=(dataset_inputs,))
          return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)
    `,
  },
  {
    name: 'a gradient hook that divides by the world size',
    text: py`
      import torch.distributed as dist


      def install_hooks(model, world_size):
          def allreduce_hook(grad):
              dist.all_reduce(grad)
              return grad / world_size

          for p in model.parameters():
              if p.requires_grad:
                  p.register_hook(allreduce_hook)
    `,
  },
  {
    name: 'a gradient hook that only sums',
    code: 'CP001',
    text: py`
      import torch.distributed as dist


      def install_hooks(model, world_size):
          def allreduce_hook(grad):
              dist.all_reduce(grad)  #!
              return grad

          for p in model.parameters():
              if p.requires_grad:
                  p.register_hook(allreduce_hook)
    `,
  },
  {
    name: 'a distributed torch loop without a visible DDP: the wrapper elsewhere averages, so a pre-divided loss is averaged twice',
    code: 'CP002',
    hint: true,
    text: py`
      import torch.distributed as dist
      from torch.utils.data import DistributedSampler


      def train_epoch(model, dataset, optimizer, criterion, args):
          sampler = DistributedSampler(dataset)
          loader = torch.utils.data.DataLoader(dataset, sampler=sampler, batch_size=args.batch_size)
          world_size = dist.get_world_size()
          for x, y in loader:
              loss = criterion(model(x), y)
              loss = loss / world_size  #!
              optimizer.zero_grad()
              loss.backward()
              optimizer.step()
    `,
  },
  {
    name: 'the same loop calling an imported gradient-sync helper: silent',
    text: py`
      import torch.distributed as dist
      from torch.utils.data import DistributedSampler


      def train_epoch(model, dataset, optimizer, criterion, args):
          sampler = DistributedSampler(dataset)
          loader = torch.utils.data.DataLoader(dataset, sampler=sampler, batch_size=args.batch_size)
          world_size = dist.get_world_size()
          for x, y in loader:
              loss = criterion(model(x), y)
              loss = loss / world_size
              optimizer.zero_grad()
              loss.backward()
              average_gradients(model)
              optimizer.step()
    `,
  },
  {
    name: 'the backward of an autograd Function (a GatherLayer) sums on purpose',
    text: py`
      import torch
      import torch.distributed as dist
      class GatherLayer(torch.autograd.Function):
          @staticmethod
          def forward(ctx, x):
              out = [torch.zeros_like(x) for _ in range(dist.get_world_size())]
              dist.all_gather(out, x)
              return tuple(out)
          @staticmethod
          def backward(ctx, *grads):
              all_gradients = torch.stack(grads)
              dist.all_reduce(all_gradients)
              return all_gradients[dist.get_rank()]
    `,
  },
  {
    name: 'Megatron sequence-parallel layernorm grads summed over the tensor-parallel group (a sum is right)',
    text: py`
      import torch
      from megatron import mpu
      from torch._utils import _flatten_dense_tensors
      def allreduce_layernorm_grads(model):
          grads = [p.grad.data for p in model.parameters() if getattr(p, "sequence_parallel", False)]
          coalesced = _flatten_dense_tensors(grads)
          torch.distributed.all_reduce(coalesced, group=mpu.get_tensor_model_parallel_group())
    `,
  },
  {
    name: 'JAX psum of gradients over a model-parallel axis',
    text: py`
      import jax
      def step(params, batch, loss_fn):
          grads = jax.grad(loss_fn)(params, batch)
          return jax.lax.psum(grads, axis_name="model")
    `,
  },
  {
    name: 'a helper returns the summed tensor and the caller divides it',
    text: py`
      import torch.distributed as dist


      def allreduce_sum(t):
          dist.all_reduce(t)
          return t


      def sync(model):
          ws = dist.get_world_size()
          for p in model.parameters():
              g = allreduce_sum(p.grad)
              p.grad = g / ws
    `,
  },
  {
    name: 'torch._foreach_mul_ by 1/world size after per-tensor sums',
    text: py`
      import torch
      import torch.distributed as dist


      def sync(model):
          grads = [p.grad for p in model.parameters()]
          for g in grads:
              dist.all_reduce(g)
          torch._foreach_mul_(grads, 1.0 / dist.get_world_size())
    `,
  },
  {
    name: 'gradients weighted by the local sample count and divided by the global count',
    text: py`
      import torch
      import horovod.torch as hvd


      def sync(model, n_local):
          count = hvd.allreduce(torch.tensor(float(n_local)), op=hvd.Sum)
          for p in model.parameters():
              g = hvd.allreduce(p.grad * n_local, op=hvd.Sum)
              p.grad.copy_(g / count)
    `,
  },
];

for (const c of CASES) {
  test(c.name, async () => {
    const lines = c.text.split('\n');
    const marked = lines.findIndex((l) => /#!\s*$/.test(l));
    const want = c.code ? [`${c.code}@${marked + 1}`] : [];
    const findings = await analyze(c.text, { hints: c.hint });
    assert.deepEqual(summary(findings), want, findings.map((f) => f.message).join('\n'));
    if (c.hint) assert.deepEqual(summary(await analyze(c.text)), [], 'a hint is silent by default');
  });
}

test('MpiAdam built with scale_grad_by_procs=False: each constructor call that skips the division is reported', async () => {
  const text = py`
    import numpy as np
    from mpi4py import MPI


    class MpiAdam(object):
        def __init__(self, var_list, beta1=0.9, beta2=0.999, epsilon=1e-08, scale_grad_by_procs=True, comm=None):
            self.var_list = var_list
            self.beta1 = beta1
            self.scale_grad_by_procs = scale_grad_by_procs
            self.comm = MPI.COMM_WORLD if comm is None else comm

        def update(self, localg, stepsize):
            globalg = np.zeros_like(localg)
            self.comm.Allreduce(localg, globalg, op=MPI.SUM)
            if self.scale_grad_by_procs:
                globalg /= self.comm.Get_size()
            return globalg * stepsize


    class DDPG(object):
        def _create_network(self):
            self.Q_adam = MpiAdam(self._vars('main/Q'), scale_grad_by_procs=False)
            self.pi_adam = MpiAdam(self._vars('main/pi'), scale_grad_by_procs=False)

        def _update(self, Q_grad, pi_grad):
            self.Q_adam.update(Q_grad, self.Q_lr)
            self.pi_adam.update(pi_grad, self.pi_lr)
  `;
  assert.deepEqual(summary(await analyze(text)), ['CP001@22', 'CP001@23']);
});
