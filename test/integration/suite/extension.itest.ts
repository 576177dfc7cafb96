// Checks in real VS Code, through its API: the extension activates, registers its commands, publishes
// diagnostics with quick fixes, and provides resolved code lenses that follow the selected system.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { suite, suiteSetup, test } from './harness';

const EXTENSION_ID = 'collective-profiler.collective-profiler';
const folder = () => vscode.workspace.workspaceFolders![0].uri;
const fixture = (name: string) => vscode.Uri.joinPath(folder(), name);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value as T;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const codeOf = (d: vscode.Diagnostic) => (typeof d.code === 'object' ? String(d.code.value) : String(d.code));

suite('Collective Profiler in VS Code', () => {
  suiteSetup(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension, `${EXTENSION_ID} is installed`);
    await extension.activate();
    await vscode.workspace
      .getConfiguration('collectiveProfiler')
      .update('system', 'dgx-h100', vscode.ConfigurationTarget.Workspace);
  });

  test('every contributed command is registered', async () => {
    const pkg = vscode.extensions.getExtension(EXTENSION_ID)!.packageJSON as {
      contributes: { commands: { command: string }[] };
    };
    const registered = new Set(await vscode.commands.getCommands(true));
    const missing = pkg.contributes.commands.map((c) => c.command).filter((id) => !registered.has(id));
    assert.deepEqual(missing, []);
  });

  test('opening the training script publishes CP001 at the all_reduce line, with a rule link', async () => {
    const doc = await vscode.workspace.openTextDocument(fixture('train.py'));
    await vscode.window.showTextDocument(doc);
    const diagnostics = await until('CP001', () => {
      const found = vscode.languages.getDiagnostics(doc.uri).filter((d) => codeOf(d) === 'CP001');
      return found.length > 0 ? found : undefined;
    });
    assert.equal(diagnostics[0].range.start.line, 13);
    assert.equal(diagnostics[0].source, 'Collective Profiler');
    assert.match(String((diagnostics[0].code as { target: vscode.Uri }).target), /CP001\.md$/);
  });

  test('the quick fix removes the finding', async () => {
    const uri = fixture('train.py');
    const diagnostic = vscode.languages.getDiagnostics(uri).find((d) => codeOf(d) === 'CP001')!;
    const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
      'vscode.executeCodeActionProvider',
      uri,
      diagnostic.range,
      vscode.CodeActionKind.QuickFix.value,
    );
    const fix = actions.find((a) => a.isPreferred) ?? actions[0];
    assert.ok(fix?.edit, `a quick fix is offered (${actions.map((a) => a.title).join(', ')})`);
    assert.ok(await vscode.workspace.applyEdit(fix.edit));
    await until('CP001 to go away', () =>
      vscode.languages.getDiagnostics(uri).some((d) => codeOf(d) === 'CP001') ? undefined : true,
    );
    await vscode.commands.executeCommand('workbench.action.files.revert');
  });

  test('a resolved code lens above the DDP wrapper shows the prediction, and changes with the system', async () => {
    const uri = fixture('ddp_train.py');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    const titleOnLine = async (line: number) => {
      const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri, 50);
      return lenses.find((l) => l.range.start.line === line && l.command?.title.startsWith('≈'))?.command?.title;
    };
    const h100 = await until('a DDP lens', () => titleOnLine(6));
    assert.match(h100, /^≈ [\d.]+ (µs|ms) · [\d.]+ GB\/s busbw · \w+\/\w+ for 25 MB buckets$/);
    await vscode.commands.executeCommand('collectiveProfiler.selectSystem', 'pcie-4090x8', 1);
    const pcie = await until('the lens to change', async () => {
      const title = await titleOnLine(6);
      return title && title !== h100 ? title : undefined;
    });
    assert.notEqual(pcie, h100);
    await vscode.commands.executeCommand('collectiveProfiler.selectSystem', 'dgx-h100', 1);
  });

  test('the bucket_cap_mb lens gives the sweep recommendation', async () => {
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>(
      'vscode.executeCodeLensProvider',
      fixture('ddp_train.py'),
      50,
    );
    assert.ok(
      lenses.some((l) => l.command?.title.startsWith('Bucket sweep:')),
      lenses.map((l) => l.command?.title).join(' | '),
    );
  });

  test('config and measurement files get their lenses', async () => {
    const config = await vscode.commands.executeCommand<vscode.CodeLens[]>(
      'vscode.executeCodeLensProvider',
      fixture('ds_config.json'),
      10,
    );
    assert.deepEqual(config.map((l) => l.command?.command).sort(), [
      'collectiveProfiler.profileTrainingConfig',
      'collectiveProfiler.showScalingCheck',
      'collectiveProfiler.sweepBucketSize',
    ]);
    const doc = await vscode.workspace.openTextDocument(fixture('all_reduce_perf.txt'));
    assert.equal(doc.languageId, 'nccl-tests');
    const measured = await vscode.commands.executeCommand<vscode.CodeLens[]>(
      'vscode.executeCodeLensProvider',
      doc.uri,
      10,
    );
    assert.deepEqual(measured.map((l) => l.command?.command).sort(), [
      'collectiveProfiler.compareWithModel',
      'collectiveProfiler.importMeasurements',
    ]);
  });

  test('profiling the collective at the cursor opens the timeline and enables Export Trace', async () => {
    await vscode.commands.executeCommand('collectiveProfiler.profileAllReduceAtCursor', fixture('train.py'), 13);
    await until(
      'the timeline panel',
      () =>
        vscode.window.tabGroups.all.flatMap((g) => g.tabs).some((t) => t.label === 'Collective Timeline') || undefined,
    );
  });

  test('Export Trace writes the shown trace as Chrome JSON that reopens in the timeline', async () => {
    const target = fixture('exported.cptrace.json');
    await vscode.workspace.fs.delete(target).then(undefined, () => undefined);
    await vscode.commands.executeCommand('collectiveProfiler.exportTrace', target);
    const doc = JSON.parse(new TextDecoder().decode(await vscode.workspace.fs.readFile(target)));
    assert.ok(Array.isArray(doc.traceEvents) && doc.traceEvents.length > 0);
    assert.ok(doc.collectiveProfiler.trace.spans.length > 0);
    await vscode.workspace.fs.delete(target);
  });
});
