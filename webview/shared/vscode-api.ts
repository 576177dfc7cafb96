// The webview side of the host connection: typed posting, incoming messages and persisted panel state.
// acquireVsCodeApi may be called only once per page, so every module goes through this one wrapper.
import { validatePanelState, type FromWebview, type PanelState, type ToWebview } from '../../src/protocol';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

let api: VsCodeApi | undefined;

function vscode(): VsCodeApi {
  if (!api) {
    // Outside VS Code (a plain browser page) the panel still works, it just has nobody to talk to.
    api =
      typeof acquireVsCodeApi === 'function'
        ? acquireVsCodeApi()
        : { postMessage: () => undefined, getState: () => undefined, setState: () => undefined };
  }
  return api;
}

export function post(message: FromWebview): void {
  vscode().postMessage(message);
}

/** Sends a line to the extension's log, e.g. when a chart cannot be drawn. */
export function log(level: 'info' | 'warn' | 'error', message: string): void {
  post({ type: 'log', level, message: message.slice(0, 8000) });
}

/**
 * The state saved before a reload, checked as the host checks it (validatePanelState): it outlives the page in
 * VS Code's storage, so a field that an older or broken version wrote must not reach the panel unchecked.
 */
export function loadState<T extends PanelState>(panel: T['panel']): T | undefined {
  const state = validatePanelState(vscode().getState());
  return state?.panel === panel ? (state as T) : undefined;
}

export function saveState(state: PanelState): void {
  vscode().setState(state);
}

/** Calls the handler for each message from the host. Messages without a string `type` are ignored. */
export function onHostMessage(handler: (message: ToWebview) => void): void {
  window.addEventListener('message', (event: MessageEvent) => {
    const data = event.data as { type?: unknown } | null;
    if (typeof data !== 'object' || data === null || typeof data.type !== 'string') return;
    try {
      handler(data as ToWebview);
    } catch (error) {
      log(
        'error',
        `webview failed to handle "${data.type}": ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
    }
  });
}
