// What the timeline draws over its rasterised spans: span names, flows and counters (through view.drawExtras), the
// selected range and span, the label column (a node header with its twisty, ▸ folded, ▾ open; each lane's name
// once, on its first track; a pin mark on pinned lanes; the counters' names; rules between nodes and under the
// pinned band) and the time axis.
import { PHASES, asMicros, formatMicros } from '../../src/engine/index';
import { cssRgba } from '../shared/theme';
import { lineAt } from './layout';
import type { TimeScale } from './time-scale';
import { isNestedTrack } from './tracks';
import type { TimelineModel } from './model';
import type { Layout } from './layout';
import type { ViewWindow } from './time-scale';

export interface Palette {
  background: [number, number, number, number];
  stripe: number;
  backgroundPacked: number;
  foreground: string;
  muted: string;
  slots: Uint32Array;
  slotCss: string[];
  selection: string;
  border: string;
}

/**
 * What the overlays read from the timeline view. It is declared here, not imported from view.ts, because view.ts
 * calls drawOverlays: the import runs one way, and the architecture test forbids cycles even through types.
 */
export interface OverlayTarget {
  readonly ctx: CanvasRenderingContext2D;
  readonly canvas: HTMLCanvasElement;
  readonly model: TimelineModel | undefined;
  readonly view: ViewWindow;
  readonly selected: number;
  readonly range: ViewWindow | undefined;
  readonly mask: Uint8Array | null;
  readonly layout: Layout;
  readonly palette: Palette;
  readonly fontFamily: string;
  readonly dpr: number;
  readonly labelWidthPx: number;
  readonly axisHeightPx: number;
  readonly rowHeightPx: number;
  readonly pinnedHeightPx: number;
  lineTopPx(index: number): number;
  rowTopPx(row: number): number | undefined;
  scale(): TimeScale;
  drawExtras: (visible: readonly number[], scale: TimeScale) => void;
}

export const TWISTY_OPEN = '▾';
export const TWISTY_FOLDED = '▸';

export function drawOverlays(view: OverlayTarget, visible: readonly number[], visited: number): void {
  const { ctx, canvas, palette, model } = view;
  const scale = view.scale();
  const labelWidth = view.labelWidthPx;
  const axisHeight = view.axisHeightPx;
  const rowHeight = view.rowHeightPx;
  ctx.font = `${Math.round(11 * view.dpr)}px ${view.fontFamily}`;
  ctx.textBaseline = 'middle';
  ctx.save();
  ctx.beginPath();
  ctx.rect(labelWidth, axisHeight, canvas.width - labelWidth, canvas.height - axisHeight);
  ctx.clip();
  if (model && visited < 4000 && !view.mask) drawSpanNames(view, visible, scale);
  view.drawExtras(visible, scale);
  if (view.range) {
    const x0 = scale.timeToPx(view.range.startUs);
    const x1 = scale.timeToPx(view.range.endUs);
    ctx.fillStyle = palette.selection;
    ctx.fillRect(x0, axisHeight, Math.max(1, x1 - x0), canvas.height - axisHeight);
  }
  const selectedTop = model && view.selected >= 0 ? view.rowTopPx(model.rowOf(view.selected)) : undefined;
  if (model && selectedTop !== undefined) {
    const x0 = scale.timeToPx(model.start[view.selected]);
    const x1 = scale.timeToPx(model.end[view.selected]);
    ctx.strokeStyle = palette.border;
    ctx.lineWidth = 2 * view.dpr;
    ctx.strokeRect(x0 - view.dpr, selectedTop, Math.max(2 * view.dpr, x1 - x0 + 2 * view.dpr), rowHeight);
  }
  ctx.restore();
  if (model) drawLineLabels(view, visible);
  drawAxis(view, scale);
}

