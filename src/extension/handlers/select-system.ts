// Select System: a quick pick of the presets (with their resolved labels), a node count, or a system file.
// The choice goes to the workspace settings when a folder is open, so each project keeps its machine.
import * as vscode from 'vscode';
import type { Ctx } from '../context';
import { presetNames, resolvePreset } from '../system';
import { systemPickItems } from '../glue/system-choice';

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
  const nodesItem = vscode.l10n.t('$(list-ordered) Nodes: {0}…', ctx.settings.nodes);
  const fileItem = vscode.l10n.t('$(file) Use a system file…');
  const items: (vscode.QuickPickItem & { value?: string })[] = [
    ...systemPickItems(presets, ctx.settings.system).map((i) => ({
      label: i.label,
      description: i.description,
      value: i.value,
      picked: i.picked,
      detail: i.picked ? vscode.l10n.t('current') : undefined,
    })),
    { label: '', kind: vscode.QuickPickItemKind.Separator },
    { label: nodesItem, description: vscode.l10n.t('how many nodes of the selected system') },
    { label: fileItem, description: vscode.l10n.t('*.system.yaml or *.system.json') },
  ];
  const pick = await vscode.window.showQuickPick(items, {
    title: vscode.l10n.t('Collective Profiler: Select System'),
    placeHolder:
      ctx.settings.nodes > 1
        ? vscode.l10n.t('Current: {0} × {1} nodes', ctx.settings.system, ctx.settings.nodes)
        : vscode.l10n.t('Current: {0}', ctx.settings.system),
    matchOnDescription: true,
  });
  if (!pick) return;
  if (pick.label === nodesItem) {
    const answer = await vscode.window.showInputBox({
      title: vscode.l10n.t('Nodes of {0}', ctx.settings.system),
      value: String(ctx.settings.nodes),
      prompt: vscode.l10n.t('How many nodes (1 for a single machine)'),
      validateInput: (t) =>
        /^\d+$/.test(t.trim()) && Number(t) >= 1 && Number(t) <= 65536
          ? undefined
          : vscode.l10n.t('An integer from 1 to 65536'),
    });
    if (answer === undefined) return;
    await config.update('nodes', Number(answer.trim()), target);
    ctx.systemDidChange();
    return;
  }
  let value = pick.value;
  if (pick.label === fileItem) {
    const files = await vscode.window.showOpenDialog({
      canSelectMany: false,
      filters: { [vscode.l10n.t('System files')]: ['yaml', 'yml', 'json'] },
      openLabel: vscode.l10n.t('Use System File'),
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
