// The extension's file writes go through the one output writer (src/native/files/output-file.ts): the target is
// checked first, the data goes to a temporary file in the same folder, is flushed and size-checked, then renamed.
// What stays here is the extension's own question: whether an existing file may be replaced.
import { stat } from 'node:fs/promises';

export {
  TEMP_MARKER,
  removeStaleTemps,
  tempPathFor,
  writeOutputFileAsync as writeFileAtomic,
} from '../../native/files/output-file';

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
