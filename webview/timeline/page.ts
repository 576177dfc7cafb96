// The timeline panel's page: its toolbar, canvases, tooltip and details, built once when main.ts imports it.
import { el } from '../shared/dom';
import { t } from '../shared/strings';

export const HINT = t(
  'Click a span for its details; shift+drag (or drag on the time axis) selects a range. W/S zoom, A/D pan, ctrl+wheel zooms.',
);

const app = document.getElementById('app')!;
export const title = el('span', { class: 'title' }, t('Trace timeline'));
export const rangeLabel = el('span', { class: 'range-label muted', 'aria-live': 'polite' });
export const filter = el('vscode-textfield', {
  class: 'filter',
  placeholder: t('Search spans (name, phase, lane)'),
  'aria-label': t('Search spans'),
}) as HTMLElement & { value: string };
export const matchCount = el('span', { class: 'match-count muted' });
export const reset = el(
  'vscode-button',
  { secondary: '', icon: 'screen-full', title: t('Show the whole trace') },
  t('Reset zoom'),
);
export const exportButton = el(
  'vscode-button',
  { secondary: '', icon: 'export', title: t('Export as Chrome/Perfetto JSON') },
  t('Export…'),
);
export const legend = el('div', { class: 'legend timeline-legend', 'aria-label': t('Colour legend') });
export const overviewCanvas = el('canvas', { class: 'overview', 'aria-label': t('Trace overview') });
export const lanesCanvas = el('canvas', {
  class: 'lanes',
  tabindex: '0',
  'aria-label': t('Trace timeline: W/S zoom, A/D pan'),
});
export const tooltip = el('div', { class: 'tooltip', hidden: '', role: 'tooltip' });
export const details = el('div', { class: 'details' }, el('span', { class: 'muted' }, HINT));
export const message = el('div', { class: 'message' }, t('Waiting for a trace…'));
app.append(
  el('div', { class: 'toolbar' }, title, rangeLabel, filter, matchCount, reset, exportButton),
  legend,
  overviewCanvas,
  el('div', { class: 'lanes-wrap' }, lanesCanvas, tooltip),
  message,
  details,
);

/** Puts the shown tooltip beside the pointer, flipped above it where it would leave the lanes' box. */
export function placeTooltip(clientX: number, clientY: number): void {
  const box = lanesCanvas.getBoundingClientRect();
  const left = Math.min(clientX - box.left + 14, box.width - tooltip.offsetWidth - 4);
  const top =
    clientY - box.top + 16 + tooltip.offsetHeight > box.height
      ? clientY - box.top - tooltip.offsetHeight - 8
      : clientY - box.top + 16;
  tooltip.style.left = `${Math.max(0, left)}px`;
  tooltip.style.top = `${Math.max(0, top)}px`;
}
