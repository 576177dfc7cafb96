// Draws a range's flame graph (flame.ts) as an icicle on a canvas in the details pane, as Perfetto and Speedscope
// draw theirs: the range's busy time on top, each stack of names below its caller, widths in proportion to the time
// inside the range, coloured by the timeline's phase colours. Hovering a node says its name, total and self time;
// a click zooms into it (flame-zoom.ts) and highlights its spans in the timeline.
import { asMicros, formatMicros } from '../../src/engine/index';
import { el } from '../shared/dom';
import { t } from '../shared/strings';
import { resolveColor } from '../shared/theme';
import { flameDepth, type FlameNode } from './flame';
import { flamePath, focusAfterClick } from './flame-zoom';

/** Height of one level of the graph, CSS pixels. */
export const FLAME_ROW_PX = 18;
/** Levels drawn at most below the focus: deeper stacks are not drawn, their time shown in the width of their last
 * drawn caller, until a zoom into that caller draws them. */
const MAX_LEVELS = 16;

export interface FlameColours {
  readonly phaseCss: (phase: number) => string;
  readonly foreground: string;
  readonly background: string;
  readonly highlight: string;
}

/** A drawn node: where it lies on the canvas, in CSS pixels. */
export interface FlameRect {
  readonly node: FlameNode;
  readonly xPx: number;
  readonly yPx: number;
  readonly widthPx: number;
}

/**
 * The rectangles of the graph for a canvas `widthPx` wide, zoomed into `focus` (the root: not zoomed): the focus's
 * callers and the focus itself across the whole width, one level each, and below them the focus's callees left to
 * right, in proportion to the focus's time.
 */
export function layoutFlame(root: FlameNode, widthPx: number, focus: FlameNode = root): FlameRect[] {
  const path = flamePath(root, focus);
  const rects: FlameRect[] = path.map((node, level) => ({ node, xPx: 0, yPx: level * FLAME_ROW_PX, widthPx }));
  const top = path.length - 1;
  const pxPerUs = focus.totalUs > 0 ? widthPx / focus.totalUs : 0;
  const place = (node: FlameNode, xPx: number, level: number): void => {
    rects.push({ node, xPx, yPx: level * FLAME_ROW_PX, widthPx: node.totalUs * pxPerUs });
    placeChildren(node, xPx, level);
  };
  const placeChildren = (node: FlameNode, xPx: number, level: number): void => {
    if (level + 1 >= top + MAX_LEVELS) return;
    let x = xPx;
    for (const child of node.children) {
      place(child, x, level + 1);
      x += child.totalUs * pxPerUs;
    }
  };
  placeChildren(focus, 0, top);
  return rects;
}

/** Levels the graph takes zoomed into `focus`: its callers, itself and its callees up to MAX_LEVELS below it. */
function levelsShown(root: FlameNode, focus: FlameNode): number {
  return flamePath(root, focus).length + Math.min(MAX_LEVELS - 1, flameDepth(focus));
}

/** The hover text of a node: its name, total and self time, and how many spans it merges. */
export function flameHoverText(node: FlameNode, root: FlameNode): string {
  const name = node === root ? t('all lanes (busy time)') : node.name;
  const share = root.totalUs > 0 ? ` (${((100 * node.totalUs) / root.totalUs).toFixed(1)} %)` : '';
  const spans = node === root ? '' : ` · ${node.spans.length === 1 ? t('1 span') : t('{0} spans', node.spans.length)}`;
  return `${name} · ${t('total')} ${formatMicros(asMicros(node.totalUs))}${share} · ${t('self')} ${formatMicros(
    asMicros(node.selfUs),
  )}${spans}`;
}

/**
 * The flame graph section of a range's details; `highlight` is called with a clicked node (undefined: the root,
 * clearing it). A click on a node zooms into it and a click on the focus or a caller above it zooms back out, as does
 * the Reset zoom button; the canvas's data-focus names the stack zoomed into ("" when not zoomed).
 */
