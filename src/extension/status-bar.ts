// The status bar item showing the selected system ("8× H100 NVSwitch"); clicking it runs Select System.
import * as vscode from 'vscode';
import type { CoreServices } from './core';
import { selectedSystem } from './system';
import { statusBarText } from './glue/system-choice';

export function registerStatusBar(ctx: CoreServices): vscode.StatusBarItem {
  const item = vscode.window.createStatusBarItem('collectiveProfiler.system', vscode.StatusBarAlignment.Right, 100);
  item.name = vscode.l10n.t('Collective Profiler: System');
  item.command = 'collectiveProfiler.selectSystem';
  const update = async () => {
    const selected = await selectedSystem(ctx);
    item.text = statusBarText(selected.ok ? selected.label : '', selected.ok);
    item.tooltip = selected.ok
      ? new vscode.MarkdownString(
          vscode.l10n.t(
            '**Collective Profiler** predicts for **{0}** ({1} GPUs, {2}).\n\nClick to select another system.',
            selected.label,
            selected.system.ranks,
            selected.source,
          ),
        )
      : vscode.l10n.t('The selected system cannot be used: {0}. Click to select another.', selected.error);
    item.backgroundColor = selected.ok ? undefined : new vscode.ThemeColor('statusBarItem.warningBackground');
    item.show();
  };
  ctx.push(
    item,
    ctx.onDidChangeSystem(() => void update()),
  );
  void update();
  return item;
}
