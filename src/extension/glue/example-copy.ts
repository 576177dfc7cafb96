// Profile Example opens the bundled training config as an untitled copy, so the user can edit and save it without
// touching the installed extension's files. An untitled document has no folder, so what the example names by a
// path relative to itself is rewritten into what needs none.

/** The bundled example, relative to the extension's folder. */
export const EXAMPLE_CONFIG = 'examples/llama2-7b-ddp.collective.yaml';

const SCHEMA_MODELINE = /^# yaml-language-server: \$schema=.*\n/;
const MODEL_CONFIG_LINE = /^(\s*)config:\s*models\/([^/\s]+)\/config\.json\s*$/m;

/**
 * The example's text for an untitled document: the relative `$schema` modeline dropped, and a model config.json
 * under models/<name>/ replaced by the built-in preset of that name (the same published dimensions). A model
 * that is not a preset stays as it is, and loading the copy then names the line it cannot resolve.
 */
export function untitledExampleText(text: string, modelPresets: readonly string[]): string {
  const body = text
    .replace(SCHEMA_MODELINE, '')
    .replace(MODEL_CONFIG_LINE, (line, indent: string, name: string) =>
      modelPresets.includes(name) ? `${indent}preset: ${name}             # the dimensions of its config.json` : line,
    );
  return `# An untitled copy of Collective Profiler's example: edit it, then save it to keep it.\n${body}`;
}
