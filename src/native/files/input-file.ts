// The one reader for every file a user names: system files, training and model configs, traces, imported logs,
// the Python files `check` reads. It opens without blocking (a FIFO would otherwise wait for a writer forever),
// refuses what is not a regular file (devices, FIFOs, sockets, folders, symbolic links to any of them), refuses a
// file over the limit of its kind before reading it, and reads with a byte budget, so a file that grows while it
// is read, or a /proc file that reports size 0, still cannot take more memory than its limit.
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { UserFileError, kindOfPath, reasonOf } from './file-errors';
import { INPUT_LIMITS_BYTES, formatLimitBytes, type InputKind } from './input-limits';
import { decodeText } from './decode-text';

export { INPUT_LIMITS_BYTES, type InputKind } from './input-limits';

export interface InputOptions {
  /** Which limit applies (see docs/limits.md). */
  readonly kind: InputKind;
  /** How the file is named in messages: "system file", "--trace". */
  readonly what?: string;
}

const CHUNK_BYTES = 1024 * 1024;

function prefix(path: string, options: InputOptions): string {
  return `${options.what ? `${options.what} ` : ''}'${path}'`;
}

function cannotRead(path: string, options: InputOptions, error: unknown): UserFileError {
  return new UserFileError(`cannot read ${prefix(path, options)}: ${reasonOf(error)}`, reasonOf(error));
}

/** An error that names the file first; its reason reads on its own after a file name and a colon. */
function refused(path: string, options: InputOptions, reason: string): UserFileError {
  return new UserFileError(`${prefix(path, options)}: ${reason}`, reason);
}

/**
 * Opens `path` for reading and checks what it is: the descriptor and its stat, or a one-line UserFileError.
 * The caller closes the descriptor. Streamed readers use this for the check and read the descriptor themselves.
 */
export function openInput(path: string, options: InputOptions): { fd: number; info: Stats } {
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    // Some things cannot even be opened (a socket: ENXIO); they are named as what they are, like those that can.
    const info = statOrUndefined(path);
    if (info && !info.isFile() && !info.isDirectory())
      throw refused(path, options, `${kindOfPath(info)}, not a regular file`);
    throw cannotRead(path, options, error);
  }
  let info: Stats;
  try {
    info = fstatSync(fd);
  } catch (error) {
    closeSync(fd);
    throw cannotRead(path, options, error);
  }
  if (!info.isFile()) {
    closeSync(fd);
    throw refused(path, options, `${kindOfPath(info)}, not a regular file`);
  }
  const limit = INPUT_LIMITS_BYTES[options.kind];
  if (info.size > limit) {
    closeSync(fd);
    throw refused(
      path,
      options,
      `${formatLimitBytes(info.size)}, over the ${formatLimitBytes(limit)} limit for ${options.kind} files (docs/limits.md)`,
    );
  }
  INPUTS_OPENED.add(identity(info));
  return { fd, info };
}

/** Every file this process opened as an input, by device and inode (so links and hard links are the same file). */
const INPUTS_OPENED = new Set<string>();

function identity(info: Stats): string {
  return `${info.dev}:${info.ino}`;
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** Whether `path` is a file this process has read as an input: an output must never replace one. */
export function wasOpenedAsInput(path: string): boolean {
  const info = statOrUndefined(path);
  return info !== undefined && INPUTS_OPENED.has(identity(info));
}

/** Called after each piece a reader reads: bytes read so far, and the size the file had when it was opened. */
export type ReadProgress = (readBytes: number, sizeBytes: number) => void;

/** Reads a whole user file within its kind's limit, telling `onRead` after each 1 MiB piece. */
export function readInputBytes(path: string, options: InputOptions, onRead?: ReadProgress): Buffer {
  const { fd, info } = openInput(path, options);
  const limit = INPUT_LIMITS_BYTES[options.kind];
  const chunks: Buffer[] = [];
  let total = 0;
  // The first buffer holds the stat's size and one byte more, so a file that did not grow reads in one call and
  // the end of file is seen in that buffer's spare byte: no second buffer and no copy (`check` reads thousands of
  // small files, and a fresh 1 MiB buffer for each one's end-of-file read cost more than the reading).
  let buffer = Buffer.allocUnsafe(Math.min(Math.max(info.size, 1), CHUNK_BYTES) + 1);
  let usedBytes = 0;
  try {
    // Read until end of file, but never past the limit: the size in the stat is a hint, not a promise.
    for (;;) {
      if (usedBytes === buffer.length) {
        chunks.push(buffer);
        buffer = Buffer.allocUnsafe(CHUNK_BYTES);
        usedBytes = 0;
      }
      const n = readSync(fd, buffer, usedBytes, buffer.length - usedBytes, null);
      if (n === 0) break;
      total += n;
      usedBytes += n;
      if (total > limit)
        throw refused(
          path,
          options,
          `grew past the ${formatLimitBytes(limit)} limit for ${options.kind} files while it was read`,
        );
      onRead?.(total, info.size);
    }
  } catch (error) {
    if (error instanceof UserFileError) throw error;
    throw cannotRead(path, options, error);
  } finally {
    closeSync(fd);
  }
  chunks.push(buffer.subarray(0, usedBytes));
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/** Reads a whole user file as text within its kind's limit: UTF-8, or the encoding its byte-order mark names. */
export function readInputText(path: string, options: InputOptions): string {
  return decodeText(readInputBytes(path, options));
}
