// Runs the integration suite in real VS Code through @vscode/test-electron. VS Code is downloaded (needs network)
// unless VSCODE_PATH names an installed executable. Not part of `npm test`: run `npm run test:vscode`.
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';

async function main(): Promise<void> {
  const root = path.resolve(__dirname, '..', '..');
  try {
    await runTests({
      extensionDevelopmentPath: root,
      extensionTestsPath: path.join(__dirname, 'suite', 'index.js'),
      vscodeExecutablePath: process.env.VSCODE_PATH || undefined,
      version: process.env.VSCODE_VERSION || undefined,
      launchArgs: [
        path.join(root, 'test', 'integration', 'fixture'),
        '--disable-extensions',
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
      ],
    });
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}

void main();
