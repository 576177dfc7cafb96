#!/usr/bin/env node
// The program users run (`bin`, `node dist/cli.js`), copied to dist/cli.js by scripts/cli-bundle.mjs. It loads the
// CLI's chunks under dist/cli/: esbuild splits the CLI at each command's dynamic import (as ES modules), and the
// build turns every chunk into the body of a CommonJS-style function, which this file compiles with vm.Script and
// runs. Node's ES module loader never starts (its own modules are compiled at run time, and it resolves, reads and
// links each file asynchronously), and vm.Script compiles a chunk faster than require(): 30-40 ms of CPU less for
// a cold `simulate` (docs/performance.md, session 17).
'use strict';
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const { Script } = require('node:vm');

/** The folder of the chunks; their imports of one another are `./chunk-….cjs`, relative to it. */
const CHUNK_DIR = join(__dirname, 'cli');
/** Each chunk's module object, made once: chunks import shared chunks, and commands load on demand. */
const loaded = new Map();

/**
 * Runs one chunk and returns its exports. A chunk sees `require` (for Node's built-ins and the other chunks), and
 * `__filename` and `__dirname` of this file: pool.ts and python-parser.ts find dist/cli-worker.js and the wasm
 * files beside it, where they were when the CLI was one file.
 */
function loadChunk(name) {
  const known = loaded.get(name);
  if (known !== undefined) return known.exports;
  const module = { exports: {} };
  loaded.set(name, module);
  const filename = join(CHUNK_DIR, name);
  // The chunk's first line stays line 1, so stack traces keep their line numbers. ES modules are strict code,
  // and the chunks were written as ES modules.
  const source = `(function (exports, require, module, __filename, __dirname) {'use strict';${readFileSync(filename, 'utf8')}\n})`;
  const run = new Script(source, { filename }).runInThisContext();
  run.call(module.exports, module.exports, requireFromChunk, module, __filename, __dirname);
  return module.exports;
}

function requireFromChunk(id) {
  return id.startsWith('./') ? loadChunk(id.slice(2)) : require(id);
}

loadChunk('main.cjs');
