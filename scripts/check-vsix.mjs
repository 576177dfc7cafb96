// Lists a packaged .vsix (a zip) and checks what it ships: the bundles, the grammar wasm, the webview bundles,
// the schemas and the harness must be there; sources, tests, benchmarks, node_modules and source maps must not.
// The README and the docs/ pages inside the package must link only to files the package holds: there is no public
// repository to rewrite relative links against (`vsce --no-rewrite-relative-links`), so they resolve only inside
// the unpacked extension. Prints the size. Usage: node scripts/check-vsix.mjs collective-profiler.vsix
import { readFileSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inflateRawSync } from 'node:zlib';

/** Reads the file names from a zip's central directory (no dependency needed for listing). */
export function zipEntries(buffer) {
  const eocdSignature = 0x06054b50;
  let eocd = -1;
  for (let i = buffer.length - 22; i >= Math.max(0, buffer.length - 65_557); i--) {
    if (buffer.readUInt32LE(i) === eocdSignature) {
      eocd = i;
      break;
    }
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
    const method = buffer.readUInt16LE(offset + 10);
    const compressedSize = buffer.readUInt32LE(offset + 20);
    const localHeader = buffer.readUInt32LE(offset + 42);
    entries.push({
      name: buffer.toString('utf8', offset + 46, offset + 46 + nameLength),
      size,
      method,
      compressedSize,
      localHeader,
    });
    offset += 46 + nameLength + extra + comment;
  }
  return entries;
}

export const REQUIRED = [
  'extension/package.json',
  'extension/package.nls.json',
  'extension/dist/extension.js',
  'extension/dist/extension-lazy.js',
  'extension/dist/extension-shared.js',
  'extension/dist/extension-worker.js',
  'extension/dist/cli.js',
  // The launcher's entry point; the commands' chunks beside it are named by hash.
  'extension/dist/cli/main.cjs',
  // The CLI's worker threads (sweep); without it the shipped CLI would run every sweep serially.
  'extension/dist/cli-worker.js',
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

/** The text of one stored or deflated entry of a zip read by zipEntries. */
export function zipText(buffer, entry) {
  if (buffer.readUInt32LE(entry.localHeader) !== 0x04034b50) throw new Error(`corrupt local header for ${entry.name}`);
  const start =
    entry.localHeader + 30 + buffer.readUInt16LE(entry.localHeader + 26) + buffer.readUInt16LE(entry.localHeader + 28);
  const data = buffer.subarray(start, start + entry.compressedSize);
  if (entry.method === 0) return data.toString('utf8');
  if (entry.method === 8) return inflateRawSync(data).toString('utf8');
  throw new Error(`${entry.name}: zip method ${entry.method} is not stored or deflated`);
}

/**
 * The relative targets of a Markdown text's links and images, outside code, without their #anchor. A code span may
 * run over a line break (CommonMark), not over a blank line.
 */
export function relativeLinks(markdown) {
  const prose = markdown
    .replace(/^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[ \t]*$/gm, '')
    .replace(/`(?:[^`\n]|\n(?![ \t]*\n))*`/g, '');
  const targets = [];
  for (const match of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = match[1];
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) continue;
    targets.push(decodeURI(target.split('#')[0]));
  }
  return targets;
}

/** The shipped Markdown pages whose links must resolve inside the package: the README and docs/. */
export function isCheckedPage(name) {
  return name === 'extension/readme.md' || (name.startsWith('extension/docs/') && name.endsWith('.md'));
}

/** `page: link` for every relative link of `pages` (entry name -> text) that names nothing in the package. */
export function linkProblems(pages, names) {
  const files = new Set(names);
  const problems = [];
  for (const [page, text] of pages) {
    for (const target of relativeLinks(text)) {
      const resolved = posix.normalize(posix.join(posix.dirname(page), target)).replace(/\/$/, '');
      const found = files.has(resolved) || names.some((name) => name.startsWith(`${resolved}/`));
      if (!found) problems.push(`${page} links to ${target}, which the package does not hold`);
    }
  }
  return problems;
}

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
  const buffer = readFileSync(file);
  const names = entries.map((e) => e.name);
  const pages = new Map(entries.filter((e) => isCheckedPage(e.name)).map((e) => [e.name, zipText(buffer, e)]));
  const problems = [...checkEntries(names), ...linkProblems(pages, names)];
  const bytes = statSync(file).size;
  const byFolder = new Map();
  for (const e of entries) {
    const folder = e.name.split('/').slice(0, 3).join('/');
    byFolder.set(folder, (byFolder.get(folder) ?? 0) + e.size);
  }
  for (const [folder, size] of [...byFolder].sort((a, b) => b[1] - a[1]).slice(0, 12))
    console.log(`${(size / 1024).toFixed(0).padStart(8)} KiB  ${folder}`);
  console.log(`${file}: ${entries.length} files, ${(bytes / 1024 / 1024).toFixed(2)} MB packed`);
  if (problems.length > 0) {
    for (const p of problems) console.error(`vsix check: ${p}`);
    process.exit(1);
  }
  console.log(
    `vsix check: grammar wasm, webview bundles, schemas and harness present; no sources or tests; the links of ${pages.size} README and docs pages resolve inside the package.`,
  );
}
