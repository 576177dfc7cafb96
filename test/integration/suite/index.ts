// The extensionTestsPath module: VS Code loads it in the extension host and awaits run().
import { runAll } from './harness';
import './extension.itest';

export async function run(): Promise<void> {
  const { failed } = await runAll();
  if (failed > 0) throw new Error(`${failed} integration test(s) failed`);
}
