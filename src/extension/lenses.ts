// Code lenses. `provideCodeLenses` only scans text (cheap, see glue/lens-sites.ts); `resolveCodeLens` runs the
// engine on the selected system for the lenses the editor actually shows. Every kind has its own setting.
import * as vscode from 'vscode';
import {
  simulateCollective,
  sweepAllReduce,
  type CollectiveKind,
  type CollectiveResult,
  asBytes,
} from '../engine/index';
import type { CoreServices } from './core';
import { selectedSystem, type SelectedSystem } from './system';
import {
  configFormatOf,
  deepSpeedLensSites,
  measurementLensSites,
  pythonLensSites,
  type MeasurementLensSite,
  type PythonLensSite,
} from './glue/lens-sites';
import {
  LATENCY_PROBE_BYTES,
  bucketBandwidth,
  bucketTitle,
  predictionTitle,
  predictionTooltip,
  profileTitle,
  profileTooltip,
} from './glue/lens-label';
import { callSize, type CallSize } from './glue/call-size';
import { PendingValues } from './glue/pending-values';
import { LensRefresh } from './glue/lens-refresh';
import { untilAborted } from './glue/cancel';
import type { FindingsStore } from './findings-store';
import { ruleInfo } from '../analysis/rules';

const MB = asBytes(1024 * 1024);

class PredictionLens extends vscode.CodeLens {
  constructor(
    range: vscode.Range,
    readonly uri: vscode.Uri,
    readonly site: PythonLensSite,
    readonly size: CallSize,
  ) {
    super(range);
  }
}

/** A config's Profile lens: resolved with the simulated step time, in the worker. */
class ProfileLens extends vscode.CodeLens {
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

class BucketLens extends vscode.CodeLens {
  constructor(
    range: vscode.Range,
    readonly currentBytes: number,
  ) {
    super(range);
  }
}

export class CollectiveLensProvider implements vscode.CodeLensProvider {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  /** Every refresh goes through this: it waits while a resolve runs (glue/lens-refresh.ts says why). */
  private readonly refreshes = new LensRefresh(() => this.changed.fire());
  /** Simulations keyed by system, kind and size, so scrolling back does not simulate again. */
  private readonly cache = new Map<string, CollectiveResult>();
  /** Profile lens commands keyed by config and its version; cleared with the system and the settings. */
  private readonly profiles = new PendingValues<vscode.Command>(() => this.refresh());

  constructor(
    private readonly ctx: CoreServices,
    private readonly findings: FindingsStore,
  ) {
    ctx.push(
      this.changed,
      this.refreshes,
      ctx.onDidChangeSystem(() => {
        this.cache.clear();
        this.profiles.clear();
        this.refresh();
      }),
      ctx.onDidChangeSettings(() => {
        this.cache.clear();
        this.profiles.clear();
        this.refresh();
      }),
      findings.onDidChange(() => this.refresh()),
      // Reopening a file starts again at version 1: what was kept for it (a failure, a step that never came) must
      // not answer for the reopened file.
      vscode.workspace.onDidCloseTextDocument((document) => this.profiles.forget(profileKeyPrefix(document.uri))),
    );
  }

