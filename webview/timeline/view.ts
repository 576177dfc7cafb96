// The timeline canvas: lanes on the left, a time axis on top, and spans rasterised through raster.ts.
// All state that decides a frame lives here; interaction.ts turns input into calls on this class.
import { asMicros, formatMicros } from '../../src/engine/index';
import { cssRgba, mix, packRgba, phaseColor, resolveColor, themeVar } from '../shared/theme';
import { COLOUR_COUNT, COLOUR_KEYS, type TimelineModel } from './model';
import { ColumnScratch, DIMMED_SLOT, columnsForRow, columnsForRows, paintRow } from './raster';
import { drawOverlays, type Palette } from './overlays';
import { t } from '../shared/strings';
import {
  buildLayout,
  laneIdOf,
  lineAt,
  toggleFold,
  togglePin,
  type DisplayLine,
  type Layout,
  type LayoutState,
} from './layout';
import { TimeScale, clampWindow, panWindow, zoomWindow, type ViewWindow } from './time-scale';

export const LABEL_WIDTH_CSS = 170;
export const AXIS_HEIGHT_CSS = 22;
export const ROW_HEIGHT_CSS = 14;
const FRAME_HISTORY = 2000;

export class TimelineView {
  model: TimelineModel | undefined;
  view: ViewWindow = { startUs: 0, endUs: 1 };
  scrollTopPx = 0;
  selected = -1;
  range: ViewWindow | undefined;
  mask: Uint8Array | null = null;
  /** Which node groups are folded and which lanes are pinned; kept while the same trace is shown. */
  layoutState: LayoutState = { folded: new Set(), pinned: new Set() };
  layout: Layout = { pinned: [], scrolling: [], lineOfRow: new Int32Array(0) };
  /** Labels of the counter lines (counters.ts), laid out in their own group after the tracks. */
  counterLabels: readonly string[] = [];
  /** Duration of each render in ms, newest last, for the benchmark and the frame-time readout. */
  readonly frameTimesMs: number[] = [];
  onViewChange: () => void = () => undefined;
  /** Called after a fold or a pin changed layoutState (a user's click), after onViewChange. */
  onLayoutChange: () => void = () => undefined;
  palette!: Palette;
  readonly ctx: CanvasRenderingContext2D;
  private image: ImageData | undefined;
  private readonly scratch = new ColumnScratch();
  private frameRequested = false;
  /** Read once per theme change: getComputedStyle in every frame would force a style pass. */
  fontFamily = 'sans-serif';
  dpr = 1;

  constructor(readonly canvas: HTMLCanvasElement) {
    this.ctx = canvas.getContext('2d', { alpha: false })!;
    this.refreshTheme();
  }

  refreshTheme(): void {
    this.fontFamily = getComputedStyle(document.body).fontFamily || 'sans-serif';
    const background = resolveColor(themeVar('--vscode-editor-background'), '#1e1e1e');
    const foreground = resolveColor(themeVar('--vscode-foreground'), '#cccccc');
    const colours = COLOUR_KEYS.map((p) => phaseColor(p));
    const dimmed = mix(background, foreground, 0.18);
    const slots = new Uint32Array(COLOUR_COUNT + 1);
    colours.forEach((c, i) => {
      slots[i] = packRgba(c);
    });
    slots[DIMMED_SLOT] = packRgba(dimmed);
    this.palette = {
      background,
      backgroundPacked: packRgba(background),
      stripe: packRgba(mix(background, foreground, 0.04)),
      foreground: cssRgba(foreground),
      muted: cssRgba(mix(background, foreground, 0.6)),
      slots,
      slotCss: [...colours, dimmed].map((c) => cssRgba(c)),
      selection: cssRgba(resolveColor(themeVar('--vscode-editor-selectionBackground'), '#264f78'), 0.35),
      border: cssRgba(resolveColor(themeVar('--vscode-focusBorder'), '#007fd4')),
    };
    this.invalidate();
  }

  /** A phase's colour packed for an ImageData's Uint32Array view. */
  phasePacked(phaseIndex: number): number {
    return this.palette.slots[phaseIndex];
  }

  phaseCss(phaseIndex: number): string {
    return this.palette.slotCss[phaseIndex];
  }

