// Hostile inputs through every reader the extension and the CLI use: a 100 MB line, 100,000 levels of nesting and
// a YAML alias bomb. Each must be rejected (or read) with a positioned, readable error and in bounded time. The
// config parser's own guards and the analysis's 5 MB file are tested in test/unit/config/positioned.test.ts and
// test/unit/analysis/robustness.test.ts; here the same inputs go through the importers and format detectors that
// sit in front of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { importMeasurementText } from '../../../src/native/import/index';
import { readTraceFile } from '../../../src/extension/glue/trace-file';
import { readTrainingConfig } from '../../../src/config/training-config';
import { parseSystemFile } from '../../../src/config/system-file';
import { analyzeDeepSpeedConfig, analyzePython } from '../../../src/analysis/index';
import { loadPythonParser } from '../../../src/cli/python-parser';
import { TraceEventScanner } from '../../../src/native/stream/trace-event-scanner';
import { rejectionProblem } from './harness';

/** Generous: these machines are shared and slow; a real hang or a quadratic path takes minutes, not seconds. */
const BOUND_MS = 15_000;

function bounded<T>(what: string, run: () => T): T | undefined {
  const started = performance.now();
  let result: T | undefined;
  try {
    result = run();
  } catch (error) {
    assert.equal(rejectionProblem(error), undefined, `${what}: ${String(error).slice(0, 300)}`);
  }
  const ms = performance.now() - started;
  assert.ok(ms < BOUND_MS, `${what} took ${ms.toFixed(0)} ms`);
  return result;
}

const MB = 1024 * 1024;

test('a 100 MB single line is rejected or read in bounded time by every text reader', () => {
  const letters = 'x'.repeat(100 * MB);
  bounded('import, 100 MB of letters', () => importMeasurementText(letters, { fileName: 'line.txt' }));
  const row = `# nccl-tests version 2.17.8\n#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n        8  2  float  sum  -1 ${' 1.5'.repeat(25 * MB)}\n`;
  bounded('import, a 100 MB nccl-tests row', () => importMeasurementText(row, { fileName: 'all_reduce_perf.txt' }));
  const token = `# nccl-tests version 2.17.8\n#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n${letters}\n`;
  bounded('import, a 100 MB token after an nccl-tests header', () =>
    importMeasurementText(token, { fileName: 'all_reduce_perf.txt' }),
  );
  const log = `host:1:1 [0] NCCL INFO ${'Channel 00/02 : 0 1 '.repeat(5 * MB)}\n`;
  bounded('import, a 100 MB NCCL log line', () => importMeasurementText(log, { fileName: 'nccl-debug.log' }));
  bounded('launcher script, a 100 MB torchrun line', () =>
    readTrainingConfig(`torchrun --nnodes=2 ${'--x=$A '.repeat(14 * MB)}\n`, 'train.sh'),
  );
  bounded('training config, a 100 MB YAML line', () => readTrainingConfig(`a: ${letters}`, 'accelerate_config.yaml'));
  bounded('DeepSpeed rule, a 100 MB line', () => analyzeDeepSpeedConfig(`{"a": "${letters}"}`));
  bounded('trace reader, a 100 MB string', () =>
    readTraceFile(`{"traceEvents":[{"ph":"X","name":"${letters}","ts":1,"dur":1}]}`, 'big.json'),
  );
});

test('100,000 levels of nesting are refused or read without overflowing the stack', () => {
  const arrays = '['.repeat(100_000) + ']'.repeat(100_000);
  const objects = '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000);
  const unclosed = '['.repeat(100_000);
  for (const [name, text] of [
    ['arrays', arrays],
    ['objects', objects],
    ['unclosed', unclosed],
  ] as const) {
    bounded(`import, nested ${name}`, () => importMeasurementText(text, { fileName: 'deep.json' }));
    bounded(`import, nested ${name} under traceEvents`, () =>
      importMeasurementText(`{"traceEvents":[${text}]}`, { fileName: 'deep.json' }),
    );
    bounded(`trace reader, nested ${name}`, () =>
      readTraceFile(`{"traceEvents":[{"ph":"X","ts":1,"args":${text}}]}`, 'deep.json'),
    );
    bounded(`DeepSpeed config, nested ${name}`, () =>
      readTrainingConfig(`{"zero_optimization": ${text}}`, 'ds_config.json'),
    );
    bounded(`DeepSpeed rule, nested ${name}`, () => analyzeDeepSpeedConfig(`{"zero_optimization": ${text}}`));
    bounded(`streaming scanner, nested ${name}`, () => {
      const scanner = new TraceEventScanner({ event: () => undefined });
      scanner.push(`{"traceEvents":[${text}]}`);
      scanner.end();
    });
  }
  bounded('YAML, nested flow sequences', () => readTrainingConfig(`a: ${unclosed}`, 'accelerate_config.yaml'));
  bounded('system file, nested block sequences', () =>
    parseSystemFile(`gpu: ${'- '.repeat(100_000)}x`, 'deep.system.yaml'),
  );
});

test('a YAML billion-laughs bomb is refused by every YAML reader, with a position', () => {
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  const names = 'abcdefghij'.split('');
  for (let k = 1; k < names.length; k++)
    lines.push(
      `${names[k]}: &${names[k]} [${Array(9)
        .fill(`*${names[k - 1]}`)
        .join(',')}]`,
    );
  const bomb = lines.join('\n');
  for (const [reader, run] of [
    ['system file', () => parseSystemFile(`${bomb}\ngpu: H100-SXM\n`, 'bomb.system.yaml')],
    ['collective file', () => readTrainingConfig(`${bomb}\nmodel: {preset: gpt2}\n`, 'bomb.collective.yaml')],
    ['Accelerate config', () => readTrainingConfig(`${bomb}\ndistributed_type: MULTI_GPU\n`, 'accelerate_config.yaml')],
  ] as const) {
    assert.throws(
      run,
      (error: unknown) =>
        rejectionProblem(error) === undefined && /too many YAML aliases/.test((error as Error).message),
      reader,
    );
  }
});

test('a 5 MB Python file with the default limits returns in bounded time with a note', async () => {
  const parser = await loadPythonParser();
  const big = 'import torch.distributed as dist\nfor p in model.parameters():\n    dist.all_reduce(p.grad)\n'.repeat(
    60_000,
  );
  assert.ok(big.length > 5 * MB);
  const result = bounded('analysis of 5 MB', () => analyzePython(parser, big));
  assert.deepEqual(result?.findings, []);
  // Skipped by size, or abandoned when the parse overruns its time budget: either way it returns, with a note.
  assert.match(result?.notes[0] ?? '', /skipped/);
});
