// Runs the built checker (dist/cli.js check) on every tree that checkout.mjs extracted and reports what it found.
//   node scripts/primer/run.mjs <trees-dir> [--out results.json] [--base old-results.json] [--only name,...] [--cli path]
// It prints a markdown table (files, seconds and findings by code per code base), then every finding, and with
// --base the findings added and removed since an earlier results file, the way mypy_primer diffs two type checkers.
// It always exits 0, because it is a report and not a test: a finding in third-party code is not a failure here.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync, spawnSync } from 'node:child_process';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
// The table has a column for each of these rules and for any other code a finding carries, so a rule added to the
// checker is counted in its own column instead of showing up only in the total.
const CODES = ['CP001', 'CP002', 'CP003', 'CP004', 'CP005', 'CP006', 'CP007', 'CP008'];
// Two findings are taken to be the same one when they agree on the code base, the file and the rule, and their lines
// are at most this far apart (or the flagged line reads the same): unrelated edits above a finding move it a little.
const LINE_SLACK = 3;
// A code base that takes longer than this is stopped and recorded as an error, so one hang does not stall the report.
const TIMEOUT_MS = 15 * 60 * 1000;

function parseArgs(argv) {
  const options = { treesDir: null, out: null, base: null, only: null, cli: join(repoRoot, 'dist', 'cli.js') };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--out') options.out = argv[++i];
    else if (arg === '--base') options.base = argv[++i];
    else if (arg === '--only') options.only = new Set(argv[++i].split(','));
    else if (arg === '--cli') options.cli = resolve(argv[++i]);
    else if (!options.treesDir) options.treesDir = resolve(arg);
    else throw new Error(`unexpected argument ${arg}`);
  }
  if (!options.treesDir)
    throw new Error('usage: run.mjs <trees-dir> [--out FILE] [--base FILE] [--only name,...] [--cli FILE]');
  return options;
}

// The output is not trimmed: `git status --porcelain` starts a line with a space when a file is modified but not staged.
function git(cwd, ...args) {
  return execFileSync('git', ['-C', cwd, ...args], { encoding: 'utf8' });
}

// The checker is named by the commit of the checkout its dist/cli.js was built in (with --cli that may be a clean
// clone rather than this one). Its sources may hold uncommitted edits when the primer runs, so those files are listed
// too: a commit id alone would otherwise claim a checker that never existed.
function checkerIdentity(cli) {
  const checkout = resolve(dirname(cli), '..');
  try {
    const dirty = git(checkout, 'status', '--porcelain', '--', 'src')
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3));
    return { checkerCommit: git(checkout, 'rev-parse', 'HEAD').trim(), checkerDirty: dirty };
  } catch {
    return { checkerCommit: null, checkerDirty: [] };
  }
}

function countPythonFiles(dir) {
  let count = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) count += countPythonFiles(join(dir, entry.name));
    else if (entry.isFile() && entry.name.endsWith('.py')) count++;
  }
  return count;
}

// Older checkers exit 1 whenever they find something; a flag that forces 0 is used only if this build has one.
function exitZeroFlag(cli) {
  const help = spawnSync(process.execPath, [cli, 'check', '--help'], { encoding: 'utf8' });
  return `${help.stdout}${help.stderr}`.includes('--exit-zero') ? ['--exit-zero'] : [];
}

// Reads the flagged line's text so that a later diff can still match a finding whose line number moved far.
function lineText(tree, path, line) {
  try {
    return readFileSync(join(tree, path), 'utf8').split('\n')[line - 1]?.trim() ?? '';
  } catch {
    return '';
  }
}

function checkTree(entry, tree, cli, extraFlags) {
  // The checker runs inside the tree and is given ".", so the paths it prints are already relative to the tree.
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [cli, 'check', '--json', ...extraFlags, '.'], {
    cwd: tree,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    timeout: TIMEOUT_MS,
  });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const record = {
    name: entry.name,
    kind: entry.kind,
    commit: entry.commit,
    files: countPythonFiles(tree),
    seconds: Math.round(seconds * 100) / 100,
  };
  const notes = (result.stderr ?? '').split('\n').filter((line) => line.trim() !== '');
  // The notes (unparsable files, skipped configs) are counted in the table and kept, a few dozen at most, in the JSON.
  record.notes = notes.length;
  record.noteLines = notes.slice(0, 50);
  // Exit 0 means no findings and exit 1 means findings; anything else (a crash, a timeout, a usage error) is kept
  // as an error with the end of stderr, because it says more about the checker than any finding does.
  if (result.status !== 0 && result.status !== 1) {
    record.error = result.error
      ? String(result.error)
      : `exit ${result.status ?? result.signal}: ${notes.slice(-5).join(' | ')}`;
    record.findings = [];
    return record;
  }
  let parsed;
  try {
    parsed = JSON.parse(result.stdout);
  } catch (error) {
    record.error = `stdout is not JSON: ${error.message}`;
    record.findings = [];
    return record;
  }
  record.findings = parsed.map((f) => {
    const path = relative(tree, resolve(tree, f.file));
    return {
      path,
      line: f.line,
      column: f.column,
      code: f.code,
      severity: f.severity,
      message: f.message,
      text: lineText(tree, path, f.line),
    };
  });
  record.findings.sort((a, b) => a.path.localeCompare(b.path) || a.line - b.line || a.code.localeCompare(b.code));
  return record;
}

