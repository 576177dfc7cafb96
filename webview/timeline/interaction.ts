// Mouse, trackpad and keyboard input for the timeline, in the style of Perfetto: drag pans, shift+drag or a drag
// on the time axis selects a range, ctrl+wheel (and trackpad pinch) zooms, W/S zoom and A/D pan.
import { t } from '../shared/strings';
import type { TimelineView } from './view';

export interface InteractionCallbacks {
  hover(sorted: number, clientX: number, clientY: number): void;
  select(sorted: number): void;
  range(startUs: number, endUs: number): void;
  clearSelection(): void;
}

/** Keyboard zoom step per press (W zooms in by it, S out), and pan step as a fraction of the view. */
export const KEY_ZOOM_FACTOR = 0.8;
export const KEY_PAN_FRACTION = 0.1;
/** Movement under this many CSS pixels is a click, not a drag. */
const CLICK_SLOP_CSS = 3;

export function attachInteraction(view: TimelineView, callbacks: InteractionCallbacks): void {
  const canvas = view.canvas;
  let drag:
    | { mode: 'pan' | 'range'; x: number; y: number; lastX: number; lastY: number; moved: boolean; anchorUs: number }
    | undefined;
  let pointerX = -1;

  const devicePoint = (event: MouseEvent): [number, number] => [event.offsetX * view.dpr, event.offsetY * view.dpr];

  canvas.addEventListener('pointerdown', (event) => {
    if (event.button !== 0) return;
    canvas.focus();
    const [x, y] = devicePoint(event);
    const mode = event.shiftKey || y < view.axisHeightPx ? 'range' : 'pan';
    drag = {
      mode,
      x: event.clientX,
      y: event.clientY,
      lastX: event.clientX,
      lastY: event.clientY,
      moved: false,
      anchorUs: view.scale().pxToTime(x),
    };
    canvas.setPointerCapture(event.pointerId);
    canvas.style.cursor = mode === 'pan' ? 'grabbing' : 'col-resize';
  });

  canvas.addEventListener('pointermove', (event) => {
    const [x, y] = devicePoint(event);
    pointerX = x;
    if (!drag) {
      callbacks.hover(view.spanAt(x, y), event.clientX, event.clientY);
      canvas.title = x < view.labelWidthPx ? labelHint(view, y) : '';
      return;
    }
    if (Math.abs(event.clientX - drag.x) + Math.abs(event.clientY - drag.y) > CLICK_SLOP_CSS) drag.moved = true;
    if (!drag.moved) return;
    callbacks.hover(-1, 0, 0);
    if (drag.mode === 'pan') {
      view.panByPx(-(event.clientX - drag.lastX) * view.dpr);
      view.scrollByPx(-(event.clientY - drag.lastY) * view.dpr);
    } else {
      const nowUs = view.scale().pxToTime(x);
      view.range = { startUs: Math.min(drag.anchorUs, nowUs), endUs: Math.max(drag.anchorUs, nowUs) };
      view.invalidate();
    }
    drag.lastX = event.clientX;
    drag.lastY = event.clientY;
  });

  canvas.addEventListener('pointerup', (event) => {
    const finished = drag;
    drag = undefined;
    canvas.style.cursor = '';
    if (!finished) return;
    const [x, y] = devicePoint(event);
    // A click on the label column folds a node's group (its header) or pins a lane to the top (a track's label).
    if (!finished.moved && x < view.labelWidthPx && y >= view.axisHeightPx) view.clickLabel(y);
    else if (!finished.moved) callbacks.select(view.spanAt(x, y));
    else if (finished.mode === 'range' && view.range) callbacks.range(view.range.startUs, view.range.endUs);
  });

  canvas.addEventListener('pointerleave', () => callbacks.hover(-1, 0, 0));

  canvas.addEventListener(
    'wheel',
    (event) => {
      event.preventDefault();
      const unit = event.deltaMode === 1 ? 16 : event.deltaMode === 2 ? canvas.clientHeight : 1;
      const dx = event.deltaX * unit;
      const dy = event.deltaY * unit;
      if (event.ctrlKey || event.metaKey) {
        // Trackpad pinch arrives as ctrl+wheel with small deltas; a mouse notch is about 100.
        view.zoomAt(Math.pow(1.002, dy), devicePoint(event)[0]);
      } else if (event.shiftKey) {
        view.panByPx((dx || dy) * view.dpr);
      } else {
        if (dx !== 0) view.panByPx(dx * view.dpr);
        if (dy !== 0) view.scrollByPx(dy * view.dpr);
      }
    },
    { passive: false },
  );

  const onKey = (event: KeyboardEvent): void => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    // Keys typed into the search box or another control are theirs, not the timeline's.
    const target = event.target;
    if (
      target instanceof HTMLElement &&
      target !== canvas &&
      (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.tagName.startsWith('VSCODE-'))
    )
      return;
    const scale = view.scale();
    const anchorPx = pointerX >= scale.leftPx ? pointerX : scale.leftPx + scale.widthPx / 2;
    switch (event.key.toLowerCase()) {
      case 'w':
        view.zoomAt(KEY_ZOOM_FACTOR, anchorPx);
        break;
      case 's':
        view.zoomAt(1 / KEY_ZOOM_FACTOR, anchorPx);
        break;
      case 'a':
        view.panByPx(-KEY_PAN_FRACTION * scale.widthPx);
        break;
      case 'd':
        view.panByPx(KEY_PAN_FRACTION * scale.widthPx);
        break;
      case 'arrowup':
        view.scrollByPx(-view.rowHeightPx);
        break;
      case 'arrowdown':
        view.scrollByPx(view.rowHeightPx);
        break;
      case 'escape':
        callbacks.clearSelection();
        break;
      default:
        return;
    }
    event.preventDefault();
  };
  document.addEventListener('keydown', onKey);
}

/** What a click on the label column at canvas y does, as the canvas's tooltip says it. */
function labelHint(view: TimelineView, yPx: number): string {
  const line = view.lineAtPx(yPx);
  if (line?.kind === 'group') return line.folded ? t('Unfold {0}', line.label) : t('Fold {0}', line.label);
  if (line?.kind === 'track') return line.pinned ? t('Unpin this lane') : t('Pin this lane to the top');
  return '';
}