  /** Tells the editor to ask for the lenses again, once no resolve is running. */
  refresh(): void {
    this.refreshes.request();
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const lenses = this.ctx.settings.lenses;
    const text = document.getText();
    const out: vscode.CodeLens[] = [];
    if (document.languageId === 'python') {
      const sites = pythonLensSites(text);
      for (const site of sites) {
        const range = new vscode.Range(site.line, site.column, site.line, site.endColumn);
        if (site.kind === 'bucket') {
          if (lenses.bucketRecommendation)
            out.push(
              new BucketLens(
                range,
                site.bucketCapMb !== undefined ? site.bucketCapMb * MB : this.ctx.settings.defaultBucketBytes,
              ),
            );
        } else if (lenses.collectives) {
          // The same size the Profile command and its panel use for this call (glue/call-size.ts).
          const lens = new PredictionLens(
            range,
            document.uri,
            site,
            callSize(text, sites, site, this.ctx.settings.defaultBucketBytes),
          );
          this.predictNow(lens);
          out.push(lens);
        }
      }
      if (lenses.scalingWarnings) {
        for (const finding of this.findings.get(document.uri)) {
          const range = new vscode.Range(finding.range.startLine, 0, finding.range.startLine, 0);
          out.push(
            new vscode.CodeLens(range, {
              title: vscode.l10n.t('$(warning) {0}: {1}', finding.code, ruleInfo(finding.code).title),
              tooltip: finding.message,
              command: 'collectiveProfiler.showScalingCheck',
              arguments: [document.uri, finding.range.startLine],
            }),
          );
        }
      }
      return out;
    }
    const configFormat = lenses.configFiles ? configFormatOf(document.fileName, text) : undefined;
    if (configFormat) {
      const top = new vscode.Range(0, 0, 0, 0);
      // A whole training step can take a second to simulate for a large model, too long to block the extension
      // host: the lens resolves in the engine worker, and the click opens the full profile.
      const profile = new ProfileLens(top, document.uri, document.version);
      // A step simulated before needs no resolve (predict says why that matters).
      profile.command = this.profiles.peek(`${profileKeyPrefix(document.uri)}${document.version}`);
      out.push(profile);
      out.push(
        new vscode.CodeLens(top, {
          title: vscode.l10n.t('Sweep buckets'),
          command: 'collectiveProfiler.sweepBucketSize',
          arguments: [document.uri],
          tooltip: vscode.l10n.t('Sweep bucket_cap_mb from 1 to 1024 MB through the step model'),
        }),
      );
      // A model's config.json says nothing about how gradients are reduced, which is what Scaling checks.
      if (configFormat === 'hf-model') return out;
      out.push(
        new vscode.CodeLens(top, {
          title: vscode.l10n.t('Scaling'),
          command: 'collectiveProfiler.showScalingCheck',
          arguments: [document.uri],
          tooltip: vscode.l10n.t(
            'Run the gradient-scaling check: summed vs averaged gradients against the single-GPU reference',
          ),
        }),
      );
      return out;
    }
    if (!lenses.measurementFiles) return out;
    const sites =
      document.languageId === 'nccl-tests' || document.languageId === 'nccl-log'
        ? measurementLensSites(document.languageId, text)
        : deepSpeedLensSites(text);
    for (const site of sites) out.push(...this.measurementLenses(document.uri, site));
    return out;
  }

  /** Import · Compare with model, on an nccl-tests run, an NCCL_DEBUG log or a DeepSpeed comms log. */
  private measurementLenses(uri: vscode.Uri, site: MeasurementLensSite): vscode.CodeLens[] {
    const range = new vscode.Range(site.line, 0, site.line, 0);
    const title =
      site.format === 'deepspeed'
        ? vscode.l10n.t('$(cloud-download) Import DeepSpeed {0}', site.test ?? '')
        : site.test
          ? vscode.l10n.t('$(cloud-download) Import {0}', site.test)
          : vscode.l10n.t('$(cloud-download) Import');
    return [
      new vscode.CodeLens(range, { title, command: 'collectiveProfiler.importMeasurements', arguments: [uri] }),
      new vscode.CodeLens(range, {
        title: vscode.l10n.t('Compare with model'),
        command: 'collectiveProfiler.compareWithModel',
        arguments: [uri],
      }),
    ];
  }

  resolveCodeLens(lens: vscode.CodeLens): Promise<vscode.CodeLens> {
    return this.refreshes.track(() => this.resolveLens(lens));
  }

  private async resolveLens(lens: vscode.CodeLens): Promise<vscode.CodeLens> {
    try {
      if (lens instanceof ProfileLens) await this.resolveProfile(lens);
      else if (lens instanceof PredictionLens) await this.resolvePrediction(lens);
      else if (lens instanceof BucketLens) await this.resolveBucket(lens);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.ctx.log.warn(`Code lens: ${message}`);
      lens.command = {
        title: vscode.l10n.t('$(warning) no prediction (see the log)'),
        tooltip: message,
        command: 'collectiveProfiler.showLog',
      };
    }
    return lens;
  }

  private async resolvePrediction(lens: PredictionLens): Promise<void> {
    this.predict(lens, await selectedSystem(this.ctx));
  }

