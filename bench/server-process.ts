/** The bench server in a process of its own, and the core pinning the bench scripts share. */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { createInterface } from 'node:readline';

/**
 * Pins this process to core 0, on a machine with taskset and two or more cores, so that the
 * server (on core 1) does not steal the measured process's CPU time slices. Whether it did.
 */
export function pinToCoreZero(): boolean {
  return cpus().length >= 2 && spawnSync('taskset', ['-p', '-c', '0', String(process.pid)]).status === 0;
}

/** Starts bench/server.ts (on core 1 when `pinned`); resolves with its URL once it listens. */
export async function startServer(pinned: boolean): Promise<{ url: string; child: ChildProcess }> {
  const server = [process.execPath, '--import', 'tsx', new URL('./server.ts', import.meta.url).pathname];
  const [command, ...args] = pinned ? ['taskset', '-c', '1', ...server] : server;
  const child = spawn(command!, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
  return { url: (JSON.parse(line) as { url: string }).url, child };
}
