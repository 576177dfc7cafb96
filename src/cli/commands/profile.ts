// `profile <config>`: runs the training-step model on a training config (own *.collective.yaml, DeepSpeed,
// Accelerate, a model config.json or a torchrun/srun script), prints the summary, and optionally writes the
// step trace, applies what-ifs, and sweeps the bucket size or the node count.
import {
  applyWhatIf,
  canonicalWhatIfKey,
  EngineError,
  NumericOptionError,
  parseAssignment,
  parseSweep,
  PRESETS,
  resolveSystem,
  simulateTrainingStep,
  stepTrace,
  sweepTraining,
  summariseTrainingSweep,
  type TrainingSweep,
  traceToChromeJson,
  WHAT_IF_KEYS,
  type SweepRange,
  type TrainingRun,
} from '../../engine/index';
import { parseSystemFile } from '../../config/system-file';
import { UsageError, defineCommand, type CliCommand } from '../command';
import { enforceLimit, flagValue, positiveIntegerFlag } from '../flag-values';
import { limitForKey } from '../../config/limits';
import { asUsageError, loadTrainingRun } from '../load-training';
import { profileJson, profileText, sweepText } from '../profile-report';
import { profileScalingCheck, scalingCheckJson, scalingCheckText } from '../profile-scaling';
import { writeOutput } from '../../native/files/output-file';
import { readInputText } from '../../native/files/input-file';
import { FORCE_OPTION, outputFlag } from '../output-flag';
import { terminalInline } from '../terminal-text';
import { startProgress } from '../progress';
import { CancelledError, runParallel } from '../parallel/pool';

/** Runs engine code, turning its complaints about the input (EngineError) into exit-code-2 usage errors. */
function engine<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    if (error instanceof EngineError || error instanceof NumericOptionError || error instanceof RangeError)
      throw new UsageError(error.message);
    throw error;
  }
}

/**
 * A node sweep's points are separate systems, each priced from scratch: they run on worker threads (parallel/pool.ts)
 * and come back in the range's order, the same numbers as the serial sweep. A bucket sweep stays on this thread,
 * where one cache of priced collectives serves all of its points.
 */
async function sweepRun(run: TrainingRun, range: SweepRange): Promise<TrainingSweep> {
  if (range.key !== 'nodes') return engine(() => sweepTraining(run, range));
  const tasks = range.values.map((value) => ({ kind: 'training-point' as const, run, key: range.key, value }));
  try {
    const { results } = await runParallel(tasks, { stopOnSigint: true });
    return summariseTrainingSweep(run, range.key, results);
  } catch (error) {
    if (error instanceof CancelledError) throw error;
    return engine(() => {
      throw error;
    });
  }
}

/** A sweep whose every point is within the limits: the engine runs one training step per point. */
function checkedSweep(text: string, run: TrainingRun): SweepRange {
  const range = engine(() => parseSweep(text));
  const limit = limitForKey(range.key);
  for (const value of range.values) {
    if (limit) enforceLimit(limit, `--sweep ${range.key}`, value);
    if (range.key === 'nodes')
      enforceLimit(
        'ranks',
        `--sweep nodes=${value} × ${run.system.gpusPerNode} GPUs per node`,
        value * run.system.gpusPerNode,
      );
  }
  return range;
}

/** Spellings Number() reads as numbers that nobody means as a knob's value. */
const NON_DECIMAL_NUMBER = /^\s*[+-]?(0[xob][0-9a-f_]*|infinity|nan)\s*$/i;

function applyWhatIfs(run: TrainingRun, assignments: readonly string[]): TrainingRun {
  let out = run;
  for (const text of assignments) {
    let assignment: { key: string; value: string };
    try {
      assignment = engine(() => parseAssignment(text));
    } catch (error) {
      throw error instanceof UsageError ? new UsageError(`--what-if ${error.message}`) : error;
    }
    const { key, value } = assignment;
    // Number() also reads hex, binary, octal, Infinity and NaN; a knob's value is a decimal number as people write it.
    if (NON_DECIMAL_NUMBER.test(value))
      throw new UsageError(`--what-if ${key}=${value}: expected a decimal number, not '${value.trim()}'`);
    const limit = limitForKey(canonicalWhatIfKey(key));
    if (limit && value.trim() !== '' && !Number.isNaN(Number(value)))
      enforceLimit(limit, `--what-if ${key}`, Number(value));
    // A system file is read here, where files can be read; presets go through the engine like any knob.
    if (
      key.toLowerCase() === 'system' &&
      !Object.keys(PRESETS).some((p) => p.toLowerCase() === value.toLowerCase()) &&
      /[\\/.]/.test(value)
    ) {
      const source = readInputText(value, { kind: 'config', what: '--what-if system' });
      const system = asUsageError(() => parseSystemFile(source, value));
      out = { ...out, system };
    } else {
      out = engine(() => applyWhatIf(out, key, value));
    }
  }
  return out;
}

