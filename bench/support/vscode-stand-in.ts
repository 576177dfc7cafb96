// Installs the test stand-in for the `vscode` module in a benchmark's child process, so the real
// dist/extension.js loads and activates without VS Code. The one change from the test fixture: webview panels
// serialise what the extension posts and drop it, as VS Code's host does (the fixture records every message for
// its assertions, which would keep a million-span trace alive twice).
import Module from 'node:module';
import { join } from 'node:path';
import * as fake from '../../test/unit/extension/fixtures/fake-vscode';

export interface Posted {
  messages: number;
  bytes: number;
}

/** What activate returns: the live context (see src/extension/extension.ts). */
export interface ExtensionApi {
  ctx: {
    panels: { activeTraceView?: { trace?: { spans: unknown[]; lanes: unknown[] } } };
    diagnostics?: { analyse(document: unknown): Promise<readonly unknown[]> };
  };
}

export function installVscodeStandIn(root: string): { vscode: typeof fake; posted: Posted } {
  const posted: Posted = { messages: 0, bytes: 0 };
  const vscode = {
    ...fake,
    window: {
      ...fake.window,
      createWebviewPanel: (viewType: string, title: string) => {
        const panel = fake.window.createWebviewPanel(viewType, title);
        panel.webview.postMessage = async (message: { type: string }) => {
          posted.bytes += JSON.stringify(message).length;
          posted.messages++;
          return true;
        };
        return panel;
      },
    },
  };
  const id = join(root, 'out', 'bench', 'vscode-stand-in.cjs');
  const M = Module as unknown as {
    _resolveFilename: (r: string, ...rest: unknown[]) => string;
    _cache: Record<string, unknown>;
  };
  const resolve = M._resolveFilename;
  M._resolveFilename = function (request: string, ...rest: unknown[]) {
    return request === 'vscode' ? id : resolve.call(this, request, ...rest);
  };
  M._cache[id] = { id, filename: id, loaded: true, exports: vscode };
  return { vscode, posted };
}

/** Loads dist/extension.js and runs activate with a minimal extension context. */
export function activateBundle(root: string): ExtensionApi {
  const bundle = join(root, 'dist', 'extension.js');
  const extension = Module.createRequire(bundle)(bundle) as { activate(context: unknown): ExtensionApi };
  return extension.activate({
    extensionUri: fake.Uri.file(root),
    globalStorageUri: fake.Uri.file(join(root, 'out', 'bench', 'storage')),
    subscriptions: [],
  });
}

/** Runs a child's main and exits, printing a failure to stderr with a non-zero status. */
export function runChild(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
