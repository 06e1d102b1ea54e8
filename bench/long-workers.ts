/**
 * Drives the long scenarios' workers (bench/long-worker.ts: why each loop has a process of its
 * own). Workers started from a process pinned to core 0 stay on core 0 (affinity is inherited).
 */
import { type ChildProcess, fork } from 'node:child_process';
import type { LongFigures, LongRequest } from './long-worker.js';

export interface LongWorker {
  name: string;
  run(request: LongRequest): Promise<LongFigures>;
  stop(): void;
}

/** Starts the worker process of the loop `name` (one of bench/targets.ts). */
export function longWorker(name: string): LongWorker {
  const child: ChildProcess = fork(new URL('./long-worker.ts', import.meta.url).pathname, [name], { execArgv: ['--expose-gc', '--import', 'tsx'] });
  const run = (request: LongRequest) =>
    new Promise<LongFigures>((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`The ${name} worker exited (${code}) during a run`));
      child.once('exit', exited);
      child.once('message', (answer: { figures: LongFigures } | { error: string }) => {
        child.off('exit', exited);
        if ('error' in answer) reject(new Error(answer.error));
        else resolve(answer.figures);
      });
      child.send(request);
    });
  return { name, run, stop: () => child.connected && child.disconnect() };
}

/** Runs the same long scenario in every worker at the same time: they share the machine's drift. */
export function runTogether(workers: LongWorker[], request: LongRequest): Promise<LongFigures[]> {
  return Promise.all(workers.map((worker) => worker.run(request)));
}
