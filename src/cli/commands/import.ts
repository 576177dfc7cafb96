// `import <file>`: reads nccl-tests output (text or -J JSON), an NCCL_DEBUG log, a Kineto trace (.json or
// .json.gz), DeepSpeed comms_logger output or calibration JSON, and prints what it holds.
import { formatBytes, formatMicros, traceToChromeJson, asBytes, asMicros } from '../../engine/index';
import { statSync } from 'node:fs';
import {
  importMeasurementFile,
  MeasurementFileError,
  type ImportProgress,
  type ImportStage,
} from '../../native/import-file';
import { MeasurementParseError, type ImportResult, type Measurement } from '../../native/import/model';
import { MergeError, mergeRankTraces } from '../../native/import/merge';
import { UsageError, defineCommand, type CliCommand } from '../command';
import { flagValue } from '../flag-values';
import { writeOutput } from '../../native/files/output-file';
import { FORCE_OPTION, outputFlag } from '../output-flag';
import { startProgress } from '../progress';
import { terminalInline } from '../terminal-text';

/** Imports a file for any command, turning every input problem into a one-line UsageError with its position. */
export function loadMeasurementFile(path: string, gpu?: string, onProgress?: ImportProgress): ImportResult {
  try {
    return importMeasurementFile(path, gpu ? { gpu } : {}, onProgress);
  } catch (error) {
    if (error instanceof MeasurementParseError || error instanceof MeasurementFileError)
      throw new UsageError(error.message);
    throw error;
  }
}

function jsonRows(m: Measurement): object[] {
  return m.rows.map((r) => ({
    bytes: r.bytes,
    timeUs: r.timeUs,
    algbwGBps: r.algbwGBps,
    busbwGBps: r.busbwGBps,
    ...(r.wrong !== undefined ? { wrong: r.wrong } : {}),
  }));
}

/** The `--json` shape: {kind, ranks, rows, system?} for measurements, {kind, ranks, spans} for traces. */
export function importJson(result: ImportResult): object {
  const first = result.measurements[0];
  const base = {
    kind: result.kind,
    collective: first?.collective ?? 'unknown',
    ranks: first?.ranks ?? result.trace?.metadata.ranks ?? 0,
    rows: first ? jsonRows(first) : [],
    ...(result.system ? { system: result.system } : {}),
    ...(result.measurements.length > 1
      ? {
          measurements: result.measurements.map((m) => ({
            collective: m.collective,
            ranks: m.ranks,
            rows: jsonRows(m),
          })),
        }
      : {}),
    meta: first?.meta ?? {},
    warnings: result.warnings,
  };
  if (!result.trace) return base;
  const spans = result.trace.spans.map((s) => ({
    rank: s.rank,
    phase: s.phase,
    name: s.name,
    bytes: s.bytes,
    startUs: s.startUs,
    endUs: s.endUs,
    ...(s.args ? { args: s.args } : {}),
  }));
  return { ...base, spans };
}

function summary(result: ImportResult, path: string): string {
  const out = [`${terminalInline(path)}: ${result.kind}`];
  for (const m of result.measurements) {
    // A table that `sweep` printed is read like nccl-tests output, but it is the model's prediction.
    const what =
      m.meta.prediction === true ? `a prediction by ${String(m.meta.predictedBy)} (not a measurement): ` : '';
    out.push(
      `  ${what}${m.collective} on ${m.ranks} ranks: ${m.rows.length} sizes${m.meta.ncclVersion ? `, NCCL ${String(m.meta.ncclVersion)}` : ''}`,
    );
    for (const r of m.rows) {
      const wrong = r.wrong ? `  #wrong ${r.wrong}` : '';
      out.push(
        `    ${formatBytes(asBytes(r.bytes)).padStart(10)}  ${formatMicros(asMicros(r.timeUs)).padStart(10)}  algbw ${r.algbwGBps.toFixed(2).padStart(8)} GB/s  busbw ${r.busbwGBps.toFixed(2).padStart(8)} GB/s${wrong}`,
      );
    }
  }
  if (result.trace) out.push(`  trace: ${result.trace.spans.length} spans on ${result.trace.lanes.length} lanes`);
  if (result.system) out.push(`  system: ${JSON.stringify(result.system)}`);
  for (const w of result.warnings) out.push(`  warning: ${w}`);
  return out.join('\n');
}

