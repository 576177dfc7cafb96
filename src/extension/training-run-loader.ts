// Loads a training config from the workspace into a TrainingRun: the config layer reads the file and names the
// files it refers to (a model config.json, a system file); this module reads those, relative to the config,
// and assembles the run. When no file names a system, the selected system fills in.
import * as vscode from 'vscode';
import { readTrainingConfig } from '../config/training-config';
import { assembleTrainingRun } from '../config/training-run';
import { parseSystemFile } from '../config/system-file';
import { parseHfModelConfig } from '../config/hf-model';
import { ConfigError, positionOf } from '../config/positioned';
import type { RunPart } from '../config/run-part';
import type { TrainingRun } from '../engine/index';
import type { CoreServices } from './core';
import { selectedSystem } from './system';
import { readUserFile } from './user-files';

async function readText(uri: vscode.Uri): Promise<string> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  return open ? open.getText() : new TextDecoder().decode(await readUserFile(uri, 'config'));
}

/** `last`, when given, is merged after every file (the charts panel's changed assumptions). */
export async function loadTrainingRun(ctx: CoreServices, uri: vscode.Uri, last?: RunPart): Promise<TrainingRun> {
  const { part } = readTrainingConfig(await readText(uri), uri.fsPath);
  const parts: RunPart[] = [];
  const folder = vscode.Uri.joinPath(uri, '..');
  for (const ref of part.references ?? []) {
    const target = /^([a-zA-Z]:)?[\\/]/.test(ref.path)
      ? vscode.Uri.file(ref.path)
      : vscode.Uri.joinPath(folder, ref.path);
    let text: string;
    try {
      text = await readText(target);
    } catch (error) {
      // A missing model or system file is reported at the line that names it.
      const { line, column } = positionOf(ref.doc, ref.at);
      throw new ConfigError(ref.doc.fileName, [
        {
          message: vscode.l10n.t(
            ref.kind === 'model' ? "cannot read model config '{0}': {1}" : "cannot read system file '{0}': {1}",
            ref.path,
            error instanceof Error ? error.message : String(error),
          ),
          line,
          column,
          path: ref.at,
        },
      ]);
    }
    if (ref.kind === 'system')
      parts.push({ source: { format: 'system', file: target.fsPath }, system: parseSystemFile(text, target.fsPath) });
    else
      parts.push({
        source: { format: 'hf-model', file: target.fsPath },
        model: parseHfModelConfig(text, target.fsPath),
      });
  }
  const namesSystem = [...parts, part].some((p) => p.system || p.systemPreset);
  if (!namesSystem) {
    const selected = await selectedSystem(ctx);
    if (selected.ok)
      parts.unshift({ source: { format: 'settings', file: 'collectiveProfiler.system' }, system: selected.spec });
  }
  return assembleTrainingRun(last ? [...parts, part, last] : [...parts, part]);
}
