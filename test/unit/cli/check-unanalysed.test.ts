// `check` names every file it did not fully analyse (syntax errors, unreadable files, bytes that are not UTF-8,
// configs that are not JSON) in each output format, never counts it as clean, and exits 1 unless --exit-zero.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { checkCommand } from '../../../src/cli/commands/check';
import { rewordAsUnparsed } from '../../../src/cli/python-ast';

async function run(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  try {
    const code = await checkCommand.run(args, {
      stdout: (t) => out.push(...t.split('\n')),
      stderr: (t) => err.push(...t.split('\n')),
    });
    return { code, out, err };
  } finally {
    for (const [k, v] of Object.entries(saved))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
}

const SUM_BUG =
  'import torch.distributed as dist\n\ndef sync(model):\n    for p in model.parameters():\n        dist.all_reduce(p.grad)\n';
const dir = mkdtempSync(join(tmpdir(), 'cp-unanalysed-'));
const broken = join(dir, 'broken.py');
writeFileSync(broken, `${SUM_BUG}\ndef broken(:\n    return )\n`);
const clean = join(dir, 'clean.py');
writeFileSync(clean, 'import torch\nprint(torch.ones(2))\n');

test('a syntax error is named on its own line, counted in the summary, and makes the exit status 1', async () => {
  const r = await run([broken, clean]);
  assert.equal(r.code, 1);
  assert.ok(r.out.some((l) => /broken\.py:5:9: CP001 /.test(l)));
  assert.ok(
    r.out.some((l) =>
      l.endsWith(
        'broken.py:7:1: partly analysed: syntax error at line 7: lines 7-8 not analysed; findings come from the rest of the file',
      ),
    ),
    r.out.join('\n'),
  );
  assert.ok(r.err.includes('1 finding in 2 files; 1 file not fully analysed'), r.err.join('\n'));
  assert.ok(!r.err.some((l) => /note: syntax error/.test(l)), 'not repeated as a note');
});

test('--exit-zero exits 0 with findings and files not fully analysed; a clean file alone exits 0 without it', async () => {
  assert.equal((await run([broken, '--exit-zero'])).code, 0);
  assert.equal((await run([broken, '--json', '--exit-zero'])).code, 0);
  const r = await run([clean]);
  assert.deepEqual([r.code, r.err], [0, ['0 findings in 1 file']]);
});

test('--json keeps the findings first and adds one entry per file not fully analysed; stderr says how many', async () => {
  const r = await run([broken, clean, '--json']);
  const items = JSON.parse(r.out.join('\n')) as Record<string, unknown>[];
  assert.deepEqual(
    items.map((i) => i.code ?? i.notAnalysed),
    ['CP001', 'syntax-error'],
  );
  const { file, ...entry } = items[1];
  assert.match(String(file), /broken\.py$/);
  assert.deepEqual(entry, {
    line: 7,
    column: 1,
    notAnalysed: 'syntax-error',
    partial: true,
    message: 'syntax error at line 7: lines 7-8 not analysed; findings come from the rest of the file',
  });
  assert.ok(r.err.includes('1 file not fully analysed'));
});

test("--sarif reports it as a tool execution notification of the run's invocation", async () => {
  const r = await run([broken, '--sarif']);
  const [notification] = JSON.parse(r.out.join('\n')).runs[0].invocations[0].toolExecutionNotifications;
  assert.equal(notification.level, 'warning');
  assert.equal(notification.descriptor.id, 'syntax-error');
  assert.match(notification.message.text, /^Partly analysed: syntax error at line 7/);
  assert.equal(notification.locations[0].physicalLocation.region.startLine, 7);
});

test('unreadable files, configs that are not JSON and undecodable bytes in code the rules read are named too', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cp-unreadable-'));
  symlinkSync(join(root, 'missing.py'), join(root, 'dangling.py'));
  writeFileSync(join(root, 'ds_config.json'), '{"prescale_gradients": true,}\n');
  writeFileSync(
    join(root, 'latin1.py'),
    Buffer.concat([Buffer.from('# caf'), Buffer.from([0xe9]), Buffer.from('\nloss.backward()\n')]),
  );
  writeFileSync(
    join(root, 'latin1_model.py'),
    Buffer.concat([Buffer.from('# caf'), Buffer.from([0xe9]), Buffer.from('\nimport torch\n')]),
  );
  const r = await run([root]);
  assert.equal(r.code, 1);
  const prefix = `${relative(process.cwd(), root)}/`;
  const lines = r.out.map((l) => (l.startsWith(prefix) ? l.slice(prefix.length) : l));
  assert.ok(lines.includes('dangling.py: not analysed: cannot read: no such file or folder'), JSON.stringify(lines));
  assert.ok(
    lines.includes("ds_config.json: not analysed: not valid JSON at line 1, column 28: trailing comma before '}'"),
    lines.join('\n'),
  );
  assert.ok(lines.includes('latin1.py: partly analysed: the file is not valid UTF-8; undecodable bytes were replaced'));
  // A file that calls nothing the rules start from cannot hide a finding in its replaced bytes: a note only.
  assert.ok(!lines.some((l) => l.startsWith('latin1_model.py')));
  assert.ok(r.err.some((l) => /latin1_model\.py: note: the file is not valid UTF-8/.test(l)));
  assert.ok(r.err.includes('0 findings in 4 files; 3 files not fully analysed'), r.err.join('\n'));
});

test('a syntax error that Python itself accepts is reported as what tree-sitter cannot parse (one python3 for the run)', async () => {
  const fake = join(dir, 'fake-python');
  // Answers "valid" for every path it is given, as python3 would for a file tree-sitter misreads.
  writeFileSync(
    fake,
    `#!${process.execPath}\nlet s='';process.stdin.on('data',(d)=>s+=d).on('end',()=>console.log(JSON.stringify({version:'3.11',valid:JSON.parse(s).map(()=>true)})));\n`,
  );
  chmodSync(fake, 0o755);
  const r = await run([broken, '--json'], { COLLECTIVE_PROFILER_PYTHON: fake });
  const entry = (JSON.parse(r.out.join('\n')) as Record<string, unknown>[]).find((i) => i.notAnalysed);
  assert.deepEqual(
    [entry?.notAnalysed, entry?.message],
    [
      'unparsed',
      'line 7 is valid Python 3.11 that tree-sitter-python cannot parse: lines 7-8 not analysed; findings come from the rest of the file',
    ],
  );
  assert.equal(r.code, 1, 'still not fully analysed');
  const off = await run([broken, '--json'], { COLLECTIVE_PROFILER_PYTHON: 'off' });
  assert.equal(
    (JSON.parse(off.out.join('\n')) as Record<string, unknown>[]).find((i) => i.notAnalysed)?.notAnalysed,
    'syntax-error',
  );
});

test('the rewording keeps the line ranges', () => {
  assert.equal(
    rewordAsUnparsed('syntax error at lines 3, 9: lines 3-4, 9 not analysed; x', '3.12'),
    'lines 3, 9 are valid Python 3.12 that tree-sitter-python cannot parse: lines 3-4, 9 not analysed; x',
  );
  assert.equal(rewordAsUnparsed('file too large', '3.12'), 'file too large');
});
