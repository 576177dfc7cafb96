// Temporary filesystems for the writer's failure tests: a tiny tmpfs fills up, a read-only one refuses new files.
// Mounting needs root (CAP_SYS_ADMIN); where it is refused the caller skips with the reason this returns.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

export interface Mount {
  readonly dir: string;
  remount(options: string): void;
  unmount(): void;
}

/** Mounts a tmpfs with `options` (e.g. `size=64k`), or returns why it cannot. */
export function mountTmpfs(options: string): Mount | string {
  if (process.platform !== 'linux') return 'tmpfs mounts need Linux';
  const dir = mkdtempSync(join(tmpdir(), 'cp-mount-'));
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { encoding: 'utf8' });
  if (result.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    return `cannot mount a tmpfs here (${(result.stderr || result.error?.message || 'no mount').trim()}); run as root to test full and read-only disks`;
  }
  return {
    dir,
    remount(more) {
      const again = spawnSync('mount', ['-o', `remount,${more}`, dir], { encoding: 'utf8' });
      if (again.status !== 0) throw new Error(`remount ${more} failed: ${again.stderr}`);
    },
    unmount() {
      spawnSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Makes a FIFO, or returns why it cannot. */
export function makeFifo(path: string): string | undefined {
  const result = spawnSync('mkfifo', [path], { encoding: 'utf8' });
  return result.status === 0 ? undefined : `mkfifo failed (${(result.stderr || result.error?.message || '').trim()})`;
}

/** Makes a character device node like /dev/null (1, 3), or returns why it cannot (mknod needs root). */
export function makeNullDevice(path: string): string | undefined {
  const result = spawnSync('mknod', [path, 'c', '1', '3'], { encoding: 'utf8' });
  return result.status === 0
    ? undefined
    : `mknod failed (${(result.stderr || result.error?.message || '').trim()}); device nodes need root`;
}
