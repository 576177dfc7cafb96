// The timeline canvas: lanes on the left, a time axis on top, and spans rasterised through raster.ts.
// All state that decides a frame lives here; interaction.ts turns input into calls on this class.
import { PHASES, formatMicros, asMicros } from '../../src/engine/index';
import { cssRgba, mix, packRgba, phaseColor, resolveColor, themeVar } from '../shared/theme';
import { COLOUR_COUNT, COLOUR_KEYS, type TimelineModel } from './model';
import { ColumnScratch, DIMMED_SLOT, columnsForRow, paintRow } from './raster';
import { isNestedTrack } from './tracks';
import { TimeScale, clampWindow, panWindow, zoomWindow, type ViewWindow } from './time-scale';

export const LABEL_WIDTH_CSS = 170;
export const AXIS_HEIGHT_CSS = 22;
export const ROW_HEIGHT_CSS = 14;
const FRAME_HISTORY = 2000;

interface Palette {
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

export class TimelineView {
  model: TimelineModel | undefined;
  view: ViewWindow = { startUs: 0, endUs: 1 };
  scrollTopPx = 0;
  selected = -1;
  range: ViewWindow | undefined;
  mask: Uint8Array | null = null;
  /** Duration of each render in ms, newest last, for the benchmark and the frame-time readout. */
  readonly frameTimesMs: number[] = [];
  onViewChange: () => void = () => undefined;
  private palette!: Palette;
  private readonly ctx: CanvasRenderingContext2D;
  private image: ImageData | undefined;
  private readonly scratch = new ColumnScratch();
  private frameRequested = false;
  /** Read once per theme change: getComputedStyle in every frame would force a style pass. */
  private fontFamily = 'sans-serif';
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
    this.invalidate();
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

  get labelWidthPx(): number {
    return Math.round(LABEL_WIDTH_CSS * this.dpr);
  }
  get axisHeightPx(): number {
    return Math.round(AXIS_HEIGHT_CSS * this.dpr);
  }
  get rowHeightPx(): number {
    return Math.round(ROW_HEIGHT_CSS * this.dpr);
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
    const contentPx = (this.model?.rows.length ?? 0) * this.rowHeightPx;
    const visiblePx = this.canvas.height - this.axisHeightPx;
    const next = Math.max(0, Math.min(Math.max(0, contentPx - visiblePx), this.scrollTopPx + dyPx));
    if (next !== this.scrollTopPx) {
      this.scrollTopPx = next;
      this.invalidate();
      this.onViewChange();
    }
  }

  /** The row under canvas pixel y (device pixels), or -1. */
  rowAt(yPx: number): number {
    if (!this.model || yPx < this.axisHeightPx) return -1;
    const row = Math.floor((yPx - this.axisHeightPx + this.scrollTopPx) / this.rowHeightPx);
    return row < this.model.rows.length ? row : -1;
  }

  /** The span under a canvas point, as a sorted position, or -1. Tolerates a few pixels around thin spans. */
  spanAt(xPx: number, yPx: number): number {
    if (!this.model || xPx < this.labelWidthPx) return -1;
    const scale = this.scale();
    return this.model.hitTest(this.rowAt(yPx), scale.pxToTime(xPx), 3 * this.dpr * scale.usPerPx);
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
    const firstRow = Math.floor(this.scrollTopPx / rowHeight);
    const lastRow = model
      ? Math.min(model.rows.length - 1, Math.floor((this.scrollTopPx + plotHeight) / rowHeight))
      : -1;
    let visited = 0;
    if (model) {
      this.scratch.resize(plotWidth);
      const target = { pixels, width: plotWidth, height: plotHeight };
      const window = { startUs: this.view.startUs, endUs: this.view.endUs, width: plotWidth };
      for (let row = firstRow; row <= lastRow; row++) {
        const top = row * rowHeight - this.scrollTopPx;
        const striped = model.stripe[row] === 1;
        if (striped)
          pixels.fill(palette.stripe, Math.max(0, top) * plotWidth, Math.min(plotHeight, top + rowHeight) * plotWidth);
        visited += columnsForRow(model, row, window, this.mask, this.scratch);
        paintRow(
          target,
          top + 1,
          top + rowHeight - 1,
          striped ? palette.stripe : palette.backgroundPacked,
          palette.slots,
          this.scratch,
        );
      }
    }
    ctx.putImageData(this.image, labelWidth, axisHeight);
    this.drawOverlays(firstRow, lastRow, visited);
    this.frameTimesMs.push(performance.now() - began);
    if (this.frameTimesMs.length > FRAME_HISTORY) this.frameTimesMs.splice(0, this.frameTimesMs.length - FRAME_HISTORY);
  }

