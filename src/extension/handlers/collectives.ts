// Commands about single collectives on the selected system: profile the one at the cursor, sweep sizes, compare
// algorithms, show the topology. All run the simulated engine, so they work in untrusted workspaces too.
import * as vscode from 'vscode';
import { parseBytes, presetSystem, resolveSystem, simulateCollective, formatBytes, type CollectiveKind } from '../../engine/index';
import type { Ctx } from '../context';
import { requireSystem } from '../system';
import { pythonLensSites, type PythonLensSite } from '../glue/lens-sites';
import { compareAlgorithmsAt, nodeScaling, phaseLadder, phaseRow, sweepSeries } from '../glue/charts-data';
import { parseSystemChoice } from '../glue/system-choice';
import { algoProto } from '../glue/lens-label';
import { topologyData } from '../glue/topology-data';
import { drawnCollectiveTrace } from '../glue/simulated-trace';

const MB = 1024 * 1024;

/** The lens site on the cursor's line, or the nearest one above it. */
export function siteAt(sites: readonly PythonLensSite[], line: number): PythonLensSite | undefined {
  const collectives = sites.filter((s) => s.kind !== 'bucket');
  return collectives.filter((s) => s.line <= line).pop() ?? collectives[0];
}

/**
 * Profiles the collective at the cursor (or at `line` of `uri`, when a code lens passes them): simulates it with a
 * trace on the selected system, opens the timeline, and puts its phase breakdown in the charts.
 */
export async function profileAllReduceAtCursor(ctx: Ctx, uri?: unknown, line?: unknown): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const document = uri instanceof vscode.Uri ? await vscode.workspace.openTextDocument(uri) : editor?.document;
  const cursorLine = typeof line === 'number' ? line : editor?.selection.active.line ?? 0;
  const sites = document ? pythonLensSites(document.getText()) : [];
  const site = siteAt(sites, cursorLine);
  const bucketFromCode = site?.bucketCapMb ?? sites.find((s) => s.kind === 'bucket' && s.bucketCapMb !== undefined)?.bucketCapMb;
  const bytes = bucketFromCode !== undefined ? Math.round(bucketFromCode * MB) : ctx.settings.defaultBucketBytes;
  const kinds: readonly CollectiveKind[] = site?.collectives ?? ['allreduce'];
  const selected = await requireSystem(ctx);
  const where = document && site ? { file: document.uri.fsPath, line: site.line + 1 } : undefined;
  const results = kinds.map((kind) => simulateCollective(selected.system, { kind, bytes, trace: true }));
  const first = results[0];
  // Every rank drawn, from the launch to the predicted time, so the timeline agrees with the lens.
  const trace = drawnCollectiveTrace(selected.system, first);
  const title = `${site?.callee ?? 'all_reduce'} · ${formatBytes(bytes)} on ${selected.label}`;
  const withSource = where ? { ...trace, metadata: { ...trace.metadata, title }, spans: trace.spans.map((s) => (s.source ? s : { ...s, source: where })) } : { ...trace, metadata: { ...trace.metadata, title } };
  await ctx.panels.showTrace(withSource);
  ctx.panels.showCharts({
    title, system: selected.label,
    phases: [...results.map((r) => phaseRow(`${r.kind} ${formatBytes(bytes)}`, r)), ...phaseLadder(selected.system, bytes)],
  }, { background: true });
  ctx.log.info(`${title}: ${first.timeUs.toFixed(1)} µs, ${first.busbwGBps.toFixed(1)} GB/s busbw, ${algoProto(first.algorithm, first.protocol)}, ${first.spanCount} spans`);
}

export async function sweepMessageSizes(ctx: Ctx): Promise<void> {
  const selected = await requireSystem(ctx);
  ctx.panels.showCharts({ title: `AllReduce sweep on ${selected.label}`, system: selected.label, sweeps: sweepSeries(selected.system), nodeScaling: scalingRows(ctx, ctx.settings.defaultBucketBytes) });
}

/** Node scaling for presets (they scale with --nodes); a system file describes fixed hardware and gets none. */
function scalingRows(ctx: Ctx, bytes: number) {
  const choice = parseSystemChoice(ctx.settings.system);
  if (choice.kind !== 'preset') return undefined;
  return nodeScaling((nodes) => {
    const spec = presetSystem(choice.name, { nodes });
    return spec ? resolveSystem(spec) : undefined;
  }, bytes);
}

export async function compareAlgorithms(ctx: Ctx, size?: unknown): Promise<void> {
  const selected = await requireSystem(ctx);
  let bytes = typeof size === 'number' ? size : undefined;
  if (bytes === undefined) {
    const answer = await vscode.window.showInputBox({
      title: 'Compare Algorithms', prompt: `Message size for the comparison on ${selected.label} (e.g. 64MiB, 1G, 4096)`,
      value: `${ctx.settings.defaultBucketBytes / MB}MiB`,
      validateInput: (text) => (parseBytes(text) && parseBytes(text)! > 0 ? undefined : 'A size such as 8, 4KiB, 25MiB or 1G'),
    });
    if (answer === undefined) return;
    bytes = parseBytes(answer)!;
  }
  const rows = compareAlgorithmsAt(selected.system, bytes);
  ctx.panels.showCharts({ title: `Algorithms for ${formatBytes(bytes)} on ${selected.label}`, system: selected.label, comparisonBytes: bytes, algorithms: rows, sweeps: sweepSeries(selected.system) });
}

export async function showTopology(ctx: Ctx): Promise<void> {
  const selected = await requireSystem(ctx);
  // The trace colours the links by utilisation (topologyData keeps it only when it is of this system and of
  // moderate size); the channels' rings or trees are laid out for the selected bucket size.
  const trace = ctx.panels.activeTraceView?.trace;
  ctx.panels.showTopology(topologyData({ system: selected.system, label: selected.label, bytes: ctx.settings.defaultBucketBytes, trace }));
}
