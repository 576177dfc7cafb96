// Public facts about the GPUs the engine knows. Sources: ../shared/reference/hardware-facts.md (NVIDIA
// datasheets and whitepapers, NCCL's src/graph/topo.h for the effective per-link NVLink values).
import { type GBps, asGBps } from '../units';

export interface GpuSpec {
  /** Canonical catalogue name, e.g. "H100-SXM". */
  readonly name: string;
  readonly aliases: readonly string[];
  /** Compute capability × 10 (90 = Hopper); decides which NCCL algorithms and caps apply. */
  readonly smVersion: number;
  /** Peak memory bandwidth (spec), GB/s. */
  readonly hbmGBps: GBps;
  /** NVLink generation, 0 when the card has none. */
  readonly nvlinkGen: number;
  /** NVLink links per GPU (on PCIe cards: links carried by the bridge set). */
  readonly nvlinkLinks: number;
  /**
   * Effective one-direction bandwidth of one link as NCCL counts it (below the 25/50 GB/s line rate because SMs
   * move 128-byte payloads): 20 on V100/A100, 20.6 on Hopper, 40.1 on Blackwell, 12 on GA102 bridges.
   */
  readonly nvlinkGBpsPerLink: GBps;
  readonly pcieGen: 3 | 4 | 5 | 6;
  readonly fp16Tflops: number;
  readonly bf16Tflops: number;
  readonly fp32Tflops: number;
  readonly memoryGB: number;
  /** Streaming multiprocessors: an upper bound on NCCL channels (one CTA each). */
  readonly sms: number;
}

function gpu(spec: GpuSpec): GpuSpec {
  return spec;
}

