// The overview strip: the whole trace squeezed into a few pixels of height, each column stacked by phase share,
// with the visible window outlined. Clicking or dragging in it moves the main view.
import { COLOUR_COUNT, COLOUR_KEYS } from './model';
import { ColumnScratch, EMPTY, columnsForRow } from './raster';
import type { TimelineView } from './view';

export class Overview {
  private readonly ctx: CanvasRenderingContext2D;
  private cache: ImageBitmap | HTMLCanvasElement | undefined;
  private readonly scratch = new ColumnScratch();

  constructor(
    readonly canvas: HTMLCanvasElement,
    private readonly view: TimelineView,
  ) {
    this.ctx = canvas.getContext('2d')!;
    let dragging = false;
    const moveTo = (event: PointerEvent): void => {
      const model = this.view.model;
      if (!model) return;
      const fraction =
        (event.offsetX * this.dpr - this.view.labelWidthPx) / Math.max(1, canvas.width - this.view.labelWidthPx);
      const centerUs = model.startUs + Math.max(0, Math.min(1, fraction)) * (model.endUs - model.startUs);
      const half = (this.view.view.endUs - this.view.view.startUs) / 2;
      this.view.setView({ startUs: centerUs - half, endUs: centerUs + half });
    };
    canvas.addEventListener('pointerdown', (e) => {
      dragging = true;
      canvas.setPointerCapture(e.pointerId);
      moveTo(e);
    });
    canvas.addEventListener('pointermove', (e) => {
      if (dragging) moveTo(e);
    });
    canvas.addEventListener('pointerup', () => {
      dragging = false;
    });
  }

  private get dpr(): number {
    return this.view.dpr;
  }

  /** Recomputes the stacked phase density; call when the model, theme or width changes. */
  rebuild(): void {
    const model = this.view.model;
    const width = Math.max(1, Math.round(this.canvas.clientWidth * this.dpr));
    const height = Math.max(1, Math.round(this.canvas.clientHeight * this.dpr));
    this.canvas.width = width;
    this.canvas.height = height;
    this.cache = undefined;
    const plotWidth = width - this.view.labelWidthPx;
    if (!model || plotWidth <= 0) return;
    // Count, per column, how many rows show each phase there.
    const counts = new Uint16Array(plotWidth * COLOUR_COUNT);
    this.scratch.resize(plotWidth);
    const window = { startUs: model.startUs, endUs: model.endUs, width: plotWidth };
    for (let row = 0; row < model.rows.length; row++) {
      columnsForRow(model, row, window, null, this.scratch);
      for (let c = 0; c < plotWidth; c++)
        if (this.scratch.slot[c] !== EMPTY) counts[c * COLOUR_COUNT + this.scratch.slot[c]]++;
    }
    // Stack the phases bottom-up in each column, written as pixels: thousands of fillRect calls cost more.
    const cache = document.createElement('canvas');
    cache.width = width;
    cache.height = height;
    const ctx = cache.getContext('2d')!;
    const image = ctx.createImageData(width, height);
    const pixels = new Uint32Array(image.data.buffer);
    const colours = Uint32Array.from(COLOUR_KEYS, (_, p) => this.view.phasePacked(p));
    const rows = Math.max(1, model.rows.length);
    for (let c = 0; c < plotWidth; c++) {
      let y = height;
      for (let p = 0; p < COLOUR_COUNT; p++) {
        const mine = counts[c * COLOUR_COUNT + p];
        if (mine === 0) continue;
        const top = Math.max(0, Math.round(y - (mine / rows) * height));
        for (let row = top; row < y; row++) pixels[row * width + this.view.labelWidthPx + c] = colours[p];
        y = top;
      }
    }
    ctx.putImageData(image, 0, 0);
    this.cache = cache;
    this.draw();
  }

  /** Redraws the cached density and the window outline; cheap enough for every view change. */
  draw(): void {
    const { ctx, canvas } = this;
    const model = this.view.model;
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    if (this.cache) ctx.drawImage(this.cache, 0, 0);
    if (!model) return;
    const left = this.view.labelWidthPx;
    const plotWidth = canvas.width - left;
    const toPx = (us: number): number => left + ((us - model.startUs) / (model.endUs - model.startUs)) * plotWidth;
    const x0 = toPx(this.view.view.startUs);
    const x1 = toPx(this.view.view.endUs);
    ctx.fillStyle = 'rgba(128, 128, 128, 0.25)';
    ctx.fillRect(left, 0, Math.max(0, x0 - left), canvas.height);
    ctx.fillRect(x1, 0, Math.max(0, canvas.width - x1), canvas.height);
    ctx.strokeStyle = getComputedStyle(document.body).getPropertyValue('--vscode-focusBorder').trim() || '#007fd4';
    ctx.lineWidth = Math.max(1, this.dpr);
    ctx.strokeRect(x0 + 0.5, 0.5, Math.max(2, x1 - x0 - 1), canvas.height - 1);
  }
}
