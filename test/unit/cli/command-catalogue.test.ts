// The CLI's entry point knows its commands through the catalogue (names, summaries, loaders), and the built CLI is
// split at each command's import. These tests keep the catalogue equal to the commands, and check on the split
// build (scripts/cli-bundle.mjs, as scripts/build.mjs builds it) that the entry point loads no command's code and
// that `simulate` with a preset loads neither the YAML parser, the schema validator nor tree-sitter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMANDS } from '../../../src/cli/commands/index';
import { COMMAND_CATALOGUE } from '../../../src/cli/commands/catalogue';
import { ROOT } from './run-cli';

test('the catalogue names every command, in order, with its summary, and loads that command', async () => {
  assert.deepEqual(
    COMMAND_CATALOGUE.map((c) => [c.name, c.summary]),
    COMMANDS.map((c) => [c.name, c.summary]),
  );
  for (const entry of COMMAND_CATALOGUE) {
    const loaded = await entry.load();
    assert.equal(
      loaded,
      COMMANDS.find((c) => c.name === entry.name),
    );
  }
});

interface Metafile {
  readonly outputs: Record<
    string,
    {
      readonly entryPoint?: string;
      readonly imports: readonly { readonly path: string; readonly kind: string; readonly external?: boolean }[];
      readonly inputs: Record<string, unknown>;
    }
  >;
}

/** The split CLI's outputs, built as scripts/build.mjs builds them (into a temporary folder). */
async function splitBuild(): Promise<Metafile> {
  const esbuild = await import('esbuild');
  const { cliTarget } = (await import(join(ROOT, 'scripts', 'cli-bundle.mjs'))) as {
    cliTarget: (common: object) => Record<string, unknown>;
  };
  const target = cliTarget({ bundle: true, sourcemap: false, minify: false, logLevel: 'error' });
  const result = await esbuild.build({
    ...target,
    absWorkingDir: ROOT,
    outdir: mkdtempSync(join(tmpdir(), 'cp-cli-split-')),
    metafile: true,
    write: false,
  });
  return result.metafile as Metafile;
}

/** Every input (source file or package file) an output loads with its static imports, the output included. */
function staticInputs(meta: Metafile, output: string): Set<string> {
  const inputs = new Set<string>();
  const seen = new Set<string>();
  const queue = [output];
  while (queue.length > 0) {
    const path = queue.pop()!;
    if (seen.has(path)) continue;
    seen.add(path);
    const out = meta.outputs[path];
    assert.ok(out, `output ${path} is in the build`);
    for (const input of Object.keys(out.inputs)) inputs.add(input);
    for (const imported of out.imports)
      if (imported.kind === 'import-statement' && !imported.external) queue.push(imported.path);
  }
  return inputs;
}

const HEAVY = [/node_modules\/yaml\//, /node_modules\/ajv\//, /node_modules\/web-tree-sitter\//];

test('the split CLI: the entry point loads no command, simulate loads no YAML, ajv or tree-sitter', async () => {
  const meta = await splitBuild();
  const outputs = Object.entries(meta.outputs);
  const main = outputs.find(([, o]) => o.entryPoint === 'src/cli/main.ts');
  assert.ok(main, 'src/cli/main.ts is the entry point');
  const atStart = [...staticInputs(meta, main[0])];
  for (const input of atStart) {
    assert.ok(!/src\/cli\/commands\/(?!catalogue)/.test(input), `the entry point loads ${input}`);
    assert.ok(!input.startsWith('src/engine/'), `the entry point loads the engine (${input})`);
    assert.ok(!HEAVY.some((h) => h.test(input)), `the entry point loads ${input}`);
  }
  // Each command is a dynamic import of the entry point, built as a chunk of its own.
  const dynamic = main[1].imports.filter((i) => i.kind === 'dynamic-import').map((i) => i.path);
  assert.equal(dynamic.length, COMMANDS.length);
  const simulate = dynamic.find((path) => 'src/cli/commands/simulate.ts' in meta.outputs[path].inputs);
  assert.ok(simulate, 'simulate has a chunk');
  const simulateInputs = [...staticInputs(meta, simulate)];
  assert.ok(simulateInputs.includes('src/engine/simulate.ts'));
  for (const input of simulateInputs) assert.ok(!HEAVY.some((h) => h.test(input)), `simulate loads ${input}`);
  assert.ok(!simulateInputs.includes('src/config/positioned.ts'), 'simulate loads the config parser');
  // The heavy packages are still in the build, behind the commands that use them.
  const all = outputs.flatMap(([, o]) => Object.keys(o.inputs));
  for (const heavy of HEAVY)
    assert.ok(
      all.some((input) => heavy.test(input)),
      `${String(heavy)} is bundled`,
    );
});
