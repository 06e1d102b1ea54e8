/** The bench scenarios. Each runs one target once and returns its figures for that round. */
import { randomUUID } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import type { BetaRawMessageStreamEvent } from '@anthropic-ai/sdk/resources/beta/messages/messages';
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
  /**
   * Concurrent: fail when the heap was read after the responses could be back (a full run's measured
   * rounds; not a warm-up, nor a smoke run, whose figures mean nothing and which a busy machine slows).
   */
  checkInFlight: boolean;
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
  checkInFlight: true,
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
  holdMs: 500,
  checkInFlight: false,
  throughputChars: 2_000,
  throughputChunk: 10,
};

const params = { model: 'bench-model', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'Go.' }] };

/** A client whose requests name the scenario, the same for the peers' providers, and the times at which each request left. */
function clientFor(url: string, scenario: Scenario) {
  const sent: number[] = [];
  const headers = { 'x-bench': JSON.stringify(scenario) };
  const counted: typeof fetch = (input, init) => {
    sent.push(performance.now());
    return fetch(input, init);
  };
  const client = new Anthropic({ apiKey: 'bench', baseURL: url, maxRetries: 0, timeout: 120_000, defaultHeaders: headers, fetch: counted });
  return { client, connection: { baseURL: url, headers, fetch: counted }, sent };
}

/** What a run did, counted by the bench (requests at the server, tool runs) and its last reply's text. */
interface Counts {
  requests: number;
  tools: number;
  text: string | number;
}

/** A loop that stops early, skips a tool or runs one too often fails the bench, loudly. */
function expectCounts(target: Target, what: string, counted: Counts, expected: Counts) {
  if (counted.requests === expected.requests && counted.tools === expected.tools && counted.text === expected.text) return;
  const show = (counts: Counts) => `${counts.requests} requests, ${counts.tools} tool runs, last reply ${JSON.stringify(counts.text)}`;
  throw new Error(`${target.name} did not run the same agent (${what}): ${show(counted)}; expected ${show(expected)}`);
}

/** CPU ms this process has used (user + system). */
export const cpuMs = () => {
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
  const runOf = (runTurns: number, step: (n: number | undefined) => string) => {
    const { client, connection, sent } = clientFor(url, { kind: 'long', turns: runTurns });
    const job: Job = { client, connection, params, stream: false, eager: false, tool: { name: 'step', run: ({ n }) => step(n) }, thread };
    return { job, sent };
  };
  /** Every turn but the last runs the tool once; each turn is one request; the last reply is the server's 'done'. */
  const check = (what: string, runTurns: number, sent: number[], tools: number, text: string) =>
    expectCounts(target, what, { requests: sent.length, tools, text }, { requests: runTurns, tools: runTurns - 1, text: 'done' });
  globalThis.gc?.();
  const warmUpTurns = Math.min(WARM_UP_TURNS, turns);
  let warmUpTools = 0;
  const warmUp = runOf(warmUpTurns, (n) => (warmUpTools++, `ok ${n}`));
  const warmUpText = await target.run(warmUp.job);
  check(`long warm-up, ${warmUpTurns} turns`, warmUpTurns, warmUp.sent, warmUpTools, warmUpText);
  const marks: number[][] = Array.from({ length: runs }, () => []);
  const measured = marks.map((runMarks) => runOf(turns, (n) => (runMarks.push(cpuMs()), `ok ${n}`)));
  const texts: string[] = [];
  const start = cpuMs();
  for (const run of measured) texts.push(await target.run(run.job));
  const perTurn = (cpuMs() - start) / (turns * runs);
  measured.forEach((run, i) => check(`long, ${turns} turns`, turns, run.sent, marks[i]!.length, texts[i]!));
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
  const { client, connection, sent } = clientFor(url, { kind: 'parallel', calls: sizes.parallelCalls });
  const starts: number[] = [];
  const job: Job = {
    client,
    connection,
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
  const text = await target.run(job);
  expectCounts(target, `parallel ${sizes.parallelCalls}`, { requests: sent.length, tools: starts.length, text }, { requests: 2, tools: sizes.parallelCalls, text: 'done' });
  return { toolPhaseMs: sent[1]! - Math.min(...starts) };
}

/** Eager start: end-to-end wall of a streamed reply with a tool call first, then long text. */
export async function eager(url: string, target: Target, sizes: Sizes, options: { stream: boolean; eager: boolean }) {
  const { client, connection, sent } = clientFor(url, {
    kind: 'eager',
    textChunks: sizes.eagerTextChunks,
    chunkDelayMs: sizes.eagerChunkDelayMs,
  });
  let streamEnd = 0;
  const job: Job = {
    client,
    connection,
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
      if ((event as BetaRawMessageStreamEvent).type === 'message_stop' && streamEnd === 0) streamEnd = performance.now();
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

/** Many runs in flight: heap after gc per run while the server holds every response (bench/server.ts: until the last request, then `holdMs`). */
export async function concurrent(url: string, target: Target, sizes: Sizes) {
  const { client, connection, sent } = clientFor(url, { kind: 'hold', holdMs: sizes.holdMs, runs: sizes.concurrentRuns, batch: randomUUID() });
  const job: Job = { client, connection, params, stream: false, eager: false, tool: { name: 'step', run: () => 'ok' } };
  globalThis.gc?.();
  await sleep(50);
  globalThis.gc?.();
  const before = process.memoryUsage().heapUsed;
  const runs = Array.from({ length: sizes.concurrentRuns }, () => target.run(job));
  while (sent.length < sizes.concurrentRuns) await sleep(10);
  await sleep(Math.min(300, sizes.holdMs / 4));
  globalThis.gc?.();
  const during = process.memoryUsage().heapUsed;
  // Read before the first response could be back (`holdMs` after the last request), every run was in flight.
  const readAfterMs = performance.now() - sent.at(-1)!;
  const texts = await Promise.all(runs);
  if (sizes.checkInFlight && readAfterMs >= sizes.holdMs) {
    throw new Error(`${target.name}: the heap was read ${readAfterMs.toFixed(0)} ms after the last request, when responses held ${sizes.holdMs} ms could be back: not every run was in flight`);
  }
  expectCounts(target, `concurrent ${sizes.concurrentRuns}`, { requests: sent.length, tools: 0, text: texts.filter((text) => text === 'done').length }, { requests: sizes.concurrentRuns, tools: 0, text: sizes.concurrentRuns });
  return { heapPerRunKB: (during - before) / sizes.concurrentRuns / 1024 };
}

/**
 * Stream throughput: client CPU to deliver every event of a long streamed reply to the loop body,
 * summed over `repeats` back-to-back replies (one reply is too short to measure steadily).
 */
export async function throughput(url: string, target: Target, sizes: Sizes, eagerStart: boolean, repeats = 3) {
  const { client, connection, sent } = clientFor(url, { kind: 'throughput', chars: sizes.throughputChars, chunkSize: sizes.throughputChunk });
  let events = 0;
  const job: Job = {
    client,
    connection,
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
  const lengths = [(await target.run(job)).length];
  events = 0;
  const start = cpuMs();
  for (let i = 0; i < repeats; i++) lengths.push((await target.run(job)).length);
  const cpu = cpuMs() - start;
  const whole = lengths.filter((length) => length === sizes.throughputChars).length;
  expectCounts(target, `stream ${sizes.throughputChars} chars`, { requests: sent.length, tools: 0, text: whole }, { requests: repeats + 1, tools: 0, text: repeats + 1 });
  return { cpuMs: cpu / repeats, events: events / repeats };
}
