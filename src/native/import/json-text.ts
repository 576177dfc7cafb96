// JSON.parse with a positioned error: V8 reports "at position N" (or "line L column C"), which becomes a
// MeasurementParseError with a 1-based line and column.
import { MeasurementParseError, positionOf } from './model';

export function parseJsonText(text: string, fileName?: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const lineCol = /line (\d+) column (\d+)/.exec(message);
    if (lineCol)
      throw new MeasurementParseError(`invalid JSON: ${message}`, Number(lineCol[1]), Number(lineCol[2]), fileName);
    const pos = /position (\d+)/.exec(message);
    const { line, column } = positionOf(text, pos ? Number(pos[1]) : text.length);
    throw new MeasurementParseError(
      `invalid JSON: ${message.replace(/ in JSON at position \d+.*$/, '')}`,
      line,
      column,
      fileName,
    );
  }
}

/** Finds the 1-based line of the first occurrence of a key, so errors about a JSON value can point near it. */
export function lineOfKey(text: string, key: string, from = 0): number {
  const at = text.indexOf(`"${key}"`, from);
  return at < 0 ? 1 : positionOf(text, at).line;
}