  setModel(model: TimelineModel, view?: ViewWindow): void {
    this.model = model;
    this.selected = -1;
    this.range = undefined;
    this.mask = null;
    this.view = clampWindow(view ?? this.bounds, this.bounds);
    this.layoutState = { folded: new Set(), pinned: new Set() };
    this.counterLabels = [];
    this.relayout();
    window.setTimeout(() => this.warmUp(model), 0);
  }

  /**
   * Runs the span-by-span rasteriser once on a narrow window after the first paint, off the frame path, so the
   * JIT has compiled it before the first zoom needs it; otherwise that zoom stutters on a large trace.
   */
  private warmUp(model: TimelineModel): void {
    if (this.model !== model) return;
    const scratch = new ColumnScratch();
    scratch.resize(1000);
    const widthUs = (model.endUs - model.startUs) / 64;
    for (let round = 0; round < 4; round++) {
      for (let row = 0; row < Math.min(model.rows.length, 16); row++) {
        columnsForRow(
          model,
          row,
          { startUs: model.startUs + round * widthUs, endUs: model.startUs + (round + 1) * widthUs, width: 1000 },
          null,
          scratch,
        );
      }
    }
  }

  get bounds(): ViewWindow {
    return this.model ? { startUs: this.model.startUs, endUs: this.model.endUs } : { startUs: 0, endUs: 1 };
  }

  /** Rebuilds the lines after a fold, a pin or new counters, keeping the scroll position within the new content. */
  relayout(): void {
    this.layout = this.model
      ? buildLayout(this.model.rows, this.counterLabels, this.layoutState)
      : { pinned: [], scrolling: [], lineOfRow: new Int32Array(0) };
    this.scrollByPx(0);
    this.invalidate();
  }

  /** Folds or unfolds a group (a node's tracks, the counters). */
  toggleGroup(key: string): void {
    this.layoutState = toggleFold(this.layoutState, key);
    this.relayout();
    this.onViewChange();
    this.onLayoutChange();
  }

  /** Pins a lane (all its tracks) to the top, or unpins it. */
  togglePinned(laneId: number): void {
    this.layoutState = togglePin(this.layoutState, laneId);
    this.relayout();
    this.onViewChange();
    this.onLayoutChange();
  }

  get labelWidthPx(): number {
    return Math.round(LABEL_WIDTH_CSS * this.dpr);
  }
  get axisHeightPx(): number {
    return Math.round(AXIS_HEIGHT_CSS * this.dpr);
  }
  get rowHeightPx(): number {
    return Math.round(ROW_HEIGHT_CSS * this.dpr);
  }
  private get plotHeightPx(): number {
    return Math.max(0, this.canvas.height - this.axisHeightPx);
  }
  /** Height of the pinned band under the axis: its lines, but never more than half the plot. */
  get pinnedHeightPx(): number {
    const rowHeight = this.rowHeightPx;
    const lines = Math.min(this.layout.pinned.length, Math.floor(this.plotHeightPx / 2 / rowHeight));
    return lines * rowHeight;
  }

  /** Canvas y (device pixels) of the top of line `index` of [...pinned, ...scrolling]. */
  lineTopPx(index: number): number {
    const pinned = this.layout.pinned.length;
    if (index < pinned) return this.axisHeightPx + index * this.rowHeightPx;
    return this.axisHeightPx + this.pinnedHeightPx + (index - pinned) * this.rowHeightPx - this.scrollTopPx;
  }

  /** Canvas y of the top of the line showing a model row (its own, or its folded group's header), or undefined. */
  rowTopPx(row: number): number | undefined {
    const line = this.layout.lineOfRow[row];
    return line === undefined || line < 0 ? undefined : this.lineTopPx(line);
  }

  /** Index of the line under canvas y (device pixels), or -1. */
  lineIndexAt(yPx: number): number {
    if (!this.model || yPx < this.axisHeightPx) return -1;
    const rowHeight = this.rowHeightPx;
    const pinnedPx = this.pinnedHeightPx;
    const y = yPx - this.axisHeightPx;
    if (y < pinnedPx) return Math.floor(y / rowHeight);
    const index = Math.floor((y - pinnedPx + this.scrollTopPx) / rowHeight);
    return index < this.layout.scrolling.length ? this.layout.pinned.length + index : -1;
  }

