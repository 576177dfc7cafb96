// The speed paths change no finding: the textual prefilter (select.ts mayHaveFindings) lets through every call a
// rule starts from, and the raw-cursor copy (tree.ts) builds the same tree as TreeCursor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzePython } from '../../../src/analysis/index';
import { mayHaveFindings } from '../../../src/analysis/select';
import { copyModule, copySubtree, type PyNode } from '../../../src/analysis/tree';
import { trainingScript } from '../../../bench/training-script';
import { EXTRA_CORPUS, parser, pythonFiles, REPO, SHARED_CORPUS, summary } from './helpers';

const corpus = [...pythonFiles(SHARED_CORPUS), ...pythonFiles(EXTRA_CORPUS)];

/**
 * The call names the rules start from, as written in their sources (`/^(a|b)$/.test(name)`, `name === 'a'`),
 * whether or not the formatter broke the call over lines.
 */
function triggerNames(): string[] {
  const names = new Set<string>();
  for (const file of ['reductions.ts', 'implicit.ts', 'losses.ts', 'unreduced-world-multiplier.ts']) {
    let source = readFileSync(join(REPO, 'src', 'analysis', file), 'utf8');
    // In losses.ts only backwardSites starts a rule; its other names describe the loss.
    if (file === 'losses.ts')
      source = source.slice(
        source.indexOf('backwardSites('),
        source.indexOf('\n  }\n', source.indexOf('backwardSites(')),
      );
    for (const m of source.matchAll(/\/\^\(([\w|]+)\)\$\/\.test\(\s*(?:name|s\.calleeName\([^)]*\)),?\s*\)/g))
      for (const n of m[1].split('|')) names.add(n);
    for (const m of source.matchAll(/\bname [!=]== '(\w+)'/g)) names.add(m[1]);
  }
  return [...names].sort();
}

test('every call name a rule starts from passes the prefilter', () => {
  const names = triggerNames();
  assert.ok(names.length >= 30, `found ${names.join(', ')}`);
  // Accelerate's prepare and a strategy's run count only next to those words, as in the rules.
  const missed = names.filter((n) => !mayHaveFindings(`accelerator_strategy.${n}(x)`));
  assert.deepEqual(missed, []);
});

test('files that call no trigger are skipped; a mention in text alone is not a call', () => {
  assert.equal(
    mayHaveFindings('import torch\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x.relu()\n'),
    false,
  );
  assert.equal(mayHaveFindings('# we all_reduce elsewhere\nx = "backward"\n'), false);
  assert.equal(mayHaveFindings('loss.backward()\n'), true);
  assert.equal(mayHaveFindings('dist.all_reduce (t)\n'), true);
  assert.equal(mayHaveFindings('model = DDP(model)\n'), true);
});

test('the prefilter changes no finding on the corpora and the generated training scripts', async () => {
  const texts = [...corpus.map((f) => f.text), trainingScript(300), trainingScript(3000)];
  for (const text of texts) {
    const a = analyzePython(await parser(), text);
    const b = analyzePython(await parser(), text, { prefilter: false });
    assert.deepEqual(summary(a.findings), summary(b.findings));
    if (b.findings.length > 0) assert.ok(mayHaveFindings(text));
  }
});

function shape(n: PyNode): unknown[] {
  return [n.type, n.named, n.field, n.start, n.end, n.children.map(shape)];
}

test('the raw-cursor copy of the module equals the TreeCursor copy of each statement', async () => {
  const p = await parser();
  for (const text of [...corpus.slice(0, 20).map((f) => f.text), trainingScript(1000)]) {
    const tree = p.parse(text)!;
    const module: PyNode = {
      type: 'module',
      named: true,
      field: null,
      start: 0,
      end: text.length,
      children: [],
      parent: null,
    };
    copyModule(tree, p.language!, module);
    const slow = tree.rootNode.children.map((top) => {
      const cursor = top!.walk();
      const copy = copySubtree(cursor, p.language!).node;
      cursor.delete();
      return shape(copy);
    });
    assert.deepEqual(module.children.map(shape), slow);
    assert.ok(module.children.every((c) => c.parent === module));
    tree.delete();
  }
});
