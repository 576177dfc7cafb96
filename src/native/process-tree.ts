// Process-group handling: every rank starts as the leader of its own process group, so cancelling or a
// watchdog can kill the whole tree (the rank and anything it forked) with one signal to -pgid. A process that
// left the group (setsid, a daemon's double fork) is still found: every rank's environment carries a token that
// its descendants inherit, and /proc is searched for it.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export function spawnGroup(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): ChildProcess {
  return spawn(command, args, { env, cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

/**
 * True while any process of the group is alive. Signal 0 also answers for zombies (exited, not yet reaped by
 * whoever adopted them), so on Linux /proc decides: a group of zombies only is gone.
 */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
  } catch {
    return false;
  }
  if (!existsSync('/proc/self/stat')) return true;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pid && fields[0] !== 'Z') return true;
    } catch {
      // Gone while we looked.
    }
  }
  return false;
}

/** The environment variable that marks every process of one run, so those that left their group are found too. */
export const RUN_TOKEN_ENV = 'COLLECTIVE_PROFILER_RUN_TOKEN';

export function newRunToken(): string {
  return `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
}

/** Live (not zombie) processes whose environment holds `token`; empty where there is no /proc. */
export function processesWithToken(token: string): number[] {
  if (!existsSync('/proc/self/environ')) return [];
  const marker = `${RUN_TOKEN_ENV}=${token}`;
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(marker)) found.push(Number(name));
    } catch {
      // Gone while we looked, or not ours to read.
    }
  }
  return found;
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * SIGTERM to each group and to every process carrying the run's token (with their own groups), then SIGKILL to
 * whatever is left after the grace period. Resolves when all are gone.
 */
export async function killGroups(pids: readonly number[], graceMs = 1500, token?: string): Promise<void> {
  const strays = (): number[] => (token ? processesWithToken(token) : []);
  const alive = (): boolean => pids.some(groupAlive) || strays().length > 0;
  const signalAll = (signal: NodeJS.Signals): void => {
    for (const pid of pids) signalGroup(pid, signal);
    for (const pid of strays()) {
      signalGroup(pid, signal);
      signalPid(pid, signal);
    }
  };
  signalAll('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (alive() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (alive()) signalAll('SIGKILL');
  const hardDeadline = Date.now() + 5000;
  while (alive() && Date.now() < hardDeadline) {
    await new Promise((r) => setTimeout(r, 20));
    // A process forked between the scan and the signal is caught by the next round.
    if (alive()) signalAll('SIGKILL');
  }
}

/** A free TCP port on the loopback interface, for MASTER_PORT. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
