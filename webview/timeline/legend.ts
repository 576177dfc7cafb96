// The colour legend above the lanes: one swatch per colour the trace uses (its phases, and backward compute
// apart from forward), in the colours the view draws with, so a reader never has to guess what orange means.
import { el } from '../shared/dom';
import { t } from '../shared/strings';
import { COLOUR_COUNT, COLOUR_KEYS, type TimelineModel } from './model';

/** What each colour key means, in the words of a training step and an NCCL collective. */
const MEANING = (): Readonly<Record<string, string>> => ({
  exchange: t('exchange (send/recv)'),
  reduce: t('reduce'),
  broadcast: t('broadcast'),
  compute: t('compute / forward'),
  collective: t('collective'),
  optimizer: t('optimizer'),
  other: t('other'),
  backward: t('backward'),
});

/** The colour keys (indices into COLOUR_KEYS) that some span of the model is drawn in, in key order. */
export function coloursUsed(model: TimelineModel): number[] {
  const seen = new Uint8Array(COLOUR_COUNT);
  let found = 0;
  const colour = model.colour;
  for (let k = 0; k < colour.length && found < COLOUR_COUNT; k++) {
    if (seen[colour[k]]) continue;
    seen[colour[k]] = 1;
    found++;
  }
  return COLOUR_KEYS.map((_, key) => key).filter((key) => seen[key]);
}

/** Fills the legend with a swatch and a label per used colour. */
export function renderLegend(legend: HTMLElement, model: TimelineModel, css: (key: number) => string): void {
  const meaning = MEANING();
  legend.replaceChildren(
    ...coloursUsed(model).map((key) => {
      const swatch = el('span', { class: 'swatch' });
      swatch.style.background = css(key);
      const name = COLOUR_KEYS[key];
      return el('span', { class: 'legend-item', 'data-key': name }, swatch, meaning[name] ?? name);
    }),
  );
}
