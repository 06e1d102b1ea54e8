/** The bench scenarios. Each runs one target once and returns its figures for that round. */
import Anthropic from '@anthropic-ai/sdk';
import type { Scenario } from './server.js';
import type { Job, Target } from './targets.js';

export interface Sizes {
  longTurns: number[];
  parallelCalls: number;
  toolMs: number;
  eagerTextChunks: number;
  eagerChunkDelayMs: number;
  eagerToolMs: number;
  concurrentRuns: number;
  holdMs: number;
  throughputChars: number;
  throughputChunk: number;
}

export const FULL: Sizes = {
  longTurns: [300, 1000],
  parallelCalls: 16,
  toolMs: 100,
  eagerTextChunks: 100,
  eagerChunkDelayMs: 10,
  eagerToolMs: 500,
  concurrentRuns: 1000,
  holdMs: 2000,
  throughputChars: 200_000,
  throughputChunk: 10,
};

export const SMOKE: Sizes = {
  longTurns: [20],
  parallelCalls: 4,
  toolMs: 20,
  eagerTextChunks: 10,
  eagerChunkDelayMs: 5,
  eagerToolMs: 40,
  concurrentRuns: 20,
  holdMs: 300,
  throughputChars: 2_000,
  throughputChunk: 10,
};

const params = { model: 'bench-model', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'Go.' }] };

/** A client whose requests name the scenario, and the times at which each request left. */
function clientFor(url: string, scenario: Scenario) {
  const sent: number[] = [];
  const client = new Anthropic({
    apiKey: 'bench',
    baseURL: url,
    maxRetries: 0,
    timeout: 120_000,
    defaultHeaders: { 'x-bench': JSON.stringify(scenario) },
    fetch: (input, init) => {
      sent.push(performance.now());
      return fetch(input, init);
    },
  });
  return { client, sent };
}

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** Turns of the unmeasured run before each long run: enough for V8 to optimise each loop's per-turn code again after the GC. */
const WARM_UP_TURNS = 200;

/** Turns measured per round of a long scenario, at least. */
const MEASURED_TURNS = 1000;

/** How many runs of `turns` turns a round measures: a short run over as many turns as a long one, so that its ratio spreads less. */
export const measuredRuns = (turns: number) => Math.ceil(MEASURED_TURNS / turns);

/**
 * Long runs: client CPU per turn over `runs` runs of `turns` turns, one after another, and over the
 * first and last 10% of turns of each run (`measuredRuns`).
 * A full GC, then a shorter run of the same loop, unmeasured, so that each measured run starts on a
 * clean heap with its loop's code optimised (bench/run.ts runs each loop in a process of its own).
 * The GC goes before the short run, not after it: a full GC that finds no run alive lets V8 drop the
 * shapes of the run's objects and deoptimise all code compiled for them ("weak objects" in
 * `--trace-deopt`), so a GC after the short run threw away what it had warmed up, and each measured
 * run paid for compiling its loop's code again: in both loops, more in the one with more code.
 */
export async function long(url: string, target: Target, turns: number, thread = false, runs = 1) {
  const job = (runTurns: number, step: (n: number | undefined) => string): Job => ({
    client: clientFor(url, { kind: 'long', turns: runTurns }).client,
    params,
    stream: false,
    eager: false,
    tool: { name: 'step', run: ({ n }) => step(n) },
    thread,
  });
  globalThis.gc?.();
  await target.run(job(Math.min(WARM_UP_TURNS, turns), (n) => `ok ${n}`));
  const marks: number[][] = Array.from({ length: runs }, () => []);
  const measured = marks.map((runMarks) => job(turns, (n) => (runMarks.push(cpuMs()), `ok ${n}`)));
  const start = cpuMs();
  for (const run of measured) await target.run(run);
  const perTurn = (cpuMs() - start) / (turns * runs);
  const first: number[] = [];
  const last: number[] = [];
  for (const runMarks of marks) {
    const gaps = runMarks.slice(1).map((mark, i) => mark - runMarks[i]!);
    const tenth = Math.max(1, Math.floor(gaps.length / 10));
    first.push(...gaps.slice(0, tenth));
    last.push(...gaps.slice(-tenth));
  }
  return { perTurnMs: perTurn, firstTenthMs: median(first), lastTenthMs: median(last) };
}

