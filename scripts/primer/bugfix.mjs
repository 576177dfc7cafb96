// Scores the checker on real gradient-scaling bugs that projects later fixed (scripts/primer/bugfix-pairs.json).
//   node scripts/primer/bugfix.mjs <work-dir> [--mirror-root /work/.mirror] [--out results.json]
//                                  [--target tree|file] [--only id,...] [--cli dist/cli.js]
// For every pair it writes the Python files of the repository at the buggy commit to <work-dir>/<id>/bug and at the
// fixing commit to <work-dir>/<id>/fix, runs `dist/cli.js check --json` on each, and says whether the checker reported
// the expected rule where the fix changed the code (caught), reported another rule there (wrong-code) or said nothing
// there (missed), and whether the fixed file is free of the expected rule (fixed-clean).
// It always exits 0, because it is a report and not a test: a miss here is a lead for the checker, not a failure.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync, spawnSync } from 'node:child_process';
import { inRegion, parseHunks } from './judge.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
// 'tree' checks the whole extracted tree and keeps the findings in the changed file, so analyses that follow a value
// into another file (a helper that divides, a process group built elsewhere) get their chance; 'file' checks the
// changed file alone, which is quicker and shows what the checker sees without that context.
const DEFAULT_TARGET = 'tree';
// Some trees hold thousands of Python files; one run that hangs is stopped and recorded instead of stalling the rest.
const TIMEOUT_MS = 10 * 60 * 1000;
// Whole trees are read through one `git cat-file --batch` pipe, so its output can be large.
const MAX_BUFFER = 1 << 30;

function parseArgs(argv) {
  const options = {
    workDir: null,
    mirrorRoot: '/work/.mirror',
    out: null,
    target: DEFAULT_TARGET,
    only: null,
    cli: join(repoRoot, 'dist', 'cli.js'),
    pairs: join(here, 'bugfix-pairs.json'),
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--mirror-root') options.mirrorRoot = resolve(argv[++i]);
    else if (arg === '--out') options.out = resolve(argv[++i]);
    else if (arg === '--target') options.target = argv[++i];
    else if (arg === '--only') options.only = new Set(argv[++i].split(','));
    else if (arg === '--cli') options.cli = resolve(argv[++i]);
    else if (arg === '--pairs') options.pairs = resolve(argv[++i]);
    else if (!options.workDir) options.workDir = resolve(arg);
    else throw new Error(`unexpected argument ${arg}`);
  }
  if (!options.workDir || !['tree', 'file'].includes(options.target)) {
    throw new Error(
      'usage: bugfix.mjs <work-dir> [--mirror-root DIR] [--out FILE] [--target tree|file] [--only id,...] [--cli FILE]',
    );
  }
  return options;
}

// A mirror is a bare git directory at <root>/<owner+name>/repo, or a clone whose git directory is repo/.git.
function gitDirFor(mirrorRoot, repo) {
  const base = join(mirrorRoot, repo.replace('/', '+'), 'repo');
  for (const candidate of [join(base, '.git'), base]) {
    if (existsSync(join(candidate, 'HEAD'))) return candidate;
  }
  throw new Error(`no mirror of ${repo} under ${mirrorRoot} (fetch github:${repo} first)`);
}

// Python files, and the manifests that state the versions of the libraries the code runs with (a library's
// contract, such as transformers' Trainer's loss scaling, depends on them).
function isKept(path) {
  const file = path.split('/').pop();
  return (
    path.endsWith('.py') ||
    /^requirements[\w.-]*\.txt$/i.test(file) ||
    file === 'setup.cfg' ||
    file === 'pyproject.toml'
  );
}