  /** The line under canvas y, or undefined. */
  lineAtPx(yPx: number): DisplayLine | undefined {
    const index = this.lineIndexAt(yPx);
    return index < 0 ? undefined : lineAt(this.layout, index);
  }

  /** Folds a group or pins a track for a click on the label column at canvas y; false when nothing was there. */
  clickLabel(yPx: number): boolean {
    const line = this.lineAtPx(yPx);
    if (!line || !this.model) return false;
    if (line.kind === 'group') this.toggleGroup(line.key);
    else if (line.kind === 'track') this.togglePinned(laneIdOf(this.model.rows[line.row]));
    else return false;
    return true;
  }

  scale(): TimeScale {
    return new TimeScale(
      this.view.startUs,
      this.view.endUs,
      this.labelWidthPx,
      Math.max(1, this.canvas.width - this.labelWidthPx),
    );
  }

  setView(view: ViewWindow): void {
    this.view = clampWindow(view, this.bounds);
    this.invalidate();
    this.onViewChange();
  }

  /** Zooms by `factor` (< 1 zooms in) around the time under canvas pixel x (device pixels). */
  zoomAt(factor: number, xPx: number): void {
    this.setView(zoomWindow(this.view, factor, this.scale().pxToTime(xPx), this.bounds));
  }

  panByPx(dxPx: number): void {
    this.setView(panWindow(this.view, dxPx * this.scale().usPerPx, this.bounds));
  }

  scrollByPx(dyPx: number): void {
    const contentPx = this.layout.scrolling.length * this.rowHeightPx;
    const visiblePx = this.plotHeightPx - this.pinnedHeightPx;
    const next = Math.max(0, Math.min(Math.max(0, contentPx - visiblePx), this.scrollTopPx + dyPx));
    if (next !== this.scrollTopPx) {
      this.scrollTopPx = next;
      this.invalidate();
      this.onViewChange();
    }
  }

  /** The model row shown on its own line under canvas pixel y (device pixels), or -1. */
  rowAt(yPx: number): number {
    const line = this.lineAtPx(yPx);
    return line?.kind === 'track' ? line.row : -1;
  }

  /**
   * The span under a canvas point, as a sorted position, or -1. Tolerates a few pixels around thin spans; on a
   * folded node's line, the span of any of its tracks (the nearest, and among overlapping ones the shortest).
   */
  spanAt(xPx: number, yPx: number): number {
    const model = this.model;
    const line = this.lineAtPx(yPx);
    if (!model || !line || xPx < this.labelWidthPx) return -1;
    const scale = this.scale();
    const timeUs = scale.pxToTime(xPx);
    const toleranceUs = 3 * this.dpr * scale.usPerPx;
    if (line.kind === 'track') return model.hitTest(line.row, timeUs, toleranceUs);
    if (line.kind !== 'group' || !line.folded) return -1;
    let best = -1;
    let bestDistance = Infinity;
    for (const row of line.rows) {
      const hit = model.hitTest(row, timeUs, toleranceUs);
      if (hit < 0) continue;
      const distance = timeUs < model.start[hit] ? model.start[hit] - timeUs : Math.max(0, timeUs - model.end[hit]);
      const shorter = best >= 0 && model.end[hit] - model.start[hit] < model.end[best] - model.start[best];
      if (distance < bestDistance || (distance === bestDistance && shorter)) {
        best = hit;
        bestDistance = distance;
      }
    }
    return best;
  }

  invalidate(): void {
    if (this.frameRequested) return;
    this.frameRequested = true;
    requestAnimationFrame(() => {
      this.frameRequested = false;
      this.render();
    });
  }

  /** Matches the canvas's pixel size to its box, at the device pixel ratio. */
  resize(): void {
    this.dpr = window.devicePixelRatio || 1;
    const width = Math.max(1, Math.round(this.canvas.clientWidth * this.dpr));
    const height = Math.max(1, Math.round(this.canvas.clientHeight * this.dpr));
    if (this.canvas.width !== width || this.canvas.height !== height) {
      this.canvas.width = width;
      this.canvas.height = height;
      this.image = undefined;
    }
    this.invalidate();
  }

