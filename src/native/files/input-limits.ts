// The size limits for files users name, one per kind of file. Each is far above real files of that kind and
// below what the reader can hold: a config is parsed into a tree several times its size, a whole-file trace must
// fit in one V8 string (which stops near 512 MiB), and a streamed trace is read in pieces, so only time bounds it.
// docs/limits.md lists them with the reasons; test/unit/native/input-file.test.ts checks the two agree.
import { formatBytes, asBytes } from '../../engine/index';

export type InputKind = 'config' | 'source' | 'measurement' | 'streamed-trace' | 'dataset';

export const INPUT_LIMITS_BYTES: Readonly<Record<InputKind, number>> = {
  /** System files, training configs, model config.json, DeepSpeed JSON, launch scripts: real ones are kilobytes. */
  config: 4 * 1024 * 1024,
  /** Python files for `check`: the analysis stops at 8,000,000 characters. */
  source: 8 * 1024 * 1024,
  /** Measurements read whole (nccl-tests output, NCCL logs, gzipped traces, calibration JSON). */
  measurement: 256 * 1024 * 1024,
  /** Plain Chrome/Kineto traces streamed in 4 MiB pieces: memory stays bounded, reading 16 GiB takes minutes. */
  'streamed-trace': 16 * 1024 * 1024 * 1024,
  /** Calibration and validation data sets (`validate --dataset`). */
  dataset: 64 * 1024 * 1024,
};

/** The project's one size formatter (engine/units.ts), under the name the readers use for their limits. */
export function formatLimitBytes(bytes: number): string {
  return formatBytes(asBytes(bytes));
}
