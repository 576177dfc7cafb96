// Cross-checks the dtype emulation against PyTorch's own half and bfloat16 arithmetic (CPU kernels, which compute
// in float and round once, as the GPU's native ops do). Skips when /usr/bin/python3 has no torch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { decodeDtype, encodeDtype } from '../../../src/engine/numeric/formats';
import { DtypeArithmetic } from '../../../src/engine/numeric/arithmetic';
import { sequentialReference } from '../../../src/engine/numeric/reference';
import { planReduction } from '../../../src/engine/numeric/plan';
import { seededRandom } from '../../../src/engine/numeric/synthetic';

const PYTHON = '/usr/bin/python3';

const SCRIPT = `
import json, sys, torch
req = json.load(sys.stdin)
out = {}
for name, dtype in (('fp16', torch.float16), ('bf16', torch.bfloat16)):
    a = torch.tensor(req[name]['a'], dtype=torch.int16).view(dtype)
    b = torch.tensor(req[name]['b'], dtype=torch.int16).view(dtype)
    out[name] = {
        'add': (a + b).view(torch.int16).tolist(),
        'mul': (a * b).view(torch.int16).tolist(),
        'fromFloat': torch.tensor(req['floats'], dtype=torch.float32).to(dtype).view(torch.int16).tolist(),
    }
# A sequential fp16 sum per element, in the order given, one rounding per addition.
inputs = torch.tensor(req['ring']['inputs'], dtype=torch.float32).to(torch.float16)
result = []
for e, order in enumerate(req['ring']['orders']):
    acc = inputs[order[0]][e].clone()
    for r in order[1:]:
        acc = acc + inputs[r][e]
    result.append(int(acc.view(torch.int16)))
out['ring'] = result
json.dump(out, sys.stdout)
`;
import { torchAbsent } from '../requirements';

const signed16 = (bits: number) => (bits >= 0x8000 ? bits - 0x10000 : bits);
const unsigned16 = (bits: number) => (bits < 0 ? bits + 0x10000 : bits);

test(
  'fp16/bf16 rounding and arithmetic match PyTorch bit for bit',
  { skip: existsSync(PYTHON) ? false : `no ${PYTHON}` },
  (t) => {
    const random = seededRandom(11);
    const patterns = (dtype: 'fp16' | 'bf16') => {
      const a: number[] = [];
      const b: number[] = [];
      while (a.length < 4000) {
        const x = Math.floor(random() * 65536);
        const y = Math.floor(random() * 65536);
        if (Number.isNaN(decodeDtype(x, dtype)) || Number.isNaN(decodeDtype(y, dtype))) continue; // NaN payloads differ
        a.push(signed16(x));
        b.push(signed16(y));
      }
      return { a, b };
    };
    const floats = Array.from({ length: 4000 }, () => Math.fround((random() - 0.5) * 10 ** (random() * 12 - 7)));
    // Ring order on 8 ranks: element e of chunk c is summed starting at rank c+1.
    const ringOptions = {
      ranks: 8,
      dtype: 'fp16' as const,
      op: 'sum' as const,
      elements: 64,
      seed: 4,
      magnitude: 1e4,
      correlation: 0.9,
    };
    const plan = planReduction({ ...ringOptions, algorithm: 'ring' });
    const orders = Array.from({ length: 64 }, (_, e) => {
      const chunk = Math.floor((e * 8) / 64);
      return Array.from({ length: 8 }, (_, k) => (chunk + 1 + k) % 8);
    });
    const request = {
      fp16: patterns('fp16'),
      bf16: patterns('bf16'),
      floats,
      ring: { inputs: plan.inputs.map((x) => Array.from(x)), orders },
    };
    const run = spawnSync(PYTHON, ['-c', SCRIPT], {
      input: JSON.stringify(request),
      encoding: 'utf8',
      timeout: 120_000,
      maxBuffer: 64 << 20,
    });
    if (run.status !== 0 && /No module named 'torch'/.test(run.stderr)) {
      t.skip(torchAbsent(`no torch in ${PYTHON}`));
      return;
    }
    assert.equal(run.status, 0, run.stderr);
    const torch = JSON.parse(run.stdout);
    for (const dtype of ['fp16', 'bf16'] as const) {
      const arith = new DtypeArithmetic(dtype);
      request[dtype].a.forEach((rawA, i) => {
        const a = decodeDtype(unsigned16(rawA), dtype);
        const b = decodeDtype(unsigned16(request[dtype].b[i]), dtype);
        const add = arith.add(a, b);
        const mul = arith.mul(a, b);
        if (!Number.isNaN(add))
          assert.equal(encodeDtype(add, dtype), unsigned16(torch[dtype].add[i]), `${dtype} ${a} + ${b}`);
        if (!Number.isNaN(mul))
          assert.equal(encodeDtype(mul, dtype), unsigned16(torch[dtype].mul[i]), `${dtype} ${a} × ${b}`);
      });
      floats.forEach((x, i) =>
        assert.equal(encodeDtype(x, dtype), unsigned16(torch[dtype].fromFloat[i]), `${dtype}(${x})`),
      );
    }
    const ours = sequentialReference('ring', ringOptions);
    assert.ok(
      ours.some((x) => !Number.isFinite(x)),
      'the case includes overflowing elements',
    );
    ours.forEach((x, e) =>
      assert.equal(
        encodeDtype(x, 'fp16'),
        unsigned16(torch.ring[e]),
        `ring element ${e}: ${x} vs torch ${decodeDtype(unsigned16(torch.ring[e]), 'fp16')}`,
      ),
    );
  },
);
