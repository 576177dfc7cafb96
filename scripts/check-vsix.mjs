// Lists a packaged .vsix (a zip) and checks what it ships: the bundles, the grammar wasm, the webview bundles,
// the schemas and the harness must be there; sources, tests, benchmarks, node_modules and source maps must not.
// Prints the size. Usage: node scripts/check-vsix.mjs collective-profiler.vsix
import { readFileSync, statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** Reads the file names from a zip's central directory (no dependency needed for listing). */
export function zipEntries(buffer) {
  const eocdSignature = 0x06054b50;
  let eocd = -1;
  for (let i = buffer.length - 22; i >= Math.max(0, buffer.length - 65_557); i--) {
    if (buffer.readUInt32LE(i) === eocdSignature) { eocd = i; break; }
  }
  if (eocd < 0) throw new Error('not a zip file: no end-of-central-directory record');
  const count = buffer.readUInt16LE(eocd + 10);
  let offset = buffer.readUInt32LE(eocd + 16);
  const entries = [];
  for (let i = 0; i < count; i++) {
    if (buffer.readUInt32LE(offset) !== 0x02014b50) throw new Error(`corrupt central directory at entry ${i}`);
    const size = buffer.readUInt32LE(offset + 24);
    const nameLength = buffer.readUInt16LE(offset + 28);
    const extra = buffer.readUInt16LE(offset + 30);
    const comment = buffer.readUInt16LE(offset + 32);
    entries.push({ name: buffer.toString('utf8', offset + 46, offset + 46 + nameLength), size });
    offset += 46 + nameLength + extra + comment;
  }
  return entries;
}

export const REQUIRED = [
  'extension/package.json',
  'extension/dist/extension.js',
  'extension/dist/extension-lazy.js',
  'extension/dist/extension-worker.js',
  'extension/dist/cli.js',
  'extension/dist/tree-sitter.wasm',
  'extension/dist/tree-sitter-python.wasm',
  'extension/dist/webview/timeline.js',
  'extension/dist/webview/charts.js',
  'extension/dist/webview/topology.js',
  'extension/dist/codicons/codicon.css',
  'extension/schemas/system.schema.json',
  'extension/schemas/collective.schema.json',
  'extension/syntaxes/nccl-log.tmLanguage.json',
  'extension/syntaxes/nccl-tests.tmLanguage.json',
  'extension/harness/collective_harness.py',
  'extension/media/icon.png',
];

export const FORBIDDEN = [
  [/^extension\/src\//, 'TypeScript sources'],
  [/^extension\/webview\//, 'webview sources'],
  [/^extension\/test\//, 'tests'],
  [/^extension\/bench\//, 'benchmarks'],
  [/^extension\/scripts\//, 'build scripts'],
  [/(^|\/)node_modules\//, 'node_modules (everything is bundled)'],
  [/\.ts$/, 'TypeScript files'],
  [/\.map$/, 'source maps'],
  [/\.vsix$/, 'an older package'],
];

/** Returns the problems with a list of entry names: missing required files and forbidden ones. */
export function checkEntries(names) {
  const problems = [];
  const set = new Set(names);
  for (const required of REQUIRED) if (!set.has(required)) problems.push(`missing ${required}`);
  for (const name of names) {
    const hit = FORBIDDEN.find(([pattern]) => pattern.test(name));
    if (hit) problems.push(`must not ship ${name} (${hit[1]})`);
  }
  return problems;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const file = process.argv[2] ?? 'collective-profiler.vsix';
  const entries = zipEntries(readFileSync(file));
  const problems = checkEntries(entries.map((e) => e.name));
  const bytes = statSync(file).size;
  const byFolder = new Map();
  for (const e of entries) {
    const folder = e.name.split('/').slice(0, 3).join('/');
    byFolder.set(folder, (byFolder.get(folder) ?? 0) + e.size);
  }
  for (const [folder, size] of [...byFolder].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`${(size / 1024).toFixed(0).padStart(8)} KiB  ${folder}`);
  console.log(`${file}: ${entries.length} files, ${(bytes / 1024 / 1024).toFixed(2)} MB packed`);
  if (problems.length > 0) {
    for (const p of problems) console.error(`vsix check: ${p}`);
    process.exit(1);
  }
  console.log('vsix check: grammar wasm, webview bundles, schemas and harness present; no sources or tests.');
}
