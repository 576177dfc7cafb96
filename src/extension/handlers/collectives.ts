// Commands about single collectives on the selected system: profile the one at the cursor, sweep sizes, compare
// algorithms, show the topology. All run the simulated engine, so they work in untrusted workspaces too.
import * as vscode from 'vscode';
import {
  parseBytes,
  presetSystem,
  resolveSystem,
  simulateCollective,
  formatBytes,
  type CollectiveKind,
  asBytes,
} from '../../engine/index';
import type { Ctx } from '../context';
import { requireSystem } from '../system';
import { pythonLensSites, type PythonLensSite } from '../glue/lens-sites';
import { compareAlgorithmsAt, nodeScaling, phaseLadder, phaseRow, sweepSeries } from '../glue/charts-data';
import { parseSystemChoice } from '../glue/system-choice';
import { algoProto } from '../glue/lens-label';
import { topologyData } from '../glue/topology-data';
import { drawnCollectiveTrace } from '../glue/simulated-trace';
import { callSize } from '../glue/call-size';

const MB = 1024 * 1024;

/**
 * The call the cursor is on: a site on the cursor's line (the rightmost one starting at or before the cursor's
 * column, when a line holds two), else the nearest one above it, else the first in the file.
 */
export function siteAt(
  sites: readonly PythonLensSite[],
  line: number,
  column = Number.MAX_SAFE_INTEGER,
): PythonLensSite | undefined {
  const collectives = sites.filter((s) => s.kind !== 'bucket');
  const onLine = collectives.filter((s) => s.line === line);
  if (onLine.length > 0) return onLine.filter((s) => s.column <= column).pop() ?? onLine[0];
  return collectives.filter((s) => s.line <= line).pop() ?? collectives[0];
}

/**
 * The Python editor a command acts on: the active one, or (when a panel has the focus, as after clicking into the
 * timeline) the visible Python editor, so the command profiles the call the user was on rather than a default.
 */
function pythonEditor(): vscode.TextEditor | undefined {
  const active = vscode.window.activeTextEditor;
  if (active?.document.languageId === 'python') return active;
  return (vscode.window.visibleTextEditors ?? []).find((e) => e.document.languageId === 'python') ?? active;
}

/**
 * Profiles the collective at the cursor (or at `line` of `uri`, when a code lens passes them): simulates it with a
 * trace on the selected system, opens the timeline, and puts its phase breakdown in the charts. The size is the
 * one the lens showed for this call (glue/call-size.ts).
 */
export async function profileAllReduceAtCursor(ctx: Ctx, uri?: unknown, line?: unknown): Promise<void> {
  const editor = pythonEditor();
  const document = uri instanceof vscode.Uri ? await vscode.workspace.openTextDocument(uri) : editor?.document;
  const fromLens = typeof line === 'number';
  const cursorLine = fromLens ? line : (editor?.selection.active.line ?? 0);
  const cursorColumn = fromLens ? undefined : editor?.selection.active.character;
  const text = document?.getText() ?? '';
  const sites = document ? pythonLensSites(text) : [];
  const site = siteAt(sites, cursorLine, cursorColumn);
  const size = callSize(text, sites, site, ctx.settings.defaultBucketBytes);
  const bytes = asBytes(size.bytes);
  const kinds: readonly CollectiveKind[] = site?.collectives ?? ['allreduce'];
  const selected = await requireSystem(ctx);
  const where = document && site ? { file: document.uri.fsPath, line: site.line + 1 } : undefined;
  const results = kinds.map((kind, i) => simulateCollective(selected.system, { kind, bytes, trace: i === 0 }));
  const first = results[0];
  // Every rank drawn, from the launch to the predicted time, so the timeline agrees with the lens.
  const trace = drawnCollectiveTrace(selected.system, first, ctx.settings.traceDetail);
  const callee = site?.callee ?? 'all_reduce';
  const title =
    size.source === 'default'
      ? vscode.l10n.t('{0} · {1} (assumed) on {2}', callee, formatBytes(bytes), selected.label)
      : vscode.l10n.t('{0} · {1} on {2}', callee, formatBytes(bytes), selected.label);
  const withSource = where
    ? {
        ...trace,
        metadata: { ...trace.metadata, title },
        spans: trace.spans.map((s) => (s.source ? s : { ...s, source: where })),
      }
    : { ...trace, metadata: { ...trace.metadata, title } };
  await ctx.panels.showTrace(withSource);
  ctx.panels.showCharts(
    {
      title,
      system: selected.label,
      phases: [
        ...results.map((r) => phaseRow(`${r.kind} ${formatBytes(bytes)}`, r)),
        ...phaseLadder(selected.system, bytes),
      ],
    },
    { background: true },
  );
  ctx.log.info(
    `${title}: ${first.timeUs.toFixed(1)} µs, ${first.busbwGBps.toFixed(1)} GB/s busbw, ${algoProto(first.algorithm, first.protocol)}, ${first.spanCount} spans; size: ${size.why}`,
  );
}

export async function sweepMessageSizes(ctx: Ctx): Promise<void> {
  const selected = await requireSystem(ctx);
  ctx.panels.showCharts({
    title: vscode.l10n.t('AllReduce sweep on {0}', selected.label),
    system: selected.label,
    sweeps: sweepSeries(selected.system),
    nodeScaling: scalingRows(ctx, ctx.settings.defaultBucketBytes),
  });
}

/** Node scaling for presets (they scale with --nodes); a system file describes fixed hardware and gets none. */
function scalingRows(ctx: Ctx, bytes: number) {
  const choice = parseSystemChoice(ctx.settings.system);
  if (choice.kind !== 'preset') return undefined;
  return nodeScaling((nodes) => {
    const spec = presetSystem(choice.name, { nodes });
    return spec ? resolveSystem(spec) : undefined;
  }, asBytes(bytes));
}

export async function compareAlgorithms(ctx: Ctx, size?: unknown): Promise<void> {
  const selected = await requireSystem(ctx);
  let bytes = typeof size === 'number' ? size : undefined;
  if (bytes === undefined) {
    const answer = await vscode.window.showInputBox({
      title: vscode.l10n.t('Compare Algorithms'),
      prompt: vscode.l10n.t('Message size for the comparison on {0} (e.g. 64MiB, 1G, 4096)', selected.label),
      value: `${ctx.settings.defaultBucketBytes / MB}MiB`,
      validateInput: (text) =>
        parseBytes(text) && parseBytes(text)! > 0 ? undefined : vscode.l10n.t('A size such as 8, 4KiB, 25MiB or 1G'),
    });
    if (answer === undefined) return;
    bytes = parseBytes(answer)!;
  }
  const rows = compareAlgorithmsAt(selected.system, asBytes(bytes));
  ctx.panels.showCharts({
    title: vscode.l10n.t('Algorithms for {0} on {1}', formatBytes(asBytes(bytes)), selected.label),
    system: selected.label,
    comparisonBytes: asBytes(bytes),
    algorithms: rows,
    sweeps: sweepSeries(selected.system),
  });
}

export async function showTopology(ctx: Ctx): Promise<void> {
  const selected = await requireSystem(ctx);
  // The trace colours the links by utilisation (topologyData keeps it only when it is of this system and of
  // moderate size); the channels' rings or trees are laid out for the selected bucket size.
  const trace = ctx.panels.activeTraceView?.trace;
  ctx.panels.showTopology(
    topologyData({
      system: selected.system,
      label: selected.label,
      bytes: asBytes(ctx.settings.defaultBucketBytes),
      trace,
    }),
  );
}
