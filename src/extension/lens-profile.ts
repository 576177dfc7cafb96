// A training config's Profile lens: its title carries the simulated step time, computed in the engine worker. A
// step can take seconds on a large model, so resolving waits a bounded time and a late step refreshes the lenses
// (glue/pending-values.ts); what was computed is kept per config version and forgotten when the file closes.
import * as vscode from 'vscode';
import type { CoreServices } from './core';
import { profileTitle, profileTooltip } from './glue/lens-label';
import { PendingValues } from './glue/pending-values';
import { untilAborted } from './glue/cancel';

/** A config's Profile lens: resolved with the simulated step time, in the worker. */
export class ProfileLens extends vscode.CodeLens {
  constructor(
    range: vscode.Range,
    readonly uri: vscode.Uri,
    readonly version: number,
  ) {
    super(range);
  }
}

/** How long resolving a Profile lens waits for its step; a later step replaces the title when it comes. */
const PROFILE_LENS_WAIT_MS = 3_000;
/** A step that takes longer than this to simulate is not worth a lens; the click still profiles it. */
const PROFILE_LENS_LIMIT_MS = 120_000;

/** The start of a config's Profile lens keys (`uri@version`): every version of one file. */
function profileKeyPrefix(uri: vscode.Uri): string {
  return `${uri.toString()}@`;
}

/** The Profile lenses' steps, keyed by config and version; `onLate` refreshes the lenses when a late step comes. */
export class ProfileLenses {
  private readonly steps: PendingValues<vscode.Command>;

  constructor(
    private readonly ctx: CoreServices,
    onLate: () => void,
  ) {
    this.steps = new PendingValues<vscode.Command>(onLate);
  }

  /** A new Profile lens for the document, with its command when its step was simulated before. */
  lens(document: vscode.TextDocument, range: vscode.Range): ProfileLens {
    const lens = new ProfileLens(range, document.uri, document.version);
    // A step simulated before needs no resolve, so it cannot be caught in the editor's resolve race
    // (glue/lens-refresh.ts).
    lens.command = this.steps.peek(`${profileKeyPrefix(document.uri)}${document.version}`);
    return lens;
  }

  /** Forgets every step and stops every simulation: the system or the settings changed. */
  clear(): void {
    this.steps.clear();
  }

  /**
   * Forgets what was kept for a closed document. Reopening a file starts again at version 1: what was kept for it
   * (a failure, a step that never came) must not answer for the reopened file.
   */
  forget(uri: vscode.Uri): void {
    this.steps.forget(profileKeyPrefix(uri));
  }

  async resolve(lens: ProfileLens): Promise<void> {
    const file = profileKeyPrefix(lens.uri);
    const key = `${file}${lens.version}`;
    // An edit makes a new version: the step of the old text is no longer worth computing.
    this.steps.dropPendingExcept(file, key);
    const command = await this.steps.get(key, (signal) => this.profileCommand(lens.uri, signal), PROFILE_LENS_WAIT_MS);
    lens.command = command ?? {
      title: vscode.l10n.t('$(sync~spin) Profile · simulating the step…'),
      command: 'collectiveProfiler.profileTrainingConfig',
      arguments: [lens.uri],
    };
  }

  /** The Profile lens's command: the simulated step in its title, or a plain Profile that says why not. */
  private async profileCommand(uri: vscode.Uri, signal: AbortSignal): Promise<vscode.Command> {
    const plain = (why: string): vscode.Command => ({
      title: vscode.l10n.t('$(pulse) Profile'),
      command: 'collectiveProfiler.profileTrainingConfig',
      arguments: [uri],
      tooltip: vscode.l10n.t(
        'Simulate the training step on its system: timeline, phase breakdown and busbw charts. ({0})',
        why,
      ),
    });
    const abort = new AbortController();
    const stop = (): void => abort.abort();
    const timer = setTimeout(stop, PROFILE_LENS_LIMIT_MS);
    signal.addEventListener('abort', stop, { once: true });
    try {
      const { training } = await import('./lazy');
      // The limit covers the whole step, the config's reading included, not only the worker: a pending step that
      // never ends would keep the lens at "simulating" for as long as the file stays open.
      const step = await untilAborted(training.stepSummary(this.ctx, uri, abort.signal), abort.signal);
      return {
        title: profileTitle(step),
        tooltip: profileTooltip(step),
        command: 'collectiveProfiler.profileTrainingConfig',
        arguments: [uri],
      };
    } catch (error) {
      // A config the parser refuses already has its error in Problems; the lens still offers the full profile.
      const message = error instanceof Error ? error.message : String(error);
      return plain(
        abort.signal.aborted
          ? vscode.l10n.t('no step estimate: it took too long or was cancelled')
          : vscode.l10n.t('no step estimate: {0}', message),
      );
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
    }
  }
}
