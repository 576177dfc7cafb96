// A small training-step trace shared by the range-aggregate and flame-graph tests: one rank's compute and
// communication streams with nested spans, a second rank, and a link lane that repeats a transfer.
import { asBytes, asMicros, TraceBuilder, type Phase } from '../../src/engine/index';
import { TimelineModel } from '../../webview/timeline/model';

export function stepModel(): TimelineModel {
  const builder = new TraceBuilder({ origin: 'test', title: 't', ranks: 2 });
  const compute = builder.lane('stream', 'rank 0 · compute', { rank: 0 });
  const comm = builder.lane('stream', 'rank 0 · communication', { rank: 0 });
  const other = builder.lane('rank', 'rank 1', { rank: 1 });
  const link = builder.lane('link', 'gpu0->gpu1');
  const add = (lane: number, phase: Phase, name: string, startUs: number, endUs: number): number =>
    builder.add({
      lane,
      rank: 0,
      phase,
      name,
      step: -1,
      channel: 0,
      chunk: 0,
      bytes: asBytes(0),
      links: [],
      startUs: asMicros(startUs),
      endUs: asMicros(endUs),
    });
  add(compute, 'other', 'step', 0, 100);
  add(compute, 'compute', 'backward', 10, 60);
  add(compute, 'compute', 'layer', 20, 30);
  add(compute, 'compute', 'layer', 40, 50);
  add(compute, 'optimizer', 'optimizer', 70, 90);
  add(comm, 'collective', 'allreduce', 30, 80);
  add(comm, 'exchange', 'exchange', 30, 55);
  add(comm, 'reduce', 'reduce', 55, 80);
  add(other, 'compute', 'layer', 0, 25);
  // A link lane repeats a transfer: it is not counted again.
  add(link, 'exchange', 'exchange', 30, 55);
  return TimelineModel.fromTrace(builder.build());
}
