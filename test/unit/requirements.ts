// Why a test that needs real inputs from outside the repository may skip, in one place. Locally a missing ../shared
// or a Python without torch skips with the reason; CI sets REQUIRE_SHARED=1 and REQUIRE_TORCH=1, and then the same
// absence fails the test file at once, so a green CI run cannot hide tests that never ran.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** ../shared beside the repository: real measurements, fixtures and the labelled corpus. */
export const SHARED_ROOT = resolve(import.meta.dirname, '..', '..', '..', 'shared');

function required(variable: 'REQUIRE_SHARED' | 'REQUIRE_TORCH', reason: string): string {
  if (process.env[variable] === '1') throw new Error(`${variable}=1, but ${reason}`);
  return reason;
}

/** False when `path` exists, else the reason to skip (or a thrown error under REQUIRE_SHARED=1). */
export function needShared(path: string, what = `${path}`): string | false {
  return existsSync(path) ? false : required('REQUIRE_SHARED', `${what} is absent (looked for ${path})`);
}

/** The same for a folder of ../shared named relative to it ("fixtures-real", "calibration/nccl-tests"). */
export function needSharedDir(relativePath: string): string | false {
  return needShared(join(SHARED_ROOT, relativePath), `../shared/${relativePath}`);
}

/** The reason to skip when torch cannot be imported, or a thrown error under REQUIRE_TORCH=1. */
export function torchAbsent(reason: string): string {
  return required('REQUIRE_TORCH', reason);
}
