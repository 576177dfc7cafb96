// Entry point of the timeline panel: builds the page, receives traces from the host and wires the view,
// the overview, the details and the search box together.
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-textfield/index.js';
import {
  PHASES,
  asMicros,
  type Flow,
  type Lane,
  type Span,
  type Trace,
  type TraceMetadata,
} from '../../src/engine/index';
import type { TimelineState, ToWebview, TraceSource } from '../../src/protocol';
import { el } from '../shared/dom';
import { t } from '../shared/strings';
import { cssRgba, onThemeChange } from '../shared/theme';
import { runInSlices, type SliceReport } from '../shared/slices';
import { StateSaver } from '../shared/state-saver';
import { loadState, log, onHostMessage, post, saveState } from '../shared/vscode-api';
import { drawCounter, traceCounterSteps, type CounterSeries } from './counters';
import { renderFlows, renderSpanDetails, renderTooltip } from './details';
import { drawFlows, flowSet, flowsOf, peerFlows, type FlowSet } from './flows';
import { lineAt, restoredLayoutState, savedLayoutState } from './layout';
import { attachInteraction } from './interaction';
import { renderLegend } from './legend';
import { TimelineModel, type SpanColumns } from './model';
import { spanMask, type FlameNode } from './flame';
import { RangeCounter } from './range-details';
import { Overview } from './overview';
import { TimelineView } from './view';
import { nextMatchAfter, searchMask } from './search';
import {
  details,
  exportButton,
  filter,
  HINT,
  lanesCanvas,
  legend,
  matchCount,
  message,
  overviewCanvas,
  placeTooltip,
  rangeLabel,
  reset,
  title,
  tooltip,
} from './page';

const view = new TimelineView(lanesCanvas);
const overview = new Overview(overviewCanvas, view);
let source: TraceSource | undefined;
let saved = loadState<TimelineState>('timeline');
let pending:
  | { metadata: TraceMetadata; lanes: readonly Lane[]; spans: Span[]; totalSpans: number; source?: TraceSource }
  | undefined;
/** The shown trace's flow arrows and counters; counters are computed after the first paint. */
let flows: FlowSet | undefined;
let counters: CounterSeries[] = [];
/** How the last counters computation ran (its longest slice is how long input waited); the benchmark reads it. */
let counterReport: SliceReport | undefined;

/** What a reload of the panel restores; nothing is written before a trace is shown, so a reload keeps the last. */
const saver = new StateSaver<TimelineState>(
  () =>
    view.model
      ? {
          panel: 'timeline',
          source,
          viewStartUs: asMicros(view.view.startUs),
          viewEndUs: asMicros(view.view.endUs),
          scrollTopPx: view.scrollTopPx,
          filter: filter.value || undefined,
          selectedSpan: view.selected >= 0 ? view.model.originalIndex(view.selected) : undefined,
          ...savedLayoutState(view.layoutState),
        }
      : undefined,
  saveState,
);
saver.flushOnPageHide(window, document);

const rangeCounter = new RangeCounter(
  () => ({
    phaseCss: (phase) => view.phaseCss(phase),
    foreground: view.palette.foreground,
    background: cssRgba(view.palette.background),
    highlight: view.palette.border,
  }),
  (node) => highlightSpans(node),
);

view.onViewChange = () => {
  rangeLabel.textContent = view.describeView();
  overview.draw();
  saver.schedule();
};
// A fold or a pin is one click: saved at once, so a reload right after it keeps it.
view.onLayoutChange = () => saver.saveNow();

function showDetails(): void {
  const model = view.model;
  const sections: HTMLElement[] = [];
  if (model && view.selected >= 0) {
    sections.push(renderSpanDetails(model, view.selected, (file, line) => post({ type: 'openSource', file, line })));
    const linked = flows ? flowsOf(flows, view.selected) : undefined;
    if (linked && linked.incoming.length + linked.outgoing.length > 0)
      sections.push(renderFlows(model, linked, (sorted) => selectAndReveal(sorted)));
  }
  if (model && view.range) sections.push(...rangeCounter.sections(model, view.range.startUs, view.range.endUs));
  // No range: a count still running for an earlier one is dropped.
  else rangeCounter.drop();
  details.replaceChildren(...(sections.length > 0 ? sections : [el('span', { class: 'muted' }, HINT)]));
}

/** Selects a span (a flow's other end) and brings it into view, keeping the zoom. */
function selectAndReveal(sorted: number): void {
  const model = view.model;
  if (!model) return;
  view.selected = sorted;
  const half = (view.view.endUs - view.view.startUs) / 2;
  const center = (model.start[sorted] + model.end[sorted]) / 2;
  if (model.end[sorted] < view.view.startUs || model.start[sorted] > view.view.endUs)
    view.setView({ startUs: center - half, endUs: center + half });
  view.invalidate();
  showDetails();
  post({ type: 'selectSpan', spanIndex: model.originalIndex(sorted) });
}