function printTable(repos) {
  const codes = [...new Set([...CODES, ...repos.flatMap((repo) => repo.findings.map((f) => f.code))])].sort();
  console.log(`| repo | kind | files | seconds | ${codes.join(' | ')} | total | notes |`);
  console.log(`| --- | --- | ---: | ---: | ${codes.map(() => '---:').join(' | ')} | ---: | ---: |`);
  const totals = { files: 0, seconds: 0, findings: 0, notes: 0, byCode: Object.fromEntries(codes.map((c) => [c, 0])) };
  for (const repo of repos) {
    const byCode = codes.map((code) => repo.findings.filter((f) => f.code === code).length);
    codes.forEach((code, i) => (totals.byCode[code] += byCode[i]));
    totals.files += repo.files;
    totals.seconds += repo.seconds;
    totals.findings += repo.findings.length;
    totals.notes += repo.notes;
    const total = repo.error ? `ERROR: ${repo.error}` : String(repo.findings.length);
    console.log(
      `| ${repo.name} | ${repo.kind} | ${repo.files} | ${repo.seconds.toFixed(2)} | ${byCode.join(' | ')} | ${total} | ${repo.notes} |`,
    );
  }
  const rate = totals.seconds > 0 ? (totals.files / totals.seconds).toFixed(1) : '-';
  console.log(
    `| **all** | | ${totals.files} | ${totals.seconds.toFixed(2)} | ${codes.map((c) => totals.byCode[c]).join(' | ')} | ${totals.findings} | ${totals.notes} |`,
  );
  console.log(
    `\n${repos.length} code bases, ${totals.files} files in ${totals.seconds.toFixed(1)} s (${rate} files/s), ${totals.findings} findings.`,
  );
}

function formatFinding(repo, f) {
  return `${repo} ${f.path}:${f.line} ${f.code} ${f.message}`;
}

// Pairs each new finding with an old one of the same file and rule: an exact line first, then the nearest line
// within LINE_SLACK, then the same line text anywhere in the file. What stays unpaired was added or removed.
function diffFindings(oldFindings, newFindings) {
  const unmatchedOld = [...oldFindings];
  const added = [];
  const take = (predicate) => {
    const at = unmatchedOld.findIndex(predicate);
    return at < 0 ? null : unmatchedOld.splice(at, 1)[0];
  };
  const pending = [];
  for (const f of newFindings) {
    if (!take((o) => o.path === f.path && o.code === f.code && o.line === f.line)) pending.push(f);
  }
  for (const f of pending) {
    const near = unmatchedOld
      .filter((o) => o.path === f.path && o.code === f.code && Math.abs(o.line - f.line) <= LINE_SLACK)
      .sort((a, b) => Math.abs(a.line - f.line) - Math.abs(b.line - f.line))[0];
    const same =
      near ??
      (f.text ? unmatchedOld.find((o) => o.path === f.path && o.code === f.code && o.text === f.text) : undefined);
    if (same) unmatchedOld.splice(unmatchedOld.indexOf(same), 1);
    else added.push(f);
  }
  return { added, removed: unmatchedOld };
}

function printDiff(base, current, only) {
  const edits = base.checkerDirty?.length ? ` with uncommitted edits to ${base.checkerDirty.join(', ')}` : '';
  console.log(
    `\n## Diff against ${base.checkerCommit ?? 'the base'}${edits} (${base.generatedAt ?? 'unknown date'})\n`,
  );
  const baseByName = new Map(base.repos.map((r) => [r.name, r]));
  let changes = 0;
  for (const repo of current.repos) {
    const old = baseByName.get(repo.name);
    if (!old) {
      console.log(`${repo.name}: not in the base, ${repo.findings.length} findings`);
      continue;
    }
    // Findings from different commits of a code base are not comparable line by line, so say so before diffing.
    if (old.commit !== repo.commit)
      console.log(`${repo.name}: the base checked ${old.commit}, this run ${repo.commit}`);
    const { added, removed } = diffFindings(old.findings, repo.findings);
    for (const f of added) console.log(`+ ${formatFinding(repo.name, f)}`);
    for (const f of removed) console.log(`- ${formatFinding(repo.name, f)}`);
    changes += added.length + removed.length;
  }
  const currentNames = new Set(current.repos.map((r) => r.name));
  // A code base left out with --only is not reported as gone: only one that this run tried to check and lacks is.
  for (const old of base.repos)
    if (!currentNames.has(old.name) && (!only || only.has(old.name)))
      console.log(`${old.name}: only in the base (${old.findings.length} findings)`);
  console.log(changes === 0 ? 'No findings added or removed.' : `\n${changes} findings added or removed.`);
}

function main() {
  const options = parseArgs(process.argv.slice(2));
  if (!existsSync(options.cli)) {
    console.log(`${options.cli} does not exist: run \`npm run build\` first.`);
    return;
  }
  const repos = JSON.parse(readFileSync(join(here, 'repos.json'), 'utf8'));
  const extraFlags = exitZeroFlag(options.cli);
  const results = { generatedAt: new Date().toISOString(), ...checkerIdentity(options.cli), repos: [] };
  for (const entry of repos) {
    if (options.only && !options.only.has(entry.name)) continue;
    const tree = join(options.treesDir, entry.name);
    if (!existsSync(tree)) {
      console.error(`${entry.name}: no tree at ${tree} (run checkout.mjs first), skipped`);
      continue;
    }
    console.error(`${entry.name}: checking...`);
    results.repos.push(checkTree(entry, tree, options.cli, extraFlags));
  }
  if (options.out) writeFileSync(options.out, JSON.stringify(results, null, 2) + '\n');

  printTable(results.repos);
  console.log('\n## Findings\n');
  for (const repo of results.repos) for (const f of repo.findings) console.log(formatFinding(repo.name, f));
  if (options.base) printDiff(JSON.parse(readFileSync(options.base, 'utf8')), results, options.only);
}

try {
  main();
} catch (error) {
  // Even a bad argument is reported rather than turned into a failing exit status: the primer is a report.
  console.log(`primer: ${error.message}`);
}
