// Child process of the per-edit benchmark, bundled to plain JS: activates the real dist/extension.js against the
// test stand-in for `vscode` and, for a generated 3,000-line training script, times what VS Code asks of the
// extension after each edit: the diagnostics provider's analysis (tree-sitter, rules, mapping to Diagnostics),
// then provideCodeLenses and resolveCodeLens for every lens. Each edit is a new document version with one more
// line, so nothing is reused but what the extension itself caches. Prints one JSON line.
import * as fake from '../../test/unit/extension/fixtures/fake-vscode';
import { trainingScript } from '../training-script';
import { activateBundle, installVscodeStandIn, runChild } from './vscode-stand-in';

const [root, editsText] = process.argv.slice(2);
const edits = Number(editsText);
if (!root || !(edits > 0)) throw new Error('usage: node editor-pass-child.cjs <repo root> <edits>');

runChild(async () => {
  installVscodeStandIn(root);
  const api = activateBundle(root);
  const diagnostics = api.ctx.diagnostics;
  const lenses = fake.recorded.lensProviders[0];
  if (!diagnostics || !lenses) throw new Error('activate registered no diagnostics or no code lens provider');
  const script = trainingScript(3000);
  const path = `${root}/out/bench/train_3000_lines.py`;
  let findings = 0;
  let titles: string[] = [];
  // CPU time beside wall time: on a shared machine the wall clock also counts time other processes held the CPU.
  const cpuMs: number[] = [];
  const pass = async (version: number): Promise<number> => {
    const text = version === 0 ? script : `${script}# edit ${version}\n`;
    const document = { ...fake.document(path, 'python', text), version };
    const cpuStarted = process.cpuUsage();
    const started = performance.now();
    findings = (await diagnostics.analyse(document)).length;
    const provided = lenses.provideCodeLenses(document);
    const resolved = await Promise.all(provided.map((lens) => lenses.resolveCodeLens!(lens)));
    const elapsed = performance.now() - started;
    const cpu = process.cpuUsage(cpuStarted);
    cpuMs.push((cpu.user + cpu.system) / 1000);
    titles = resolved.map((lens) => lens.command?.title ?? '');
    return elapsed;
  };
  // The first pass loads tree-sitter and the lazy bundle, which happens once per session, not per edit.
  const firstMs = await pass(0);
  const timesMs: number[] = [];
  for (let version = 1; version <= edits; version++) timesMs.push(await pass(version));
  process.stdout.write(
    `${JSON.stringify({ firstMs, timesMs, cpuMs: cpuMs.slice(1), lines: script.split('\n').length, findings, titles })}\n`,
  );
});
