// Kineto's launch → kernel flow events (ph "s"/"f", category "ac2g") become flow arrows between the spans the
// timeline draws: each NCCL kernel of the real A100 trace is reached from the record_param_comms op that launched it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { importMeasurementBytes } from '../../../src/native/import/index';
import { parseKineto } from '../../../src/native/import/kineto';
import { needShared } from '../requirements';

const FIXTURES = resolve(import.meta.dirname, '..', '..', '..', '..', 'shared', 'fixtures-real');
const skip = needShared(FIXTURES, '../shared/fixtures-real');

test('the real A100 trace: a flow from each record_param_comms to the NCCL kernel it launched', { skip }, () => {
  const name = 'kineto-a100-2rank-nccl2.17-full.json.gz';
  const result = importMeasurementBytes(readFileSync(resolve(FIXTURES, name)), {
    fileName: name,
    gunzip: (b) => gunzipSync(b),
  });
  const trace = result.trace!;
  const flows = trace.flows ?? [];
  const kernels = trace.spans.filter((s) => s.phase === 'collective');
  // Every one of the 21 NCCL kernels is launched from inside a record_param_comms op, once.
  assert.equal(flows.length, kernels.length);
  const targets = new Set(flows.map((f) => f.toSpan));
  assert.equal(targets.size, flows.length, 'one flow per kernel');
  for (const flow of flows) {
    const from = trace.spans[flow.fromSpan];
    const to = trace.spans[flow.toSpan];
    assert.match(from.name ?? '', /^record_param_comms /);
    assert.equal(to.phase, 'collective');
    // The launch comes first: the op starts before its kernel does.
    assert.ok(from.startUs <= to.startUs, `${from.name} at ${from.startUs} before ${to.name} at ${to.startUs}`);
    // The op names the collective the kernel runs.
    assert.equal(from.name?.split(' ')[1], to.name?.split(' ')[0]);
  }
});

test('flow events whose ends fall in no drawn span, or that lack a partner, give no flow', () => {
  const kernel = (ts: number, name: string) => ({
    ph: 'X',
    cat: 'kernel',
    name,
    pid: 0,
    tid: 7,
    ts,
    dur: 10,
    args: { stream: 7, 'In msg nelems': 256, dtype: 'Float', 'Group size': 2 },
  });
  const doc = {
    distributedInfo: { rank: 0, world_size: 2 },
    traceEvents: [
      {
        ph: 'X',
        name: 'record_param_comms',
        cat: 'cpu_op',
        pid: 1,
        tid: 2,
        ts: 100,
        dur: 20,
        args: { 'Collective name': 'allreduce', 'In msg nelems': 256, dtype: 'Float' },
      },
      kernel(130, 'ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)'),
      kernel(160, 'void gemm_kernel()'),
      // Launched from inside the op: a flow.
      { ph: 's', id: 1, cat: 'ac2g', name: 'ac2g', pid: 1, tid: 2, ts: 110 },
      { ph: 'f', id: 1, cat: 'ac2g', name: 'ac2g', pid: 0, tid: 7, ts: 130, bp: 'e' },
      // The GEMM's launch lies in no drawn span: no flow.
      { ph: 's', id: 2, cat: 'ac2g', name: 'ac2g', pid: 1, tid: 2, ts: 150 },
      { ph: 'f', id: 2, cat: 'ac2g', name: 'ac2g', pid: 0, tid: 7, ts: 160, bp: 'e' },
      // A start without a finish: no flow.
      { ph: 's', id: 3, cat: 'ac2g', name: 'ac2g', pid: 1, tid: 2, ts: 105 },
    ],
  };
  const { trace } = parseKineto(doc);
  assert.equal(trace.flows?.length, 1);
  const flow = trace.flows![0];
  assert.match(trace.spans[flow.fromSpan].name ?? '', /^record_param_comms allreduce/);
  assert.match(trace.spans[flow.toSpan].name ?? '', /^allreduce ring LL/);
});
