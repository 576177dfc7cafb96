// What a training profile or bucket sweep assumed, as the charts panel shows it, and the panel's changes turned
// back into a run. The changes become the last part of the run (config/training-run.ts merges parts in order), so
// a value typed in the panel wins over every config file and goes through the same checks as one in a file.
// Pure: no vscode, so the unit tests build the same card the panel shows.
import { asBytes, type DefaultedValue, type TrainingRun } from '../../engine/index';
import type { RunPart } from '../../config/run-part';
import { DEFAULT_SYSTEM_PRESET } from '../../config/training-run';
import { l10n } from './l10n';
import type { AssumptionField, AssumptionKey, TrainingAssumptions, TrainingChanges } from '../../protocol';

const MiB = 1024 * 1024;

/** The run value each changeable assumption stands for, which tells whether a default filled it. */
const DEFAULTED_BY: Readonly<Record<AssumptionKey, DefaultedValue>> = {
  model: 'model',
  sequenceLength: 'sequenceLength',
  microBatchSize: 'microBatchSize',
  computeEfficiencyPct: 'computeEfficiency',
  bucketMiB: 'bucketBytes',
};

/** Where the panel's changes come from, named in errors the assembler raises about them. */
export const PANEL_SOURCE = { format: 'panel', file: 'the Assumptions card of the charts panel' } as const;

/**
 * The run part that applies the panel's changes, or undefined when there are none. A model is a preset by name
 * (`lookupPreset` resolves it; an unknown name is an error that lists the presets). Keys left out stay absent, so
 * merging the part changes nothing else.
 */
export function changesPart(
  changes: TrainingChanges,
  lookupPreset: (name: string) => RunPart['model'],
  presetNames: readonly string[],
): RunPart | undefined {
  const training: Record<string, unknown> = {};
  if (changes.sequenceLength !== undefined) training.sequenceLength = changes.sequenceLength;
  if (changes.microBatchSize !== undefined) training.microBatchSize = changes.microBatchSize;
  if (changes.computeEfficiencyPct !== undefined) training.computeEfficiency = changes.computeEfficiencyPct / 100;
  if (changes.bucketMiB !== undefined) training.bucketBytes = asBytes(Math.round(changes.bucketMiB * MiB));
  let model: RunPart['model'];
  if (changes.model !== undefined) {
    model = lookupPreset(changes.model);
    if (!model)
      throw new Error(l10n.t("unknown model preset '{0}'; the presets are {1}", changes.model, presetNames.join(', ')));
  }
  if (model === undefined && Object.keys(training).length === 0) return undefined;
  return {
    source: PANEL_SOURCE,
    ...(model ? { model } : {}),
    ...(Object.keys(training).length > 0 ? { training } : {}),
  };
}

/** Earlier changes with later ones on top: the panel sends only what the user edited this time. */
export function mergeChanges(earlier: TrainingChanges, later: TrainingChanges): TrainingChanges {
  return { ...earlier, ...later };
}

/** The value a run used for one assumption, as the panel shows it (efficiency in %, the bucket in MiB). */
function valueOf(run: TrainingRun, key: AssumptionKey): number | string {
  switch (key) {
    case 'model':
      return run.model.name;
    case 'sequenceLength':
      return run.training.sequenceLength;
    case 'microBatchSize':
      return run.training.microBatchSize;
    case 'computeEfficiencyPct':
      return Math.round(run.training.computeEfficiency * 1000) / 10;
    case 'bucketMiB':
      return Math.round((run.training.bucketBytes / MiB) * 1000) / 1000;
  }
}

/**
 * The Assumptions card for a run: each changeable value with where it came from (the panel's changes, a default,
 * or a config), and the other defaults in words. `changes` are the ones this run was made with.
 */
export function trainingAssumptions(
  run: TrainingRun,
  command: TrainingAssumptions['command'],
  config: string,
  changes: TrainingChanges,
  presetNames: readonly string[],
): TrainingAssumptions {
  const defaulted = run.defaulted ?? {};
  // FSDP and ZeRO-3 have no gradient bucket to change (their collectives follow the sharded units).
  const keys: AssumptionKey[] = ['model', 'sequenceLength', 'microBatchSize', 'computeEfficiencyPct'];
  if (run.training.wrapper !== 'fsdp' && run.training.wrapper !== 'zero3') keys.push('bucketMiB');
  const fields: AssumptionField[] = keys.map((key) => ({
    key,
    value: valueOf(run, key),
    origin: changes[key] !== undefined ? 'panel' : defaulted[DEFAULTED_BY[key]] !== undefined ? 'default' : 'config',
    ...(key === 'model' ? { choices: presetNames } : {}),
  }));
  // The words of the defaults the fields already show are not repeated under them. The default system's words
  // name the CLI's flag; in the editor the status bar's system picker is what changes it.
  const shown = new Set(keys.map((key) => defaulted[DEFAULTED_BY[key]]).filter((w): w is string => Boolean(w)));
  const others = run.assumed
    .filter((words) => !shown.has(words))
    .map((words) =>
      words === defaulted.system
        ? l10n.t(
            'system {0}: no config names one (Select System in the status bar picks another)',
            DEFAULT_SYSTEM_PRESET,
          )
        : words,
    );
  return { command, config, fields, others };
}
