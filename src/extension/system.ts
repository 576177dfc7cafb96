// Resolves the selected system (a preset with a node count, or a system file) into the engine's System, once
// per settings change. A broken system file is reported with its position and the lenses say so, instead of
// predicting for a machine the user did not choose.
import * as vscode from 'vscode';
import { PRESETS, presetSystem, resolveSystem, withNcclVersion } from '../engine/index';
import { parseSystemChoice } from './glue/system-choice';
import type { ExtensionCore, SelectedSystem } from './core';
import { readUserFile } from './user-files';

export type { SelectedSystem } from './core';

/** What resolving the selected system needs of the extension: settings, the workspace, the log and the cache. */
export type SystemSource = Pick<
  ExtensionCore,
  'settings' | 'workspaceRoot' | 'log' | 'systemGeneration' | 'resolvedSystem' | 'rememberSystem'
>;

export function presetNames(): string[] {
  return Object.keys(PRESETS).sort();
}

/** Resolves a preset name with a node count; undefined when the name is not a preset. */
export function resolvePreset(name: string, nodes: number, ncclVersion?: string): SelectedSystem | undefined {
  const preset = presetSystem(name, { nodes });
  if (!preset) return undefined;
  const spec = withNcclVersion(preset, ncclVersion);
  const system = resolveSystem(spec);
  return { ok: true, spec, system, label: system.label, source: `preset ${name}` };
}

export async function selectedSystem(ctx: SystemSource): Promise<SelectedSystem> {
  const cached = ctx.resolvedSystem;
  if (cached) return cached;
  const generation = ctx.systemGeneration;
  const { system: value, nodes } = ctx.settings;
  const choice = parseSystemChoice(value);
  let result: SelectedSystem;
  try {
    if (choice.kind === 'preset') {
      result = resolvePreset(choice.name, nodes, ctx.settings.ncclVersion) ?? {
        ok: false,
        error: vscode.l10n.t('"{0}" is not a preset (known: {1})', choice.name, presetNames().join(', ')),
        source: value,
      };
    } else {
      const uri =
        ctx.workspaceRoot && !/^([a-zA-Z]:)?[\\/]/.test(choice.path)
          ? vscode.Uri.joinPath(ctx.workspaceRoot, choice.path)
          : vscode.Uri.file(choice.path);
      const text = new TextDecoder().decode(await readUserFile(uri, 'config'));
      // The YAML and schema libraries load only when a system file is used, not at activation.
      const { loadSystemFile } = await import('./lazy');
      const loaded = loadSystemFile(text, uri.fsPath);
      // The collectiveProfiler.ncclVersion setting fills in the release where the system file names none.
      const spec = withNcclVersion(loaded.spec, ctx.settings.ncclVersion);
      const system = spec === loaded.spec ? loaded.system : resolveSystem(spec);
      result = { ok: true, spec, system, label: system.label, source: uri.fsPath };
    }
  } catch (error) {
    result = { ok: false, error: error instanceof Error ? error.message : String(error), source: value };
  }
  if (!result.ok) ctx.log.error(`System ${value}: ${result.error}`);
  ctx.rememberSystem(generation, result);
  return result;
}

/** The selected system, or an error thrown with the reason (commands show it; lenses print it). */
export async function requireSystem(ctx: SystemSource): Promise<Extract<SelectedSystem, { ok: true }>> {
  const s = await selectedSystem(ctx);
  if (!s.ok)
    throw new Error(
      vscode.l10n.t(
        'The selected system ({0}) cannot be used: {1}. Run "Collective Profiler: Select System".',
        s.source,
        s.error,
      ),
    );
  return s;
}
