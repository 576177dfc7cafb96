// Analysis speed: a generated 3,000-line training script through the whole checker (parse, copy, rules, fixes).
import type { Benchmark } from './types';
import { analyzePython } from '../src/analysis/index';
import { loadPythonParser } from '../src/cli/python-parser';
import { trainingScript } from './training-script';

const script = trainingScript(3000);
let findings = 0;

export const benchmarks: Benchmark[] = [
  {
    name: 'analysis: 3,000-line training script',
    unit: 'ms',
    target: 50,
    quick: true,
    runs: 9,
    async measure() {
      const parser = await loadPythonParser();
      analyzePython(parser, script);
      const start = performance.now();
      const result = analyzePython(parser, script);
      const elapsed = performance.now() - start;
      findings = result.findings.length;
      return elapsed;
    },
    extra: () => ({ lines: script.split('\n').length, findings }),
  },
];
