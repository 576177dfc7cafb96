// One workspace, both surfaces: a library contract that depends on the version a requirements file pins (the
// Trainer's loss scaling) gives the same findings in `check` on the command line, in the editor's workspace check
// and in the live diagnostics of the open file after the background indexing. Before the editor read the
// manifests, it saw no pin, proved nothing and said nothing where `check` reported an error.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as fake from './fixtures/fake-vscode';
import { activateBundle, notBuilt } from './fixtures/activate-bundle';
import { runCli } from '../cli/run-cli';
import { isManifestFileName } from '../../../src/extension/glue/manifest-name';
import { isManifest } from '../../../src/analysis/contracts/versions';

const skip = notBuilt ?? false;

before(() => {
  if (!notBuilt) activateBundle();
});

const TRAINER = [
  'import torch',
  'from transformers import Trainer',
  '',
  '',
  'class PairTrainer(Trainer):',
  '    def __init__(self, *args, **kwargs):',
  '        super().__init__(*args, **kwargs)',
  '',
  '    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):',
  '        chosen = model(**inputs["chosen"]).logits',
  '        rejected = model(**inputs["rejected"]).logits',
  '        loss = -torch.nn.functional.logsigmoid(chosen - rejected).mean()',
  '        return (loss, chosen) if return_outputs else loss',
  '',
].join('\n');

interface Seen {
  readonly code: string;
  readonly line: number;
  readonly severity: string;
  readonly message: string;
}

/** A workspace whose requirements pin the releases where the Trainer leaves such a loss undivided. */
function workspace(requirements: string): { dir: string; trainer: string; files: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'cp-surfaces-'));
  mkdirSync(join(dir, 'pkg'));
  const trainer = join(dir, 'pkg', 'trainer.py');
  writeFileSync(trainer, TRAINER);
  writeFileSync(join(dir, 'requirements.txt'), requirements);
  writeFileSync(join(dir, 'pkg', '__init__.py'), '');
  return { dir, trainer, files: [trainer, join(dir, 'pkg', '__init__.py'), join(dir, 'requirements.txt')] };
}

async function cliFindings(dir: string, target = '.'): Promise<Seen[]> {
  const run = await runCli(['check', target, '--json'], dir);
  assert.ok(run.code === 0 || run.code === 1, run.stderr);
  const all = JSON.parse(run.stdout) as {
    file: string;
    code: string;
    severity: string;
    message: string;
    line: number;
  }[];
  return (
    all
      .filter((f) => f.file === 'pkg/trainer.py')
      // `--json` counts lines from 1, the editor's ranges from 0.
      .map((f) => ({ code: f.code, line: f.line - 1, severity: f.severity, message: f.message }))
  );
}

const SEVERITY = ['error', 'warning', 'info', 'hint'];

function editorFindings(path: string, dir: string): Seen[] {
  const list = fake.recorded.diagnostics.get(fake.Uri.file(path).toString()) ?? [];
  return list.map((d) => {
    const diagnostic = d as unknown as {
      code: { value: string };
      range: { start: { line: number } };
      severity: number;
      message: string;
    };
    return {
      code: diagnostic.code.value,
      line: diagnostic.range.start.line,
      severity: SEVERITY[diagnostic.severity],
      // The editor names files by their absolute path, `check` relative to the folder it checked.
      message: diagnostic.message.split(`${dir}/`).join(''),
    };
  });
}

test('the editor tells the same files are manifests as the analysis does', () => {
  const names = ['requirements.txt', 'requirements-dev.txt', 'Requirements.txt', 'setup.cfg', 'pyproject.toml'];
  const others = ['setup.py', 'requirements.in', 'req.txt', 'pyproject.toml.bak', 'dev-requirements.txt'];
  for (const name of [...names, ...others])
    assert.equal(isManifestFileName(`a/b/${name}`), isManifest(`a/b/${name}`), name);
  assert.equal(isManifestFileName('C:\\w\\requirements.txt'), true);
});

