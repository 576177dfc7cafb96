// Extracts the *.py files of every code base in repos.json, at its recorded commit, into <trees-dir>/<name>.
//   node scripts/primer/checkout.mjs <trees-dir> [--mirror-root /work/.mirror] [--only name,...]
// The mirrors are bare git directories (<mirror-root>/<owner>+<name>/repo) with no work tree and with their largest
// blobs absent, so `git archive` cannot be used: the files are listed with `git ls-tree` and read with
// `git cat-file --batch`, and a blob the mirror lacks is skipped and counted. Only *.py files and manifests are
// kept, because the checker reads nothing else that matters here and a smaller tree keeps third-party code out of
// the way.
// The run is idempotent: a tree whose marker file names the recorded commit is left alone, and any other tree is
// rebuilt in a temporary folder and renamed into place, so an interrupted run never leaves a half-written tree.
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  copyFileSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync, spawnSync } from 'node:child_process';

const here = dirname(fileURLToPath(import.meta.url));
const MARKER = '.primer-commit';

function parseArgs(argv) {
  const options = { mirrorRoot: '/work/.mirror', only: null, treesDir: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--mirror-root') options.mirrorRoot = argv[++i];
    else if (argv[i] === '--only') options.only = new Set(argv[++i].split(','));
    else if (!options.treesDir) options.treesDir = argv[i];
    else throw new Error(`unexpected argument ${argv[i]}`);
  }
  if (!options.treesDir) throw new Error('usage: checkout.mjs <trees-dir> [--mirror-root DIR] [--only name,...]');
  return options;
}

// Python files, and the manifests that state the versions of the libraries the code runs with (requirements*.txt,
// setup.cfg, pyproject.toml): the checker judges a library's contract, such as transformers' Trainer's loss
// scaling, at those versions. Trees extracted before manifests were kept must be removed to gain them.
function isKept(path) {
  const file = path.split('/').pop();
  return (
    path.endsWith('.py') ||
    /^requirements[\w.-]*\.txt$/i.test(file) ||
    file === 'setup.cfg' ||
    file === 'pyproject.toml'
  );
}

// Lists the *.py and manifest blobs of a commit. Symbolic links (mode 120000) and submodules (type commit) are skipped, since
// their "content" is a path or a commit id, not Python.
function listPythonBlobs(gitDir, commit) {
  const out = execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '-z', commit], { maxBuffer: 1 << 30 });
  const blobs = [];
  for (const record of out.toString('utf8').split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, sha] = record.slice(0, tab).split(' ');
    const path = record.slice(tab + 1);
    if (type === 'blob' && mode !== '120000' && isKept(path)) blobs.push({ sha, path });
  }
  return blobs;
}

// Reads all blobs in one `git cat-file --batch` process. Its output is, per requested id, either
// "<sha> blob <size>\n<bytes>\n" or "<sha> missing\n"; the sizes let us walk the buffer without guessing.
function readBlobs(gitDir, shas) {
  const result = spawnSync('git', ['--git-dir', gitDir, 'cat-file', '--batch'], {
    input: shas.join('\n') + '\n',
    maxBuffer: 2 ** 31,
  });
  if (result.status !== 0) throw new Error(`git cat-file failed: ${result.stderr}`);
  const out = result.stdout;
  const contents = new Map();
  let at = 0;
  while (at < out.length) {
    const newline = out.indexOf(10, at);
    const header = out.subarray(at, newline).toString('utf8').split(' ');
    at = newline + 1;
    if (header[1] === 'missing' || header.length < 3) continue;
    const size = Number(header[2]);
    contents.set(header[0], out.subarray(at, at + size));
    at += size + 1;
  }
  return contents;
}

