// The panels' user-facing text, in the display language. The host localises the table with vscode.l10n (see
// src/extension/glue/webview-strings.ts) and puts it in the page it builds, before this bundle runs, so even the
// toolbar drawn at load time is translated. Every label in webview/ goes through `t`; a unit test fails on a
// literal shown to the user.
import {
  WEBVIEW_STRINGS_ELEMENT_ID,
  formatWebviewString,
  readWebviewStrings,
  type WebviewString,
} from '../../src/protocol';

/** The host's table, or nothing outside a page (unit tests in Node import modules that label things). */
const table = readWebviewStrings(
  typeof document === 'undefined' ? undefined : document.getElementById(WEBVIEW_STRINGS_ELEMENT_ID)?.textContent,
);

/** The display-language text of an English template, `{0}`, `{1}`… filled with `args`. */
export function t(key: WebviewString, ...args: (string | number)[]): string {
  return formatWebviewString(table[key] ?? key, args);
}
