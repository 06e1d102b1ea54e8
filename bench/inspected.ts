/**
 * This runner with the inspector attached (`tool-runner/inspect`) and its page open in a browser:
 * the per-turn cost of watching a run. Not one of the bench's three targets; run it beside the
 * hand-written loop with bench/paired.ts:
 *   node --import tsx bench/paired.ts 1000 thread 8 'tool-runner + inspector' hand-written
 * The page is headless Chromium (Debian's `chromium`, or CHROMIUM_PATH) in a process of its own,
 * so the worker's CPU counts what the inspector costs the run, not what the browser draws.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toolRunner } from '../src/index.js';
import { type Inspector, inspector } from '../src/inspect/index.js';
import { type Target, ourTool } from './targets.js';

let watched: Promise<Inspector> | undefined;
let browser: ChildProcess | undefined;

/** The inspector, made once per process, with the page opened in a browser of its own. */
function watchedInspector(): Promise<Inspector> {
  return (watched ??= (async () => {
    const inspect = await inspector(process.env['INSPECT_MAX_RUNS'] ? { maxRuns: Number(process.env['INSPECT_MAX_RUNS']) } : {});
    const chromium = process.env['CHROMIUM_PATH'] ?? 'chromium';
    const profile = mkdtempSync(join(tmpdir(), 'inspector-bench-'));
    browser = spawn(chromium, ['--headless', '--no-sandbox', '--disable-gpu', `--user-data-dir=${profile}`, inspect.url], { stdio: 'ignore' });
    process.once('exit', () => browser?.kill());
    // Time for the page to load and open its feed (the warm-up runs follow before anything is measured).
    await new Promise((resolve) => setTimeout(resolve, 3000));
    return inspect;
  })());
}

export const inspected: Target = {
  name: 'tool-runner + inspector',
  async run(job) {
    const inspect = await watchedInspector();
    const runner = toolRunner(
      job.client,
      { ...job.params, tools: [ourTool(job)], stream: job.stream, runToolsEagerly: job.eager, ...(job.thread ? {} : { thread: false }) },
      { onEvent: inspect.onEvent, approve: inspect.approve },
    );
    for await (const _ of runner) {
      // As `ours` does with whole messages.
    }
    return runner.done();
  },
};