function extractGit(entry, target, mirrorRoot) {
  const gitDir = join(mirrorRoot, entry.repo.replace('/', '+'), 'repo');
  if (!existsSync(gitDir)) return { missing: `no mirror at ${gitDir} (fetch github:${entry.repo} first)` };
  const hasCommit = spawnSync('git', ['--git-dir', gitDir, 'cat-file', '-e', `${entry.commit}^{commit}`]).status === 0;
  if (!hasCommit) return { missing: `the mirror ${gitDir} lacks commit ${entry.commit}` };

  const blobs = listPythonBlobs(gitDir, entry.commit);
  const contents = readBlobs(gitDir, [...new Set(blobs.map((b) => b.sha))]);
  const staging = `${target}.partial`;
  rmSync(staging, { recursive: true, force: true });
  let written = 0;
  const absent = [];
  for (const { sha, path } of blobs) {
    const bytes = contents.get(sha);
    if (!bytes) {
      absent.push(path);
      continue;
    }
    const file = join(staging, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, bytes);
    written++;
  }
  mkdirSync(staging, { recursive: true });
  writeFileSync(join(staging, MARKER), `${entry.commit}\n`);
  rmSync(target, { recursive: true, force: true });
  renameSync(staging, target);
  return { written, absent };
}

// The Debian entry is copied, not linked, so that its tree also holds only *.py files and so that the results keep
// describing the package version recorded in repos.json even after the system package is upgraded. Symbolic links
// are not followed: the package has a few (some dangling, such as include/TH), and none of them is Python source.
function copyPythonFiles(from, to) {
  let written = 0;
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = join(from, entry.name);
    if (entry.isDirectory()) written += copyPythonFiles(source, join(to, entry.name));
    else if (entry.isFile() && entry.name.endsWith('.py')) {
      mkdirSync(to, { recursive: true });
      copyFileSync(source, join(to, entry.name));
      written++;
    }
  }
  return written;
}

function extractDebian(entry, target) {
  if (!existsSync(entry.path)) return { missing: `${entry.path} is not installed (apt-get install -y python3-torch)` };
  const query = spawnSync('dpkg-query', ['-W', '-f=${Version}', 'python3-torch'], { encoding: 'utf8' });
  if (query.status === 0 && query.stdout.trim() !== entry.commit) {
    return { missing: `python3-torch ${query.stdout.trim()} is installed, but repos.json records ${entry.commit}` };
  }
  const staging = `${target}.partial`;
  rmSync(staging, { recursive: true, force: true });
  const written = copyPythonFiles(entry.path, staging);
  writeFileSync(join(staging, MARKER), `${entry.commit}\n`);
  rmSync(target, { recursive: true, force: true });
  renameSync(staging, target);
  return { written, absent: [] };
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const repos = JSON.parse(readFileSync(join(here, 'repos.json'), 'utf8'));
  const treesDir = resolve(options.treesDir);
  mkdirSync(treesDir, { recursive: true });
  const problems = [];
  for (const entry of repos) {
    if (options.only && !options.only.has(entry.name)) continue;
    const target = join(treesDir, entry.name);
    const marker = join(target, MARKER);
    if (existsSync(marker) && readFileSync(marker, 'utf8').trim() === entry.commit) {
      console.log(`${entry.name}: up to date at ${entry.commit}`);
      continue;
    }
    const result =
      entry.kind === 'debian' ? extractDebian(entry, target) : extractGit(entry, target, options.mirrorRoot);
    if (result.missing) {
      console.log(`${entry.name}: MISSING: ${result.missing}`);
      problems.push(entry.name);
      continue;
    }
    console.log(`${entry.name}: ${result.written} .py files at ${entry.commit}`);
    // A missing blob is a file of 4 MiB or more that the mirror does not carry; we name a few so the gap is visible.
    if (result.absent.length > 0) {
      const sample = result.absent.slice(0, 5).join(', ');
      console.log(
        `  ${result.absent.length} blob(s) absent from the mirror, skipped: ${sample}${result.absent.length > 5 ? ', ...' : ''}`,
      );
    }
  }
  if (problems.length > 0) console.log(`\nMissing: ${problems.join(', ')}`);
  else console.log('\nAll trees are present.');
}

main();
