// The translator for text the pure glue builds for the user (lens titles, chart notes, advice, problems). The glue
// cannot import vscode, so activation hands it vscode.l10n through useL10n; until then, and in unit tests, the
// English templates are filled in the same way vscode.l10n.t fills them.

/** The part of vscode.l10n the glue uses: positional `{0}`, `{1}`… arguments. */
export interface L10n {
  t(message: string, ...args: (string | number | boolean)[]): string;
}

/** Fills `{0}`, `{1}`… as vscode.l10n.t does; a placeholder without an argument stays as written. */
export const englishL10n: L10n = {
  t: (message, ...args) =>
    args.length === 0
      ? message
      : message.replace(/\{(\d+)\}/g, (whole, index: string) =>
          Number(index) < args.length ? String(args[Number(index)]) : whole,
        ),
};

let current: L10n = englishL10n;

/** Activation calls this with vscode.l10n, so glue text follows the display language. */
export function useL10n(translator: L10n): void {
  current = translator;
}

/** What glue modules call: `l10n.t('…')`, literal templates, so `@vscode/l10n-dev export` finds them. */
export const l10n: L10n = {
  t: (message, ...args) => current.t(message, ...args),
};
