// The third hostile round of issue 15: cases nobody on the project had tried, over the seven classes and
// every surface (each CLI command, each flag that takes a path or a number, each config format, each importer,
// the extension's writer). Each case states its class, its input and the clear answer it expects (see the case
// files); a failure names the case. The tally per class is printed at the end, and written as JSON where
// $CP_ROUND_RESULTS names a file, so a round can be compared before and after a change.
import { test } from 'node:test';
import { rmSync, writeFileSync } from 'node:fs';
import { CLASSES, fresh, type HostileCase, type HostileClass } from './round';
import { OUTPUT_CASES } from './cases-outputs';
import { INPUT_CASES } from './cases-inputs';
import { SIZE_CASES } from './cases-sizes';
import { SIGNAL_CASES } from './cases-signals';
import { CHECK_CASES } from './cases-check';
import { MESSAGE_CASES } from './cases-messages';
import { VALUE_CASES } from './cases-values';

const ALL: readonly HostileCase[] = [
  ...OUTPUT_CASES,
  ...INPUT_CASES,
  ...SIZE_CASES,
  ...SIGNAL_CASES,
  ...CHECK_CASES,
  ...MESSAGE_CASES,
  ...VALUE_CASES,
];
/** $CP_ROUND_ONLY=id,id runs only those cases (to reproduce one). */
const only = process.env.CP_ROUND_ONLY?.split(',').filter(Boolean);
const results: { id: string; cls: HostileClass; outcome: 'pass' | 'fail' | 'skip'; why?: string }[] = [];

test('every case has a unique id, an input and an expected answer', () => {
  const ids = new Set<string>();
  for (const c of ALL) {
    if (ids.has(c.id)) throw new Error(`duplicate case id ${c.id}`);
    ids.add(c.id);
    if (!c.input || !c.expect) throw new Error(`${c.id}: no input or expectation stated`);
  }
  if (ALL.length < 60) throw new Error(`only ${ALL.length} cases`);
});

for (const cls of Object.keys(CLASSES).map(Number) as HostileClass[]) {
  const cases = ALL.filter((c) => c.cls === cls && (!only || only.includes(c.id)));
  // Signal cases time the CLI's reaction, so they run one at a time; the others two at a time.
  test(`class ${cls}: ${CLASSES[cls]}`, { concurrency: cls === 4 ? 1 : 2 }, async (t) => {
    const running: Promise<void>[] = [];
    for (const c of cases) {
      const skip = c.skip?.();
      running.push(
        t.test(`${c.id}: ${c.input} → ${c.expect}`, { skip }, async () => {
          if (skip) return;
          const dir = fresh();
          try {
            await c.run(dir);
            results.push({ id: c.id, cls, outcome: 'pass' });
          } catch (error) {
            results.push({ id: c.id, cls, outcome: 'fail', why: String((error as Error).message).split('\n')[0] });
            throw error;
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
        }),
      );
      if (skip) results.push({ id: c.id, cls, outcome: 'skip', why: skip });
    }
    await Promise.all(running);
  });
}

test('tally', () => {
  const lines = ['hostile round 3: passed / run (skipped) per class'];
  for (const cls of Object.keys(CLASSES).map(Number) as HostileClass[]) {
    const of = results.filter((r) => r.cls === cls);
    const passed = of.filter((r) => r.outcome === 'pass').length;
    const skipped = of.filter((r) => r.outcome === 'skip').length;
    lines.push(`  ${cls}. ${CLASSES[cls].padEnd(36)} ${passed} / ${of.length - skipped} (${skipped})`);
  }
  const passed = results.filter((r) => r.outcome === 'pass').length;
  lines.push(`  all${' '.repeat(37)} ${passed} / ${results.filter((r) => r.outcome !== 'skip').length}`);
  for (const r of results.filter((x) => x.outcome === 'fail')) lines.push(`  FAIL ${r.id}: ${r.why}`);
  console.log(lines.join('\n'));
  if (process.env.CP_ROUND_RESULTS) writeFileSync(process.env.CP_ROUND_RESULTS, JSON.stringify(results, null, 2));
});
