// Run on This Machine: the native engine, which starts Python and torch.distributed processes. It is refused in
// untrusted workspaces (with the reason), takes its interpreter only from the user's settings or the environment,
// checks the environment first, and cancels by killing the whole process tree through the runner's AbortSignal.
import * as vscode from 'vscode';
import type { Ctx } from '../context';
import { nativeAvailability } from '../glue/trust';
import { withCancellableProgress } from '../progress';
import { checkEnvironment } from '../../native/python';
import { runNative } from '../../native/runner';
import { nativeMeasurements, nativeTrace } from '../../native/convert';
import { measuredSeries } from '../glue/charts-data';

/** Message sizes for a quick native run: 1 KiB … 64 MiB by 4×, enough to see latency and bandwidth regimes. */
export const NATIVE_SIZES = [1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

export async function runOnThisMachine(ctx: Ctx): Promise<void> {
  const availability = nativeAvailability(ctx.trusted);
  if (!availability.allowed) {
    ctx.log.warn(availability.reason);
    const choice = await vscode.window.showWarningMessage(availability.reason, vscode.l10n.t('Manage Workspace Trust'));
    if (choice) void vscode.commands.executeCommand('workbench.trust.manage');
    return;
  }
  const { native } = ctx.settings;
  const harness = vscode.Uri.joinPath(ctx.extensionUri, 'harness', 'collective_harness.py').fsPath;
  await withCancellableProgress(vscode.l10n.t('Collective Profiler: native run'), async (signal, report) => {
    report(vscode.l10n.t('checking Python and torch…'));
    const env = await checkEnvironment({ python: native.pythonPath || undefined, harness });
    ctx.log.info(
      `Native environment: ${env.python} (Python ${env.pythonVersion}), torch ${env.torch}, backend ${env.backend}, ${env.gpuCount} GPUs${env.ncclVersion ? `, NCCL ${env.ncclVersion}` : ''}`,
    );
    const nproc = native.processes > 0 ? native.processes : env.gpuCount > 0 ? env.gpuCount : 4;
    if (native.launcher === 'torchrun' && native.torchrunPath) {
      ctx.log.info(
        `torchrun is started as "${env.python} -m torch.distributed.run"; collectiveProfiler.native.torchrunPath is not used for local runs.`,
      );
    }
    report(vscode.l10n.t('{0} ranks on {1}…', nproc, env.backend));
    const run = await runNative({
      nproc,
      sizesBytes: NATIVE_SIZES,
      python: env.python,
      harness,
      launcher: native.launcher,
      timeoutMs: native.timeoutSeconds * 1000,
      signal,
      onProgress: (p) =>
        report(
          vscode.l10n.t('{0} ({1}/{2})', p.label ?? vscode.l10n.t('measuring'), p.done, p.total),
          p.total > 0 ? p.done / p.total : undefined,
        ),
      onSpawn: (pid) => ctx.log.debug(`native rank process ${pid} started`),
    });
    const title = vscode.l10n.t('native · {0} ranks · {1}', nproc, env.backend);
    await ctx.panels.showTrace(nativeTrace(run, title));
    ctx.panels.showCharts({
      title: vscode.l10n.t('{0}: measured', title),
      measured: nativeMeasurements(run).map((m) =>
        measuredSeries(`measured: ${m.collective} · ${String(m.meta.method ?? m.kind)}`, m.rows),
      ),
    });
    ctx.log.info(
      `Native run finished in ${(run.wallMs / 1000).toFixed(1)} s with ${run.results.length} results and ${run.spans.length} spans.`,
    );
  });
}
