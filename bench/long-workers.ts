/**
 * Drives the bench's worker processes (bench/long-worker.ts: why each loop has a process of its
 * own). Workers started from a process pinned to core 0 stay on core 0 (affinity is inherited).
 */
import { type ChildProcess, fork } from 'node:child_process';
import type { LongFigures, LongRequest, ScenarioFigure, ScenarioRequest } from './long-worker.js';

export interface LongWorker {
  name: string;
  /** Resolves once the worker has loaded its loop. */
  ready: Promise<void>;
  run(request: LongRequest): Promise<LongFigures>;
  /** One of a peer's other scenarios, in its process. */
  measure(request: ScenarioRequest): Promise<ScenarioFigure>;
  stop(): void;
}

type Answer = { ready: true } | { figures: LongFigures | ScenarioFigure } | { error: string };

/**
 * Starts the worker process of the loop `name` (bench/target-by-name.ts); requests wait until it has loaded its loop.
 * `BENCH_WORKER_ARGS` adds Node flags to every worker, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the loops.
 */
export function longWorker(name: string): LongWorker {
  const extra = process.env['BENCH_WORKER_ARGS']?.split(' ').filter(Boolean) ?? [];
  const child: ChildProcess = fork(new URL('./long-worker.ts', import.meta.url).pathname, [name], { execArgv: ['--expose-gc', '--import', 'tsx', ...extra] });
  const ready = new Promise<void>((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`The ${name} worker exited (${code}) while loading`));
    child.once('exit', exited);
    child.once('message', () => {
      child.off('exit', exited);
      resolve();
    });
  });
  ready.catch(() => {}); // reported by the first request
  const ask = async <T>(request: LongRequest | ScenarioRequest) => {
    await ready;
    return new Promise<T>((resolve, reject) => {
      const exited = (code: number | null) => reject(new Error(`The ${name} worker exited (${code}) during a run`));
      child.once('exit', exited);
      child.once('message', (answer: Answer) => {
        child.off('exit', exited);
        if ('error' in answer) reject(new Error(answer.error));
        else if ('figures' in answer) resolve(answer.figures as T);
      });
      child.send(request);
    });
  };
  return {
    name,
    ready,
    run: (request) => ask<LongFigures>(request),
    measure: (request) => ask<ScenarioFigure>(request),
    stop: () => child.connected && child.disconnect(),
  };
}

/** Runs the same long scenario in every worker at the same time: they share the machine's drift. */
export function runTogether(workers: LongWorker[], request: LongRequest): Promise<LongFigures[]> {
  return Promise.all(workers.map((worker) => worker.run(request)));
}
