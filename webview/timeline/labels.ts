// The label column of the timeline: a node header with its twisty (▸ folded, ▾ open), each lane's name once (on
// its first track), a pin mark on pinned lanes, the counters' names, and rules that separate nodes and the pinned
// band from the lines that scroll under it.
import { cssRgba } from '../shared/theme';
import { lineAt } from './layout';
import { isNestedTrack } from './tracks';
import type { TimelineView } from './view';

export const TWISTY_OPEN = '▾';
export const TWISTY_FOLDED = '▸';

export function drawLineLabels(view: TimelineView, visible: readonly number[]): void {
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
function sameLaneAbove(view: TimelineView, index: number): boolean {
  const above = lineAt(view.layout, index - 1);
  const here = lineAt(view.layout, index);
  if (above?.kind !== 'track' || here?.kind !== 'track' || !view.model) return false;
  const a = view.model.rows[above.row] as { laneId?: number; id: number };
  const b = view.model.rows[here.row] as { laneId?: number; id: number };
  return (a.laneId ?? a.id) === (b.laneId ?? b.id);
}
