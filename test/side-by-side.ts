/**
 * The side-by-side harness of the drop-in tests (SDK 1.14.0's runner and this one): each program runs
 * on `client.beta.messages.toolRunner(params, options)` and on `toolRunner(client, params, options)`
 * (or on an SDK thread's `toolRunner` and `toolRunner(thread, …)`), against two testing-kit servers
 * scripted alike, and what each saw is compared.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import { expect } from 'vitest';
import { z } from 'zod';
import { toolRunner } from 'tool-runner';
import { type MockServer, type Step, toolUse } from 'tool-runner/testing';
import { mockServer, wire } from './helpers.js';

export type Runner = AsyncIterable<any> & PromiseLike<any> & Record<string, any>;
export type Start = (params: any, options?: any) => Runner;
/** A program: drives a runner, logs what its tools ran, returns what it saw. */
export type Program = (start: Start, log: string[]) => Promise<unknown>;

export const model = 'claude-sonnet-5-5';
export const ask = [{ role: 'user' as const, content: 'Weather in Paris?' }];

/** A zod tool that logs its calls; `Atlantis` throws. */
export function weather(log: string[]) {
  return betaZodTool({
    name: 'get_weather',
    description: 'Current weather',
    inputSchema: z.object({ location: z.string() }),
    run: async ({ location }) => {
      log.push(`get_weather ${location}`);
      if (location === 'Atlantis') throw new Error('no such city');
      return `21°C in ${location}`;
    },
  });
}

/** Headers that differ between two runs for reasons of their own (ports, sizes), or by design. */
const VARYING = new Set(['host', 'content-length', 'x-stainless-retry-count', 'x-stainless-timeout']);

export function headersOf(server: MockServer) {
  return server.requests.map(({ headers }) => {
    const kept = Object.fromEntries(Object.entries(headers).filter(([name]) => !VARYING.has(name)));
    if (typeof kept['x-stainless-helper'] === 'string') kept['x-stainless-helper'] = kept['x-stainless-helper'].replace('tool-runner', 'BetaToolRunner');
    return kept;
  });
}

/** The request bodies, with the reply ids a thread continues from numbered in order (each server makes its own). */
export function bodiesOf(server: MockServer) {
  const ids = new Map<string, string>();
  return server.requests.map((request) => {
    const { body } = wire(request);
    const previous = body.thread?.previous_message_id;
    if (previous === undefined) return body;
    if (!ids.has(previous)) ids.set(previous, `reply ${ids.size + 1}`);
    return { ...body, thread: { ...body.thread, previous_message_id: ids.get(previous) } };
  });
}

/** What a program saw, comparable across runs: message ids and error texts that name ids go. */
export function comparable(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null, (key, field) => (key === 'id' && typeof field === 'string' && field.startsWith('msg_') ? 'msg' : field)));
}

async function outcome(program: Program, start: Start) {
  const log: string[] = [];
  try {
    return { saw: comparable(await program(start, log)), log, error: undefined };
  } catch (error) {
    return { saw: undefined, log, error: error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error) };
  }
}

/** Runs `program` on both runners against servers scripted alike; checks that nothing differs; returns both servers. */
export async function runBoth(steps: () => Step[], program: Program, thread: false | undefined, { concurrentLog = false } = {}) {
  const sdkServer = await mockServer(steps());
  const ourServer = await mockServer(steps());
  const mode = thread === false ? { thread: false } : {};
  const sdkClient: Anthropic = sdkServer.client();
  const sdk = await outcome(program, (params, options) => sdkClient.beta.messages.toolRunner({ ...params, ...mode }, options) as unknown as Runner);
  const ours = await outcome(program, (params, options) => toolRunner(ourServer.client(), { ...params, ...mode }, options) as unknown as Runner);
  expect(ours.error).toEqual(sdk.error);
  // Calls of different tools run at once: their relative order is the scheduler's (each tool's own order still counts).
  expect(concurrentLog ? [...ours.log].sort() : ours.log).toEqual(concurrentLog ? [...sdk.log].sort() : sdk.log);
  expect(ours.saw).toEqual(sdk.saw);
  expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
  expect(headersOf(ourServer)).toEqual(headersOf(sdkServer));
  expect(ourServer.requests.map((request) => request.query)).toEqual(sdkServer.requests.map((request) => request.query));
  return { sdk, ours, sdkServer, ourServer };
}

export const collect = async (runner: Runner) => {
  const seen = [];
  for await (const message of runner) seen.push(message);
  return seen;
};

/** The messages a run yields and its history at the end; `onReply(n)` runs in the loop body after the n-th reply. */
export const seenWith = async (runner: Runner, onReply: (n: number) => void) => {
  const seen = [];
  for await (const message of runner) {
    seen.push(message);
    onReply(seen.length);
  }
  return { seen, messages: runner.params.messages };
};

/** A reply that asks for the weather in Paris (call `id`), then a 500 (`message`), then `after`. */
export const callThenFailure = (id: string, message: string, ...after: Step[]): Step[] => [
  { content: [toolUse('get_weather', { location: 'Paris' }, id)] },
  { error: { status: 500, message } },
  ...after,
];

export type ThreadProgram = (makeRunner: (thread: any, settings: any) => Runner, client: Anthropic, log: string[]) => Promise<unknown>;

/** Runs `program` over an SDK thread with the SDK's runner and with ours, against servers scripted alike. */
export async function overThreadBoth(steps: () => Step[], program: ThreadProgram) {
  const sdkServer = await mockServer(steps());
  const ourServer = await mockServer(steps());
  const sdkLog: string[] = [];
  const ourLog: string[] = [];
  const sdk = await program((thread, settings) => thread.toolRunner(settings), sdkServer.client(), sdkLog);
  const ours = await program((thread, settings) => toolRunner(thread, settings) as unknown as Runner, ourServer.client(), ourLog);
  return { sdk, ours, sdkServer, ourServer, sdkLog, ourLog };
}

