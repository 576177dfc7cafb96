// The files `check` reads: the Python files, configs and manifests found under the paths given, each decoded
// with notes for what the decoding replaced, and one file checked alone (check.ts runs them as one program).
import { readdirSync, statSync, type Dirent } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import {
  analyzeDeepSpeedConfig,
  analyzePython,
  isManifest,
  isSkippedFolder,
  mayHaveFindings,
  type AnalysisOptions,
  type AnalysisResult,
  type Unanalysed,
} from '../analysis/index';
import { readInputBytes } from '../native/files/input-file';
import { decodeText } from '../native/files/decode-text';
import { UserFileError } from '../native/files/file-errors';
import { loadPythonParser } from './python-parser';
import { UsageError } from './command';
/**
 * The manifests of the folders above the given paths, up to the working folder: a requirements.txt at the root of a
 * project pins the versions of `check src/train.py` as it does for `check .`, and as the editor reads it for the
 * open file. Paths outside the working folder get none from above.
 */
function ancestorManifests(paths: readonly string[], known: ReadonlySet<string>): string[] {
  const cwd = process.cwd();
  const out: string[] = [];
  const seen = new Set<string>();
  for (const p of paths) {
    let dir = dirname(resolve(p));
    while (!seen.has(dir) && (dir === cwd || dir.startsWith(`${cwd}${sep}`))) {
      seen.add(dir);
      let names: string[] = [];
      try {
        names = readdirSync(dir).sort();
      } catch {
        // An unreadable folder pins nothing.
      }
      for (const name of names) {
        const path = join(dir, name);
        if (isManifest(name) && !known.has(path) && !out.includes(path)) out.push(path);
      }
      if (dir === cwd) break;
      dir = dirname(dir);
    }
  }
  return out.map((path) => relative(cwd, path));
}

/**
 * Python files and DeepSpeed configs under the given paths, in a stable order. `excluded` (paths relative to the
 * working folder) prunes what the walk finds; a file named on the command line is always checked, as in ruff.
 * `manifests`, when given, receives the requirements*.txt, setup.cfg and pyproject.toml files met on the way (the
 * versions the code runs with).
 */
export function collectFiles(
  paths: readonly string[],
  excluded?: (relativePath: string) => boolean,
  manifests?: string[],
): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    let entries: Dirent[];
    try {
      // The entries' types come with the listing (Node reads them with lstat where the file system does not say),
      // so a symbolic link is not followed, and broken links and link cycles cannot stop the walk, without a stat
      // call for each of a large tree's files.
      entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
        a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
      );
    } catch {
      return;
    }
    for (const entry of entries) {
      const name = entry.name;
      const path = join(dir, name);
      if (excluded?.(relative(process.cwd(), path) || path)) continue;
      if (entry.isDirectory()) {
        if (!isSkippedFolder(name)) walk(path);
      } else if (name.endsWith('.py') || (name.endsWith('.json') && /ds_?config|deepspeed/i.test(name))) out.push(path);
      else if (manifests && isManifest(name)) manifests.push(path);
    }
  };
  for (const p of paths) {
    let st;
    try {
      st = statSync(p);
    } catch {
      throw new UsageError(`${p}: no such file or folder`);
    }
    if (st.isDirectory()) walk(p);
    else out.push(p);
  }
  if (manifests) manifests.push(...ancestorManifests(paths, new Set(manifests.map((m) => resolve(m)))));
  return out;
}

/**
 * Reads a file as UTF-8 (or the UTF-16 its byte-order mark names); undecodable bytes become U+FFFD and a note,
 * never an exception.
 */
export function readSource(path: string): { text: string; notes: string[] } {
  const bytes = readInputBytes(path, { kind: 'source' });
  try {
    const text = decodeText(bytes, { fatal: true });
    // NUL is valid UTF-8 but never Python source (CPython refuses it); UTF-16 saved without a mark looks like this.
    const notes = text.includes('\0')
      ? ['the file holds NUL bytes (UTF-16 without a byte-order mark?), which Python refuses']
      : [];
    return { text, notes };
  } catch {
    return {
      text: decodeText(bytes),
      notes: ['the file is not valid UTF-8; undecodable bytes were replaced'],
    };
  }
}

export async function checkFile(path: string, options: AnalysisOptions): Promise<AnalysisResult> {
  const read = readChecked(path);
  if ('result' in read) return read.result;
  const { text, notes } = read;
  if (path.endsWith('.json')) {
    const r = analyzeDeepSpeedConfig(text);
    // The config rule adds a note only when the file is not JSON, and then reads nothing of it.
    const unanalysed: Unanalysed[] = r.notes.map((message) => ({ reason: 'syntax-error', whole: true, message }));
    return { findings: r.findings, notes: [...notes, ...r.notes], ...(unanalysed.length > 0 ? { unanalysed } : {}) };
  }
  const parser = await loadPythonParser();
  return withReadNotes(analyzePython(parser, text, options), text, notes);
}

export function readChecked(path: string): { text: string; notes: string[] } | { result: AnalysisResult } {
  try {
    return readSource(path);
  } catch (error) {
    const message = `cannot read: ${error instanceof UserFileError ? error.reason : error instanceof Error ? error.message : String(error)}`;
    return { result: { findings: [], notes: [message], unanalysed: [{ reason: 'unreadable', whole: true, message }] } };
  }
}

export function withReadNotes(r: AnalysisResult, text: string, notes: readonly string[]): AnalysisResult {
  // Replaced bytes matter only in a file the rules read: a file that calls no trigger has none to hide.
  const decoding: Unanalysed[] =
    notes.length > 0 && (mayHaveFindings(text) || mayHaveFindings(text.replace(/[\0\uFFFD]/g, '')))
      ? notes.map((message) => ({ reason: 'not-utf8', whole: false, message }))
      : [];
  const unanalysed = [...decoding, ...(r.unanalysed ?? [])];
  return { findings: r.findings, notes: [...notes, ...r.notes], ...(unanalysed.length > 0 ? { unanalysed } : {}) };
}