export const GPU_CATALOGUE: readonly GpuSpec[] = [
  gpu({
    name: 'V100-SXM',
    aliases: ['v100', 'v100-sxm2', 'tesla-v100'],
    smVersion: 70,
    hbmGBps: asGBps(900),
    nvlinkGen: 2,
    nvlinkLinks: 6,
    nvlinkGBpsPerLink: asGBps(20),
    pcieGen: 3,
    fp16Tflops: 125,
    bf16Tflops: 0,
    fp32Tflops: 15.7,
    memoryGB: 32,
    sms: 80,
  }),
  gpu({
    name: 'A100-SXM',
    aliases: ['a100', 'a100-sxm4', 'a100-sxm4-80gb', 'a100-80gb'],
    smVersion: 80,
    hbmGBps: asGBps(2039),
    nvlinkGen: 3,
    nvlinkLinks: 12,
    nvlinkGBpsPerLink: asGBps(20),
    pcieGen: 4,
    fp16Tflops: 312,
    bf16Tflops: 312,
    fp32Tflops: 19.5,
    memoryGB: 80,
    sms: 108,
  }),
  gpu({
    name: 'A100-PCIe',
    aliases: ['a100-pcie-80gb', 'a100pcie'],
    smVersion: 80,
    hbmGBps: asGBps(1935),
    nvlinkGen: 3,
    nvlinkLinks: 12,
    nvlinkGBpsPerLink: asGBps(20),
    pcieGen: 4,
    fp16Tflops: 312,
    bf16Tflops: 312,
    fp32Tflops: 19.5,
    memoryGB: 80,
    sms: 108,
  }),
  gpu({
    name: 'H100-SXM',
    aliases: ['h100', 'h100-sxm5', 'h100-sxm-80gb'],
    smVersion: 90,
    hbmGBps: asGBps(3350),
    nvlinkGen: 4,
    nvlinkLinks: 18,
    nvlinkGBpsPerLink: asGBps(20.6),
    pcieGen: 5,
    fp16Tflops: 989,
    bf16Tflops: 989,
    fp32Tflops: 67,
    memoryGB: 80,
    sms: 132,
  }),
  gpu({
    name: 'H100-PCIe',
    aliases: ['h100pcie', 'h100-pcie-80gb'],
    smVersion: 90,
    hbmGBps: asGBps(2000),
    nvlinkGen: 4,
    nvlinkLinks: 12,
    nvlinkGBpsPerLink: asGBps(20.6),
    pcieGen: 5,
    fp16Tflops: 756,
    bf16Tflops: 756,
    fp32Tflops: 51,
    memoryGB: 80,
    sms: 114,
  }),
  gpu({
    name: 'H200',
    aliases: ['h200-sxm', 'h200-141gb'],
    smVersion: 90,
    hbmGBps: asGBps(4800),
    nvlinkGen: 4,
    nvlinkLinks: 18,
    nvlinkGBpsPerLink: asGBps(20.6),
    pcieGen: 5,
    fp16Tflops: 989,
    bf16Tflops: 989,
    fp32Tflops: 67,
    memoryGB: 141,
    sms: 132,
  }),
  gpu({
    name: 'B200',
    aliases: ['b200-sxm', 'hgx-b200'],
    smVersion: 100,
    hbmGBps: asGBps(8000),
    nvlinkGen: 5,
    nvlinkLinks: 18,
    nvlinkGBpsPerLink: asGBps(40.1),
    pcieGen: 5,
    fp16Tflops: 2250,
    bf16Tflops: 2250,
    fp32Tflops: 80,
    memoryGB: 180,
    sms: 148,
  }),
  gpu({
    name: 'GB200',
    aliases: ['gb200-nvl72', 'gb200-b200'],
    smVersion: 100,
    hbmGBps: asGBps(8000),
    nvlinkGen: 5,
    nvlinkLinks: 18,
    nvlinkGBpsPerLink: asGBps(40.1),
    pcieGen: 5,
    fp16Tflops: 2500,
    bf16Tflops: 2500,
    fp32Tflops: 80,
    memoryGB: 186,
    sms: 148,
  }),
  gpu({
    name: 'L40S',
    aliases: ['l40s-48gb'],
    smVersion: 89,
    hbmGBps: asGBps(864),
    nvlinkGen: 0,
    nvlinkLinks: 0,
    nvlinkGBpsPerLink: asGBps(0),
    pcieGen: 4,
    fp16Tflops: 362,
    bf16Tflops: 362,
    fp32Tflops: 91.6,
    memoryGB: 48,
    sms: 142,
  }),
  gpu({
    name: 'A10',
    aliases: ['a10-24gb'],
    smVersion: 86,
    hbmGBps: asGBps(600),
    nvlinkGen: 0,
    nvlinkLinks: 0,
    nvlinkGBpsPerLink: asGBps(0),
    pcieGen: 4,
    fp16Tflops: 125,
    bf16Tflops: 125,
    fp32Tflops: 31.2,
    memoryGB: 24,
    sms: 72,
  }),
  gpu({
    name: 'RTX3090',
    aliases: ['rtx-3090', 'geforce-rtx-3090', '3090'],
    smVersion: 86,
    hbmGBps: asGBps(936),
    nvlinkGen: 3,
    nvlinkLinks: 4,
    nvlinkGBpsPerLink: asGBps(12),
    pcieGen: 4,
    fp16Tflops: 71,
    bf16Tflops: 71,
    fp32Tflops: 35.6,
    memoryGB: 24,
    sms: 82,
  }),
  gpu({
    name: 'RTX4090',
    aliases: ['rtx-4090', 'geforce-rtx-4090', '4090'],
    smVersion: 89,
    hbmGBps: asGBps(1008),
    nvlinkGen: 0,
    nvlinkLinks: 0,
    nvlinkGBpsPerLink: asGBps(0),
    pcieGen: 4,
    fp16Tflops: 165,
    bf16Tflops: 165,
    fp32Tflops: 82.6,
    memoryGB: 24,
    sms: 128,
  }),
];

function normalise(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, '-');
}

const BY_NAME = new Map<string, GpuSpec>();
for (const spec of GPU_CATALOGUE) {
  for (const key of [spec.name, ...spec.aliases]) {
    BY_NAME.set(normalise(key), spec);
    BY_NAME.set(normalise(key).replace(/-/g, ''), spec);
  }
}

/** Case-insensitive lookup by catalogue name or alias ("h100", "H100-SXM", "rtx 4090"). */
export function findGpu(name: string): GpuSpec | undefined {
  const key = normalise(name);
  return BY_NAME.get(key) ?? BY_NAME.get(key.replace(/-/g, ''));
}

export const GPU_NAMES: readonly string[] = GPU_CATALOGUE.map((g) => g.name);