/** A file's size for the progress total; 0 when it cannot be read (the import then says why). */
function sizeOrZero(path: string): number {
  try {
    const info = statSync(path);
    return info.isFile() ? info.size : 0;
  } catch {
    return 0;
  }
}

function stageLabel(name: string, stage: ImportStage): string {
  return stage === 'reading' ? name : `${name} (${stage})`;
}

export const importCommand: CliCommand = defineCommand({
  name: 'import',
  summary: 'Import nccl-tests output, NCCL_DEBUG logs, Kineto traces, DeepSpeed comms logs or calibration JSON',
  positionals: '<file> [more Kineto traces...]',
  description: [
    'Reads nccl-tests stdout or its -J JSON, NCCL_DEBUG=INFO logs, PyTorch profiler traces (.json, .json.gz),',
    'DeepSpeed comms_logger output and calibration JSON. Several Kineto traces (one per rank) merge into one trace.',
    'A table printed by `sweep` is read too, and named as a prediction, not a measurement.',
  ],
  options: [
    {
      name: 'json',
      help: 'Print {kind, ranks, rows: [{bytes, timeUs, algbwGBps, busbwGBps}], system?} (traces add spans)',
    },
    {
      name: 'trace',
      value: 'file',
      help: 'Write the trace (Kineto files) as Chrome Trace Event JSON for Perfetto; - for stdout',
    },
    {
      name: 'gpu',
      value: 'name',
      help: 'GPU model for NCCL logs that do not name theirs (catalogue name, e.g. H100-SXM)',
    },
    { name: 'write-system', value: 'file', help: 'Write the system file derived from an NCCL log; - for stdout' },
    FORCE_OPTION,
  ],
  async execute({ flags, positional }, io) {
    if (positional.length === 0)
      throw new UsageError('import needs a file (several PyTorch profiler traces, one per rank, are merged)');
    const path = positional.length === 1 ? positional[0] : `${positional.length} files`;
    const traceTarget = outputFlag(flags, 'trace', { allowStdout: true });
    const systemTarget = outputFlag(flags, 'write-system', { allowStdout: true });
    if (traceTarget?.stdout && systemTarget?.stdout)
      throw new UsageError('--trace and --write-system cannot both go to stdout');
    // A large trace or log takes seconds to read and parse, and many per-rank traces add up: progress counts the
    // bytes of all the files, naming the one being read and what is being done with it.
    const progress = startProgress(io, 'import', !flags.has('json'), 'bytes');
    const sizes = positional.map(sizeOrZero);
    const totalBytes = sizes.reduce((a, b) => a + b, 0);
    let loaded: { name: string; result: ImportResult }[];
    try {
      let before = 0;
      loaded = positional.map((name, i) => {
        progress.update(before, totalBytes, name);
        const result = loadMeasurementFile(name, flagValue(flags, 'gpu'), (doneBytes, _size, stage) =>
          progress.update(before + Math.min(doneBytes, sizes[i]), totalBytes, stageLabel(name, stage)),
        );
        before += sizes[i];
        return { name, result };
      });
    } finally {
      progress.finish();
    }
    let result: ImportResult;
    try {
      result = loaded.length === 1 ? loaded[0].result : mergeRankTraces(loaded);
    } catch (error) {
      if (error instanceof MergeError) throw new UsageError(error.message);
      throw error;
    }
    if (traceTarget) {
      if (!result.trace)
        throw new UsageError(`${path} is a ${result.kind} file and has no per-rank timing to write as a trace`);
      writeOutput(traceTarget, JSON.stringify(traceToChromeJson(result.trace)));
    }
    if (systemTarget) {
      if (!result.system)
        throw new UsageError(`${path} does not describe a system (only NCCL logs and calibration JSON do)`);
      writeOutput(systemTarget, `${JSON.stringify(result.system, null, 2)}\n`);
    }
    // With an output on stdout, the summary goes to stderr so stdout holds only that output.
    (traceTarget?.stdout || systemTarget?.stdout ? io.stderr : io.stdout)(
      flags.has('json') ? JSON.stringify(importJson(result), null, 2) : summary(result, path),
    );
    return 0;
  },
});
