// Seed files for mutation: the real fixtures in ../shared (read in place, never copied) and the repository's
// examples. When ../shared is absent the shared seeds are empty and the tests that need them skip with a reason.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { needShared } from '../requirements';

export const REPO = resolve(import.meta.dirname, '../../..');
export const SHARED = resolve(REPO, '../shared');
export const SHARED_MISSING =
  needShared(join(SHARED, 'fixtures-real'), '../shared/fixtures-real (the fixture-seeded fuzzing needs it)') ||
  undefined;

export interface Seed {
  readonly name: string;
  readonly text: string;
}

function filesIn(dir: string, pattern: RegExp): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => pattern.test(f) && statSync(join(dir, f)).isFile())
    .sort()
    .map((f) => join(dir, f));
}

function read(path: string): Seed {
  const bytes = readFileSync(path);
  const text = path.endsWith('.gz') ? gunzipSync(bytes).toString('utf8') : bytes.toString('utf8');
  return { name: relative(dirname(REPO), path), text };
}

const fixtures = (pattern: RegExp): Seed[] => filesIn(join(SHARED, 'fixtures-real'), pattern).map(read);

export function ncclTestsSeeds(): Seed[] {
  return fixtures(/^nccl-tests-.*\.txt$/);
}

export function ncclLogSeeds(): Seed[] {
  return fixtures(/^nccl-debug-.*\.log$/);
}

export function deepSpeedLogSeeds(): Seed[] {
  return fixtures(/^deepspeed-.*\.(txt|log)$/);
}

export function kinetoSeeds(): Seed[] {
  return fixtures(/^kineto-.*\.json(\.gz)?$/);
}

export function kinetoGzipPaths(): string[] {
  return filesIn(join(SHARED, 'fixtures-real'), /^kineto-.*\.json\.gz$/);
}

export function calibrationSeeds(): Seed[] {
  return filesIn(join(SHARED, 'calibration', 'nccl-tests'), /\.json$/).map(read);
}

export function pythonSeeds(): Seed[] {
  const shared = filesIn(join(SHARED, 'corpus', 'scaling'), /\.py$/);
  const local = filesIn(join(REPO, 'test', 'fixtures', 'scaling-extra'), /\.py$/);
  return [...shared, ...local].map(read);
}

export function systemFileSeeds(): Seed[] {
  return filesIn(join(REPO, 'examples', 'systems'), /\.(ya?ml|json)$/).map(read);
}

/** Training configs of every kind the extension reads, named as users name them so format detection runs. */
export function trainingConfigSeeds(): Seed[] {
  const examples = filesIn(join(REPO, 'examples'), /\.(ya?ml|json|sh|sbatch)$/).map(read);
  const models = readdirSync(join(REPO, 'examples', 'models'))
    .map((m) => join(REPO, 'examples', 'models', m, 'config.json'))
    .filter(existsSync)
    .map(read);
  return [...examples, ...models];
}
