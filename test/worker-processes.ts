/** The durable tests' worker processes: waiting for what they do, killing them, reading what they printed. */
import type { ChildProcess } from 'node:child_process';

/** Polls `check` until it holds (20 s at most). */
export async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the worker');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Kills the process at once (a crash), resolving once it has exited. */
export function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

/** Everything the process printed, once it exits 0. */
export function printed(child: ChildProcess): Promise<{ stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => (code === 0 ? resolve({ stdout, stderr }) : reject(new Error(`exit ${code}\n${stdout}\n${stderr}`))));
  });
}
