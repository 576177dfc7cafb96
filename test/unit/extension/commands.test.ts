// Runs the command handlers of the real bundle against the stand-in vscode module: the panels they open, what
// they post to the webviews, how they treat messages from the webviews, and the files they write.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as fake from './fixtures/fake-vscode';
import { ROOT, activateBundle, notBuilt } from './fixtures/activate-bundle';
import { needShared } from '../requirements';

const SHARED = join(ROOT, '..', 'shared', 'fixtures-real');
const skip = notBuilt ?? false;
const run = (id: string, ...args: unknown[]) => fake.commands.executeCommand(`collectiveProfiler.${id}`, ...args);
const panel = (kind: string) => fake.recorded.panels.filter((p) => p.viewType === `collectiveProfiler.${kind}`).pop();
const errors = () => fake.recorded.messages.filter((m) => m.startsWith('error'));

before(() => {
  if (!notBuilt) activateBundle();
});

const TRAIN = 'import torch.distributed as dist\n\nfor p in model.parameters():\n    dist.all_reduce(p.grad)\n';

test(
  'Profile AllReduce at Cursor opens the timeline with a locked-down page and posts the trace after ready',
  { skip },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cp-cmd-'));
    writeFileSync(join(dir, 'train.py'), TRAIN);
    await run('profileAllReduceAtCursor', fake.Uri.file(join(dir, 'train.py')), 3);
    assert.deepEqual(errors(), []);
    const timeline = panel('timeline')!;
    assert.ok(timeline, 'a timeline panel');
    assert.deepEqual(timeline.webview.options.localResourceRoots!.map((u) => u.fsPath.slice(ROOT.length)).sort(), [
      '/dist',
      '/media',
    ]);
    assert.match(timeline.webview.html, /default-src 'none'/);
    assert.match(timeline.webview.html, /dist\/webview\/timeline\.js/);
    assert.equal(timeline.posted.length, 0, 'nothing is posted before the page is ready');
    await timeline.fromWebview({ type: 'ready', panel: 'timeline' });
    const trace = timeline.posted.find((m) => m.type === 'trace') as unknown as {
      trace: { spans: { source?: { line: number } }[]; metadata: { title: string } };
    };
    assert.ok(trace.trace.spans.length > 0);
    assert.equal(trace.trace.spans[0].source?.line, 4, 'spans point back at the all_reduce line');
    assert.match(trace.trace.metadata.title, /^dist\.all_reduce · 25 MiB \(assumed\) on 8× H100 NVSwitch$/);
    assert.equal(fake.recorded.contextKeys.get('collectiveProfiler.hasTrace'), true);
    assert.equal(panel('charts'), undefined, 'the charts panel is not pushed in front of the timeline');
  },
);

const SCALAR = [
  'import torch.distributed as dist',
  '',
  'for x, y in loader:',
  '    loss = criterion(model(x), y)',
  '    dist.all_reduce(p.grad)',
  '    dist.all_reduce(loss)',
  '',
].join('\n');

