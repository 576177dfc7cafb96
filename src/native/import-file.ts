// The Node side of importing: reads a file (gzipped or not) and hands the bytes to the pure importers.
import { closeSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { importMeasurementBytes, type ImportOptions } from './import/index';
import type { ImportResult } from './import/model';
import { UserFileError } from './files/file-errors';
import { INPUT_LIMITS_BYTES, openInput, readInputBytes } from './files/input-file';
import { importLargeTrace, largeFilePlan, tooLargeMessage, WHOLE_FILE_LIMIT_BYTES } from './stream/large-trace';

export class MeasurementFileError extends UserFileError {}

/** What an import is doing: reading the file, parsing what was read, or a streamed trace's second scan. */
export type ImportStage = 'reading' | 'parsing' | 'second pass';

/** Bytes of the file read (or scanned) so far, its size, and the stage; called after each 1 MiB piece. */
export type ImportProgress = (doneBytes: number, sizeBytes: number, stage: ImportStage) => void;

export function importMeasurementFile(
  path: string,
  options: Omit<ImportOptions, 'gunzip' | 'fileName'> = {},
  onProgress?: ImportProgress,
): ImportResult {
  let bytes: Uint8Array;
  let sizeBytes = 0;
  try {
    // The stream limit is the outer bound: devices, FIFOs and folders are refused here, whatever their size.
    const { fd, info } = openInput(path, { kind: 'streamed-trace' });
    closeSync(fd);
    sizeBytes = info.size;
    // Past the whole-file limit (a V8 string cannot hold it) a plain trace is streamed and anything else refused.
    bytes =
      sizeBytes <= INPUT_LIMITS_BYTES.measurement
        ? readInputBytes(
            path,
            { kind: 'measurement' },
            onProgress && ((read) => onProgress(read, sizeBytes, 'reading')),
          )
        : new Uint8Array(0);
  } catch (error) {
    if (error instanceof UserFileError) throw new MeasurementFileError(error.message, error.reason);
    throw error;
  }
  if (sizeBytes > WHOLE_FILE_LIMIT_BYTES) {
    const plan = largeFilePlan(path, sizeBytes);
    if (plan.refuse) throw new MeasurementFileError(plan.refuse);
    return importLargeTrace(
      path,
      onProgress && ((read, pass) => onProgress(read, sizeBytes, pass === 1 ? 'reading' : 'second pass')),
    );
  }
  // Parsing a whole file is one synchronous step (JSON.parse, the log's scan): the line says so while it runs.
  onProgress?.(bytes.length, sizeBytes, 'parsing');
  return importMeasurementBytes(bytes, {
    ...options,
    fileName: path,
    gunzip: (data) => {
      try {
        return gunzipSync(data, { maxOutputLength: WHOLE_FILE_LIMIT_BYTES });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
          throw new MeasurementFileError(
            tooLargeMessage(
              path,
              sizeBytes,
              'it inflates past that limit, and a gzipped trace cannot be streamed. Inflate it (`gunzip -k`) and import the .json, which is streamed.',
            ),
          );
        }
        throw new MeasurementFileError(`'${path}' looks gzipped but does not inflate: ${(error as Error).message}`);
      }
    },
  });
}
