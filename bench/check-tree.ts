// A generated 2,000-file Python code base for the `check` benchmarks, shaped like the real ones measured
// (Megatron-LM, DeepSpeed, fairseq, timm: 6-18 % of their files call a reduction, a DDP-style wrapper or
// backward; 6-16 KB a file): 15 % training code (the labelled examples of test/fixtures/scaling-extra and generated training
// scripts of 150-1,200 lines) and 85 % models, data pipelines, utilities and tests, about 6 KB a file on average.
// Nothing is fetched.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trainingScript } from './training-script';

const FIXTURES = join(import.meta.dirname, '..', 'test', 'fixtures', 'scaling-extra');

function modelModule(i: number, blocks: number): string {
  let text = `"""Model zoo entry ${i}: a small vision transformer with configurable depth."""\nimport math\n\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n`;
  for (let b = 0; b < blocks; b++) {
    text += `
class Attention${b}(nn.Module):
    def __init__(self, dim, heads=8, qkv_bias=False, attn_drop=0.0, proj_drop=0.0):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(attn_drop)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(proj_drop)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = self.attn_drop(attn.softmax(dim=-1))
        x = (attn @ v).transpose(1, 2).reshape(b, n, c)
        return self.proj_drop(self.proj(x))


def init_weights_${b}(module, std=0.02):
    if isinstance(module, nn.Linear):
        nn.init.trunc_normal_(module.weight, std=std)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.LayerNorm):
        nn.init.ones_(module.weight)
        nn.init.zeros_(module.bias)
`;
  }
  return text;
}

function dataModule(i: number): string {
  return `"""Dataset ${i}: reads shards of tokenised text and yields fixed-length samples."""
import json
import os
import random

import numpy as np
import torch
from torch.utils.data import Dataset


class ShardDataset${i}(Dataset):
    def __init__(self, root, seq_len=1024, split="train", seed=${i}):
        self.root = root
        self.seq_len = seq_len
        self.files = sorted(f for f in os.listdir(root) if f.startswith(split))
        self.rng = random.Random(seed)
        with open(os.path.join(root, "index.json")) as f:
            self.index = json.load(f)

    def __len__(self):
        return sum(entry["length"] for entry in self.index) // self.seq_len

    def __getitem__(self, idx):
        shard = self.files[idx % len(self.files)]
        data = np.memmap(os.path.join(self.root, shard), dtype=np.uint16, mode="r")
        start = self.rng.randrange(0, max(1, len(data) - self.seq_len - 1))
        chunk = torch.from_numpy(data[start : start + self.seq_len + 1].astype(np.int64))
        return chunk[:-1], chunk[1:]


def collate_${i}(batch, pad_id=0):
    xs, ys = zip(*batch)
    width = max(x.size(0) for x in xs)
    out_x = torch.full((len(xs), width), pad_id, dtype=torch.long)
    out_y = torch.full((len(ys), width), -100, dtype=torch.long)
    for row, (x, y) in enumerate(zip(xs, ys)):
        out_x[row, : x.size(0)] = x
        out_y[row, : y.size(0)] = y
    return out_x, out_y
`;
}

function utilModule(i: number): string {
  return `"""Utilities ${i}: configuration, logging and checkpoint paths."""
import argparse
import logging
import os
import time
from dataclasses import dataclass, field

logger = logging.getLogger(__name__)


@dataclass
class RunConfig${i}:
    name: str = "run-${i}"
    out_dir: str = "checkpoints"
    log_every: int = 50
    tags: list = field(default_factory=list)

    def checkpoint_path(self, step):
        return os.path.join(self.out_dir, self.name, f"step_{step:08d}.pt")


class Timer${i}:
    def __init__(self):
        self.start = time.perf_counter()
        self.marks = {}

    def mark(self, key):
        self.marks[key] = time.perf_counter() - self.start
        return self.marks[key]


def add_arguments_${i}(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("run")
    group.add_argument("--name", default="run-${i}")
    group.add_argument("--out-dir", default="checkpoints")
    group.add_argument("--log-every", type=int, default=50)


def setup_logging_${i}(level="INFO"):
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=level)
    logger.info("logging at %s", level)
`;
}

function testModule(i: number): string {
  return `"""Tests for the shapes of model zoo entry ${i}."""
import pytest
import torch

from models.zoo_${i} import Attention0, init_weights_0


@pytest.mark.parametrize("heads", [1, 2, 4, 8])
def test_attention_shape_${i}(heads):
    layer = Attention0(64, heads=heads)
    x = torch.randn(2, 16, 64)
    assert layer(x).shape == x.shape


def test_init_${i}():
    layer = torch.nn.Linear(8, 8)
    init_weights_0(layer)
    assert torch.all(layer.bias == 0)
`;
}

/** Writes the tree once per process and returns its folder and file count. */
let built: { root: string; files: number; trainingFiles: string[] } | undefined;
export function checkTree(files = 2000): { root: string; files: number; trainingFiles: string[] } {
  if (built && built.files === files) return built;
  const root = mkdtempSync(join(tmpdir(), 'cp-check-tree-'));
  // 10 MB of generated files: gone when the bench process ends.
  process.once('exit', () => rmSync(root, { recursive: true, force: true }));
  const fixtures = readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.py'))
    .sort()
    .map((f) => readFileSync(join(FIXTURES, f), 'utf8'));
  const scripts = [150, 300, 600, 1200].map((lines) => trainingScript(lines));
  const trainingFiles: string[] = [];
  for (let i = 0; i < files; i++) {
    const pkg = join(root, `pkg${i % 40}`, ['models', 'data', 'utils', 'tests', 'train'][i % 5]);
    mkdirSync(pkg, { recursive: true });
    let text: string;
    let name: string;
    if (i % 20 < 3) {
      // Training code: fixtures (small, one bug or none each) and generated scripts, each a distinct file.
      const k = trainingFiles.length;
      text = k % 2 === 0 ? fixtures[(k / 2) % fixtures.length] : scripts[((k - 1) / 2) % scripts.length];
      text = `# copy ${i}\n${text}`;
      name = `train_${i}.py`;
      trainingFiles.push(join(pkg, name));
    } else {
      const kind = i % 4;
      // Sizes as in the measured code bases: models of 2-18 blocks (3-24 KB), the rest 2-4 KB.
      const times = (n: number, f: (k: number) => string) =>
        Array.from({ length: n }, (_, k) => f(i * 10 + k)).join('\n\n');
      text =
        kind === 0
          ? modelModule(i, 2 + (i % 17))
          : kind === 1
            ? times(2, dataModule)
            : kind === 2
              ? times(2, utilModule)
              : times(4, testModule);
      name = `${['zoo', 'dataset', 'util', 'test_zoo'][kind]}_${i}.py`;
    }
    writeFileSync(join(pkg, name), text);
  }
  built = { root, files, trainingFiles };
  return built;
}
