// Loads web-tree-sitter and the Python grammar in Node. Both .wasm files ship next to the bundle (dist/, copied by
// scripts/build.mjs); from source (tests, tsx) they are found in node_modules. The parser is created once.
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Parser } from 'web-tree-sitter';
import { createPythonParser } from '../analysis/parser';

const RUNTIME = 'tree-sitter.wasm';
const GRAMMAR = 'tree-sitter-python.wasm';

/** Directories to look in, nearest first: the bundle's own folder, then node_modules above it and the cwd. */
function candidateDirs(): string[] {
  const starts = [
    typeof __dirname === 'string' ? __dirname : undefined,
    process.argv[1] ? dirname(resolve(process.argv[1])) : undefined,
    process.cwd(),
  ].filter((d): d is string => !!d);
  const dirs: string[] = [];
  if (process.env.COLLECTIVE_PROFILER_WASM_DIR) dirs.push(process.env.COLLECTIVE_PROFILER_WASM_DIR);
  for (const start of starts) {
    for (let dir = start, i = 0; i < 8; i++, dir = dirname(dir)) {
      dirs.push(dir, join(dir, 'dist'));
      if (dirname(dir) === dir) break;
    }
  }
  return dirs;
}

export function findWasm(): { runtime: string; grammar: string } {
  let runtime: string | undefined;
  let grammar: string | undefined;
  for (const dir of candidateDirs()) {
    runtime ??= [join(dir, RUNTIME), join(dir, 'node_modules', 'web-tree-sitter', RUNTIME)].find(existsSync);
    grammar ??= [join(dir, GRAMMAR), join(dir, 'node_modules', 'tree-sitter-python', GRAMMAR)].find(existsSync);
    if (runtime && grammar) return { runtime, grammar };
  }
  throw new Error(
    `cannot find ${runtime ? GRAMMAR : RUNTIME}; run \`npm run build\` (it copies both .wasm files into dist/)`,
  );
}

let parser: Promise<Parser> | undefined;

export function loadPythonParser(): Promise<Parser> {
  parser ??= (async () => {
    const { runtime, grammar } = findWasm();
    return createPythonParser(runtime, grammar);
  })();
  return parser;
}
