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

it('soak (short): 1,500 iterations with random faults in one process, heap after gc stays flat, no unhandled rejection', async () => {
  const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/soak.ts', '1500', '300'], { timeout: 90_000 });
  const result = JSON.parse(stdout.trim().split('\n').at(-1)!);
  expect(result.violations).toEqual([]);
  expect(result.unhandled).toEqual([]);
  expect(result.iterations).toBeGreaterThanOrEqual(1500);
  expect(result.growth).toBeLessThan(0.15);
}, 100_000);
