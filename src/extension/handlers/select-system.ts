// Select System: a quick pick of the presets (with their resolved labels), a node count, or a system file.
// The choice goes to the workspace settings when a folder is open, so each project keeps its machine.
import * as vscode from 'vscode';
import type { Ctx } from '../context';
import { presetNames, resolvePreset } from '../system';
import { systemPickItems } from '../glue/system-choice';

const FILE_ITEM = '$(file) Use a system file…';

export async function selectSystem(ctx: Ctx, preset?: unknown, nodesArg?: unknown): Promise<void> {
  const target = vscode.workspace.workspaceFolders?.length
    ? vscode.ConfigurationTarget.Workspace
    : vscode.ConfigurationTarget.Global;
  const config = vscode.workspace.getConfiguration('collectiveProfiler');
  // Programmatic use (tests, walkthrough links): select directly.
  if (typeof preset === 'string') {
    await config.update('system', preset, target);
    if (typeof nodesArg === 'number') await config.update('nodes', nodesArg, target);
    ctx.systemDidChange();
    return;
  }
  const presets = presetNames().map((name) => {
    const resolved = resolvePreset(name, 1);
    return { name, label: resolved?.ok ? resolved.label : '' };
  });
  const nodesItem = `$(list-ordered) Nodes: ${ctx.settings.nodes}…`;
  const items: (vscode.QuickPickItem & { value?: string })[] = [
    ...systemPickItems(presets, ctx.settings.system).map((i) => ({
      label: i.label,
      description: i.description,
      value: i.value,
      picked: i.picked,
      detail: i.picked ? 'current' : undefined,
    })),
    { label: '', kind: vscode.QuickPickItemKind.Separator },
    { label: nodesItem, description: 'how many nodes of the selected system' },
    { label: FILE_ITEM, description: '*.system.yaml or *.system.json' },
  ];
  const pick = await vscode.window.showQuickPick(items, {
    title: 'Collective Profiler: Select System',
    placeHolder: `Current: ${ctx.settings.system}${ctx.settings.nodes > 1 ? ` × ${ctx.settings.nodes} nodes` : ''}`,
    matchOnDescription: true,
  });
  if (!pick) return;
  if (pick.label === nodesItem) {
    const answer = await vscode.window.showInputBox({
      title: `Nodes of ${ctx.settings.system}`,
      value: String(ctx.settings.nodes),
      prompt: 'How many nodes (1 for a single machine)',
      validateInput: (t) =>
        /^\d+$/.test(t.trim()) && Number(t) >= 1 && Number(t) <= 65536 ? undefined : 'An integer from 1 to 65536',
    });
    if (answer === undefined) return;
    await config.update('nodes', Number(answer.trim()), target);
    ctx.systemDidChange();
    return;
  }
  let value = pick.value;
  if (pick.label === FILE_ITEM) {
    const files = await vscode.window.showOpenDialog({
      canSelectMany: false,
      filters: { 'System files': ['yaml', 'yml', 'json'] },
      openLabel: 'Use System File',
    });
    if (!files?.[0]) return;
    const root = ctx.workspaceRoot;
    value =
      root && files[0].fsPath.startsWith(root.fsPath)
        ? vscode.workspace.asRelativePath(files[0], false)
        : files[0].fsPath;
  }
  if (!value) return;
  await config.update('system', value, target);
  ctx.systemDidChange();
  ctx.log.info(`Selected system: ${value}`);
}
