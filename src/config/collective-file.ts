// Reads the extension's own training-run file (*.collective.yaml / *.collective.json), validated by
// schemas/collective.schema.json, the same schema VS Code uses to complete and check it in the editor.
import { findGpu, presetSystem, resolveSystem, type SystemSpec, type TrainingSpec } from '../engine/index';
import schema from '../../schemas/collective.schema.json';
import { closestMatch } from './did-you-mean';
import { genericModel } from './model-architectures';
import { MODEL_PRESETS } from './model-presets';
import { ConfigError, issueAtPath, parseDocument, validateAgainstSchema, type PositionedDocument } from './positioned';
import { located, type FileReference, type RunPart } from './run-part';
import { knownGpuNames } from './system-file';

export const COLLECTIVE_SCHEMA: object = schema;
const MiB = 1024 * 1024;

export function isCollectiveFileName(fileName: string): boolean {
  return /\.collective\.(ya?ml|json)$/i.test(fileName);
}

/**
 * The shipped schema accepts a preset name or an object for `system`. Validating only the branch the file uses
 * gives errors about that branch, instead of "must be a string" for a mistyped key. The variants are built once
 * (the validator caches compiled schemas by identity) and drop the `$id`, which must stay unique.
 */
function systemBranch(index: number): object {
  const { $id: _id, ...base } = COLLECTIVE_SCHEMA as { $id?: string; properties: Record<string, { anyOf?: object[] }> };
  return { ...base, properties: { ...base.properties, system: base.properties.system.anyOf![index] } };
}
const SCHEMA_WITH_SYSTEM_NAME = systemBranch(0);
const SCHEMA_WITH_SYSTEM_OBJECT = systemBranch(1);

function schemaFor(value: unknown): object {
  const system = (value as { system?: unknown } | null)?.system;
  if (system === undefined) return COLLECTIVE_SCHEMA;
  return typeof system === 'string' ? SCHEMA_WITH_SYSTEM_NAME : SCHEMA_WITH_SYSTEM_OBJECT;
}

type Raw = Record<string, unknown>;

function systemPart(
  doc: PositionedDocument,
  raw: unknown,
): Pick<RunPart, 'system' | 'systemPreset' | 'nodes' | 'gpusPerNode'> & { reference?: FileReference } {
  if (raw === undefined) return {};
  const unknownPreset = (name: string, at: (string | number)[]): never => {
    throw new ConfigError(doc.fileName, [issueAtPath(doc, at, `unknown system preset '${name}'`)]);
  };
  if (typeof raw === 'string') {
    if (!presetSystem(raw)) unknownPreset(raw, ['system']);
    return { systemPreset: located(raw, doc, ['system']) };
  }
  const s = raw as Raw;
  const nodes = typeof s.nodes === 'number' ? located(s.nodes, doc, ['system', 'nodes']) : undefined;
  const gpusPerNode =
    typeof s.gpusPerNode === 'number' ? located(s.gpusPerNode, doc, ['system', 'gpusPerNode']) : undefined;
  const ways = ['preset', 'file', 'gpu'].filter((k) => k in s);
  if (ways.length !== 1) {
    throw new ConfigError(doc.fileName, [
      issueAtPath(
        doc,
        ['system'],
        `system: give exactly one of preset, file or gpu (an inline system); found ${ways.length === 0 ? 'none' : ways.join(' and ')}`,
      ),
    ]);
  }
  if (typeof s.preset === 'string') {
    if (!presetSystem(s.preset)) unknownPreset(s.preset, ['system', 'preset']);
    return { systemPreset: located(s.preset, doc, ['system', 'preset']), nodes, gpusPerNode };
  }
  if (typeof s.file === 'string')
    return { reference: { kind: 'system', path: s.file, doc, at: ['system', 'file'] }, nodes, gpusPerNode };
  const { preset: _p, file: _f, ...spec } = s;
  const gpu = String(spec.gpu);
  if (!findGpu(gpu)) {
    const suggestion = closestMatch(gpu, knownGpuNames());
    throw new ConfigError(doc.fileName, [
      issueAtPath(
        doc,
        ['system', 'gpu'],
        `system.gpu: unknown GPU '${gpu}'${suggestion ? ` (did you mean '${suggestion}'?)` : ''}`,
        { suggestion },
      ),
    ]);
  }
  const missing = ['nodes', 'gpusPerNode', 'intraNode'].filter((k) => !(k in spec));
  if (missing.length > 0)
    throw new ConfigError(doc.fileName, [
      issueAtPath(doc, ['system'], `system: an inline system needs ${missing.join(', ')}`),
    ]);
  try {
    resolveSystem(spec as unknown as SystemSpec);
  } catch (error) {
    throw new ConfigError(doc.fileName, [
      issueAtPath(doc, ['system'], `system: ${error instanceof Error ? error.message : String(error)}`),
    ]);
  }
  return { system: spec as unknown as SystemSpec };
}