  /**
   * Fills in a prediction lens's title and command. Done already in provideCodeLenses once the system is known: a
   * lens that needs no resolve cannot be caught in the editor's race between a resolve and a newer provide (see
   * glue/lens-refresh.ts), which left a '≈' lens whose command had been released (e2e: "Actual command not found").
   */
  private predict(lens: PredictionLens, selected: SelectedSystem): void {
    if (!selected.ok) {
      lens.command = {
        title: vscode.l10n.t('$(warning) select a system to see predictions'),
        tooltip: selected.error,
        command: 'collectiveProfiler.selectSystem',
      };
      return;
    }
    const bytes = lens.size.bytes;
    const results = lens.site.collectives.map((kind) => this.simulate(selected.label, selected.system, kind, bytes));
    const floorUs = this.simulate(
      selected.label,
      selected.system,
      lens.site.collectives[0] ?? 'allreduce',
      LATENCY_PROBE_BYTES,
    ).timeUs;
    const unit =
      lens.site.kind === 'collective' || lens.site.kind === 'jax'
        ? 'tensor'
        : lens.site.kind === 'fsdp'
          ? 'units'
          : 'buckets';
    lens.command = {
      title: predictionTitle(results, bytes, unit, floorUs),
      tooltip: predictionTooltip(selected.label, lens.size, results),
      command: 'collectiveProfiler.profileAllReduceAtCursor',
      arguments: [lens.uri, lens.site.line],
    };
  }

  /** Predicts at once when the selected system is resolved already; otherwise resolveCodeLens does. */
  private predictNow(lens: PredictionLens): void {
    const selected = this.ctx.resolvedSystem;
    if (!selected) return;
    try {
      this.predict(lens, selected);
    } catch {
      // Left unresolved: resolveCodeLens tries again and says why in the lens and the log.
      lens.command = undefined;
    }
  }

  private async resolveProfile(lens: ProfileLens): Promise<void> {
    const file = profileKeyPrefix(lens.uri);
    const key = `${file}${lens.version}`;
    // An edit makes a new version: the step of the old text is no longer worth computing.
    this.profiles.dropPendingExcept(file, key);
    const command = await this.profiles.get(
      key,
      (signal) => this.profileCommand(lens.uri, signal),
      PROFILE_LENS_WAIT_MS,
    );
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

  private async resolveBucket(lens: BucketLens): Promise<void> {
    const selected = await selectedSystem(this.ctx);
    if (!selected.ok) {
      lens.command = {
        title: vscode.l10n.t('$(warning) select a system for a bucket recommendation'),
        tooltip: selected.error,
        command: 'collectiveProfiler.selectSystem',
      };
      return;
    }
    const rows = sweepAllReduce(selected.system, { minBytes: MB, maxBytes: asBytes(1024 * MB), factor: 2 });
    const share = bucketBandwidth(rows, lens.currentBytes);
    lens.command = share
      ? {
          title: bucketTitle(share),
          tooltip: vscode.l10n.t(
            "AllReduce busbw of this bucket size on {0}. Bandwidth alone does not pick a bucket: smaller buckets start communicating earlier in the backward pass. Click to sweep bucket_cap_mb through a training config's step model; its best size is the one with the lowest step time.",
            selected.label,
          ),
          command: 'collectiveProfiler.sweepBucketSize',
        }
      : { title: vscode.l10n.t('no bucket recommendation'), command: 'collectiveProfiler.showLog' };
  }

  private simulate(
    label: string,
    system: Parameters<typeof simulateCollective>[0],
    kind: CollectiveKind,
    bytes: number,
  ): CollectiveResult {
    const key = `${label}|${kind}|${bytes}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const result = simulateCollective(system, { kind, bytes: asBytes(bytes) });
    if (this.cache.size > 500) this.cache.clear();
    this.cache.set(key, result);
    return result;
  }
}

/** The start of a config's Profile lens keys (`uri@version`): every version of one file. */
function profileKeyPrefix(uri: vscode.Uri): string {
  return `${uri.toString()}@`;
}

/** Where lenses are offered: Python, the two measurement languages, and JSON/YAML configs. */
export const LENS_SELECTOR: vscode.DocumentSelector = [
  { language: 'python' },
  { language: 'nccl-tests' },
  { language: 'nccl-log' },
  { language: 'json', pattern: '**/*.json' },
  { language: 'jsonc', pattern: '**/*.json' },
  { language: 'yaml' },
  // DeepSpeed comms logs are plain text or VS Code's log language; provideCodeLenses looks for their lines.
  { language: 'log' },
  { language: 'plaintext', pattern: '**/*.{txt,log,out}' },
];