/** Parallel tools: wall time from the first tool start to the request carrying their results. */
export async function parallel(url: string, target: Target, sizes: Sizes) {
  const { client, sent } = clientFor(url, { kind: 'parallel', calls: sizes.parallelCalls });
  const starts: number[] = [];
  const job: Job = {
    client,
    params,
    stream: false,
    eager: false,
    tool: {
      name: 'wait',
      run: async () => {
        starts.push(performance.now());
        await sleep(sizes.toolMs);
        return 'waited';
      },
    },
  };
  await target.run(job);
  return { toolPhaseMs: sent[1]! - Math.min(...starts) };
}

/** Eager start: end-to-end wall of a streamed reply with a tool call first, then long text. */
export async function eager(url: string, target: Target, sizes: Sizes, options: { stream: boolean; eager: boolean }) {
  const { client, sent } = clientFor(url, {
    kind: 'eager',
    textChunks: sizes.eagerTextChunks,
    chunkDelayMs: sizes.eagerChunkDelayMs,
  });
  let streamEnd = 0;
  const job: Job = {
    client,
    params,
    ...options,
    tool: {
      name: 'lookup',
      run: async () => {
        await sleep(sizes.eagerToolMs);
        return 'found';
      },
    },
    onEvent: (event) => {
      if (event.type === 'message_stop' && streamEnd === 0) streamEnd = performance.now();
    },
  };
  const started = performance.now();
  await target.run(job);
  const ended = performance.now();
  return {
    totalMs: ended - started,
    streamMs: streamEnd ? streamEnd - started : Number.NaN,
    finalTurnMs: ended - sent[1]!,
  };
}

/** Many runs in flight: heap after gc per run while the server holds every response. */
export async function concurrent(url: string, target: Target, sizes: Sizes) {
  const { client, sent } = clientFor(url, { kind: 'hold', holdMs: sizes.holdMs });
  const job: Job = { client, params, stream: false, eager: false, tool: { name: 'step', run: () => 'ok' } };
  globalThis.gc?.();
  await sleep(50);
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  const runs = Array.from({ length: sizes.concurrentRuns }, () => target.run(job));
  while (sent.length < sizes.concurrentRuns) await sleep(10);
  await sleep(Math.min(300, sizes.holdMs / 4));
  globalThis.gc?.();
  const during = process.memoryUsage().heapUsed;
  await Promise.all(runs);
  return { heapPerRunKB: (during - before) / sizes.concurrentRuns / 1024 };
}

/**
 * Stream throughput: client CPU to deliver every event of a long streamed reply to the loop body,
 * summed over `repeats` back-to-back replies (one reply is too short to measure steadily).
 */
export async function throughput(url: string, target: Target, sizes: Sizes, eagerStart: boolean, repeats = 3) {
  const { client } = clientFor(url, { kind: 'throughput', chars: sizes.throughputChars, chunkSize: sizes.throughputChunk });
  let events = 0;
  const job: Job = {
    client,
    params,
    stream: true,
    eager: eagerStart,
    tool: { name: 'step', run: () => 'ok' },
    onEvent: () => {
      events++;
    },
  };
  // A full GC, then one unmeasured reply of the same loop (see `long`).
  globalThis.gc?.();
  await target.run(job);
  events = 0;
  const start = cpuMs();
  for (let i = 0; i < repeats; i++) await target.run(job);
  return { cpuMs: (cpuMs() - start) / repeats, events: events / repeats };
}