// Counter lines and flow arrows are drawn over the spans, under the selection.
view.drawExtras = (visible, scale) => {
  const model = view.model;
  if (!model) return;
  const window = { startUs: view.view.startUs, endUs: view.view.endUs, leftPx: scale.leftPx, widthPx: scale.widthPx };
  const colours = {
    fill: view.phaseCss(PHASES.indexOf('exchange')),
    text: view.palette.foreground,
    background: cssRgba(view.palette.background),
  };
  for (const index of visible) {
    const line = lineAt(view.layout, index);
    // A folded counters group shows its first counter, the busbw, on its header line.
    const counter =
      line?.kind === 'counter' ? line.counter : line?.kind === 'group' && line.folded ? line.counters[0] : undefined;
    if (counter !== undefined && counters[counter])
      drawCounter(view, counters[counter], view.lineTopPx(index), window, colours);
  }
  if (flows && flows.from.length > 0)
    drawFlows(view, model, flows, scale, view.selected, { normal: view.palette.muted, selected: view.palette.border });
};

attachInteraction(view, {
  hover(sorted, clientX, clientY) {
    if (sorted < 0 || !view.model) {
      tooltip.hidden = true;
      return;
    }
    renderTooltip(tooltip, view.model, sorted);
    tooltip.hidden = false;
    placeTooltip(clientX, clientY);
  },
  select(sorted) {
    view.selected = sorted;
    view.invalidate();
    showDetails();
    saver.saveNow();
    const model = view.model;
    if (!model || sorted < 0) return;
    // The host opens the span's source line from its own copy of the trace, and sums the span up in the status bar.
    post({ type: 'selectSpan', spanIndex: model.originalIndex(sorted) });
  },
  range() {
    // The statistics come from the spans this panel holds; the host is not asked for them.
    showDetails();
  },
  clearSelection() {
    view.selected = -1;
    view.range = undefined;
    view.invalidate();
    showDetails();
  },
});

/** Dims every span but those of a flame graph node clicked in the range's details; no node clears the search. */
function highlightSpans(node: FlameNode | undefined): void {
  if (!view.model) return;
  filter.value = '';
  view.mask = node ? spanMask(node, view.model.spanCount) : null;
  matchCount.textContent = node ? t('{0} spans of {1} highlighted', formatCount(node.spans.length), node.name) : '';
  view.invalidate();
}

/** Dims every span that does not match the search text; Enter jumps to the next match. */
function applyFilter(): void {
  const model = view.model;
  const query = filter.value.trim().toLowerCase();
  if (!model || query === '') {
    view.mask = null;
    matchCount.textContent = '';
  } else {
    const { mask, count } = searchMask(model, query);
    view.mask = mask;
    matchCount.textContent = count === 1 ? t('1 match') : t('{0} matches', formatCount(count));
  }
  view.invalidate();
  saver.schedule();
}

function nextMatch(): void {
  const { model, mask } = view;
  if (!model || !mask) return;
  const afterUs = view.selected >= 0 ? model.start[view.selected] : view.view.startUs;
  const best = nextMatchAfter(model, mask, afterUs);
  if (best < 0) return;
  view.selected = best;
  const half = (view.view.endUs - view.view.startUs) / 2;
  const center = (model.start[best] + model.end[best]) / 2;
  view.setView({ startUs: center - half, endUs: center + half });
  showDetails();
}

let filterTimer: number | undefined;
filter.addEventListener('input', () => {
  window.clearTimeout(filterTimer);
  filterTimer = window.setTimeout(applyFilter, 150);
});
filter.addEventListener('keydown', (event) => {
  if ((event as KeyboardEvent).key === 'Enter') nextMatch();
});
reset.addEventListener('click', () => view.setView(view.bounds));
exportButton.addEventListener('click', () => post({ type: 'exportTrace' }));

