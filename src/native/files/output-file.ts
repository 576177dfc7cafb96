// The one writer for every file the CLI and the extension write. A target is checked before any long work
// starts (its folder exists and takes a new file, the target is absent or a regular file), so a bad path costs
// nothing. The data then goes to a temporary file in the same folder, is flushed to disk, its size is checked,
// and only then is it renamed over the target: a full disk, a kill or a crash leaves the old file whole.
// Devices, FIFOs, sockets and folders are refused, never replaced; `-` streams to stdout where a command allows.
import {
  closeSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UserFileError, kindOfPath, reasonOf } from './file-errors';
import { wasOpenedAsInput } from './input-file';

/** The argument that means "write to standard output" where a command allows it. */
export const STDOUT_TARGET = '-';
/** Part of every temporary file's name, so stale ones from a killed write can be recognised and removed. */
export const TEMP_MARKER = '.cp-tmp-';

export interface OutputTarget {
  /** The file written: the path given, or the regular file a symbolic link points at. */
  readonly path: string;
  /** As the user wrote it, for messages. */
  readonly label: string;
  readonly stdout: boolean;
  /** Permission bits to give the new file: those of the file it replaces, else rw-r--r--. */
  readonly mode: number;
  /** The flag or setting that named it, for messages (`--trace`). */
  readonly flag?: string;
}

export interface OutputCheckOptions {
  /** The flag or setting that named the path, for messages (`--trace`). */
  readonly flag?: string;
  /** Whether `-` means stdout here. */
  readonly allowStdout?: boolean;
}

/** The longest file name (in bytes) Linux, macOS and Windows file systems take (NAME_MAX). */
const NAME_MAX_BYTES = 255;

/**
 * A temporary name beside `target`. The target's own name is shortened when needed so the temporary name stays
 * within NAME_MAX: a legal target name of 250 bytes must not make its temporary file an illegal one.
 */
export function tempPathFor(target: string): string {
  const random = Math.random().toString(36).slice(2, 10);
  const suffix = `${TEMP_MARKER}${process.pid}-${random}`;
  let name = basename(target);
  const room = NAME_MAX_BYTES - 1 - Buffer.byteLength(suffix);
  while (Buffer.byteLength(name) > room) name = name.slice(0, -1);
  return join(dirname(target), `.${name}${suffix}`);
}

function fail(options: OutputCheckOptions, path: string, why: string): never {
  throw new UserFileError(`${options.flag ? `${options.flag} ` : ''}'${path}': ${why}`);
}

function existing(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Checks that `path` can be written, before any work is done for it. Creates and removes a probe file in the
 * folder, because permissions alone do not tell (root ignores them; a read-only mount does not show in the mode).
 */
export function checkOutputPath(path: string, options: OutputCheckOptions = {}): OutputTarget {
  if (path === STDOUT_TARGET) {
    if (!options.allowStdout) fail(options, path, 'this output cannot go to stdout; name a file');
    return { path, label: path, stdout: true, mode: 0o644 };
  }
  if (path.trim() === '') fail(options, path, 'an empty file name');
  let target = path;
  let info: Stats | undefined;
  try {
    info = existing(path);
    if (info?.isSymbolicLink()) {
      const resolved = statSync(path);
      if (!resolved.isFile()) fail(options, path, `a symbolic link to ${kindOfPath(resolved)}; refusing to replace it`);
      target = realpathSync(path);
      info = resolved;
    }
  } catch (error) {
    if (error instanceof UserFileError) throw error;
    fail(options, path, reasonOf(error));
  }
  if (info && !info.isFile()) fail(options, path, `${kindOfPath(info)}, not a regular file; refusing to replace it`);
  const folder = dirname(target);
  let folderInfo: Stats;
  try {
    folderInfo = statSync(folder);
  } catch (error) {
    fail(
      options,
      path,
      (error as NodeJS.ErrnoException).code === 'ENOENT' ? `the folder '${folder}' does not exist` : reasonOf(error),
    );
  }
  if (!folderInfo.isDirectory()) fail(options, path, `'${folder}' is not a folder`);
  const probe = tempPathFor(target);
  try {
    closeSync(openSync(probe, 'wx', 0o600));
    unlinkSync(probe);
  } catch (error) {
    fail(options, path, `cannot create a file in '${folder}': ${reasonOf(error)}`);
  }
  return { path: target, label: path, stdout: false, mode: info ? info.mode & 0o7777 : 0o644, flag: options.flag };
}

function failedWrite(target: OutputTarget, error: unknown, replacing: boolean): UserFileError {
  if (error instanceof UserFileError) return error;
  const kept = replacing ? '; the old file is unchanged' : '; nothing was written';
  return new UserFileError(`cannot write '${target.label}': ${reasonOf(error)}${kept}`);
}

function writeAllSync(fd: number, bytes: Uint8Array): void {
  let offset = 0;
  while (offset < bytes.length) {
    const written = writeSync(fd, bytes, offset, bytes.length - offset);
    if (written <= 0) throw shortWrite(`the write stopped after ${offset} of ${bytes.length} bytes`);
    offset += written;
  }
}

/** A write that lost bytes, with an errno-like code so it is reported as a file problem. */
function shortWrite(message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code: 'ESHORTWRITE' });
}

