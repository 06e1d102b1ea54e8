/**
 * Soak: random runs with random faults (the reliability scenarios) in one process until
 * `iterations` requests have returned a reply; heap after gc at the checkpoint and at the end, and
 * how much of it is compiled code (which grows while V8 still optimises, not with the runs).
 * Usage: node --expose-gc --import tsx bench/soak.ts [iterations=10000] [checkpoint=1000] [seed]
 * Prints one JSON line; exits 1 on a violation or an unhandled rejection.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import fc from 'fast-check';
import { createMockServer } from '../src/testing/index.js';
import { runScenario, scenarios } from '../test/chaos/scenario.js';

const target = Number(process.argv[2] ?? 10_000);
const checkpoint = Number(process.argv[3] ?? 1_000);
const seed = Number(process.argv[4] ?? 42);
if (!globalThis.gc) throw new Error('run with node --expose-gc');

const unhandled: string[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(String(reason)));

/** Heap used after gc, and how much of it is compiled code (bounded by the program, not by the iterations). */
const heapAfterGc = async () => {
  for (let i = 0; i < 3; i++) {
    globalThis.gc!();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const code = getHeapSpaceStatistics().find((space) => space.space_name === 'code_space')?.space_used_size ?? 0;
  return { used: process.memoryUsage().heapUsed, code };
};

const started = performance.now();
let iterations = 0;
let runs = 0;
let heapAtCheckpoint: { used: number; code: number } | undefined;
const violations: string[] = [];
// Four runs at a time, each lane on a server of its own that it re-scripts for every run.
const lanes = await Promise.all([0, 1, 2, 3].map(() => createMockServer({ steps: [] })));
// At the checkpoint every lane finishes its run and waits, so that the heap is measured with no run in flight.
let waiting = 0;
let release: (() => void) | undefined;
const barrier = new Promise<void>((resolve) => {
  release = resolve;
});
await Promise.all(
  lanes.map(async (server) => {
    while (iterations < target) {
      if (iterations >= checkpoint && heapAtCheckpoint === undefined) {
        if (++waiting === lanes.length) {
          heapAtCheckpoint = await heapAfterGc();
          release!();
        }
        await barrier;
      }
      const [scenario] = fc.sample(scenarios({ withConnectionDrops: false }), { numRuns: 1, seed: seed + runs++ });
      const outcome = await runScenario(scenario!, server);
      iterations += outcome.iterations;
      violations.push(...outcome.violations);
    }
  }),
);
// A lane that ended before the checkpoint never waits: measure then.
heapAtCheckpoint ??= await heapAfterGc();
const heapAtEnd = await heapAfterGc();
await Promise.all(lanes.map((server) => server.close()));
const result = {
  iterations,
  runs,
  seconds: (performance.now() - started) / 1000,
  heapAtCheckpointMB: heapAtCheckpoint.used / 2 ** 20,
  heapAtEndMB: heapAtEnd.used / 2 ** 20,
  growth: heapAtEnd.used / heapAtCheckpoint.used - 1,
  codeAtCheckpointMB: heapAtCheckpoint.code / 2 ** 20,
  codeAtEndMB: heapAtEnd.code / 2 ** 20,
  violations: violations.slice(0, 5),
  unhandled: unhandled.slice(0, 5),
};
console.log(JSON.stringify(result));
if (violations.length > 0 || unhandled.length > 0) process.exitCode = 1;
