/**
 * This runner with the inspector attached (`tool-runner/inspect`) and its page open in a browser:
 * the per-turn cost of watching a run. Not one of the bench's three targets; run it beside the
 * hand-written loop with bench/paired.ts:
 *   node --import tsx bench/paired.ts 1000 thread 8 'tool-runner + inspector' hand-written
 * The page is headless Chromium (Debian's `chromium`, or CHROMIUM_PATH) in a process of its own,
 * pinned to core 1 beside the server where taskset exists, so the worker's CPU counts what the
 * inspector costs the run (its records, their JSON, the writes to the page), not what the browser draws.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { toolRunner } from '../src/index.js';
import { type Inspector, inspector } from '../src/inspect/index.js';
import { type Target, ourTool, textOf } from './targets.js';

let watched: Promise<Inspector> | undefined;
let browser: ChildProcess | undefined;

/** The inspector, made once per process; with `page`, its page opened in a browser of its own. */
function watchedInspector(page: boolean): Promise<Inspector> {
  return (watched ??= (async () => {
    const inspect = await inspector();
    if (!page) return inspect;
    const chromium = process.env['CHROMIUM_PATH'] ?? 'chromium';
    const profile = mkdtempSync(join(tmpdir(), 'inspector-bench-'));
    const args = ['--headless', '--no-sandbox', '--disable-gpu', `--user-data-dir=${profile}`, inspect.url];
    // Like the bench's server, the browser is not what is measured: on core 1 beside the server,
    // where the measured loops are pinned to core 0 (bench/server-process.ts).
    const pinned = cpus().length >= 2 && spawnSync('taskset', ['-V']).status === 0;
    // A process group of its own: the browser and all its helpers end with this process.
    browser = pinned ? spawn('taskset', ['-c', '1', chromium, ...args], { stdio: 'ignore', detached: true }) : spawn(chromium, args, { stdio: 'ignore', detached: true });
    const started = browser;
    process.once('exit', () => {
      // The group may be gone already (a browser that could not start).
      if (started.pid && started.exitCode === null) process.kill(-started.pid, 'SIGKILL');
    });
    // Time for the page to load and open its feed (the warm-up runs follow before anything is measured).
    const failed = await new Promise<string | undefined>((resolve) => {
      started.once('error', (error) => resolve(error.message));
      started.once('exit', (code, signal) => resolve(`it exited (${signal ?? `code ${code}`})`));
      setTimeout(() => resolve(undefined), 3000);
    });
    // Without its page the figure would not be what it is named: the bench stops, with the reason.
    if (failed) throw new Error(`The inspector's page could not be opened in ${chromium}: ${failed}. Install Debian's chromium (as .ci/run does) or set CHROMIUM_PATH.`);
    return inspect;
  })());
}

function watchedBy(name: string, page: boolean): Target {
  return {
    name,
    async run(job) {
      const inspect = await watchedInspector(page);
      const runner = toolRunner(
        job.client,
        { ...job.params, tools: [ourTool(job)], stream: job.stream, runToolsEagerly: job.eager, ...(job.thread ? {} : { thread: false }) },
        { onEvent: inspect.onEvent, approve: inspect.approve },
      );
      for await (const _ of runner) {
        // As `ours` does with whole messages.
      }
      return textOf(await runner.done());
    },
  };
}

/** The runner watched by the inspector, its page open. */
export const inspected = watchedBy('tool-runner + inspector', true);
/** The same with no page open: the records alone. */
export const inspectedNoPage = watchedBy('tool-runner + inspector, no page', false);
