// Text from input (file names, keys, values, a rank's stderr) reaches the terminal only through these functions,
// so a crafted file cannot move the cursor, recolour the screen, hide text or forge a line of its own: control
// characters, NUL, escape sequences and bidirectional overrides are shown as \u escapes instead of acting.

/** C0 controls except tab and newline, DEL, C1 controls, and the bidirectional embedding and isolate marks. */
// eslint-disable-next-line no-control-regex -- matching control characters is this pattern's purpose.
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

function escapeChar(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** Escapes every unsafe character but keeps tabs and newlines (for multi-line output like tables and JSON). */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, escapeChar);
}

/**
 * A message for stderr: unsafe characters escaped and every line after the first indented, so no text from
 * input can start a line of its own that reads like "error: ..." from the CLI.
 */
export function terminalMessage(text: string): string {
  return terminalSafe(text).replace(/\n(?!$)/g, '\n  ');
}

/** One line, for a name or value quoted inside a message: newlines are escaped too. */
export function terminalInline(text: string): string {
  return terminalSafe(text).replace(/[\n\t]/g, escapeChar);
}