test(
  'a pinned transformers release: check, the workspace check and the live diagnostics report the same CP008',
  { skip },
  async () => {
    const { dir, trainer, files } = workspace('torch\ntransformers>=4.46.0\n');
    const cli = await cliFindings(dir);
    assert.deepEqual(
      cli.map((f) => `${f.code}@${f.line}:${f.severity}`),
      ['CP008@6:error'],
    );
    // `check` on the file alone reads the manifests of the folders above it, as the editor does for an open file.
    assert.deepEqual(await cliFindings(dir, join('pkg', 'trainer.py')), cli);

    // The live diagnostics first, while the analyzer is not loaded yet: opening the file loads it, and the open
    // file is judged again once the background indexing has read the workspace's manifests.
    fake.recorded.workspaceFiles = files;
    fake.workspace.workspaceFolders = [{ uri: fake.Uri.file(dir), name: 'w', index: 0 }];
    const doc = fake.document(trainer, 'python', TRAINER);
    fake.recorded.documents.push(doc);
    fake.fireOpen(doc);
    let live: Seen[] = [];
    for (let i = 0; i < 200 && live.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      live = editorFindings(trainer, dir);
    }
    assert.deepEqual(live, cli);

    fake.recorded.diagnostics.clear();
    await fake.commands.executeCommand('collectiveProfiler.checkGradientScalingInWorkspace');
    assert.deepEqual(editorFindings(trainer, dir), cli);

    // An edit of the open requirements file re-judges the open Python file with the new pins, before any save.
    const edited = fake.document(join(dir, 'requirements.txt'), 'pip-requirements', 'transformers>=4.41,<4.46\n');
    fake.recorded.documents.push(edited);
    fake.fireOpen(edited);
    for (let i = 0; i < 200 && editorFindings(trainer, dir).length > 0; i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(editorFindings(trainer, dir), []);
    fake.recorded.documents.splice(fake.recorded.documents.indexOf(edited), 1);
  },
);

const SUM_BUG =
  'import torch.distributed as dist\n\ndef sync(model):\n    for p in model.parameters():\n        dist.all_reduce(p.grad)\n';

test(
  'check and the workspace check analyse the same folders: an `env` package is code, hidden and build folders are not',
  { skip },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cp-surfaces-folders-'));
    const files: string[] = [];
    for (const folder of ['env', 'envs', 'rl/env', '.hidden', 'build', 'pkg/dist', 'venv', 'node_modules/x', 'src']) {
      mkdirSync(join(dir, folder), { recursive: true });
      files.push(join(dir, folder, 'sync.py'));
      writeFileSync(files[files.length - 1], SUM_BUG);
    }
    const run = await runCli(['check', '.', '--json'], dir);
    const cli = [...new Set((JSON.parse(run.stdout) as { file: string }[]).map((f) => f.file))].sort();
    assert.deepEqual(cli, ['env/sync.py', 'envs/sync.py', 'rl/env/sync.py', 'src/sync.py']);
    fake.recorded.diagnostics.clear();
    fake.recorded.workspaceFiles = files;
    await fake.commands.executeCommand('collectiveProfiler.checkGradientScalingInWorkspace');
    const editor = [...fake.recorded.diagnostics.entries()]
      .filter(([, list]) => list.length > 0)
      .map(([uri]) => fake.Uri.parse(uri).fsPath.slice(dir.length + 1))
      .sort();
    assert.deepEqual(editor, cli);
  },
);

test('a pin outside those releases: all three surfaces stay silent', { skip }, async () => {
  const { dir, trainer, files } = workspace('transformers>=4.41,<4.46\n');
  assert.deepEqual(await cliFindings(dir), []);
  fake.recorded.workspaceFiles = files;
  await fake.commands.executeCommand('collectiveProfiler.checkGradientScalingInWorkspace');
  assert.deepEqual(editorFindings(trainer, dir), []);
});