// Every .py file of the commit is written, with the manifests, not just the changed one, because the checker may follow a call or a
// process group into another file. A marker names the commit, so a second run reuses the tree instead of rewriting it.
// Blobs the mirror lacks (files of 4 MiB and more are left out of snapshots) are skipped and counted.
function extractPython(gitDir, commit, dest) {
  const marker = join(dest, '.bugfix-commit.json');
  if (existsSync(marker)) {
    const saved = JSON.parse(readFileSync(marker, 'utf8'));
    // Trees written before manifests were kept lack the versions the checker reads: write them again.
    if (saved.commit === commit && saved.manifests) return saved;
  }
  rmSync(dest, { recursive: true, force: true });
  mkdirSync(dest, { recursive: true });
  const listing = execFileSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '-z', commit], { maxBuffer: MAX_BUFFER });
  const entries = [];
  for (const record of listing.toString('utf8').split('\0')) {
    if (!record) continue;
    const tab = record.indexOf('\t');
    const [mode, type, sha] = record.slice(0, tab).split(' ');
    const path = record.slice(tab + 1);
    // Symbolic links (mode 120000) are blobs too, but their content is a path, not Python.
    if (type === 'blob' && mode !== '120000' && isKept(path)) entries.push({ sha, path });
  }
  const batch = spawnSync('git', ['--git-dir', gitDir, 'cat-file', '--batch'], {
    input: entries.map((entry) => entry.sha).join('\n') + '\n',
    maxBuffer: MAX_BUFFER,
  });
  if (batch.status !== 0) throw new Error(`git cat-file failed: ${batch.stderr}`);
  const out = batch.stdout;
  let position = 0;
  let files = 0;
  let missing = 0;
  // git answers each requested line in order: "<sha> blob <size>\n<content>\n", or "<sha> missing\n".
  for (const entry of entries) {
    const newline = out.indexOf(10, position);
    const header = out.subarray(position, newline).toString('utf8');
    position = newline + 1;
    if (header.endsWith(' missing')) {
      missing++;
      continue;
    }
    const size = Number(header.split(' ')[2]);
    const file = join(dest, ...entry.path.split('/'));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, out.subarray(position, position + size));
    position += size + 1;
    files++;
  }
  const saved = { commit, files, missing, manifests: true };
  writeFileSync(marker, JSON.stringify(saved));
  return saved;
}

// The checker runs from inside the tree, so the file names it prints are relative to the tree and can be compared
// with the pair's path. It exits 1 when it finds something, which is a normal outcome here, not an error.
function runChecker(cli, treeDir, path, target) {
  const args = [cli, 'check', target === 'file' ? path : '.', '--json'];
  const started = Date.now();
  const run = spawnSync(process.execPath, args, {
    cwd: treeDir,
    encoding: 'utf8',
    maxBuffer: MAX_BUFFER,
    timeout: TIMEOUT_MS,
  });
  const seconds = (Date.now() - started) / 1000;
  if (run.error || (run.status !== 0 && run.status !== 1)) {
    const reason = run.error
      ? run.error.message
      : `exit ${run.status}: ${(run.stderr || '').trim().split('\n').slice(-3).join(' ')}`;
    return { seconds, error: reason, findings: [] };
  }
  let all;
  try {
    all = JSON.parse(run.stdout || '[]');
  } catch (error) {
    return { seconds, error: `unreadable JSON: ${error.message}`, findings: [] };
  }
  const wanted = path.split('/').join(sep);
  const findings = all
    .filter((finding) => relative(treeDir, resolve(treeDir, finding.file)) === wanted)
    .map((finding) => ({ line: finding.line, code: finding.code, message: finding.message }));
  return { seconds, findings, totalFindings: all.length };
}

// The fix's hunks in the pair's file, from the mirror (`git diff -U0` of the two blobs, so a renamed file works too).
function fixHunks(gitDir, pair, fixedPath) {
  const diff = spawnSync(
    'git',
    [
      '--git-dir',
      gitDir,
      'diff',
      '-U0',
      '--no-color',
      `${pair.bugCommit}:${pair.path}`,
      `${pair.fixCommit}:${fixedPath}`,
    ],
    { encoding: 'utf8', maxBuffer: MAX_BUFFER },
  );
  if (diff.status !== 0 && diff.status !== 1) throw new Error(`git diff failed: ${diff.stderr}`);
  return parseHunks(diff.stdout);
}

