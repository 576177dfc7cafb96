// The messages between the extension host and the engine worker. Types only, shared by both sides.
import type { StepResult, Trace, TrainingRun, TrainingSweep } from '../../engine/index';
import type { ImportResult, NcclLogFacts } from '../../native/import/index';

/** What a config's Profile lens shows: the step's figures without its trace. */
export interface StepSummary {
  readonly stepTimeUs: number;
  readonly computeUs: number;
  readonly exposedCommUs: number;
  readonly overlapPct: number;
  readonly collectives: number;
  readonly systemLabel: string;
}

export type EngineTask =
  | { readonly kind: 'profileStep'; readonly run: TrainingRun; readonly title: string }
  | { readonly kind: 'stepSummary'; readonly run: TrainingRun }
  | { readonly kind: 'sweep'; readonly run: TrainingRun; readonly range: string }
  /** A measurement file's bytes, parsed off the extension host so a long parse can be cancelled (the worker ends). */
  | { readonly kind: 'importMeasurement'; readonly bytes: Uint8Array; readonly fileName: string };

export type EngineTaskResult =
  | { readonly kind: 'profileStep'; readonly step: StepResult; readonly trace: Trace; readonly systemLabel: string }
  | ({ readonly kind: 'stepSummary' } & StepSummary)
  | { readonly kind: 'sweep'; readonly sweep: TrainingSweep; readonly systemLabel: string }
  | { readonly kind: 'importMeasurement'; readonly result: ImportResult; readonly facts?: NcclLogFacts };

export type WorkerReply =
  | { readonly ok: true; readonly result: EngineTaskResult }
  | {
      readonly ok: false;
      readonly name: string;
      readonly message: string;
      /** Where a parse error points (MeasurementParseError), so the editor can still offer Go to Error. */
      readonly line?: number;
      readonly column?: number;
      readonly file?: string;
    };
