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

/**
 * Long run: client CPU per turn over the whole run, and over its first and last 10% of turns.
 * A short run of the same loop goes first, unmeasured, so that each measured run starts from the
 * heap and code its own loop leaves (bench/run.ts runs each loop in a process of its own).
 */
export async function long(url: string, target: Target, turns: number, thread = false) {
  const job = (runTurns: number, step: (n: number | undefined) => string): Job => ({
    client: clientFor(url, { kind: 'long', turns: runTurns }).client,
    params,
    stream: false,
    eager: false,
    tool: { name: 'step', run: ({ n }) => step(n) },
    thread,
  });
  await target.run(job(Math.max(10, Math.round(turns / 10)), (n) => `ok ${n}`));
  const marks: number[] = [];
  const measured = job(turns, (n) => (marks.push(cpuMs()), `ok ${n}`));
  globalThis.gc?.();
  const start = cpuMs();
  await target.run(measured);
  const perTurn = (cpuMs() - start) / turns;
  const gaps = marks.slice(1).map((mark, i) => mark - marks[i]!);
  const tenth = Math.max(1, Math.floor(gaps.length / 10));
  return { perTurnMs: perTurn, firstTenthMs: median(gaps.slice(0, tenth)), lastTenthMs: median(gaps.slice(-tenth)) };
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
  // One unmeasured reply of the same loop first (see `long`).
  await target.run(job);
  events = 0;
  globalThis.gc?.();
  const start = cpuMs();
  for (let i = 0; i < repeats; i++) await target.run(job);
  return { cpuMs: (cpuMs() - start) / repeats, events: events / repeats };
}