test(
  'one call, one answer: the lens, Profile AllReduce at Cursor and its panels price a scalar all_reduce at 4 bytes',
  { skip },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cp-scalar-'));
    const file = join(dir, 'train.py');
    writeFileSync(file, SCALAR);
    const provider = fake.recorded.lensProviders[0];
    // Once the system is resolved, a prediction lens comes with its command from provide (lenses.ts); an earlier
    // one is resolved when it comes into view. Either way the lens on line 5 is the one that prices the call.
    const lenses = await Promise.all(
      provider
        .provideCodeLenses(fake.document(file, 'python', SCALAR))
        .filter((l) => l.range.start.line === 5)
        .map(async (l) => (l.command ? l : provider.resolveCodeLens!(l))),
    );
    const resolved = lenses.find((l) => l.command!.title.startsWith('≈'))!;
    assert.match(resolved.command!.title, /^≈ [\d.]+ µs · latency-bound · \w+\/\w+ for a 4 B tensor$/);
    const predictedUs = Number(/^≈ ([\d.]+) µs/.exec(resolved.command!.title)![1]);
    assert.match(String(resolved.command!.tooltip), /size 4 B: loss = criterion\(model\(x\), y\) on line 4/);
    // An open charts panel takes the phase breakdown in the background.
    await run('sweepMessageSizes');
    const charts = panel('charts')!;
    await charts.fromWebview({ type: 'ready', panel: 'charts' });
    // The lens's click runs the command on that call, not on the p.grad call above it.
    await fake.commands.executeCommand(resolved.command!.command, ...(resolved.command!.arguments ?? []));
    assert.deepEqual(errors(), []);
    const timeline = panel('timeline')!;
    await timeline.fromWebview({ type: 'ready', panel: 'timeline' });
    const posted = timeline.posted.filter((m) => m.type === 'trace').pop() as unknown as {
      trace: {
        spans: { endUs: number; source?: { line: number } }[];
        metadata: { title: string; facts: Record<string, number> };
      };
    };
    assert.match(posted.trace.metadata.title, /^dist\.all_reduce · 4 B on 8× H100 NVSwitch$/);
    assert.equal(posted.trace.spans[0].source?.line, 6);
    const drawnEndUs = Math.max(...posted.trace.spans.map((s) => s.endUs));
    assert.ok(
      Math.abs(drawnEndUs - predictedUs) <= 0.05 * predictedUs + 0.1,
      `drawn ${drawnEndUs} µs, lens ${predictedUs} µs`,
    );
    const data = (
      charts.posted.filter((m) => m.type === 'charts').pop() as unknown as {
        data: { title: string; phases: { label: string; bytes: number }[] };
      }
    ).data;
    assert.equal(data.title, posted.trace.metadata.title);
    assert.deepEqual([data.phases[0].label, data.phases[0].bytes], ['allreduce 4 B', 4]);
  },
);

test(
  'Sweep Bucket Size says one recommendation, with its step time, in the message and on the chart',
  { skip },
  async () => {
    fake.recorded.messages.length = 0;
    await run('sweepBucketSize', fake.Uri.file(join(ROOT, 'examples', 'llama2-7b-ddp.collective.yaml')));
    assert.deepEqual(errors(), []);
    const charts = panel('charts')!;
    await charts.fromWebview({ type: 'ready', panel: 'charts' });
    const data = (
      charts.posted.filter((m) => m.type === 'charts').pop() as unknown as {
        data: {
          bucketAdvice: string;
          bucketSweep: { bucketBytes: number; stepTimeUs: number; recommended?: boolean }[];
        };
      }
    ).data;
    const said = fake.recorded.messages.find((m) => m.startsWith('info llama2-7b-ddp.collective.yaml: '));
    assert.equal(said, `info llama2-7b-ddp.collective.yaml: ${data.bucketAdvice}`);
    const marked = data.bucketSweep.filter((r) => r.recommended);
    assert.equal(marked.length, 1);
    const mb = Number(/bucket_cap_mb=([\d.]+)/.exec(data.bucketAdvice)![1]);
    assert.equal(marked[0].bucketBytes, Math.round(mb * 2 ** 20), 'the chart marks the size the words name');
    assert.ok(
      data.bucketSweep.some((r) => r.bucketBytes === 25 * 2 ** 20),
      'the current 25 MiB is on the chart',
    );
  },
);

test(
  'invalid webview messages are logged and dropped; a span source outside the workspace is not opened',
  { skip },
  async () => {
    const timeline = panel('timeline')!;
    const before = fake.recorded.logs.length;
    await timeline.fromWebview({ type: 'runShell', command: 'rm -rf /' });
    await timeline.fromWebview({ type: 'openSource', file: '/etc/passwd', line: 1 });
    const logs = fake.recorded.logs.slice(before);
    assert.ok(
      logs.some((l) =>
        /^warn \[timeline\] dropped an invalid webview message: unknown message type "runShell"/.test(l),
      ),
      logs.join('\n'),
    );
    assert.ok(
      logs.some((l) => /Not opening \/etc\/passwd/.test(l)),
      logs.join('\n'),
    );
  },
);