export function renderFlame(
  root: FlameNode,
  colours: FlameColours,
  highlight: (node: FlameNode | undefined) => void,
): HTMLElement {
  const reset = el('button', { class: 'flame-reset', type: 'button', hidden: '' }, t('Reset zoom'));
  const section = el(
    'section',
    { class: 'flame' },
    el('div', { class: 'flame-head' }, el('h3', {}, t('Flame graph of the range')), reset),
  );
  if (root.children.length === 0) return section;
  const canvas = el('canvas', { class: 'flame-canvas', role: 'img', 'aria-label': t('Flame graph of the range') });
  const tip = el('div', { class: 'flame-tip', hidden: '' });
  section.append(el('div', { class: 'flame-wrap' }, canvas, tip));
  let rects: FlameRect[] = [];
  let focus = root;
  const draw = (): void => {
    const widthPx = canvas.clientWidth;
    if (widthPx === 0) return;
    rects = layoutFlame(root, widthPx, focus);
    drawFlame(canvas, rects, root, colours, flamePath(root, focus));
  };
  const zoom = (to: FlameNode): void => {
    focus = to;
    const path = flamePath(root, focus);
    canvas.dataset.focus = path
      .slice(1)
      .map((node) => node.name)
      .join(' > ');
    canvas.style.height = `${levelsShown(root, focus) * FLAME_ROW_PX}px`;
    reset.hidden = focus === root;
    highlight(focus === root ? undefined : focus);
    draw();
  };
  canvas.dataset.focus = '';
  canvas.style.height = `${levelsShown(root, root) * FLAME_ROW_PX}px`;
  const at = (event: MouseEvent): FlameRect | undefined => {
    const box = canvas.getBoundingClientRect();
    const x = event.clientX - box.left;
    const y = event.clientY - box.top;
    return rects.find((r) => x >= r.xPx && x < r.xPx + r.widthPx && y >= r.yPx && y < r.yPx + FLAME_ROW_PX);
  };
  canvas.addEventListener('mousemove', (event) => {
    const hit = at(event);
    tip.hidden = !hit;
    if (!hit) return;
    tip.textContent = flameHoverText(hit.node, root);
    const box = canvas.getBoundingClientRect();
    tip.style.left = `${Math.max(0, Math.min(event.clientX - box.left + 12, box.width - tip.offsetWidth - 4))}px`;
    tip.style.top = `${event.clientY - box.top + 14}px`;
  });
  canvas.addEventListener('mouseleave', () => {
    tip.hidden = true;
  });
  canvas.addEventListener('click', (event) => {
    const hit = at(event);
    if (hit) zoom(focusAfterClick(root, focus, hit.node));
  });
  reset.addEventListener('click', () => zoom(root));
  // The canvas has no width until the section is in the page, and takes a new one when the pane is resized.
  new ResizeObserver(draw).observe(canvas);
  return section;
}

function drawFlame(
  canvas: HTMLCanvasElement,
  rects: readonly FlameRect[],
  root: FlameNode,
  colours: FlameColours,
  /** The root down to the focus: the focus is outlined, the callers above it dimmed as a trail back out. */
  path: readonly FlameNode[],
): void {
  const chosen = path.length > 1 ? path[path.length - 1] : undefined;
  const trail = new Set(path.slice(1, -1));
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(canvas.clientWidth * dpr);
  canvas.height = Math.round(canvas.clientHeight * dpr);
  const ctx = canvas.getContext('2d')!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.fillStyle = colours.background;
  ctx.fillRect(0, 0, canvas.clientWidth, canvas.clientHeight);
  ctx.font = `11px ${getComputedStyle(document.body).fontFamily || 'sans-serif'}`;
  ctx.textBaseline = 'middle';
  for (const { node, xPx, yPx, widthPx } of rects) {
    if (widthPx < 0.5) continue;
    ctx.fillStyle = node === root ? colours.foreground : colours.phaseCss(node.phase);
    ctx.globalAlpha = node === root ? 0.25 : trail.has(node) ? 0.55 : 1;
    ctx.fillRect(xPx, yPx, Math.max(1, widthPx - 1), FLAME_ROW_PX - 1);
    ctx.globalAlpha = 1;
    if (node === chosen) {
      ctx.strokeStyle = colours.highlight;
      ctx.lineWidth = 2;
      ctx.strokeRect(xPx + 1, yPx + 1, Math.max(1, widthPx - 3), FLAME_ROW_PX - 3);
    }
    if (widthPx > 30) {
      ctx.fillStyle = node === root ? colours.foreground : readableOn(colours.phaseCss(node.phase), colours);
      const label = node === root ? flameHoverText(root, root) : node.name;
      ctx.fillText(label, xPx + 3, yPx + FLAME_ROW_PX / 2, widthPx - 6);
    }
  }
}

/** The theme's foreground or background, whichever is further in lightness from a node's fill: light phase colours
 * (the grey of "other", the yellow of collectives) take dark text, so a label reads in both themes. */
function readableOn(fillCss: string, colours: FlameColours): string {
  const lightness = (css: string): number => {
    const [r, g, b] = resolveColor(css, '#808080');
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const fill = lightness(fillCss);
  return Math.abs(lightness(colours.foreground) - fill) >= Math.abs(lightness(colours.background) - fill)
    ? colours.foreground
    : colours.background;
}