  /** Draws one frame synchronously and records how long it took. */
  render(): void {
    const began = performance.now();
    const { ctx, canvas, palette } = this;
    const labelWidth = this.labelWidthPx;
    const axisHeight = this.axisHeightPx;
    const plotWidth = canvas.width - labelWidth;
    const plotHeight = canvas.height - axisHeight;
    if (plotWidth <= 0 || plotHeight <= 0) return;
    if (!this.image || this.image.width !== plotWidth || this.image.height !== plotHeight)
      this.image = ctx.createImageData(plotWidth, plotHeight);
    const pixels = new Uint32Array(this.image.data.buffer);
    pixels.fill(palette.backgroundPacked);
    const model = this.model;
    const rowHeight = this.rowHeightPx;
    const pinnedPx = this.pinnedHeightPx;
    const visible = this.visibleLines();
    let visited = 0;
    if (model) {
      this.scratch.resize(plotWidth);
      const target = { pixels, width: plotWidth, height: plotHeight };
      const window = { startUs: this.view.startUs, endUs: this.view.endUs, width: plotWidth };
      for (const index of visible) {
        const line = lineAt(this.layout, index)!;
        const top = this.lineTopPx(index) - axisHeight;
        // Scrolling lines pass under the pinned band, which stays on top.
        const clipTop = index < this.layout.pinned.length ? 0 : pinnedPx;
        const striped = line.kind === 'group' || (line.kind === 'track' && model.stripe[line.row] === 1);
        if (striped)
          pixels.fill(
            palette.stripe,
            Math.max(clipTop, top) * plotWidth,
            Math.max(clipTop, Math.min(plotHeight, top + rowHeight)) * plotWidth,
          );
        if (line.kind === 'counter' || (line.kind === 'group' && !line.folded)) continue;
        if (line.kind === 'group' && line.rows.length === 0) continue;
        visited +=
          line.kind === 'track'
            ? columnsForRow(model, line.row, window, this.mask, this.scratch)
            : columnsForRows(model, line.rows, window, this.mask, this.scratch);
        paintRow(
          target,
          Math.max(clipTop, top + 1),
          top + rowHeight - 1,
          striped ? palette.stripe : palette.backgroundPacked,
          palette.slots,
          this.scratch,
        );
      }
    }
    ctx.putImageData(this.image, labelWidth, axisHeight);
    drawOverlays(this, visible, visited);
    this.frameTimesMs.push(performance.now() - began);
    if (this.frameTimesMs.length > FRAME_HISTORY) this.frameTimesMs.splice(0, this.frameTimesMs.length - FRAME_HISTORY);
  }

  /** Indices of the lines on screen: the pinned band's, then the scrolling ones that show below it. */
  visibleLines(): number[] {
    const rowHeight = this.rowHeightPx;
    const pinnedLines = Math.round(this.pinnedHeightPx / rowHeight);
    const indices: number[] = [];
    for (let i = 0; i < pinnedLines; i++) indices.push(i);
    const first = Math.floor(this.scrollTopPx / rowHeight);
    const last = Math.min(
      this.layout.scrolling.length - 1,
      Math.floor((this.scrollTopPx + this.plotHeightPx - this.pinnedHeightPx) / rowHeight),
    );
    for (let j = first; j <= last; j++) indices.push(this.layout.pinned.length + j);
    return indices;
  }

  /** Counter lines and flow arrows, drawn over the spans by the modules that own them (set by main.ts). */
  drawExtras: (visible: readonly number[], scale: TimeScale) => void = () => undefined;

  /** The visible window as text, e.g. "12.0 µs – 480 µs of 1.20 ms", shown in the toolbar. */
  describeView(): string {
    if (!this.model) return '';
    const origin = this.model.startUs;
    return t(
      '{0} – {1} of {2}',
      formatMicros(asMicros(this.view.startUs - origin)),
      formatMicros(asMicros(this.view.endUs - origin)),
      formatMicros(asMicros(this.model.endUs - origin)),
    );
  }
}
