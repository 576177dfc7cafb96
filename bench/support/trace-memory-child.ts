// Child process of the host-memory benchmark, bundled to plain JS and run with --expose-gc: loads the real
// dist/extension.js against the test stand-in for `vscode`, activates it, measures memory, then opens a trace file
// through the extension's own Open Trace command (read, parse, convert, show in the timeline, post the chunks once
// the page says it is ready) and measures again after a full GC. Prints one JSON line.
import * as fake from '../../test/unit/extension/fixtures/fake-vscode';
import { activateBundle, installVscodeStandIn, runChild } from './vscode-stand-in';

const [root, tracePath] = process.argv.slice(2);
const gc = (globalThis as { gc?: () => void }).gc;
if (!root || !tracePath || !gc)
  throw new Error('usage: node --expose-gc trace-memory-child.cjs <repo root> <trace file>');

const MiB = 2 ** 20;
function settledMemory(): NodeJS.MemoryUsage {
  // Two passes: the first may only schedule finalisation of what the second then frees.
  gc!();
  gc!();
  return process.memoryUsage();
}

runChild(async () => {
  const { posted } = installVscodeStandIn(root);
  const api = activateBundle(root);
  const before = settledMemory();
  const started = performance.now();
  await fake.commands.executeCommand('collectiveProfiler.openTrace', fake.Uri.file(tracePath));
  const panel = fake.recorded.panels.at(-1);
  if (!panel)
    throw new Error(`Open Trace showed no panel: ${fake.recorded.messages.concat(fake.recorded.logs).join('; ')}`);
  // The page announces it is ready; the host then posts the trace, in chunks for a big one. Its handler runs
  // behind the dispatcher's validation, so the posts land a turn later.
  await panel.fromWebview({ type: 'ready', panel: 'timeline' });
  await new Promise((done) => setImmediate(done));
  if (posted.messages === 0) throw new Error(`the timeline was never sent the trace: ${fake.recorded.logs.join('; ')}`);
  const openMs = performance.now() - started;
  const after = settledMemory();
  const trace = api.ctx.panels.activeTraceView?.trace;
  if (!trace) throw new Error('Open Trace left no active trace');
  const result = {
    rssMB: (after.rss - before.rss) / MiB,
    heapUsedMB: (after.heapUsed - before.heapUsed) / MiB,
    externalMB: (after.external - before.external) / MiB,
    baselineRssMB: before.rss / MiB,
    // maxRSS is in KiB; it includes the transient text and parsed JSON of the file.
    peakRssMB: process.resourceUsage().maxRSS / 1024,
    openMs,
    spans: trace.spans.length,
    lanes: trace.lanes.length,
    postedMessages: posted.messages,
    postedMB: posted.bytes / MiB,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
});
