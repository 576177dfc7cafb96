// Loads a training config from the workspace into a TrainingRun: the config layer reads the file and names the
// files it refers to (a model config.json, a system file); this module reads those, relative to the config,
// and assembles the run. When no file names a system, the selected system fills in.
import * as vscode from 'vscode';
import { readTrainingConfig } from '../config/training-config';
import { assembleTrainingRun } from '../config/training-run';
import { parseSystemFile } from '../config/system-file';
import type { RunPart } from '../config/run-part';
import type { TrainingRun } from '../engine/index';
import type { Ctx } from './context';
import { selectedSystem } from './system';

async function readText(uri: vscode.Uri): Promise<string> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  return open ? open.getText() : new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
}

export async function loadTrainingRun(ctx: Ctx, uri: vscode.Uri): Promise<TrainingRun> {
  const { part } = readTrainingConfig(await readText(uri), uri.fsPath);
  const parts: RunPart[] = [];
  const folder = vscode.Uri.joinPath(uri, '..');
  for (const ref of part.references ?? []) {
    const target = /^([a-zA-Z]:)?[\\/]/.test(ref.path) ? vscode.Uri.file(ref.path) : vscode.Uri.joinPath(folder, ref.path);
    const text = await readText(target);
    if (ref.kind === 'system') parts.push({ source: { format: 'system', file: target.fsPath }, system: parseSystemFile(text, target.fsPath) });
    else parts.push(readTrainingConfig(text, target.fsPath).part);
  }
  const namesSystem = [...parts, part].some((p) => p.system || p.systemPreset);
  if (!namesSystem) {
    const selected = await selectedSystem(ctx);
    if (selected.ok) parts.unshift({ source: { format: 'settings', file: 'collectiveProfiler.system' }, system: selected.spec });
  }
  return assembleTrainingRun([...parts, part]);
}
