// The one decoding of user files into text. Editors write UTF-8 with or without a byte-order mark, and on Windows
// often UTF-16 with one; a file that says by its mark which encoding it is is read in that encoding, so the same
// content gives the same result whatever the editor saved. Without a mark the text is UTF-8. No Node modules here:
// the pure importers use it too.

export type TextEncodingName = 'utf-8' | 'utf-16le' | 'utf-16be';

/** The encoding a byte-order mark at the start of `bytes` names, and the mark's length (0 when there is none). */
export function byteOrderMark(bytes: Uint8Array): { encoding: TextEncodingName; markBytes: number } {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    return { encoding: 'utf-8', markBytes: 3 };
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return { encoding: 'utf-16le', markBytes: 2 };
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return { encoding: 'utf-16be', markBytes: 2 };
  return { encoding: 'utf-8', markBytes: 0 };
}

/**
 * Decodes `bytes` by their byte-order mark (UTF-8 without one), dropping the mark. With `fatal`, bytes that are
 * not valid in that encoding throw a TypeError instead of becoming U+FFFD.
 */
export function decodeText(bytes: Uint8Array, options: { fatal?: boolean } = {}): string {
  const { encoding, markBytes } = byteOrderMark(bytes);
  return decoderFor(encoding, options.fatal ?? false).decode(bytes.subarray(markBytes));
}

/**
 * One decoder per encoding and mode, made once: `check` decodes thousands of files, and a decode without
 * `stream` keeps no state from one call to the next.
 */
const decoders = new Map<string, TextDecoder>();

function decoderFor(encoding: TextEncodingName, fatal: boolean): TextDecoder {
  const key = `${encoding}:${fatal}`;
  let decoder = decoders.get(key);
  if (!decoder) {
    decoder = new TextDecoder(encoding, { fatal, ignoreBOM: true });
    decoders.set(key, decoder);
  }
  return decoder;
}