function scorePair(pair, options) {
  const gitDir = gitDirFor(options.mirrorRoot, pair.repo);
  const pairDir = join(options.workDir, pair.id);
  const bugTree = join(pairDir, 'bug');
  const fixTree = join(pairDir, 'fix');
  const bugExtract = extractPython(gitDir, pair.bugCommit, bugTree);
  const fixExtract = extractPython(gitDir, pair.fixCommit, fixTree);
  const fixedPath = pair.fixedPath || pair.path;
  const bugFile = join(bugTree, ...pair.path.split('/'));
  if (!existsSync(bugFile)) throw new Error(`${pair.path} is not in ${pair.bugCommit}`);
  if (!existsSync(join(fixTree, ...fixedPath.split('/')))) throw new Error(`${fixedPath} is not in ${pair.fixCommit}`);

  const bug = runChecker(options.cli, bugTree, pair.path, options.target);
  const fix = runChecker(options.cli, fixTree, fixedPath, options.target);
  // Where a finding counts is judge.mjs's: near a named line, in its function, or at the level of a class to which
  // the fix adds a member.
  const source = readFileSync(bugFile, 'utf8');
  const hunks = fixHunks(gitDir, pair, fixedPath);
  const near = bug.findings.filter((finding) => inRegion(finding.line, pair.bugLines, source, hunks));
  let verdict = 'missed';
  if (near.some((finding) => finding.code === pair.expectedCode)) verdict = 'caught';
  else if (near.length) verdict = 'wrong-code';
  const fixedClean = !fix.findings.some((finding) => finding.code === pair.expectedCode);
  return {
    id: pair.id,
    repo: pair.repo,
    expectedCode: pair.expectedCode,
    verdict,
    fixedClean,
    error: bug.error || fix.error || null,
    bugFindings: bug.findings,
    fixFindings: fix.findings,
    // Findings of the expected rule elsewhere in the buggy file: the checker saw the pattern, but not where the fix is.
    expectedElsewhere: bug.findings.filter((finding) => finding.code === pair.expectedCode && !near.includes(finding))
      .length,
    files: { bug: bugExtract.files, fix: fixExtract.files, missingBlobs: bugExtract.missing + fixExtract.missing },
    seconds: { bug: bug.seconds, fix: fix.seconds },
  };
}

function describe(findings) {
  return findings.length ? findings.map((finding) => `${finding.code}@${finding.line}`).join(' ') : '-';
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  const pairs = JSON.parse(readFileSync(options.pairs, 'utf8')).filter(
    (pair) => !options.only || options.only.has(pair.id),
  );
  mkdirSync(options.workDir, { recursive: true });
  const results = [];
  for (const pair of pairs) {
    process.stderr.write(`${pair.id} ...\n`);
    try {
      results.push(scorePair(pair, options));
    } catch (error) {
      // One missing mirror or commit should not hide the other pairs' results.
      results.push({
        id: pair.id,
        repo: pair.repo,
        expectedCode: pair.expectedCode,
        verdict: 'error',
        fixedClean: false,
        error: error.message,
      });
    }
  }

  console.log('| id | repo | expected | verdict | fixed-clean | findings in bug file | findings in fixed file |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const result of results) {
    const bugCell = result.bugFindings ? describe(result.bugFindings) : result.error;
    const fixCell = result.fixFindings ? describe(result.fixFindings) : '';
    console.log(
      `| ${result.id} | ${result.repo} | ${result.expectedCode} | ${result.verdict} | ${result.fixedClean ? 'yes' : 'no'} | ${bugCell} | ${fixCell} |`,
    );
  }
  const count = (verdict) => results.filter((result) => result.verdict === verdict).length;
  const scored = results.filter((result) => result.verdict !== 'error');
  const totals = {
    pairs: results.length,
    caught: count('caught'),
    wrongCode: count('wrong-code'),
    missed: count('missed'),
    errors: count('error'),
    fixedClean: scored.filter((result) => result.fixedClean).length,
  };
  totals.recall = totals.pairs ? totals.caught / totals.pairs : 0;
  totals.cleanRate = scored.length ? totals.fixedClean / scored.length : 0;
  console.log('');
  console.log(
    `recall ${totals.caught}/${totals.pairs} = ${(100 * totals.recall).toFixed(1)}%  (wrong-code ${totals.wrongCode}, missed ${totals.missed}, errors ${totals.errors})`,
  );
  console.log(
    `clean rate ${totals.fixedClean}/${scored.length} = ${(100 * totals.cleanRate).toFixed(1)}% of fixed files without a finding of the expected rule`,
  );
  for (const result of results.filter((r) => r.error)) console.log(`error in ${result.id}: ${result.error}`);

  if (options.out) {
    // The checker's sources may hold uncommitted edits, so the report names them next to the commit it was built from.
    const git = (...args) => execFileSync('git', ['-C', repoRoot, ...args], { encoding: 'utf8' });
    const checker = {
      commit: git('rev-parse', 'HEAD').trim(),
      dirty: git('status', '--porcelain', '--', 'src')
        .split('\n')
        .filter(Boolean)
        .map((line) => line.slice(3)),
    };
    writeFileSync(options.out, JSON.stringify({ checker, target: options.target, totals, results }, null, 2) + '\n');
  }
}

try {
  main();
} catch (error) {
  console.error(error.message);
}
process.exitCode = 0;