test(
  'Export Trace writes Chrome JSON atomically and asks before replacing a file it was handed',
  { skip },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cp-export-'));
    const target = join(dir, 'run.cptrace.json');
    await run('exportTrace', fake.Uri.file(target));
    const doc = JSON.parse(readFileSync(target, 'utf8'));
    assert.ok(doc.traceEvents.length > 0 && doc.collectiveProfiler.trace.spans.length > 0);
    writeFileSync(target, "the user's file");
    fake.recorded.messages.length = 0;
    await run('exportTrace', fake.Uri.file(target));
    assert.equal(readFileSync(target, 'utf8'), "the user's file", 'not replaced without a yes');
    assert.ok(fake.recorded.messages.some((m) => /^warn .*exists\. Replace it\?/.test(m)));
    // An exported file opens again in the timeline; a file that is not a trace is refused with the reason.
    const exported = join(dir, 'again.cptrace.json');
    await run('exportTrace', fake.Uri.file(exported));
    const timeline = panel('timeline')!;
    const before = timeline.posted.length;
    await run('openTrace', fake.Uri.file(exported));
    const reopened = timeline.posted.slice(before).find((m) => m.type === 'trace') as unknown as {
      source: { uri: string };
    };
    assert.match(reopened.source.uri, /again\.cptrace\.json$/);
    await run('openTrace', fake.Uri.file(join(ROOT, 'package.json')));
    assert.ok(
      errors().some((m) => /package\.json:1:1: not a trace/.test(m)),
      errors().join('\n'),
    );
  },
);

test('Compare Algorithms and Sweep Message Sizes fill the charts panel from the engine', { skip }, async () => {
  await run('compareAlgorithms', 64 * 2 ** 20);
  const charts = panel('charts')!;
  await charts.fromWebview({ type: 'ready', panel: 'charts' });
  const compared = charts.posted.filter((m) => m.type === 'charts').pop() as unknown as {
    data: { algorithms: { chosen?: boolean }[]; comparisonBytes: number };
  };
  assert.equal(compared.data.comparisonBytes, 64 * 2 ** 20);
  assert.equal(compared.data.algorithms.filter((a) => a.chosen).length, 1);
  await run('sweepMessageSizes');
  const sweep = charts.posted.filter((m) => m.type === 'charts').pop() as unknown as {
    data: { sweeps: { rows: unknown[] }[]; nodeScaling: { nodes: number }[] };
  };
  assert.ok(sweep.data.sweeps[0].rows.length >= 30);
  assert.deepEqual(sweep.data.nodeScaling.map((r) => r.nodes).slice(0, 3), [1, 2, 4]);
});

test(
  'Import Measurements draws a real nccl-tests run over the model',
  { skip: skip || needShared(SHARED, '../shared/fixtures-real') },
  async () => {
    await run('importMeasurements', fake.Uri.file(join(SHARED, 'nccl-tests-a100-8gpu-2024.txt')));
    assert.deepEqual(
      errors().filter((m) => !/not a trace/.test(m)),
      [],
    );
    const data = (
      panel('charts')!
        .posted.filter((m) => m.type === 'charts')
        .pop() as unknown as { data: { measured: { points: unknown[] }[]; sweeps: { label: string }[] } }
    ).data;
    assert.ok(data.measured[0].points.length > 20);
    assert.match(data.sweeps[0].label, /^model: /);
    assert.match(
      (data.measured[0] as unknown as { label: string }).label,
      /^measured: allreduce · 8 ranks \(nccl-tests\)$/,
    );
    const summary = fake.recorded.messages.find((m) => /nccl-tests-a100-8gpu-2024\.txt: /.test(m)) ?? '';
    // Two nodes of four A100s: judged on A100s, the GPU the file names, not on the selected H100 preset.
    assert.match(
      summary,
      /Measured on 8 × NVIDIA A100-SXM4-40GB on 2 nodes \(named in the file\); compared with 2×4 A100 [^:]*: the file's NVIDIA A100-SXM4-40GB as the catalogue's A100-SXM; interconnect and network assumed\./,
    );
    assert.doesNotMatch(summary, /H100/);
    const notes = (
      panel('charts')!
        .posted.filter((m) => m.type === 'charts')
        .pop() as unknown as { data: { notes: { title: string; lines: string[] }[] } }
    ).data.notes;
    assert.match(notes[0].lines.join('\n'), /measured on 8 × NVIDIA A100-SXM4-40GB on 2 nodes/);
    const warnings =
      fake.recorded.diagnostics.get(fake.Uri.file(join(SHARED, 'nccl-tests-a100-8gpu-2024.txt')).toString()) ?? [];
    // Large sizes are judged in busbw, small latency-bound ones in time.
    assert.ok(
      warnings.length > 0 && warnings.every((d) => /(GB\/s|µs) the model expects/.test(d.message)),
      'flagged rows are marked in the file',
    );
    assert.ok(
      warnings.some((d) => /^\d+ B: [\d.]+ µs, [\d.]+× the [\d.]+ µs the model expects/.test(d.message)),
      warnings.map((d) => d.message).join('\n'),
    );
  },
);

