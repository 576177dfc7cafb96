// The Node side of importing: reads a file (gzipped or not) and hands the bytes to the pure importers.
import { readFileSync, statSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { importMeasurementBytes, type ImportOptions } from './import/index';
import type { ImportResult } from './import/model';

export class MeasurementFileError extends Error {}

export function importMeasurementFile(path: string, options: Omit<ImportOptions, 'gunzip' | 'fileName'> = {}): ImportResult {
  let bytes: Uint8Array;
  try {
    if (statSync(path).isDirectory()) throw new MeasurementFileError(`'${path}' is a folder, not a measurement file`);
    bytes = readFileSync(path);
  } catch (error) {
    if (error instanceof MeasurementFileError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new MeasurementFileError(`cannot read '${path}': ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  return importMeasurementBytes(bytes, {
    ...options,
    fileName: path,
    gunzip: (data) => {
      try {
        return gunzipSync(data);
      } catch (error) {
        throw new MeasurementFileError(`'${path}' looks gzipped but does not inflate: ${(error as Error).message}`);
      }
    },
  });
}
