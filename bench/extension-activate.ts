// Child process for the activation benchmark, bundled to plain JS first (so no TypeScript loader hooks are
// timed): loads dist/extension.js against the stand-in vscode module and prints how long loading the bundle and
// running activate() took, in ms. Node's own start-up is not counted.
import Module from 'node:module';
import { join } from 'node:path';

const [root, fakePath] = process.argv.slice(2);
const BUNDLE = join(root, 'dist', 'extension.js');
const M = Module as unknown as { _resolveFilename: (r: string, ...rest: unknown[]) => string };
const resolve = M._resolveFilename;
M._resolveFilename = function (request: string, ...rest: unknown[]) {
  return request === 'vscode' ? fakePath : resolve.call(this, request, ...rest);
};
// The API module exists before any extension loads in VS Code, so it is loaded before timing.
const fake = Module.createRequire(fakePath)(fakePath) as typeof import('../test/unit/extension/fixtures/fake-vscode');
const started = performance.now();
const extension = Module.createRequire(BUNDLE)(BUNDLE) as { activate(c: unknown): unknown };
extension.activate({
  extensionUri: fake.Uri.file(root),
  globalStorageUri: fake.Uri.file(join(root, 'out', 'storage')),
  subscriptions: [],
});
process.stdout.write(`${performance.now() - started}\n`);
process.exit(0);
