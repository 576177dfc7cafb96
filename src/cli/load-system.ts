// Turns `--system <preset|file> [--nodes N] [--gpus-per-node G]` into a resolved System, or a one-line
// UsageError that names the problem (with file:line:col for files).
import { existsSync } from 'node:fs';
import { EngineError, PRESETS, presetSystem, resolveSystem, type System, type SystemSpec } from '../engine/index';
import { closestMatch } from '../config/did-you-mean';
import { limitProblem } from '../config/limits';
import { UsageError } from './command';

export interface SystemScaling {
  readonly nodes?: number;
  readonly gpusPerNode?: number;
  /** --nccl: the NCCL release whose choices to follow, over what the system file says. */
  readonly ncclVersion?: string;
}

export function presetNames(): string[] {
  return Object.keys(PRESETS);
}

function looksLikePath(arg: string): boolean {
  return /[\\/]/.test(arg) || /\.(ya?ml|json)$/i.test(arg);
}

/**
 * Resolves a preset name (case-insensitive) or a system file path, then applies --nodes / --gpus-per-node. Async
 * because a file's reader (and the YAML parser behind it) is loaded only when a file is named.
 */
export async function loadSystem(arg: string, scaling: SystemScaling = {}): Promise<System> {
  const presetName = presetNames().find((name) => name.toLowerCase() === arg.toLowerCase());
  let spec: SystemSpec;
  if (presetName !== undefined && !(looksLikePath(arg) && existsSync(arg))) {
    const preset = presetSystem(presetName, scaling);
    if (!preset) throw new UsageError(`unknown preset '${arg}'`);
    spec = preset;
  } else if (looksLikePath(arg) || existsSync(arg)) {
    const { readSystemFile } = await import('./system-file-reader');
    const fromFile = readSystemFile(arg);
    spec = {
      ...fromFile,
      ...(scaling.nodes !== undefined ? { nodes: scaling.nodes } : {}),
      ...(scaling.gpusPerNode !== undefined ? { gpusPerNode: scaling.gpusPerNode } : {}),
    };
    if (spec.nodes > 1 && !spec.nic)
      throw new UsageError(
        `${arg}: --nodes ${spec.nodes} needs a 'nic' section in the system file to connect the nodes`,
      );
  } else {
    const suggestion = closestMatch(arg, presetNames());
    const hint = suggestion ? `did you mean '${suggestion}'? ` : '';
    throw new UsageError(`unknown system '${arg}': ${hint}not a preset (${presetNames().join(', ')}) and no such file`);
  }
  if (scaling.ncclVersion !== undefined) spec = { ...spec, ncclVersion: scaling.ncclVersion };
  // Flags scale a file's or a preset's system past what its own checks saw, so the product is checked here.
  const overLimit = limitProblem(
    'ranks',
    `system '${arg}': ${spec.nodes} nodes × ${spec.gpusPerNode} GPUs per node`,
    spec.nodes * spec.gpusPerNode,
  );
  if (overLimit) throw new UsageError(overLimit);
  try {
    return resolveSystem(spec);
  } catch (error) {
    if (error instanceof EngineError) throw new UsageError(`system '${arg}': ${error.message}`);
    throw error;
  }
}
