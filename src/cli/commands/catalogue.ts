// What the CLI's entry point knows of its commands before it runs one: each name, its one-line summary (for
// `--help`) and how to load it. A command's module, and everything it imports (YAML, ajv, the native runner,
// tree-sitter, the engine), is loaded only when that command runs: `--version` and `simulate` then compile none of
// the others' code. The built CLI is split at these dynamic imports (scripts/cli-bundle.mjs). The names and
// summaries repeat what each command's definition says; test/unit/cli/command-catalogue.test.ts keeps the two equal,
// in the same order as the table of commands/index.ts.
import type { CliCommand } from '../command';

export interface CatalogueEntry {
  readonly name: string;
  readonly summary: string;
  readonly load: () => Promise<CliCommand>;
}

export const COMMAND_CATALOGUE: readonly CatalogueEntry[] = [
  {
    name: 'verify',
    summary: 'Reduce synthetic gradients in a dtype and algorithm order; report max error, #wrong and overflow',
    load: async () => (await import('./verify')).verifyCommand,
  },
  {
    name: 'simulate',
    summary: 'Simulate one AllReduce (or reduce-scatter / all-gather) on a preset or a system file',
    load: async () => (await import('./simulate')).simulateCommand,
  },
  {
    name: 'sweep',
    summary: "Sweep AllReduce sizes on a preset or a system file and print nccl-tests' all_reduce_perf table",
    load: async () => (await import('./sweep')).sweepCommand,
  },
  {
    name: 'run',
    summary: 'Run real all_reduce collectives through torch.distributed (NCCL on GPUs, gloo on CPUs)',
    load: async () => (await import('./run')).runCommand,
  },
  {
    name: 'import',
    summary: 'Import nccl-tests output, NCCL_DEBUG logs, Kineto traces, DeepSpeed comms logs or calibration JSON',
    load: async () => (await import('./import')).importCommand,
  },
  {
    name: 'compare',
    summary:
      "Compare a measurement with the model of its system and flag sizes below what the model's uncertainty allows",
    load: async () => (await import('./compare')).compareCommand,
  },
  {
    name: 'calibrate',
    summary: 'Fit a system’s bandwidths and latencies to a measurement and write the fitted system file',
    load: async () => (await import('./calibrate')).calibrateCommand,
  },
  {
    name: 'validate',
    summary: 'Compare simulated sweeps with published nccl-tests runs and print the busbw error per dataset',
    load: async () => (await import('./validate')).validateCommand,
  },
  {
    name: 'check',
    summary: 'Find sum-vs-average gradient scaling bugs in Python training code and DeepSpeed configs (CP001-CP008)',
    load: async () => (await import('./check')).checkCommand,
  },
  {
    name: 'profile',
    summary: 'Profile a training config: step time, exposed communication, overlap, what-ifs and sweeps',
    load: async () => (await import('./profile')).profileCommand,
  },
];
