// Text for the hover tooltip, the selected span's details and a selected range's statistics. Every string is
// set through textContent (dom.ts), so names and paths from a trace can never become markup.
import { PHASES, formatBytes, formatMicros, asMicros } from '../../src/engine/index';
import { el, factList } from '../shared/dom';
import { t } from '../shared/strings';
import type { NameAggregate } from './aggregate';
import type { TimelineModel } from './model';
import { rangeSummary, type RangeStats } from './range-stats';

/** Label/value pairs describing the span at a sorted position. */
export function spanFacts(model: TimelineModel, sorted: number): [string, string][] {
  const span = model.spanAt(sorted);
  const durationUs = asMicros(model.end[sorted] - model.start[sorted]);
  const facts: [string, string][] = [
    [t('phase'), PHASES[model.phase[sorted]]],
    [t('lane'), model.rows[model.rowOf(sorted)].label],
    [t('start'), formatMicros(asMicros(model.start[sorted] - model.startUs))],
    [t('duration'), formatMicros(durationUs)],
  ];
  if (!span) return facts;
  if (span.bytes > 0) {
    facts.push([t('bytes'), formatBytes(span.bytes)]);
    if (durationUs > 0) facts.push([t('bandwidth'), `${(span.bytes / (durationUs * 1e3)).toFixed(1)} GB/s`]);
  }
  if (span.links.length > 0) facts.push([span.links.length === 1 ? t('link') : t('links'), span.links.join(', ')]);
  if (span.step >= 0) facts.push([t('step'), String(span.step)]);
  facts.push([t('channel'), String(span.channel)]);
  if (span.chunk >= 0) facts.push([t('chunk'), String(span.chunk)]);
  // Imported traces that do not say which rank they ran on carry -1: a thread or process id is not shown as a rank.
  if (span.rank >= 0) facts.push([t('rank'), String(span.rank)]);
  if (span.source) facts.push([t('source'), `${span.source.file}:${span.source.line}`]);
  for (const [key, value] of Object.entries(span.args ?? {}).slice(0, 12)) facts.push(argFact(key, value));
  return facts;
}

/**
 * A span argument as a person reads it: a time field named in µs (readyUs, waitedUs) becomes "ready 649 ms"
 * rather than "readyUs 649364.699"; camelCase keys become words.
 */
export function argFact(key: string, value: string | number): [string, string] {
  const time = /^(.*?)Us$/.exec(key);
  const words = (name: string): string => name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  if (time && typeof value === 'number' && Number.isFinite(value))
    return [words(time[1]), formatMicros(asMicros(value))];
  return [words(key), String(value)];
}

export function spanTitle(model: TimelineModel, sorted: number): string {
  return model.spanAt(sorted)?.name ?? PHASES[model.phase[sorted]];
}

/** Fills the tooltip with the span's name and facts. */
export function renderTooltip(tooltip: HTMLElement, model: TimelineModel, sorted: number): void {
  tooltip.replaceChildren(el('div', { class: 'name' }, spanTitle(model, sorted)), factList(spanFacts(model, sorted)));
}

/** The details section for a selected span, with a link to its source line when it has one. */
export function renderSpanDetails(
  model: TimelineModel,
  sorted: number,
  openSource: (file: string, line: number) => void,
): HTMLElement {
  const span = model.spanAt(sorted);
  const section = el(
    'section',
    { class: 'span-details' },
    el('h3', {}, t('Selected span')),
    el('div', { class: 'name' }, spanTitle(model, sorted)),
  );
  const facts = spanFacts(model, sorted).filter(([label]) => label !== t('source'));
  const list = factList(facts);
  if (span?.source) {
    const { file, line } = span.source;
    const link = el(
      'a',
      { class: 'source', role: 'link', tabindex: '0', title: t('Open the source line') },
      `${file}:${line}`,
    );
    link.addEventListener('click', () => openSource(file, line));
    link.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') openSource(file, line);
    });
    list.append(el('dt', {}, t('source')), el('dd', {}, link));
  }
  section.append(list);
  return section;
}

/** The statistics of a selected time range: its length, what moved in it, and each phase's share (rangeSummary). */
export function renderRangeStats(stats: RangeStats, phaseCss: (phase: number) => string): HTMLElement {
  const facts: [string, string | Node][] = rangeSummary(stats).map((line) => {
    if (line.phase === undefined) return [line.label, line.text];
    const swatch = el('span', { class: 'swatch' });
    swatch.style.background = phaseCss(line.phase);
    return [line.label, el('span', {}, swatch, line.text)];
  });
  return el('section', { class: 'range-stats' }, el('h3', {}, t('Selected range')), factList(facts));
}

/** Rows of the aggregate shown at most; the rest are summed up in one line. */
export const AGGREGATE_ROWS = 25;

/** The flame-style aggregate of a range: per name its total and self time and span count, longest total first. */
export function renderAggregate(rows: readonly NameAggregate[]): HTMLElement {
  const section = el('section', { class: 'aggregate' }, el('h3', {}, t('Slices in range')));
  if (rows.length === 0) {
    section.append(el('span', { class: 'muted' }, t('no span in the range')));
    return section;
  }
  const longest = rows[0].totalUs;
  const table = el(
    'table',
    {},
    el(
      'tr',
      {},
      el('th', {}, t('name')),
      el('th', {}, t('total')),
      el('th', {}, t('self')),
      el('th', {}, t('count')),
      el('th', {}),
    ),
  );
  for (const row of rows.slice(0, AGGREGATE_ROWS)) {
    const bar = el('span', { class: 'bar' });
    bar.style.width = `${longest > 0 ? Math.round((80 * row.totalUs) / longest) : 0}px`;
    table.append(
      el(
        'tr',
        {},
        el('td', { class: 'name', title: row.name }, row.name),
        el('td', { class: 'num' }, formatMicros(asMicros(row.totalUs))),
        el('td', { class: 'num' }, formatMicros(asMicros(row.selfUs))),
        el('td', { class: 'num' }, String(row.count)),
        el('td', {}, bar),
      ),
    );
  }
  section.append(table);
  if (rows.length > AGGREGATE_ROWS)
    section.append(el('div', { class: 'muted' }, t('and {0} more names', rows.length - AGGREGATE_ROWS)));
  return section;
}

/** The flows into and out of the selected span; each names the span at its other end and selects it on click. */
export function renderFlows(
  model: TimelineModel,
  linked: { incoming: readonly number[]; outgoing: readonly number[] },
  select: (sorted: number) => void,
): HTMLElement {
  const link = (sorted: number): HTMLElement => {
    const anchor = el(
      'a',
      { role: 'link', tabindex: '0', title: t('Select this span') },
      `${spanTitle(model, sorted)} (${model.rows[model.rowOf(sorted)].label})`,
    );
    anchor.addEventListener('click', () => select(sorted));
    anchor.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') select(sorted);
    });
    return anchor;
  };
  const facts: [string, Node][] = [
    ...linked.incoming.map((s): [string, Node] => [t('from'), link(s)]),
    ...linked.outgoing.map((s): [string, Node] => [t('to'), link(s)]),
  ];
  return el('section', { class: 'flows' }, el('h3', {}, t('Flows')), factList(facts));
}
