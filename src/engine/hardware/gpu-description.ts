// One reader for the free-text GPU names that tools print ("NVIDIA H100 80GB HBM3", "A100-SXM4-80GB",
// "GeForce RTX 4090"), used by every importer and dataset reader, so a new GPU is taught to the project once.
import { findGpu } from './gpus';

/**
 * A product family as it appears in device strings, and the catalogue entry for its SXM (or only) form and its
 * PCIe form. Order matters: a longer name that contains a shorter one comes first (GB200 before B200, GH200 before
 * H200), because device strings are matched by the first family they contain.
 */
interface Family {
  readonly pattern: RegExp;
  readonly sxm: string;
  readonly pcie?: string;
}

/** A model number as a whole token: "A100X" is an A100, "A1000" and "RTX 40900" are not. */
const model = (stem: string, notAfter = '[0-9]'): RegExp => new RegExp(`(?<!${notAfter})(?:${stem})(?![0-9])`);

const FAMILIES: readonly Family[] = [
  { pattern: model('gb200'), sxm: 'GB200' },
  { pattern: model('b200', '[a-z0-9]'), sxm: 'B200' },
  // GH200 pairs Grace with a Hopper GPU carrying HBM3e; its NVLink and HBM are closest to the H200 entry.
  { pattern: model('gh200|h200'), sxm: 'H200' },
  // H800 and A800 are the export variants: the same chip with fewer NVLink lanes, modelled as their parent.
  { pattern: model('h100|h800'), sxm: 'H100-SXM', pcie: 'H100-PCIe' },
  { pattern: model('a100|a800'), sxm: 'A100-SXM', pcie: 'A100-PCIe' },
  { pattern: model('v100'), sxm: 'V100-SXM' },
  { pattern: model('l40s'), sxm: 'L40S' },
  { pattern: model('4090'), sxm: 'RTX4090' },
  { pattern: model('3090'), sxm: 'RTX3090' },
  { pattern: model('a10', '[a-z0-9]'), sxm: 'A10' },
];

/**
 * The catalogue name for a GPU as nvidia-smi, nccl-tests, PyTorch or a dataset describes it, or undefined when the
 * text names no GPU the catalogue has. A catalogue name or alias is taken as it is; otherwise the first product family
 * the text contains decides, and the word "PCIe" picks the PCIe card where the family has one.
 */
export function gpuFromDescription(description: string): string | undefined {
  const exact = findGpu(description);
  if (exact) return exact.name;
  const text = description.toLowerCase();
  const family = FAMILIES.find((f) => f.pattern.test(text));
  if (!family) return undefined;
  return /pcie/.test(text) && family.pcie ? family.pcie : family.sxm;
}