export function collectivePart(doc: PositionedDocument): RunPart {
  const issues = validateAgainstSchema(doc, schemaFor(doc.value));
  if (issues.length > 0) throw new ConfigError(doc.fileName, issues);
  const c = (doc.value ?? {}) as Raw;
  const m = (c.model ?? undefined) as Raw | undefined;
  const t = (c.training ?? {}) as Raw;
  const references: FileReference[] = [];
  const part: { -readonly [K in keyof RunPart]?: RunPart[K] } = {
    source: { format: 'collective', file: doc.fileName },
  };
  if (m) {
    const ways = ['preset', 'config', 'parameters'].filter((k) => k in m);
    if (ways.length !== 1) {
      throw new ConfigError(doc.fileName, [
        issueAtPath(
          doc,
          ['model'],
          `model: give exactly one of preset, config or parameters; found ${ways.length === 0 ? 'none' : ways.join(' and ')}`,
        ),
      ]);
    }
    if (typeof m.preset === 'string') part.modelPreset = located(m.preset, doc, ['model', 'preset']);
    if (typeof m.config === 'string') references.push({ kind: 'model', path: m.config, doc, at: ['model', 'config'] });
    if (typeof m.parameters === 'number') {
      const layers = typeof m.layers === 'number' ? m.layers : 32;
      const hidden = typeof m.hidden_size === 'number' ? m.hidden_size : 4096;
      const vocab = typeof m.vocab_size === 'number' ? m.vocab_size : 32000;
      if (m.parameters <= 2 * hidden * vocab) {
        throw new ConfigError(doc.fileName, [
          issueAtPath(
            doc,
            ['model', 'parameters'],
            `model.parameters: ${m.parameters} is smaller than the embeddings of a ${hidden}-wide model with ${vocab} tokens; set hidden_size and vocab_size`,
          ),
        ]);
      }
      part.model = genericModel(
        `generic ${(m.parameters / 1e9).toFixed(1)} B-parameter transformer`,
        m.parameters,
        layers,
        hidden,
        vocab,
      );
    }
  }
  const training: { -readonly [K in keyof TrainingSpec]?: TrainingSpec[K] } = {};
  const copy = <K extends keyof TrainingSpec>(key: K, raw: unknown, scale = 1): void => {
    if (raw !== undefined) training[key] = (typeof raw === 'number' ? raw * scale : raw) as TrainingSpec[K];
  };
  copy('microBatchSize', t.micro_batch_size);
  copy('gradAccumulationSteps', t.gradient_accumulation_steps);
  copy('sequenceLength', t.sequence_length);
  copy('gradDtype', t.grad_dtype);
  copy('computeDtype', t.compute_dtype);
  copy('bucketBytes', t.bucket_cap_mb, MiB);
  copy('firstBucketBytes', t.first_bucket_mb, MiB);
  copy('allgatherBucketBytes', t.allgather_bucket_mb, MiB);
  copy('wrapper', t.wrapper);
  copy('overlapComm', t.overlap_comm);
  copy('reduceOp', t.reduce_op);
  copy('lrRule', t.lr_rule);
  copy('baseLr', t.base_lr);
  copy('computeEfficiency', t.compute_efficiency);
  copy('algorithm', t.algorithm);
  copy('protocol', t.protocol);
  part.training = training;
  if (typeof t.global_batch_size === 'number')
    part.globalBatchSize = located(t.global_batch_size, doc, ['training', 'global_batch_size']);
  const system = systemPart(doc, c.system);
  if (system.reference) references.push(system.reference);
  Object.assign(part, {
    system: system.system,
    systemPreset: system.systemPreset,
    nodes: system.nodes,
    gpusPerNode: system.gpusPerNode,
  });
  if (c.engine === 'simulated' || c.engine === 'native') part.engine = c.engine;
  part.references = references;
  return part as RunPart;
}

export function parseCollectiveFile(text: string, fileName: string): RunPart {
  return collectivePart(parseDocument(text, fileName));
}

export { MODEL_PRESETS };
