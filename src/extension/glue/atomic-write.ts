// Writes files so that nothing the user had is lost: the data goes to a temporary file in the same folder, is
// flushed to disk, and only then renamed over the target. A crash or kill mid-write leaves the old file whole.
import { open, rename, unlink, stat, readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Prefix of the temporary files, so stale ones from a killed write can be recognised and removed. */
export const TEMP_MARKER = '.cp-tmp-';

export function tempPathFor(target: string): string {
  const random = Math.random().toString(36).slice(2, 10);
  return join(dirname(target), `.${basename(target)}${TEMP_MARKER}${process.pid}-${random}`);
}

/**
 * Writes `data` (a string, bytes, or chunks from an iterable, for big traces) to `target` atomically.
 * `onTempCreated` lets tests observe the temporary file before the rename.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array | Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>,
  options: { onTempCreated?: (tempPath: string) => void } = {},
): Promise<void> {
  const temp = tempPathFor(target);
  const handle = await open(temp, 'wx', 0o644);
  let closed = false;
  try {
    options.onTempCreated?.(temp);
    if (typeof data === 'string' || data instanceof Uint8Array) {
      await handle.writeFile(data);
    } else {
      for await (const chunk of data as AsyncIterable<string | Uint8Array>) {
        if (typeof chunk === 'string') await handle.write(chunk);
        else await handle.write(chunk);
      }
    }
    await handle.sync();
    await handle.close();
    closed = true;
    await rename(temp, target);
  } catch (error) {
    if (!closed) await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}

/** What to do before writing to a path the user chose. */
export type OverwriteDecision = 'write' | 'ask' | 'refuse';

/**
 * A new file is written; an existing regular file needs the user's yes first; a folder or other non-file is
 * refused. `confirmed` carries the answer the user already gave (the save dialog's own overwrite prompt counts).
 */
export async function overwriteDecision(target: string, confirmed: boolean): Promise<OverwriteDecision> {
  try {
    const info = await stat(target);
    if (!info.isFile()) return 'refuse';
    return confirmed ? 'write' : 'ask';
  } catch {
    return 'write';
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
