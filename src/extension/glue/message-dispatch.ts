// The host side of the webview protocol: every message a panel posts passes validateWebviewMessage before a
// handler sees it. Invalid or unknown messages are logged and dropped, never thrown, so a buggy or compromised
// webview cannot reach the extension's handlers with data they did not expect.
import { isValidationError, validateWebviewMessage, type FromWebview, type FromWebviewType } from '../../protocol';

export type MessageHandlers = {
  readonly [K in FromWebviewType]?: (message: Extract<FromWebview, { type: K }>) => void | Promise<void>;
};

export interface DispatchLog {
  warn(message: string): void;
  error(message: string): void;
}

export type DispatchOutcome = 'handled' | 'invalid' | 'unhandled' | 'failed';

/**
 * Returns the function to pass to `webview.onDidReceiveMessage`. It resolves with what happened, which the tests
 * read; VS Code ignores the result. A handler that throws is logged as an error and does not break the panel.
 */
export function createMessageDispatcher(
  panel: string,
  handlers: MessageHandlers,
  log: DispatchLog,
): (raw: unknown) => Promise<DispatchOutcome> {
  return async (raw: unknown) => {
    const result = validateWebviewMessage(raw);
    if (isValidationError(result)) {
      log.warn(`[${panel}] dropped an invalid webview message: ${result.error}`);
      return 'invalid';
    }
    const handler = handlers[result.type] as ((m: FromWebview) => void | Promise<void>) | undefined;
    if (!handler) return 'unhandled';
    try {
      await handler(result);
      return 'handled';
    } catch (error) {
      log.error(
        `[${panel}] handling "${result.type}" failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      return 'failed';
    }
  };
}

/**
 * Decides whether a file a webview asks to open (a span's source) may be opened: only files inside one of the
 * workspace folders, after normalising `..` segments, so a trace cannot make the editor open arbitrary paths.
 */
export function isInsideFolders(file: string, folders: readonly string[], resolvePath: (p: string) => string): boolean {
  const target = resolvePath(file);
  return folders.some((folder) => {
    const root = resolvePath(folder).replace(/[\\/]+$/, '');
    return target === root || target.startsWith(`${root}/`) || target.startsWith(`${root}\\`);
  });
}
