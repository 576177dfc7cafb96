// Process-group handling: every rank starts as the leader of its own process group, so cancelling or a
// watchdog can kill the whole tree (the rank and anything it forked) with one signal to -pgid.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export function spawnGroup(command: string, args: readonly string[], env: NodeJS.ProcessEnv, cwd?: string): ChildProcess {
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

/** SIGTERM to each group, then SIGKILL to whatever is left after the grace period. Resolves when all are gone. */
export async function killGroups(pids: readonly number[], graceMs = 1500): Promise<void> {
  for (const pid of pids) signalGroup(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (pids.some(groupAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  for (const pid of pids) if (groupAlive(pid)) signalGroup(pid, 'SIGKILL');
  const hardDeadline = Date.now() + 5000;
  while (pids.some(groupAlive) && Date.now() < hardDeadline) await new Promise((r) => setTimeout(r, 20));
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
