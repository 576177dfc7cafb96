// A small mocha-style TDD harness (suite / test / suiteSetup) for the extension host. It runs each test in
// order with a timeout and reports like mocha's spec reporter; run() rejects when any test failed, which makes
// @vscode/test-electron exit non-zero. Kept here instead of a mocha dependency: the suite needs nothing more.
type Fn = () => unknown | Promise<unknown>;

interface Case {
  readonly title: string;
  readonly fn: Fn;
  readonly timeoutMs: number;
}
interface Suite {
  readonly title: string;
  readonly setup: Fn[];
  readonly cases: Case[];
}

const suites: Suite[] = [];
let current: Suite | undefined;

export function suite(title: string, body: () => void): void {
  current = { title, setup: [], cases: [] };
  suites.push(current);
  body();
  current = undefined;
}

export function suiteSetup(fn: Fn): void {
  if (!current) throw new Error('suiteSetup outside a suite');
  current.setup.push(fn);
}

export function test(title: string, fn: Fn, timeoutMs = 30_000): void {
  if (!current) throw new Error('test outside a suite');
  current.cases.push({ title, fn, timeoutMs });
}

function withTimeout(fn: Fn, ms: number, what: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: timed out after ${ms} ms`)), ms);
    Promise.resolve()
      .then(fn)
      .then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (e) => {
          clearTimeout(timer);
          reject(e);
        },
      );
  });
}

export async function runAll(log: (line: string) => void = console.log): Promise<{ passed: number; failed: number }> {
  let passed = 0;
  let failed = 0;
  for (const s of suites) {
    log(`  ${s.title}`);
    try {
      for (const setup of s.setup) await withTimeout(setup, 60_000, `${s.title} setup`);
    } catch (error) {
      log(`    ✗ setup failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      failed += s.cases.length;
      continue;
    }
    for (const c of s.cases) {
      const started = Date.now();
      try {
        await withTimeout(c.fn, c.timeoutMs, c.title);
        passed++;
        log(`    ✓ ${c.title} (${Date.now() - started} ms)`);
      } catch (error) {
        failed++;
        log(`    ✗ ${c.title}\n      ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      }
    }
  }
  log(`\n  ${passed} passing, ${failed} failing`);
  return { passed, failed };
}
