/** A smoke run of every bench scenario at tiny sizes: the harness works; the figures come from `npm run bench`. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, inject, it } from 'vitest';

const run = promisify(execFile);

it('npm run bench runs every scenario against the three targets (smoke sizes)', async () => {
  const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/run.ts', '--smoke'], {
    timeout: 80_000,
    env: { ...process.env, BENCH_DATABASE_URL: inject('databaseUrl') },
  });
  for (const scenario of ['long 20 turns', 'long on a thread 20 turns', 'parallel 4 × 20 ms', 'eager', 'concurrent 20 runs', 'stream 2 KB', 'compaction, 20 turns', 'soak ', 'core bundle', 'import of the core', 'JSON Schema validation', ...(inject('databaseUrl') ? ['durable 5 turns'] : [])]) {
    expect(stdout).toContain(`| ${scenario}`);
  }
  for (const target of ['tool-runner', 'sdk toolRunner', 'hand-written', 'tool-runner, guards on']) expect(stdout).toContain(`| ${target} |`);
  expect(stdout).toContain('| long 20: CPU/turn with loopGuard + budget vs hand-written |');
  expect(stdout).toMatch(/\| goal \| ratio, median \(min–max\) \| limit \| met \|/);
}, 110_000);
