// Generates a realistic N-line PyTorch training script for the analysis benchmark: model blocks, a dataset, config
// parsing, logging helpers, a DDP setup, gradient-sync helpers (one with a sum bug) and a training loop.

const HEADER = `import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, Dataset, DistributedSampler
`;

function block(i: number): string {
  return `

class Block${i}(nn.Module):
    """Transformer block ${i}: attention, then an MLP, each with a residual connection."""

    def __init__(self, hidden_size, num_heads, dropout=0.1):
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden_size)
        self.attn = nn.MultiheadAttention(hidden_size, num_heads, dropout=dropout, batch_first=True)
        self.norm2 = nn.LayerNorm(hidden_size)
        self.fc1 = nn.Linear(hidden_size, 4 * hidden_size)
        self.fc2 = nn.Linear(4 * hidden_size, hidden_size)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        h = self.norm1(x)
        h, _ = self.attn(h, h, h, attn_mask=mask, need_weights=False)
        x = x + self.drop(h)
        h = self.norm2(x)
        h = self.fc2(F.gelu(self.fc1(h)))
        return x + self.drop(h)

    def extra_repr(self):
        return f"hidden={self.fc1.in_features}, ratio={self.fc1.out_features // self.fc1.in_features}"
`;
}

function helpers(i: number): string {
  return `

def cosine_schedule_${i}(step, warmup, total, base):
    if step < warmup:
        return base * step / max(1, warmup)
    progress = (step - warmup) / max(1, total - warmup)
    return base * 0.5 * (1.0 + math.cos(math.pi * progress))


def format_metrics_${i}(metrics, step):
    parts = [f"step {step}"]
    for key in sorted(metrics):
        value = metrics[key]
        parts.append(f"{key} {value:.4f}" if isinstance(value, float) else f"{key} {value}")
    return " | ".join(parts)


class RandomTokens${i}(Dataset):
    def __init__(self, length, seq_len, vocab):
        self.length = length
        self.seq_len = seq_len
        self.vocab = vocab

    def __len__(self):
        return self.length

    def __getitem__(self, index):
        g = torch.Generator().manual_seed(index)
        tokens = torch.randint(0, self.vocab, (self.seq_len + 1,), generator=g)
        return tokens[:-1], tokens[1:]
`;
}

const TRAINING = `

def reduce_gradients(model, average=False):
    for p in model.parameters():
        if p.grad is not None:
            dist.all_reduce(p.grad.data)
            if average:
                p.grad.data /= dist.get_world_size()


def reduce_metric(value):
    t = torch.tensor([value], device="cuda")
    dist.all_reduce(t)
    return t.item() / dist.get_world_size()


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--steps", type=int, default=1000)
    return parser.parse_args()


def train(model, loader, optimizer, args):
    world_size = dist.get_world_size()
    for step, (x, y) in enumerate(loader):
        logits = model(x.cuda())
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), y.cuda().view(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        reduce_gradients(model)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 100 == 0:
            print(step, reduce_metric(loss.item()), world_size)
`;

/** A script of at least `lines` lines; the sum bug is the `reduce_gradients(model)` call in train(). */
export function trainingScript(lines: number): string {
  let text = HEADER;
  let i = 0;
  while (text.split('\n').length < lines - TRAINING.split('\n').length) {
    text += i % 2 === 0 ? block(i) : helpers(i);
    i++;
  }
  return text + TRAINING;
}
