// Entry point of the charts panel: draws every chart the host's ChartsData allows and keeps the data in the
// panel state so a reload redraws without asking the host.
import { Chart } from 'chart.js';
import type { ChartsData, ChartsState } from '../../src/protocol';
import { el } from '../shared/dom';
import { t } from '../shared/strings';
import { onThemeChange } from '../shared/theme';
import { loadState, log, onHostMessage, post, saveState } from '../shared/vscode-api';
import { chartSpecs, themeColours } from './charts';
import { renderAssumptions } from './assumptions';

const app = document.getElementById('app')!;
const title = el('span', { class: 'title' }, t('Collective charts'));
const system = el('span', { class: 'muted' });
const grid = el('div', { class: 'grid' });
const message = el('div', { class: 'message' }, t('Waiting for data…'));
app.append(el('div', { class: 'toolbar' }, title, system), message, grid);

const charts = new Map<string, Chart>();
let current: ChartsData | undefined;
/** The Assumptions card's error line, while one is shown: a failed re-run is reported there. */
let assumptionsError: ((message: string) => void) | undefined;

function draw(data: ChartsData): void {
  current = data;
  for (const chart of charts.values()) chart.destroy();
  charts.clear();
  title.textContent = data.title || t('Collective charts');
  system.textContent = data.system ?? '';
  const colours = themeColours();
  Chart.defaults.color = colours.foreground;
  Chart.defaults.borderColor = colours.grid;
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily || 'sans-serif';
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  const specs = chartSpecs(data, colours);
  const notes = data.notes ?? [];
  message.hidden = specs.length > 0 || notes.length > 0 || data.assumptions !== undefined;
  message.textContent = message.hidden ? '' : t('There is nothing to chart in this result.');
  message.className = 'message';
  // Notes (what a file holds, where it was measured) come first: the charts are read against them.
  const noteCards = notes.map((note) =>
    el(
      'section',
      { class: 'card note', 'data-note': note.title },
      el('h2', {}, note.title),
      el('ul', {}, ...note.lines.map((line) => el('li', {}, line))),
    ),
  );
  // The assumptions come before everything: every figure below follows from them.
  const assumptions = data.assumptions
    ? renderAssumptions(data.assumptions, (changes) => post({ type: 'rerunTraining', changes }))
    : undefined;
  assumptionsError = assumptions?.showError;
  grid.replaceChildren(
    ...(assumptions ? [assumptions.card] : []),
    ...noteCards,
    ...specs.map((spec) => {
      const canvas = el('canvas', { 'aria-label': spec.title, role: 'img' });
      const card = el('section', { class: 'card', 'data-chart': spec.id }, el('h2', {}, spec.title));
      if (spec.verdict) card.append(el('p', { class: 'verdict' }, spec.verdict));
      card.append(el('div', { class: 'plot' }, canvas));
      try {
        charts.set(spec.id, new Chart(canvas, spec.config));
      } catch (error) {
        card.append(
          el(
            'p',
            { class: 'message error' },
            t('This chart could not be drawn: {0}', error instanceof Error ? error.message : String(error)),
          ),
        );
        log('error', `chart ${spec.id} failed: ${String(error)}`);
      }
      return card;
    }),
  );
  saveState({ panel: 'charts', data });
}

onHostMessage((msg) => {
  if (msg.type === 'charts') draw(msg.data);
  else if (msg.type === 'theme' && current) draw(current);
  else if (msg.type === 'error' && assumptionsError) assumptionsError(msg.message);
  else if (msg.type === 'error') {
    message.textContent = msg.message;
    message.className = 'message error';
    message.hidden = false;
  }
});
onThemeChange(() => {
  if (current) draw(current);
});

const saved = loadState<ChartsState>('charts');
if (saved?.data) draw(saved.data);

// A handle for the browser tests.
Object.assign(window, { collectiveProfilerCharts: { charts } });
post({ type: 'ready', panel: 'charts' });