function drawLineLabels(view: OverlayTarget, visible: readonly number[]): void {
  const { ctx, canvas, palette, model, layout, dpr } = view;
  if (!model) return;
  const labelWidth = view.labelWidthPx;
  const rowHeight = view.rowHeightPx;
  const pinnedLines = layout.pinned.length;
  const pinnedBottom = view.axisHeightPx + view.pinnedHeightPx;
  ctx.fillStyle = cssRgba(palette.background);
  ctx.fillRect(0, 0, labelWidth, canvas.height);
  const rule = Math.max(1, Math.round(dpr));
  const indent = 6 * dpr;
  // Tracks under a node header are indented below it.
  const grouped = layout.scrolling.some((l) => l.kind === 'group' && l.rows.length > 0);
  for (const index of visible) {
    const line = lineAt(layout, index);
    if (!line) continue;
    const y = view.lineTopPx(index);
    // A scrolling line half under the pinned band keeps its label hidden with it.
    if (index >= pinnedLines && y + rowHeight / 2 < pinnedBottom) continue;
    const middle = y + rowHeight / 2;
    if (line.kind === 'group') {
      ctx.fillStyle = palette.muted;
      ctx.fillRect(0, y, canvas.width, rule);
      ctx.fillStyle = palette.foreground;
      ctx.fillText(
        `${line.folded ? TWISTY_FOLDED : TWISTY_OPEN} ${line.label}`,
        indent / 2,
        middle,
        labelWidth - indent,
      );
    } else if (line.kind === 'counter') {
      ctx.fillStyle = palette.muted;
      ctx.fillText(line.label, 2 * indent, middle, labelWidth - 3 * indent);
    } else {
      const lane = model.rows[line.row];
      // A nested track belongs to the lane above it: the label is written once, on the lane's first track.
      if (isNestedTrack(lane) && sameLaneAbove(view, index)) continue;
      const left = grouped && !line.pinned ? 2 * indent : indent;
      if (line.pinned) {
        // The pin mark: a small filled square in the focus colour, so a pinned lane is told apart at a glance.
        ctx.fillStyle = palette.border;
        ctx.fillRect(indent / 2, middle - 2 * dpr, 4 * dpr, 4 * dpr);
      }
      ctx.fillStyle = lane.kind === 'rank' ? palette.foreground : palette.muted;
      ctx.fillText(lane.label, left + (line.pinned ? 2 * dpr : 0), middle, labelWidth - left - 4 * dpr);
    }
  }
  if (pinnedLines > 0) {
    ctx.fillStyle = palette.border;
    ctx.fillRect(0, pinnedBottom - rule, canvas.width, rule);
  }
}

/** True when the line above `index` shows another track of the same lane (so this one's label is not repeated). */
function sameLaneAbove(view: OverlayTarget, index: number): boolean {
  const above = lineAt(view.layout, index - 1);
  const here = lineAt(view.layout, index);
  if (above?.kind !== 'track' || here?.kind !== 'track' || !view.model) return false;
  const a = view.model.rows[above.row] as { laneId?: number; id: number };
  const b = view.model.rows[here.row] as { laneId?: number; id: number };
  return (a.laneId ?? a.id) === (b.laneId ?? b.id);
}

function drawSpanNames(view: OverlayTarget, visible: readonly number[], scale: TimeScale): void {
  const { ctx, model } = view;
  if (!model) return;
  const minWidth = 48 * view.dpr;
  const pinned = view.layout.pinned.length;
  ctx.fillStyle = cssRgba(view.palette.background);
  for (const index of visible) {
    const line = lineAt(view.layout, index);
    if (line?.kind !== 'track') continue;
    const row = line.row;
    const y = view.lineTopPx(index) + view.rowHeightPx / 2;
    if (index >= pinned && y < view.axisHeightPx + view.pinnedHeightPx) continue;
    const last = model.rowOffsets[row + 1];
    // Overlapping spans (several channels on one rank) would print over each other: one label per stretch.
    let labelledUntilPx = -Infinity;
    for (let i = model.firstVisible(row, view.view.startUs); i < last && model.start[i] <= view.view.endUs; i++) {
      const x0 = Math.max(scale.leftPx, scale.timeToPx(model.start[i]));
      const x1 = Math.min(view.canvas.width, scale.timeToPx(model.end[i]));
      if (x1 - x0 < minWidth || x0 < labelledUntilPx) continue;
      labelledUntilPx = x1;
      const name = model.spanAt(i)?.name ?? PHASES[model.phase[i]];
      ctx.fillText(name, x0 + 3 * view.dpr, y, x1 - x0 - 6 * view.dpr);
    }
  }
}

function drawAxis(view: OverlayTarget, scale: TimeScale): void {
  const { ctx, canvas, palette } = view;
  const axisHeight = view.axisHeightPx;
  ctx.fillStyle = cssRgba(palette.background);
  ctx.fillRect(0, 0, canvas.width, axisHeight);
  ctx.fillStyle = palette.muted;
  ctx.fillRect(0, axisHeight - 1, canvas.width, 1);
  const origin = view.model?.startUs ?? 0;
  for (const t of scale.ticks(100 * view.dpr, origin).timesUs) {
    const x = Math.round(scale.timeToPx(t));
    ctx.fillRect(x, axisHeight - 6 * view.dpr, 1, 6 * view.dpr);
    ctx.fillStyle = palette.foreground;
    ctx.fillText(formatMicros(asMicros(t - origin)), x + 3 * view.dpr, axisHeight / 2 - 2 * view.dpr);
    ctx.fillStyle = palette.muted;
  }
}
