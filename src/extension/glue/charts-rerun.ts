// What a charts panel restored after a window reload needs to run its training profile or bucket sweep again: the
// command, the config's URI and the changes the shown run was made with. They travel inside the panel's saved
// ChartsData (its assumptions), which the webview wrote: everything is checked here before the host acts on it.
// Pure: no vscode, so unit tests check it directly.
import { ASSUMPTION_KEYS, trainingChangesProblem, type AssumptionKey, type TrainingChanges } from '../../protocol';

export interface ChartsRerun {
  readonly command: 'profile' | 'sweep';
  readonly configUri: string;
  /** The changes the shown run was made with: the fields whose origin is the panel. */
  readonly changes: TrainingChanges;
}

/** Longest config URI accepted from a saved state; a real path is far shorter. */
const MAX_URI_LENGTH = 4096;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The re-run a restored panel's saved assumptions describe, or undefined when they describe none (a panel saved
 * before they named their config, a scaling check) or are malformed.
 */
export function restoredRerun(assumptions: unknown): ChartsRerun | undefined {
  if (!isRecord(assumptions)) return undefined;
  const { command, configUri, fields } = assumptions;
  if (command !== 'profile' && command !== 'sweep') return undefined;
  if (typeof configUri !== 'string' || configUri.length === 0 || configUri.length > MAX_URI_LENGTH) return undefined;
  if (!Array.isArray(fields)) return undefined;
  const changes: Record<string, unknown> = {};
  for (const field of fields as unknown[]) {
    if (!isRecord(field) || field.origin !== 'panel') continue;
    if (!ASSUMPTION_KEYS.includes(field.key as AssumptionKey)) return undefined;
    changes[field.key as string] = field.value;
  }
  // The same check a change from the panel's card passes: a saved state cannot smuggle in what a message cannot.
  if (trainingChangesProblem(changes) !== undefined) return undefined;
  return { command, configUri, changes: changes as TrainingChanges };
}

/** The command a re-run runs. */
export function rerunCommandId(command: ChartsRerun['command']): string {
  return command === 'profile' ? 'collectiveProfiler.profileTrainingConfig' : 'collectiveProfiler.sweepBucketSize';
}