export const profileCommand: CliCommand = defineCommand({
  name: 'profile',
  summary: 'Profile a training config: step time, exposed communication, overlap, what-ifs and sweeps',
  positionals: '<config>',
  description: [
    'Runs the simulated training step for a config: *.collective.yaml/json, a DeepSpeed JSON (ds_config.json),',
    'an Accelerate YAML, a Hugging Face config.json, or a torchrun/srun shell script.',
  ],
  options: [
    {
      name: 'model',
      value: 'config.json|preset',
      help: 'The model (presets: gpt2, bert-base-uncased, llama-2-7b, llama-2-70b, llama-3-8b, mistral-7b, mixtral-8x7b)',
    },
    { name: 'system', value: 'preset|file', help: 'The machine', default: 'dgx-h100, scaled to the world size' },
    { name: 'nodes', value: 'n', help: 'Scale the system to n nodes' },
    { name: 'gpus-per-node', value: 'g', help: 'Use g GPUs in each node' },
    { name: 'what-if', value: 'key=value', help: `Change a knob. Keys: ${WHAT_IF_KEYS.join(', ')}`, repeatable: true },
    {
      name: 'sweep',
      value: 'key=from..to',
      help: 'bucket_cap_mb=1..1024 sweeps bucket sizes (powers of two) and recommends one; nodes=1..128 sweeps the node count (weak scaling)',
    },
    { name: 'json', help: 'Print the profile as JSON' },
    {
      name: 'trace',
      value: 'out.json',
      help: 'Write the step as Chrome Trace Event JSON (open in https://ui.perfetto.dev); - for stdout',
    },
    {
      name: 'trace-ranks',
      value: 'n',
      help: 'Ranks drawn in the trace (every rank runs the same schedule)',
      default: '8',
    },
    FORCE_OPTION,
  ],
  epilog: () =>
    'Example: collective-profiler profile examples/llama2-7b-ddp.collective.yaml --sweep bucket_cap_mb=1..1024',
  async execute({ flags, positional }, io) {
    if (positional.length !== 1)
      throw new UsageError(
        positional.length === 0
          ? 'profile needs a config file, e.g. profile examples/ds_config.json'
          : `unexpected argument '${positional[1]}'`,
      );
    const traceTarget = outputFlag(flags, 'trace', { allowStdout: true });
    // Checked with the other flags, before the profile is computed and printed.
    const traceRanksText = flagValue(flags, 'trace-ranks');
    const traceRanks =
      traceRanksText !== undefined ? positiveIntegerFlag('trace-ranks', traceRanksText, 'traceRanks') : undefined;
    const nodes = flagValue(flags, 'nodes');
    const gpusPerNode = flagValue(flags, 'gpus-per-node');
    const loaded = loadTrainingRun(positional[0], {
      model: flagValue(flags, 'model'),
      system: flagValue(flags, 'system'),
      nodes: nodes !== undefined ? positiveIntegerFlag('nodes', nodes, 'nodes') : undefined,
      gpusPerNode:
        gpusPerNode !== undefined ? positiveIntegerFlag('gpus-per-node', gpusPerNode, 'gpusPerNode') : undefined,
    });
    const run = applyWhatIfs(loaded.run, flags.get('what-if') ?? []);
    enforceLimit(
      'ranks',
      `${run.system.nodes} nodes × ${run.system.gpusPerNode} GPUs per node`,
      run.system.nodes * run.system.gpusPerNode,
    );
    const json = flags.has('json');
    const sweepText_ = flagValue(flags, 'sweep');
    // The stages of a profile, each one engine call: a sweep over many nodes or a large what-if takes seconds.
    const progress = startProgress(io, 'profile', !json);
    const stages = sweepText_ !== undefined ? 3 : 2;
    let step: ReturnType<typeof simulateTrainingStep>;
    let sweep: ReturnType<typeof sweepTraining> | undefined;
    let scaling: ReturnType<typeof profileScalingCheck>;
    try {
      progress.update(0, stages, 'simulating the step');
      const system = engine(() => resolveSystem(run.system));
      step = engine(() => simulateTrainingStep(run, { system }));
      if (sweepText_ !== undefined) progress.update(1, stages, `sweeping ${sweepText_}`);
      sweep = sweepText_ !== undefined ? await sweepRun(run, checkedSweep(sweepText_, run)) : undefined;
      progress.update(stages - 1, stages, 'checking gradient scaling');
      scaling = engine(() => profileScalingCheck(run));
    } catch (error) {
      // Interrupted during a sweep on worker threads: they are gone; exit as SIGINT would (128 + 2).
      if (error instanceof CancelledError) return 130;
      throw error;
    } finally {
      progress.finish();
    }
    const extra: Record<string, unknown> = {
      format: loaded.format,
      whatIf: flags.get('what-if') ?? [],
      scalingCheck: scalingCheckJson(scaling),
    };
    if (sweep) {
      extra.sweep = sweep.points.map((p) => ({
        value: p.value,
        stepTimeMs: Math.round(p.stepTimeUs) / 1000,
        exposedCommMs: Math.round(p.exposedCommUs) / 1000,
        collectives: p.collectives,
        scalingEfficiencyPct: Math.round(p.scalingEfficiency * 1000) / 10,
      }));
      // The swept knob names its unit (bucket_cap_mb in MB, nodes a count): `value` and `best` are in it.
      extra.sweepKey = sweep.key;
      extra.best = sweep.best;
      extra.recommendation = sweep.recommendation;
    }
    const sources = run.sources.map((s) => `${terminalInline(s.file)} (${s.format})`).join(' + ');
    // With the trace on stdout, the profile goes to stderr so stdout stays one JSON document.
    (traceTarget?.stdout ? io.stderr : io.stdout)(
      json
        ? JSON.stringify(profileJson(run, step, extra), null, 2)
        : profileText(run, step, sources) + `\n${scalingCheckText(scaling)}` + (sweep ? `\n${sweepText(sweep)}` : ''),
    );

    if (traceTarget !== undefined) {
      const trace = stepTrace(step, {
        ranks: traceRanks,
        title: `training step · ${run.model.name}`,
        gpusPerNode: run.system.gpusPerNode,
      });
      writeOutput(traceTarget, JSON.stringify(traceToChromeJson(trace)));
      const note = `trace: ${trace.spans.length} spans on ${trace.lanes.length} lanes written to ${traceTarget.stdout ? 'stdout' : traceTarget.label} (open it in https://ui.perfetto.dev)`;
      (json || traceTarget.stdout ? io.stderr : io.stdout)(note);
    }
    return 0;
  },
});
