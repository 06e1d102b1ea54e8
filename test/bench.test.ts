/** A smoke run of every bench scenario at tiny sizes: the harness works; the figures come from `npm run bench`. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, inject, it } from 'vitest';
import { long } from '../bench/scenarios.js';
import { startServer } from '../bench/server-process.js';
import { type Target, textOf } from '../bench/targets.js';

const run = promisify(execFile);

it('npm run bench runs every scenario against the three targets and the peers (smoke sizes)', async () => {
  const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/run.ts', '--smoke'], {
    // About 35 s on a quiet machine (a dozen processes start, half of it); the margin is for a busy one.
    timeout: 120_000,
    env: { ...process.env, BENCH_DATABASE_URL: inject('databaseUrl') },
  });
  for (const scenario of ['long 20 turns', 'long on a thread 20 turns', 'parallel 4 × 20 ms', 'eager', 'concurrent 20 runs', 'stream 2 KB', 'compaction, 20 turns', 'bundle of the core loop', 'soak ', 'core bundle', 'import of the core', 'JSON Schema validation', ...(inject('databaseUrl') ? ['durable 5 turns'] : [])]) {
    expect(stdout).toContain(`| ${scenario}`);
  }
  for (const target of ['tool-runner', 'sdk toolRunner', 'hand-written', 'tool-runner, guards on', 'AI SDK', 'LangChain', 'Mastra', 'OpenAI Agents']) expect(stdout).toContain(`| ${target} |`);
  // Each peer ran the same agent to its end (the bench fails on a short run) and has a figure in each comparison.
  expect(stdout).toContain('| scenario | tool-runner | sdk toolRunner | AI SDK | LangChain | Mastra | OpenAI Agents | note |');
  for (const scenario of ['long 20 turns: CPU per turn (goal)', 'parallel 4 × 20 ms: tool phase (goal)', 'concurrent 20 runs: heap per in-flight run (goal)', 'stream 2 KB: client CPU', 'bundle, minified + gzip']) {
    const line = stdout.split('\n').find((candidate) => candidate.startsWith(`| ${scenario} |`));
    expect(line?.split('|').slice(2, 8).map((cell) => cell.trim())).toEqual(Array.from({ length: 6 }, () => expect.stringMatching(/^\d+\.\d{2,3} \(/)));
  }
  expect(stdout).toContain('| long 20: CPU/turn with loopGuard + budget vs hand-written |');
  // Agents as tools: both nested loops ran the planned requests (the bench fails otherwise), each has a figure.
  for (const loop of ['agentTool', 'hand-written nested loop']) expect(stdout).toMatch(new RegExp(`\\| agents as tools: 3 parent turns × a 3-turn sub-agent \\| client CPU ms per request \\| ${loop} \\| \\d`));
  expect(stdout).toContain('| agents as tools: CPU/turn vs hand-written nested loop |');
  expect(stdout).toMatch(/\| goal \| ratio, median \(min–max\) \| limit \| met \|/);
}, 150_000);

it('a loop that stops before the server ends the run fails the bench, saying what it did', async () => {
  const { url, child } = await startServer(false);
  try {
    // One request, no tool run: what a peer left at its default step limit does (e.g. `generateText`'s one step).
    const stopsEarly: Target = {
      name: 'stops early',
      run: async (job) => textOf(await job.client.beta.messages.create({ ...job.params, tools: [] })),
    };
    await expect(long(url, stopsEarly, 20)).rejects.toThrow(
      'stops early did not run the same agent (long warm-up, 20 turns): 1 requests, 0 tool runs, last reply ""; expected 20 requests, 19 tool runs, last reply "done"',
    );
  } finally {
    child.kill();
  }
});