function checkSize(sizeBytes: number, expectedBytes: number): void {
  if (sizeBytes !== expectedBytes) throw shortWrite(`only ${sizeBytes} of ${expectedBytes} bytes reached the disk`);
}

/** Writes `data` to a checked target at once (the CLI's outputs). Throws a one-line UserFileError on failure. */
/**
 * An output that is one of the command's own inputs (`--system box.json --trace box.json --force`) would destroy
 * what was read; --force is for old outputs, not for inputs. Every writer asks, the streamed ones too.
 */
function refuseInput(target: OutputTarget): void {
  if (wasOpenedAsInput(target.path))
    throw new UserFileError(
      `${target.flag ? `${target.flag} ` : ''}'${target.label}' is also an input of this command; write the output to another file`,
    );
}

export function writeOutput(target: OutputTarget, data: string | Uint8Array): void {
  if (target.stdout) {
    process.stdout.write(data);
    return;
  }
  refuseInput(target);
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  const replacing = existing(target.path) !== undefined;
  const temp = tempPathFor(target.path);
  let fd: number | undefined;
  try {
    fd = openSync(temp, 'wx', target.mode);
    writeAllSync(fd, bytes);
    fsyncSync(fd);
    checkSize(fstatSync(fd).size, bytes.length);
    closeSync(fd);
    fd = undefined;
    renameSync(temp, target.path);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(temp);
    } catch {
      // The temporary file was never created or is already gone; the original error is what matters.
    }
    throw failedWrite(target, error, replacing);
  }
}

/** Checks `path` and writes `text` to it: for outputs whose data is ready as soon as the path is known. */
export function writeOutputFile(path: string, data: string | Uint8Array, options: OutputCheckOptions = {}): void {
  writeOutput(checkOutputPath(path, options), data);
}

export type OutputData = string | Uint8Array | Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>;

/**
 * Writes `data` (a string, bytes, or chunks from an iterable, for big traces) to `path` atomically, checking the
 * path first: the extension's writer. `onTempCreated` lets tests observe the temporary file before the rename.
 */
export async function writeOutputFileAsync(
  path: string,
  data: OutputData,
  options: OutputCheckOptions & { onTempCreated?: (tempPath: string) => void } = {},
): Promise<void> {
  const target = checkOutputPath(path, { ...options, allowStdout: false });
  refuseInput(target);
  const replacing = existing(target.path) !== undefined;
  const temp = tempPathFor(target.path);
  let handle;
  try {
    handle = await open(temp, 'wx', target.mode);
  } catch (error) {
    throw failedWrite(target, error, replacing);
  }
  let closed = false;
  try {
    options.onTempCreated?.(temp);
    let expectedBytes = 0;
    const chunks = typeof data === 'string' || data instanceof Uint8Array ? [data] : data;
    for await (const chunk of chunks as AsyncIterable<string | Uint8Array>) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      // FileHandle.writeFile loops until every byte is written, unlike a single write().
      await handle.writeFile(bytes);
      expectedBytes += bytes.length;
    }
    await handle.sync();
    checkSize((await handle.stat()).size, expectedBytes);
    await handle.close();
    closed = true;
    await rename(temp, target.path);
  } catch (error) {
    if (!closed) await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    // A failing data source (the serializer) is not a file problem: it keeps its own error.
    if ((error as NodeJS.ErrnoException).code === undefined) throw error;
    throw failedWrite(target, error, replacing);
  }
}

/** Removes temporary files left by writes that were killed, older than `olderThanMs`. Returns how many. */
export async function removeStaleTemps(folder: string, olderThanMs = 60_000, now = Date.now()): Promise<number> {
  let removed = 0;
  for (const name of await readdir(folder).catch(() => [] as string[])) {
    if (!name.startsWith('.') || !name.includes(TEMP_MARKER)) continue;
    const path = join(folder, name);
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile() && now - info.mtimeMs > olderThanMs) {
      await unlink(path).catch(() => undefined);
      removed++;
    }
  }
  return removed;
}