test(
  'a corrupted, truncated run is errors in the editor; an init-only NCCL log shows what it holds',
  { skip: skip || (existsSync(SHARED) ? false : 'needs ../shared/fixtures-real') },
  async () => {
    const broken = fake.Uri.file(join(SHARED, 'nccl-tests-gh200-16gpu-2026-wrong-truncated.txt'));
    await run('compareWithModel', broken);
    const problems = fake.recorded.diagnostics.get(broken.toString()) ?? [];
    const asErrors = problems.filter((d) => d.severity === fake.DiagnosticSeverity.Error);
    assert.equal(asErrors.filter((d) => /#wrong/.test(d.message)).length, 6);
    assert.ok(asErrors.some((d) => /truncated/.test(d.message)));
    fake.recorded.messages.length = 0;
    const initOnly = fake.Uri.file(join(SHARED, 'nccl-debug-a100-8gpu-multinode-ofi.log'));
    await run('compareWithModel', initOnly);
    const said = fake.recorded.messages.find((m) => m.includes('nccl-debug-a100-8gpu-multinode-ofi.log')) ?? '';
    assert.doesNotMatch(said, /unknown|0 sizes/);
    assert.match(said, /NCCL initialisation only/);
    const data = (
      panel('charts')!
        .posted.filter((m) => m.type === 'charts')
        .pop() as unknown as { data: { notes: { title: string; lines: string[] }[] } }
    ).data;
    assert.deepEqual(
      data.notes.map((n) => n.title),
      ['Measurement', 'Topology', 'Channels', 'Trees (8)'],
    );
  },
);

test('the gradient-scaling check draws sum, average and reference loss curves', { skip }, async () => {
  await run('showScalingCheck');
  const data = (
    panel('charts')!
      .posted.filter((m) => m.type === 'charts')
      .pop() as unknown as { data: { scalingCheck: { series: { kind: string; loss: number[] }[]; verdict: string } } }
  ).data;
  assert.deepEqual(
    data.scalingCheck.series.map((s) => s.kind),
    ['sum', 'avg', 'reference'],
  );
  assert.match(data.scalingCheck.verdict, /8 ranks act as a 8× learning rate/);
  // The curves are of the check's own synthetic problem, and the panel says so (a sum can converge faster there).
  assert.match(
    (data.scalingCheck as unknown as { model: string }).model,
    /^Synthetic least-squares model: .*not how your network trains/,
  );
});

test(
  'Profile Training Config profiles the bundled example: step timeline and charts',
  { skip: skip || (existsSync(join(ROOT, 'examples', 'llama2-7b-ddp.collective.yaml')) ? false : 'needs examples/') },
  async () => {
    fake.recorded.messages.length = 0;
    await run('profileTrainingConfig', fake.Uri.file(join(ROOT, 'examples', 'llama2-7b-ddp.collective.yaml')));
    assert.deepEqual(errors(), []);
    const data = (
      panel('charts')!
        .posted.filter((m) => m.type === 'charts')
        .pop() as unknown as { data: { title: string; phases: unknown[]; sweeps: unknown[] } }
    ).data;
    assert.match(
      data.title,
      /^llama2-7b-ddp\.collective\.yaml: [\d.]+ (ms|s) per step on 4 nodes × 8× H100|^llama2-7b-ddp\.collective\.yaml: [\d.]+ (ms|s) per step on /,
    );
    assert.ok(data.phases.length > 0 && data.sweeps.length > 0);
  },
);

test('a missing model file is reported at the line that names it', { skip }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cp-config-'));
  writeFileSync(
    join(dir, 'run.collective.yaml'),
    'model:\n  config: nowhere/config.json\ntraining:\n  bucket_cap_mb: 25\n',
  );
  fake.recorded.messages.length = 0;
  await run('profileTrainingConfig', fake.Uri.file(join(dir, 'run.collective.yaml')));
  assert.ok(
    errors().some((m) => /run\.collective\.yaml:2:\d+: cannot read model config 'nowhere\/config\.json'/.test(m)),
    errors().join('\n'),
  );
});

test(
  'Check Gradient Scaling in Workspace judges a helper of one file at its caller in another, with the helper as related information',
  { skip },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cp-ws-program-'));
    mkdirSync(join(dir, 'pkg'));
    writeFileSync(
      join(dir, 'pkg', 'dist_utils.py'),
      'import torch.distributed as dist\n\ndef average_gradients(model):\n    for p in model.parameters():\n        dist.all_reduce(p.grad)\n',
    );
    writeFileSync(
      join(dir, 'train.py'),
      'from pkg.dist_utils import average_gradients\n\ndef train(model, optimizer, loss):\n    loss.backward()\n    average_gradients(model)\n    optimizer.step()\n',
    );
    fake.recorded.workspaceFiles = [join(dir, 'pkg', 'dist_utils.py'), join(dir, 'train.py')];
    await run('checkGradientScalingInWorkspace');
    assert.deepEqual(fake.recorded.diagnostics.get(fake.Uri.file(join(dir, 'pkg', 'dist_utils.py')).toString()), []);
    const [finding] = (fake.recorded.diagnostics.get(fake.Uri.file(join(dir, 'train.py')).toString()) ??
      []) as unknown as {
      range: { start: { line: number } };
      relatedInformation: {
        location: { uri: { fsPath: string }; range: { start: { line: number } } };
        message: string;
      }[];
    }[];
    assert.equal(finding.range.start.line, 4);
    const helper = finding.relatedInformation.find((r) => r.location.uri.fsPath === join(dir, 'pkg', 'dist_utils.py'));
    assert.equal(helper?.location.range.start.line, 4);
    assert.ok(finding.relatedInformation.some((r) => /optimizer\.step/.test(r.message)));
  },
);

test(
  'Check Gradient Scaling in Workspace analyses files that are not open and publishes their findings',
  { skip },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cp-ws-'));
    writeFileSync(join(dir, 'bad.py'), TRAIN);
    writeFileSync(
      join(dir, 'good.py'),
      'import torch.distributed as dist\n\nfor p in model.parameters():\n    dist.all_reduce(p.grad, op=dist.ReduceOp.AVG)\n',
    );
    fake.recorded.workspaceFiles = [join(dir, 'bad.py'), join(dir, 'good.py')];
    fake.recorded.messages.length = 0;
    await run('checkGradientScalingInWorkspace');
    const bad = fake.recorded.diagnostics.get(fake.Uri.file(join(dir, 'bad.py')).toString()) ?? [];
    assert.deepEqual(
      bad.map((d) => (d.code as { value: string }).value),
      ['CP001'],
    );
    assert.deepEqual(fake.recorded.diagnostics.get(fake.Uri.file(join(dir, 'good.py')).toString()), []);
    assert.ok(
      fake.recorded.messages.some((m) => /^info Gradient scaling: 1 finding in 1 of 2 files \(CP001 ×1\)\.$/.test(m)),
      fake.recorded.messages.join('\n'),
    );
  },
);
