// A Python file's engine lenses: the predicted time of a collective call (simulated in the extension host, cached
// per system, kind and size) and the busbw that a DDP bucket size reaches. Neither recommends a bucket size: that
// needs the step model of a training config (Sweep Bucket Size, glue/bucket-advice.ts).
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
import type { PythonLensSite } from './glue/lens-sites';
import {
  LATENCY_PROBE_BYTES,
  bucketBandwidth,
  bucketTitle,
  predictionTitle,
  predictionTooltip,
} from './glue/lens-label';
import type { CallSize } from './glue/call-size';

export const MB = asBytes(1024 * 1024);

/** A collective call's lens: its predicted time for the size the Profile command would use for it. */
export class PredictionLens extends vscode.CodeLens {
  constructor(
    range: vscode.Range,
    readonly uri: vscode.Uri,
    readonly site: PythonLensSite,
    readonly size: CallSize,
  ) {
    super(range);
  }
}

/** A DDP bucket_cap_mb's lens: the AllReduce busbw of that bucket size. */
export class BucketLens extends vscode.CodeLens {
  constructor(
    range: vscode.Range,
    readonly currentBytes: number,
  ) {
    super(range);
  }
}

/** Resolves Python lenses on the selected system; its cache is cleared when the system or the settings change. */
export class PythonLenses {
  /** Simulations keyed by system, kind and size, so scrolling back does not simulate again. */
  private readonly cache = new Map<string, CollectiveResult>();

  constructor(private readonly ctx: CoreServices) {}

  clear(): void {
    this.cache.clear();
  }

  async resolvePrediction(lens: PredictionLens): Promise<void> {
    this.predict(lens, await selectedSystem(this.ctx));
  }

  /** Predicts at once when the selected system is resolved already; otherwise resolveCodeLens does. */
  predictNow(lens: PredictionLens): void {
    const selected = this.ctx.resolvedSystem;
    if (!selected) return;
    try {
      this.predict(lens, selected);
    } catch {
      // Left unresolved: resolveCodeLens tries again and says why in the lens and the log.
      lens.command = undefined;
    }
  }

  async resolveBucket(lens: BucketLens): Promise<void> {
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
