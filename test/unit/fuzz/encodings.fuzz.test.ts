// Two classes of issue 15 the other fuzzers had no generator for. Encodings: every real measurement and config,
// saved with a UTF-8 byte-order mark, as UTF-16 (LE or BE, with its mark), with CRLF line ends, or both, must
// read exactly as the plain file. Corrupt values: one number of a real measurement replaced by a value no run
// produces (negative, 1e308, nan, a huge integer) must be dropped and counted or refused with a position, never
// accepted as data: every kept row has a finite, non-negative time, an exact byte count, and (nccl-tests) a
// bandwidth its size and time allow.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { importMeasurementBytes, importMeasurementText } from '../../../src/native/import/index';
import { parseSystemFile } from '../../../src/config/system-file';
import { decodeText } from '../../../src/native/files/decode-text';
import { checkInput, fuzz, importResultProblem, reportCounts } from './harness';
import { deepSpeedLogSeeds, ncclLogSeeds, ncclTestsSeeds, SHARED_MISSING, systemFileSeeds, type Seed } from './seeds';
import { FUZZ_PLAN } from './plan';
import type { ImportResult } from '../../../src/native/import/model';

after(() => reportCounts('encodings'));

type Encoding = 'utf-8 bom' | 'utf-16le' | 'utf-16be';

function encode(text: string, encoding: Encoding, crlf: boolean): Uint8Array {
  const body = crlf ? text.replace(/\r?\n/g, '\r\n') : text;
  if (encoding === 'utf-8 bom') return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(body, 'utf8')]);
  const le = Buffer.from(body, 'utf16le');
  if (encoding === 'utf-16le') return Buffer.concat([Buffer.from([0xff, 0xfe]), le]);
  const be = Buffer.from(le);
  for (let i = 0; i + 1 < be.length; i += 2) [be[i], be[i + 1]] = [le[i + 1], le[i]];
  return Buffer.concat([Buffer.from([0xfe, 0xff]), be]);
}

const encodings = fc.constantFrom<Encoding>('utf-8 bom', 'utf-16le', 'utf-16be');

/** What a measurement import means, without the parts that legitimately name lines (CRLF keeps the numbers). */
function meaning(result: ImportResult): unknown {
  return result.measurements.map((m) => ({
    collective: m.collective,
    ranks: m.ranks,
    rows: m.rows.map((r) => [r.bytes, r.timeUs, r.algbwGBps, r.busbwGBps]),
  }));
}

function measurementSeeds(): Seed[] {
  return [...ncclTestsSeeds(), ...ncclLogSeeds(), ...deepSpeedLogSeeds()];
}

test('every real measurement reads the same in every encoding an editor saves', { skip: SHARED_MISSING }, () => {
  const seeds = measurementSeeds().filter((s) => {
    try {
      importMeasurementText(s.text, { fileName: s.name });
      return true;
    } catch {
      return false;
    }
  });
  assert.ok(seeds.length >= 10, `${seeds.length} importable seeds`);
  const input = fc.tuple(fc.nat({ max: seeds.length - 1 }), encodings, fc.boolean());
  fuzz(input, FUZZ_PLAN.encodings, ([i, encoding, crlf]) => {
    const seed = seeds[i];
    const bytes = encode(seed.text, encoding, crlf);
    const plain = meaning(importMeasurementText(seed.text, { fileName: seed.name }));
    checkInput(`measurement (${encoding}${crlf ? ', CRLF' : ''})`, bytes, () => {
      const result = importMeasurementBytes(bytes, { fileName: seed.name });
      assert.deepEqual(meaning(result), plain, `${seed.name} in ${encoding}${crlf ? ' with CRLF' : ''}`);
      return result;
    });
  });
});

test('system files read the same in every encoding', () => {
  const seeds = systemFileSeeds();
  assert.ok(seeds.length >= 3);
  fuzz(
    fc.tuple(fc.nat({ max: seeds.length - 1 }), encodings, fc.boolean()),
    FUZZ_PLAN.encodings / 4,
    ([i, enc, crlf]) => {
      const seed = seeds[i];
      const text = decodeText(encode(seed.text, enc, crlf));
      checkInput(`system file (${enc})`, text, () => {
        assert.deepEqual(parseSystemFile(text, seed.name), parseSystemFile(seed.text, seed.name));
      });
    },
  );
});

/** Values no measurement holds, written as a log would print them. */
const CORRUPT_NUMBERS = ['-5.00', '-0.01', '1e308', '1.8e308', 'nan', '-nan', 'inf', '99999999999999999999', '0.00'];

/** Every kept row is a possible measurement: no negative value, exact bytes, a bandwidth its size and time allow. */
function corruptValueProblem(result: ImportResult): string | undefined {
  const basic = importResultProblem(result);
  if (basic) return basic;
  for (const m of result.measurements)
    for (const row of m.rows) {
      if (row.timeUs < 0 || row.bytes < 0 || row.algbwGBps < 0 || row.busbwGBps < 0)
        return `a ${m.collective} row has a negative value (line ${row.line})`;
      if (!Number.isSafeInteger(row.bytes)) return `bytes ${row.bytes} is not an exact integer (line ${row.line})`;
      // nccl-tests derives algbw from size and time; DeepSpeed scales it by its own per-op factor, so only the
      // former can be held to size / time.
      if (m.kind === 'nccl-tests' && row.timeUs > 0 && row.algbwGBps > (row.bytes / row.timeUs / 1e3) * 1.3 + 0.05)
        return `algbw ${row.algbwGBps} GB/s is more than ${row.bytes} B in ${row.timeUs} µs allows (line ${row.line})`;
    }
  return undefined;
}

test(
  'one number of a real measurement replaced by a corrupt value is dropped or refused',
  { skip: SHARED_MISSING },
  () => {
    const seeds = [...ncclTestsSeeds(), ...deepSpeedLogSeeds()];
    const numbers = seeds.map((s) => [...s.text.matchAll(/(?<=\s|: )\d+\.\d+(?=\s|$)/g)].map((m) => m.index ?? 0));
    const usable = seeds.map((_, i) => i).filter((i) => numbers[i].length > 0);
    const input = fc.tuple(
      fc.constantFrom(...usable),
      fc.double({ min: 0, max: 1, noNaN: true }),
      fc.constantFrom(...CORRUPT_NUMBERS),
    );
    fuzz(input, FUZZ_PLAN.corruptValues, ([i, where, value]) => {
      const seed = seeds[i];
      const at = numbers[i][Math.min(numbers[i].length - 1, Math.floor(where * numbers[i].length))];
      const old = /^\d+\.\d+/.exec(seed.text.slice(at))?.[0] ?? '';
      const text = seed.text.slice(0, at) + value + seed.text.slice(at + old.length);
      checkInput(
        'measurement (one corrupt value)',
        text,
        () => importMeasurementText(text, { fileName: seed.name }),
        corruptValueProblem,
      );
    });
  },
);
