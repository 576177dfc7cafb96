// Code lenses. `provideCodeLenses` only scans text (cheap, see glue/lens-sites.ts); `resolveCodeLens` runs the
// engine on the selected system for the lenses the editor actually shows. Every kind has its own setting. This
// file finds the lenses and tells the editor when they change; a Python call's prediction and a bucket's busbw are
// resolved in lens-python.ts, a config's simulated step in lens-profile.ts.
import * as vscode from 'vscode';
import type { CoreServices } from './core';
import {
  configFormatOf,
  deepSpeedLensSites,
  measurementLensSites,
  pythonLensSites,
  type MeasurementLensSite,
} from './glue/lens-sites';
import { callSize } from './glue/call-size';
import { LensRefresh } from './glue/lens-refresh';
import type { FindingsStore } from './findings-store';
import { ruleInfo } from '../analysis/rules';
import { BucketLens, MB, PredictionLens, PythonLenses } from './lens-python';
import { ProfileLens, ProfileLenses } from './lens-profile';

export class CollectiveLensProvider implements vscode.CodeLensProvider {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  /** Every refresh goes through this: it waits while a resolve runs (glue/lens-refresh.ts says why). */
  private readonly refreshes = new LensRefresh(() => this.changed.fire());
  /** Predictions and bucket bandwidths of Python files (lens-python.ts). */
  private readonly python: PythonLenses;
  /** Config Profile lenses and their simulated steps (lens-profile.ts). */
  private readonly profiles: ProfileLenses;

  constructor(
    private readonly ctx: CoreServices,
    private readonly findings: FindingsStore,
  ) {
    this.python = new PythonLenses(ctx);
    this.profiles = new ProfileLenses(ctx, () => this.refresh());
    ctx.push(
      this.changed,
      this.refreshes,
      ctx.onDidChangeSystem(() => {
        this.python.clear();
        this.profiles.clear();
        this.refresh();
      }),
      ctx.onDidChangeSettings(() => {
        this.python.clear();
        this.profiles.clear();
        this.refresh();
      }),
      findings.onDidChange(() => this.refresh()),
      vscode.workspace.onDidCloseTextDocument((document) => this.profiles.forget(document.uri)),
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
          this.python.predictNow(lens);
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
      out.push(this.profiles.lens(document, top));
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
      if (lens instanceof ProfileLens) await this.profiles.resolve(lens);
      else if (lens instanceof PredictionLens) await this.python.resolvePrediction(lens);
      else if (lens instanceof BucketLens) await this.python.resolveBucket(lens);
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
