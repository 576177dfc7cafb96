// Reads and parses a system file for `--system <file>`. It is its own module so that the YAML parser and the schema
// validator behind it load only when a file is named: a preset (`--system dgx-h100`) never loads them.
import type { SystemSpec } from '../engine/index';
import { ConfigError } from '../config/positioned';
import { parseSystemFile } from '../config/system-file';
import { readInputText } from '../native/files/input-file';
import { UserFileError } from '../native/files/file-errors';
import { UsageError } from './command';
import { configUsageError } from './command-errors';

export function readSystemFile(path: string): SystemSpec {
  let text: string;
  try {
    text = readInputText(path, { kind: 'config', what: 'system file' });
  } catch (error) {
    if (error instanceof UserFileError) throw new UsageError(error.message);
    throw error;
  }
  try {
    return parseSystemFile(text, path);
  } catch (error) {
    if (error instanceof ConfigError) throw configUsageError(error);
    throw error;
  }
}
