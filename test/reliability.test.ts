/**
 * The reliability properties over random runs (test/chaos): faults, aborts and bad tools never
 * corrupt the history nor run a call twice; each run ends by itself, leaving nothing pending.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);

it('random runs with faults, aborts and failing tools keep every invariant, and the process exits by itself', async () => {
  // A process of its own: if a handle, timer or socket were left open it would not exit, and this would time out.
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/chaos/property.ts', '120'], { timeout: 90_000 });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result.failure).toBeUndefined();
  expect(result.unhandled).toEqual([]);
  expect(result.runs).toBe(120);
  for (const fault of ['429', '500', '529', 'dropStream', 'dropJson', 'malformed']) expect(result.faults[fault]).toBeGreaterThan(0);
  expect(Object.keys(result.errors).sort()).toEqual(expect.arrayContaining(['APIUserAbortError', 'ReplyError']));
}, 100_000);

// The heap is compared from iteration 1,000 on: before, V8 is still compiling the runs' code (from 300
// to 1,500 it grew +5–9% here, +18% once in CI; from 1,000 to 3,000, +2–8% in six runs on a loaded machine).
it('soak (short): 3,000 iterations with random faults in one process, heap after gc stays flat, no unhandled rejection', async () => {
  const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/soak.ts', '3000', '1000'], { timeout: 150_000 });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result.violations).toEqual([]);
  expect(result.unhandled).toEqual([]);
  expect(result.iterations).toBeGreaterThanOrEqual(3000);
  // 15% of about 27 MB over 2,000 iterations: a leak of 4 KB per run (2.6 KB per iteration) fails it, tried by hand.
  expect(result.growth, JSON.stringify(result)).toBeLessThan(0.15);
}, 160_000);
