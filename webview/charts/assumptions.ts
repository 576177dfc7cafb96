// The Assumptions card of the charts panel: what a training profile or bucket sweep assumed (model, sequence
// length, micro-batch, compute efficiency, bucket size), where each value came from, and a way to change them
// and run the same command again. The form's reading (changedValues) is pure, so Node tests check it; the card
// itself only builds DOM through el(), so a config's strings are never markup.
import {
  ASSUMPTION_BOUNDS,
  type AssumptionField,
  type AssumptionKey,
  type TrainingAssumptions,
  type TrainingChanges,
} from '../../src/protocol';
import { el } from '../shared/dom';
import { t } from '../shared/strings';

/** Every string the card shows, read through t() when it is drawn, so the page's localised table applies. */
export const ASSUMPTION_STRINGS = {
  title: () => t('Assumptions'),
  intro: (config: string) => t('What {0} did not say was assumed. Change a value and re-run.', config),
  labels: (): Record<AssumptionKey, string> => ({
    model: t('Model'),
    sequenceLength: t('Sequence length (tokens)'),
    microBatchSize: t('Micro-batch per GPU (sequences)'),
    computeEfficiencyPct: t('Compute efficiency (% of peak matmul)'),
    bucketMiB: t('Gradient bucket (MiB)'),
  }),
  origins: (): Record<AssumptionField['origin'], string> => ({
    config: t('from the config'),
    default: t('assumed'),
    panel: t('set here'),
  }),
  others: () => t('Also assumed'),
  rerun: (): Record<TrainingAssumptions['command'], string> => ({
    profile: t('Re-run profile'),
    sweep: t('Re-run sweep'),
  }),
  running: () => t('Running again with the changed values…'),
  unchanged: () => t('Nothing changed: edit a value first.'),
  notNumber: (label: string) => t('{0}: not a number', label),
  outOfRange: (label: string, min: number, max: number, integer: boolean) =>
    integer
      ? t('{0}: must be a whole number between {1} and {2}', label, min, max)
      : t('{0}: must be between {1} and {2}', label, min, max),
};

/**
 * Reads the form: the values that differ from what the run used, checked against the protocol's bounds (the host
 * checks them again). Returns the changes, or the first problem in words.
 */
export function changedValues(
  fields: readonly AssumptionField[],
  entered: Readonly<Partial<Record<AssumptionKey, string>>>,
): { changes: TrainingChanges } | { error: string } {
  const changes: Record<string, string | number> = {};
  for (const field of fields) {
    const raw = entered[field.key]?.trim();
    if (raw === undefined || raw === '' || raw === String(field.value)) continue;
    if (field.key === 'model') {
      changes.model = raw;
      continue;
    }
    const label = ASSUMPTION_STRINGS.labels()[field.key];
    const value = Number(raw);
    if (!Number.isFinite(value)) return { error: ASSUMPTION_STRINGS.notNumber(label) };
    if (value === field.value) continue;
    const bounds = ASSUMPTION_BOUNDS[field.key];
    if (value < bounds.min || value > bounds.max || (bounds.integer && !Number.isInteger(value)))
      return { error: ASSUMPTION_STRINGS.outOfRange(label, bounds.min, bounds.max, bounds.integer) };
    changes[field.key] = value;
  }
  if (Object.keys(changes).length === 0) return { error: ASSUMPTION_STRINGS.unchanged() };
  return { changes: changes as TrainingChanges };
}

/** The control for one field: a list of presets for the model, a number box for the rest. */
function control(field: AssumptionField): HTMLInputElement | HTMLSelectElement {
  const id = `assumption-${field.key}`;
  if (field.key === 'model') {
    const select = el('select', { id, name: field.key });
    const names = field.choices ?? [];
    // A model a config.json describes is not a preset: it stays the first choice, under its own name.
    if (!names.includes(String(field.value)))
      select.append(el('option', { value: String(field.value) }, String(field.value)));
    for (const name of names) select.append(el('option', { value: name }, name));
    select.value = String(field.value);
    return select;
  }
  const bounds = ASSUMPTION_BOUNDS[field.key];
  return el('input', {
    id,
    name: field.key,
    type: 'number',
    min: String(bounds.min),
    max: String(bounds.max),
    step: bounds.integer ? '1' : 'any',
    value: String(field.value),
  });
}

/**
 * Builds the card. `rerun` is called with the changes when the user asks for a re-run; the card then says it is
 * running until the panel receives new data (which redraws the card) or an error (`showError`).
 */
export function renderAssumptions(
  assumptions: TrainingAssumptions,
  rerun: (changes: TrainingChanges) => void,
): { card: HTMLElement; showError(message: string): void } {
  const controls = assumptions.fields.map((field) => ({ field, input: control(field) }));
  const status = el('p', { class: 'assumption-status', 'aria-live': 'polite' });
  const button = el('button', { type: 'button', class: 'rerun' }, ASSUMPTION_STRINGS.rerun()[assumptions.command]);
  const rows = el('div', { class: 'assumption-fields' });
  for (const { field, input } of controls) {
    rows.append(
      el('label', { for: input.id }, ASSUMPTION_STRINGS.labels()[field.key]),
      input,
      el('span', { class: `origin origin-${field.origin}` }, ASSUMPTION_STRINGS.origins()[field.origin]),
    );
  }
  const submit = (): void => {
    const entered: Partial<Record<AssumptionKey, string>> = {};
    for (const { field, input } of controls) entered[field.key] = input.value;
    const result = changedValues(assumptions.fields, entered);
    if ('error' in result) {
      status.textContent = result.error;
      status.className = 'assumption-status error';
      return;
    }
    status.textContent = ASSUMPTION_STRINGS.running();
    status.className = 'assumption-status';
    button.disabled = true;
    rerun(result.changes);
  };
  button.addEventListener('click', submit);
  rows.addEventListener('keydown', (event) => {
    if ((event as KeyboardEvent).key === 'Enter') submit();
  });
  const card = el(
    'section',
    { class: 'card assumptions', 'data-note': ASSUMPTION_STRINGS.title() },
    el(
      'h2',
      {},
      el('span', { class: 'codicon codicon-settings-gear', 'aria-hidden': 'true' }),
      ` ${ASSUMPTION_STRINGS.title()}`,
    ),
    el('p', { class: 'verdict' }, ASSUMPTION_STRINGS.intro(assumptions.config)),
    rows,
  );
  if (assumptions.others.length > 0)
    card.append(
      el('h3', {}, ASSUMPTION_STRINGS.others()),
      el('ul', {}, ...assumptions.others.map((line) => el('li', {}, line))),
    );
  card.append(el('div', { class: 'assumption-actions' }, button, status));
  return {
    card,
    showError(message: string): void {
      status.textContent = message;
      status.className = 'assumption-status error';
      button.disabled = false;
    },
  };
}