  private drawOverlays(firstRow: number, lastRow: number, visited: number): void {
    const { ctx, canvas, palette, model } = this;
    const scale = this.scale();
    const labelWidth = this.labelWidthPx;
    const axisHeight = this.axisHeightPx;
    const rowHeight = this.rowHeightPx;
    ctx.font = `${Math.round(11 * this.dpr)}px ${this.fontFamily}`;
    ctx.textBaseline = 'middle';
    ctx.save();
    ctx.beginPath();
    ctx.rect(labelWidth, axisHeight, canvas.width - labelWidth, canvas.height - axisHeight);
    ctx.clip();
    if (model && visited < 4000 && !this.mask) this.drawSpanNames(firstRow, lastRow, scale);
    if (this.range) {
      const x0 = scale.timeToPx(this.range.startUs);
      const x1 = scale.timeToPx(this.range.endUs);
      ctx.fillStyle = palette.selection;
      ctx.fillRect(x0, axisHeight, Math.max(1, x1 - x0), canvas.height - axisHeight);
    }
    if (model && this.selected >= 0) {
      const row = model.rowOf(this.selected);
      const x0 = scale.timeToPx(model.start[this.selected]);
      const x1 = scale.timeToPx(model.end[this.selected]);
      ctx.strokeStyle = palette.border;
      ctx.lineWidth = 2 * this.dpr;
      ctx.strokeRect(
        x0 - this.dpr,
        axisHeight + row * rowHeight - this.scrollTopPx,
        Math.max(2 * this.dpr, x1 - x0 + 2 * this.dpr),
        rowHeight,
      );
    }
    ctx.restore();
    // Lane labels, with a rule between nodes.
    ctx.fillStyle = cssRgba(palette.background);
    ctx.fillRect(0, 0, labelWidth, canvas.height);
    for (let row = firstRow; model && row <= lastRow; row++) {
      const y = axisHeight + row * rowHeight - this.scrollTopPx;
      const lane = model.rows[row];
      // A nested track belongs to the lane above it: the label is written once, on the lane's first track.
      if (!isNestedTrack(lane)) {
        ctx.fillStyle = lane.kind === 'rank' ? palette.foreground : palette.muted;
        ctx.fillText(lane.label, 6 * this.dpr, y + rowHeight / 2, labelWidth - 10 * this.dpr);
      }
      if (row > 0 && lane.node !== model.rows[row - 1].node) {
        ctx.fillStyle = palette.muted;
        ctx.fillRect(0, y, canvas.width, Math.max(1, Math.round(this.dpr)));
      }
    }
    this.drawAxis(scale);
  }

  private drawSpanNames(firstRow: number, lastRow: number, scale: TimeScale): void {
    const { ctx, model } = this;
    if (!model) return;
    const minWidth = 48 * this.dpr;
    ctx.fillStyle = cssRgba(this.palette.background);
    for (let row = firstRow; row <= lastRow; row++) {
      const y = this.axisHeightPx + row * this.rowHeightPx - this.scrollTopPx + this.rowHeightPx / 2;
      const last = model.rowOffsets[row + 1];
      // Overlapping spans (several channels on one rank) would print over each other: one label per stretch.
      let labelledUntilPx = -Infinity;
      for (let i = model.firstVisible(row, this.view.startUs); i < last && model.start[i] <= this.view.endUs; i++) {
        const x0 = Math.max(scale.leftPx, scale.timeToPx(model.start[i]));
        const x1 = Math.min(this.canvas.width, scale.timeToPx(model.end[i]));
        if (x1 - x0 < minWidth || x0 < labelledUntilPx) continue;
        labelledUntilPx = x1;
        const name = model.spanAt(i)?.name ?? PHASES[model.phase[i]];
        ctx.fillText(name, x0 + 3 * this.dpr, y, x1 - x0 - 6 * this.dpr);
      }
    }
  }

  private drawAxis(scale: TimeScale): void {
    const { ctx, canvas, palette } = this;
    const axisHeight = this.axisHeightPx;
    ctx.fillStyle = cssRgba(palette.background);
    ctx.fillRect(0, 0, canvas.width, axisHeight);
    ctx.fillStyle = palette.muted;
    ctx.fillRect(0, axisHeight - 1, canvas.width, 1);
    const origin = this.model?.startUs ?? 0;
    for (const t of scale.ticks(100 * this.dpr, origin).timesUs) {
      const x = Math.round(scale.timeToPx(t));
      ctx.fillRect(x, axisHeight - 6 * this.dpr, 1, 6 * this.dpr);
      ctx.fillStyle = palette.foreground;
      ctx.fillText(formatMicros(asMicros(t - origin)), x + 3 * this.dpr, axisHeight / 2 - 2 * this.dpr);
      ctx.fillStyle = palette.muted;
    }
  }

  /** The visible window as text, e.g. "12.0 µs – 480 µs of 1.20 ms", shown in the toolbar. */
  describeView(): string {
    if (!this.model) return '';
    const origin = this.model.startUs;
    return `${formatMicros(asMicros(this.view.startUs - origin))} – ${formatMicros(asMicros(this.view.endUs - origin))} of ${formatMicros(asMicros(this.model.endUs - origin))}`;
  }
}
