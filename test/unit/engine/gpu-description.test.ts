// The one reader of free-text GPU names: catalogue names and aliases map to themselves, and the device strings that
// real tools print (copied here as strings, in the forms nvidia-smi, nccl-tests and PyTorch use) map to the right entry.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GPU_CATALOGUE, gpuFromDescription } from '../../../src/engine/index';

test('every catalogue name and alias reads back as its own entry', () => {
  for (const spec of GPU_CATALOGUE) {
    for (const name of [spec.name, ...spec.aliases, spec.name.toLowerCase(), spec.name.replace('-', ' ')]) {
      assert.equal(gpuFromDescription(name), spec.name, name);
    }
  }
});

test('device strings as tools print them map to the catalogue, PCIe cards to their PCIe entry', () => {
  const cases: Array<[string, string | undefined]> = [
    ['NVIDIA A100-SXM4-40GB', 'A100-SXM'],
    ['NVIDIA A100-PCIE-40GB', 'A100-PCIe'],
    ['NVIDIA A100 80GB PCIe', 'A100-PCIe'],
    ['A100 SXM4 80GB', 'A100-SXM'],
    ['NVIDIA H100 80GB HBM3', 'H100-SXM'],
    ['H100 PCIe', 'H100-PCIe'],
    ['NVIDIA H800', 'H100-SXM'],
    ['NVIDIA GH200 120GB', 'H200'],
    ['NVIDIA H200', 'H200'],
    ['NVIDIA B200', 'B200'],
    ['GB200 (Blackwell B200 GPU, 185GB)', 'GB200'],
    ['Tesla V100-SXM2-32GB', 'V100-SXM'],
    ['NVIDIA GeForce RTX 4090', 'RTX4090'],
    ['GeForce RTX 3090', 'RTX3090'],
    ['NVIDIA L40S', 'L40S'],
    ['NVIDIA A10', 'A10'],
    // Not in the catalogue: the reader says so instead of picking a neighbour.
    ['Tesla K80', undefined],
    ['Tesla T4', undefined],
    ['NVIDIA GeForce RTX 5090', undefined],
    ['AMD Instinct MI300X', undefined],
    ['NVIDIA A100X', 'A100-SXM'],
    ['NVIDIA A1000', undefined],
  ];
  for (const [text, expected] of cases) assert.equal(gpuFromDescription(text), expected, text);
});