/** Shows a model, restoring the saved view when it is the same trace as before a reload. */
function show(model: TimelineModel, from?: TraceSource, traceFlows: readonly Flow[] = []): void {
  source = from;
  flows = traceFlows.length > 0 ? flowSet(model, traceFlows) : undefined;
  counters = [];
  message.hidden = true;
  title.textContent = model.metadata.title || t('Trace timeline');
  // The facts (predicted time, what was mirrored or cut) are what the drawing is to be read against.
  const facts = Object.entries(model.metadata.facts ?? {}).map(([key, value]) => `${key}: ${String(value)}`);
  title.title = [model.metadata.title, model.metadata.system, t('{0} spans', formatCount(model.spanCount)), ...facts]
    .filter(Boolean)
    .join(' · ');
  const restore = saved && saved.source?.uri !== undefined && saved.source.uri === from?.uri ? saved : undefined;
  view.setModel(
    model,
    restore?.viewStartUs !== undefined && restore.viewEndUs !== undefined
      ? { startUs: restore.viewStartUs, endUs: restore.viewEndUs }
      : undefined,
  );
  // Folds and pins first: they decide how tall the content is that the saved scroll position is in.
  if (restore) {
    view.layoutState = restoredLayoutState(model.rows, restore);
    view.relayout();
  }
  view.scrollTopPx = 0;
  if (restore?.scrollTopPx) view.scrollByPx(restore.scrollTopPx);
  filter.value = restore?.filter ?? '';
  if (restore?.filter) applyFilter();
  saved = undefined;
  rangeLabel.textContent = view.describeView();
  overview.rebuild();
  refreshLegend();
  showDetails();
  saver.saveNow();
  // Counters walk every transfer once and sort their edges: after the first paint, in slices between frames, so a
  // large trace shows without waiting for them and a key or a click never waits behind them for long.
  counterReport = undefined;
  void runInSlices((clock) => traceCounterSteps(model, clock), { cancelled: () => view.model !== model }).then(
    (done) => {
      if (!done || view.model !== model) return;
      counters = done.value;
      counterReport = done.report;
      view.counterLabels = counters.map((c) => c.label);
      view.relayout();
    },
    (error: unknown) => log('error', `counter tracks: ${error instanceof Error ? error.message : String(error)}`),
  );
}

function refreshLegend(): void {
  if (view.model) renderLegend(legend, view.model, (key) => view.phaseCss(key));
}

/** 1234567 → "1,234,567"; toLocaleString would load locale data on its first call, on the first-paint path. */
function formatCount(value: number): string {
  return String(Math.round(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

function showMessage(text: string, isError: boolean): void {
  message.textContent = text;
  message.className = isError ? 'message error' : 'message';
  message.hidden = false;
}

function showTrace(trace: Trace, from?: TraceSource): void {
  // The trace's own flows, and the ring steps of a simulated collective linked rank to peer.
  show(TimelineModel.fromTrace(trace), from, [...(trace.flows ?? []), ...peerFlows(trace.spans)]);
}

function handle(msg: ToWebview): void {
  switch (msg.type) {
    case 'trace':
      showTrace(msg.trace, msg.source);
      break;
    case 'traceBegin':
      pending = { metadata: msg.metadata, lanes: msg.lanes, spans: [], totalSpans: msg.totalSpans, source: msg.source };
      showMessage(t('Receiving {0} spans…', formatCount(msg.totalSpans)), false);
      break;
    case 'traceChunk':
      if (!pending) break;
      for (const span of msg.spans) pending.spans.push(span);
      showMessage(
        t('Receiving spans… {0} of {1}', formatCount(pending.spans.length), formatCount(pending.totalSpans)),
        false,
      );
      break;
    case 'traceEnd':
      if (pending)
        showTrace(
          { metadata: pending.metadata, lanes: pending.lanes, spans: pending.spans, flows: msg.flows },
          pending.source,
        );
      pending = undefined;
      break;
    case 'reveal':
      view.setView({ startUs: msg.startUs, endUs: msg.endUs });
      break;
    case 'theme':
      view.refreshTheme();
      overview.rebuild();
      refreshLegend();
      break;
    case 'error':
      showMessage(msg.message, true);
      break;
    default:
      break;
  }
}

onHostMessage((msg) => {
  try {
    handle(msg);
  } catch (error) {
    showMessage(t('Could not show the trace: {0}', error instanceof Error ? error.message : String(error)), true);
    log('error', message.textContent ?? '');
  }
});
onThemeChange(() => {
  view.refreshTheme();
  overview.rebuild();
  refreshLegend();
});
new ResizeObserver(() => {
  view.resize();
  overview.rebuild();
}).observe(lanesCanvas);

// A handle for tests and the benchmark: they feed spans generated in the page through the same model and view.
Object.assign(window, {
  collectiveProfilerTimeline: {
    view,
    /** Flow arrows as [from, to] sorted positions, and the counters' labels: what tests check the drawing against. */
    flows: (): [number, number][] => (flows ? [...flows.from].map((f, i) => [f, flows!.to[i]]) : []),
    counterLabels: (): string[] => counters.map((c) => c.label),
    counterReport: (): SliceReport | undefined => counterReport,
    /** How the last range's statistics were counted, once they are shown. */
    rangeReport: (): SliceReport | undefined => rangeCounter.report,
    loadColumns(metadata: TraceMetadata, lanes: readonly Lane[], columns: SpanColumns): void {
      show(TimelineModel.fromColumns(metadata, lanes, columns));
    },
  },
});
post({ type: 'ready', panel: 'timeline' });
