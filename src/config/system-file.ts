// Reads a system file (YAML or JSON) into a SystemSpec: schema first, then the GPU catalogue, then the engine's
// own consistency checks, so every mistake comes back as one positioned `file:line:col: message` error.
import { EngineError, GPU_CATALOGUE, findGpu, resolveSystem, type System, type SystemSpec } from '../engine/index';
import schema from '../../schemas/system.schema.json';
import { closestMatch } from './did-you-mean';
import { ConfigError, issueAtPath, parseAndValidate } from './positioned';

export const SYSTEM_SCHEMA: object = schema;

/** The catalogue names users may write as `gpu:`, in catalogue order. */
export function knownGpuNames(): string[] {
  return GPU_CATALOGUE.map((gpu) => gpu.name);
}

/**
 * Parses and checks a system file. Throws ConfigError (with file, line and column) when the text is not valid
 * YAML or JSON, breaks the schema, names a GPU the catalogue lacks, or describes a machine the engine cannot
 * build. Returns the spec with the `$schema` key removed.
 */
export function parseSystemFile(text: string, fileName: string): SystemSpec {
  return loadSystemFile(text, fileName).spec;
}

/** Like parseSystemFile, and also returns the resolved System, so callers need not resolve it twice. */
export function loadSystemFile(text: string, fileName: string): { spec: SystemSpec; system: System } {
  const { value, doc } = parseAndValidate<SystemSpec & { $schema?: string }>(text, fileName, SYSTEM_SCHEMA);
  const { $schema: _ignored, ...spec } = value;
  if (!findGpu(spec.gpu)) {
    const names = knownGpuNames();
    const suggestion = closestMatch(spec.gpu, names);
    const hint = suggestion ? ` (did you mean '${suggestion}'?)` : '';
    throw new ConfigError(fileName, [
      issueAtPath(doc, ['gpu'], `gpu: unknown GPU '${spec.gpu}'${hint}; known GPUs: ${names.join(', ')}`, {
        suggestion,
      }),
    ]);
  }
  if (spec.nodes > 1 && !spec.nic) {
    throw new ConfigError(fileName, [
      issueAtPath(doc, ['nodes'], `nodes: ${spec.nodes} nodes need a 'nic' section (gbps and perNode) to connect them`),
    ]);
  }
  try {
    return { spec, system: resolveSystem(spec) };
  } catch (error) {
    // The engine does not know about files; its complaint is about the system as a whole, so it points at the top.
    if (error instanceof EngineError) throw new ConfigError(fileName, [issueAtPath(doc, [], error.message)]);
    throw error;
  }
}
