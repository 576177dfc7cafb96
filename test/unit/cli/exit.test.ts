// The CLI ends with process.exit() only when no output is waiting to be written (src/cli/exit.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { endProcess, type ExitingProcess } from '../../../src/cli/exit';

function fakeProcess(stdoutWaiting: number, stderrWaiting: number): ExitingProcess & { exits: number[] } {
  const exits: number[] = [];
  return {
    exitCode: undefined,
    stdout: { writableLength: stdoutWaiting },
    stderr: { writableLength: stderrWaiting },
    exit: (code: number) => void exits.push(code),
    exits,
  };
}

test('with nothing waiting to be written the process exits at once, with the command status', () => {
  const proc = fakeProcess(0, 0);
  endProcess(2, proc);
  assert.deepEqual(proc.exits, [2]);
  assert.equal(proc.exitCode, 2);
});

test('output still waiting on stdout or stderr is not cut off: the status is set and the process ends by itself', () => {
  for (const [out, err] of [
    [1, 0],
    [0, 65_536],
  ]) {
    const proc = fakeProcess(out, err);
    endProcess(1, proc);
    assert.deepEqual(proc.exits, [], `stdout ${out} B, stderr ${err} B waiting`);
    assert.equal(proc.exitCode, 1);
  }
});
