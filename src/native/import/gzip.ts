// Gzip without node:zlib, for hosts that only have the web platform (a webview, a browser-hosted VS Code):
// the standard DecompressionStream inflates, and the importers stay pure.
import { importMeasurementBytes, isGzip, type ImportOptions } from './index';
import type { ImportResult } from './model';

export async function gunzipWithStreams(bytes: Uint8Array): Promise<Uint8Array> {
  // Blob copies the bytes, so a view over a SharedArrayBuffer is as good as one over an ArrayBuffer here.
  const stream = new Blob([bytes as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream('gzip'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** Like importMeasurementBytes, inflating gzip with DecompressionStream when no gunzip function is given. */
export async function importMeasurementBytesAsync(
  bytes: Uint8Array,
  options: ImportOptions = {},
): Promise<ImportResult> {
  if (isGzip(bytes) && !options.gunzip) {
    const inflated = await gunzipWithStreams(bytes);
    return importMeasurementBytes(inflated, options);
  }
  return importMeasurementBytes(bytes, options);
}
