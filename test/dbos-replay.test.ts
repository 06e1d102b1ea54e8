/**
 * Durable runs replayed in one process: DBOS is launched here, and `DBOS.forkWorkflow(id, past the
 * last step)` replays a finished run from its record, as a recovery does (test/dbos.test.ts kills
 * workers; this is the fast way to check that a replay decides as the run did).
 */
import Anthropic, { APIConnectionError, APIError } from '@anthropic-ai/sdk';
import { DBOS, DBOSClient } from '@dbos-inc/dbos-sdk';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { type RunnableTool, type RunnerEvent, agentTool, tool, toolRunner } from 'tool-runner';
import { openTelemetry } from 'tool-runner/otel';
import { type DurableRunResult, type DurableToolRunner, durableApprovals, durableToolRunner } from 'tool-runner/dbos';
import { type RecordedRequest, type ScriptedReply, text, toolUse } from 'tool-runner/testing';
import { createDatabase } from '../scripts/postgres.js';
import { mockServer, sleep, unhandledDuring } from './helpers.js';
import { sseServer } from './fixtures/sse-server.js';

const serverUrl = inject('databaseUrl');
/** The mock server of the test that runs (the agents are registered before DBOS launches, once). */
let mockUrl = '';
const client = () => new Anthropic({ baseURL: mockUrl, apiKey: 'test-key', maxRetries: 0 });
const ran: string[] = [];
const params = { model: 'claude-sonnet-5-5', max_tokens: 256, messages: [{ role: 'user' as const, content: 'Count the orders' }] };
const inlineTools = { headers: { 'anthropic-beta': 'inline-tools-2026-09-15' } };

const query = tool({ name: 'query_database', description: 'Runs a query', inputSchema: z.object({ sql: z.string() }), run: async () => (ran.push('query'), '42 rows') });
const login = tool({ name: 'login', description: 'Logs in', inputSchema: z.object({ user: z.string() }), run: async ({ user }) => (ran.push('login'), `logged in as ${user}`) });
/** Adds the query tool from inside its own call: its step. */
const loginAdding = tool({
  name: 'login',
  description: 'Logs in',
  inputSchema: z.object({ user: z.string() }),
  run: async ({ user }, { runner }) => {
    ran.push('login');
    runner.addTools(query);
    return `logged in as ${user}`;
  },
});

/** Pushes a message from inside its call. */
const note = tool({
  name: 'note',
  description: 'Takes a note',
  inputSchema: z.object({}),
  run: async (_input, { runner }) => {
    ran.push('note');
    runner.pushMessages({ role: 'user', content: 'noted' });
    return 'noted';
  },
});

/** Asks for a compaction before the next turn from inside its call. */
const compacting = tool({
  name: 'compact',
  description: 'Compacts the context',
  inputSchema: z.object({}),
  run: async (_input, { runner }) => {
    ran.push('compact');
    runner.compactBeforeNextTurn();
    return 'compacting';
  },
});
/** Per-run state a listener keeps, keyed by the run, read by a tool. */
const perRun = new WeakMap<object, string>();
const whoAmI = tool({ name: 'who_am_i', description: 'Reads the run', inputSchema: z.object({}), run: async (_input, { runner }) => `${perRun.get(runner) ?? 'unknown run'}; same=${String(perRun.has(runner))}` });
const keyedByRunner = durableToolRunner({ name: 'replay-keyed-by-runner', client, tools: [whoAmI], options: { ...inlineTools, onEvent: (event: RunnerEvent) => void (event.type === 'run.start' && perRun.set(event.runner, 'run A')) } });
const clerkAdding = agentTool({
  name: 'clerk',
  description: 'Handles orders',
  params: ({ task }) => ({ model: 'claude-sonnet-5-5', max_tokens: 256, system: 'clerk', messages: [{ role: 'user', content: task }], tools: [loginAdding] }),
});
const addingInSubAgentStep = durableToolRunner({ name: 'replay-adding-in-sub-agent-step', client, tools: [clerkAdding], options: inlineTools });
/** The query tool given to the run with setMessagesParams when a login ends (a listener's change). */
const settingQueryAfterLogin = {
  ...inlineTools,
  onEvent: (event: RunnerEvent) => {
    if (event.type === 'tool.end' && !event.path && event.call.name === 'login' && !event.result?.is_error) event.runner.setMessagesParams((previous) => ({ ...previous, tools: [...previous.tools, query] }));
  },
};
const settingInListener = durableToolRunner({ name: 'replay-setting-in-listener', client, tools: [login], options: settingQueryAfterLogin });
/** A toolset given to the run with setMessagesParams when a login ends: its calls would be no steps. */
const settingToolsetInListener = durableToolRunner({
  name: 'replay-setting-toolset-in-listener',
  client,
  tools: [login],
  options: {
    ...inlineTools,
    onEvent: (event: RunnerEvent) => {
      const computer = { type: 'computer_toolset_20260801', display_width_px: 1024, display_height_px: 768, run: async () => (ran.push('screenshot'), 'shot') };
      if (event.type === 'tool.end' && event.call.name === 'login') event.runner.setMessagesParams((previous) => ({ ...previous, tools: [...previous.tools, computer as never] }));
    },
  },
});
/** A tool source (MCP) given to the run with setMessagesParams when a login ends: its tools would be no steps. */
const settingSourceInListener = durableToolRunner({
  name: 'replay-setting-source-in-listener',
  client,
  tools: [login],
  options: {
    ...inlineTools,
    onEvent: (event: RunnerEvent) => {
      if (event.type === 'tool.end' && event.call.name === 'login') event.runner.setMessagesParams((previous) => ({ ...previous, tools: [...previous.tools, { kind: 'tool-source', tools: () => [query] }] }));
    },
  },
});
const compactingInStep = durableToolRunner({ name: 'replay-compacting-in-step', client, tools: [compacting], options: inlineTools });
const addingInStep = durableToolRunner({ name: 'replay-adding-in-step', client, tools: [loginAdding, note], options: inlineTools });
/** The query tool is added when a login ends: the run's own (`path` none), or its clerk sub-agent's. */
const addQueryAfterLogin = (inSubAgent: boolean) => ({
  ...inlineTools,
  onEvent: (event: RunnerEvent) => {
    if (event.type === 'tool.end' && Boolean(event.path) === inSubAgent && event.call.name === 'login' && !event.result?.is_error) event.runner.addTools(query);
  },
});
const addingInListener = durableToolRunner({ name: 'replay-adding-in-listener', client, tools: [login], options: addQueryAfterLogin(false) });
/** The tool a listener adds when a login ends, as this release names it: a new release renames it. */
let addedQuery: RunnableTool = query;
const addingRenamed = durableToolRunner({
  name: 'replay-adding-renamed',
  client,
  tools: [login],
  options: { ...inlineTools, onEvent: (event: RunnerEvent) => void (event.type === 'tool.end' && event.call.name === 'login' && !event.result?.is_error && event.runner.addTools(addedQuery)) },
});
const clerk = agentTool({
  name: 'clerk',
  description: 'Handles orders',
  params: ({ task }) => ({ model: 'claude-sonnet-5-5', max_tokens: 256, system: 'clerk', messages: [{ role: 'user', content: task }], tools: [login] }),
});
const addingInSubAgent = durableToolRunner({ name: 'replay-adding-in-sub-agent', client, tools: [clerk], options: addQueryAfterLogin(true) });

/** A refund that waits for approval: the run is cancelled while it waits. */
const refund = tool({ name: 'refund', description: 'Refunds an order', inputSchema: z.object({ order: z.string() }), needsApproval: true, run: async () => (ran.push('refund'), 'refunded') });
const refunds = durableToolRunner({ name: 'replay-refunds', client, tools: [refund] });
/** A run whose output's schema transforms (its `due` a `Date`): what `result.output` holds, as the README tells. */
const Dated = z.object({ due: z.string().transform((due) => new Date(due)) });
const dated = durableToolRunner({ name: 'replay-dated-output', client, tools: [query], options: { output: Dated } });

/** A tool that runs until its signal aborts, in a run traced with tool-runner/otel. */
const spans = new InMemorySpanExporter();
const waitForever = tool({ name: 'wait', description: 'Waits', inputSchema: z.object({}), run: (_input, { signal }) => new Promise<string>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))) });
const traced = durableToolRunner({
  name: 'replay-traced',
  client,
  tools: [waitForever],
  options: {
    onEvent: [
      openTelemetry({ tracer: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }).getTracer('test') }),
      (event: RunnerEvent) => void ((event.type === 'tool.start' || event.type === 'request.start') && (busyWith = event.type)),
    ],
  },
});
/** A run whose client traces (the SDK's own spans), with no listener of tool-runner/otel. */
const sdkSpans = new InMemorySpanExporter();
const tracingClient = () => new Anthropic({ baseURL: mockUrl, apiKey: 'test-key', maxRetries: 0, openTelemetry: { tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(sdkSpans)] }) } });
const tracedByClient = durableToolRunner({ name: 'replay-traced-by-client', client: tracingClient, tools: [query] });
/** What the traced run started last. */
let busyWith: string | undefined;

/** A client made by an async function: each run fails, saying so. */
const asyncClient = durableToolRunner({ name: 'replay-async-client', client: (async () => client()) as never, tools: [login] });
/** An async function whose promise rejects (no API key, say): its rejection is not left unhandled (Node ends the worker on one). */
const failingAsyncClient = durableToolRunner({
  name: 'replay-failing-async-client',
  client: (async () => {
    throw new Error('no API key');
  }) as never,
  tools: [login],
});

/** A client whose request fails as SDK 1.17 fails a reply the connection cut while it was read (after its retries): an `APIConnectionError` whose cause is undici's `terminated`. */
const cutClient = () =>
  new Anthropic({ baseURL: mockUrl, apiKey: 'test-key', maxRetries: 0, middleware: [async () => Promise.reject(new APIConnectionError({ cause: new TypeError('terminated') }))] });
const cutOff = durableToolRunner({ name: 'replay-cut-off', client: cutClient, tools: [query] });
const streamCut = durableToolRunner({ name: 'replay-stream-cut', client, tools: [query] });
const cutOff2 = durableToolRunner({ name: 'replay-api-error', client, tools: [query] });
/** A streamed run whose stream skips a block's start. */
const skippedStart = durableToolRunner({ name: 'replay-skipped-start', client, tools: [query] });
/** A stream whose events skip the start of block 1 (a query_database call): a proxy lost its content_block_start. */
const skippingStart = [
  { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-5-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Querying.' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"sql":"a"}' } },
  { type: 'content_block_stop', index: 1 },
  { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } },
  { type: 'message_stop' },
];

/** A streamed run with a sub-agent: the event types its listener heard (a sub-agent's with its path). */
const heard: string[] = [];
const streamedWithClerk = durableToolRunner({ name: 'replay-streamed-with-clerk', client, tools: [clerk], options: { onEvent: (event: RunnerEvent) => void heard.push(`${event.type}${event.path ? `@${event.path.join('/')}` : ''}`) } });

/** A run whose toolTimeoutMs is shorter than its clerk's request takes. */
const timedWithClerk = durableToolRunner({ name: 'replay-timed-with-clerk', client, tools: [clerk], options: { toolTimeoutMs: 300 } });

/** Run control, a fallback and compaction at once: what a run decides from its recorded steps. */
const Count = z.object({ count: z.number() });
const controlOptions = { fallback: [{ model: 'claude-fallback-1' }], budget: { maxToolCalls: 3 }, loopGuard: { maxRepeats: 1 }, output: Count };
const controlled = durableToolRunner({ name: 'replay-controlled', client, tools: [query], options: controlOptions });
/** The model of that run, by what each request holds (the same request gets the same reply, whichever run sends it). */
function controlledModel(request: RecordedRequest): ScriptedReply {
  const model = (request.body as { model: string }).model;
  const conversation = JSON.stringify(request.messages);
  const last = JSON.stringify(request.messages.at(-1));
  if (last.includes('Write a summary')) return { content: [text('Counted a, b and c so far.')] };
  // The answer, then its repair (the history holds the invalid one).
  if (conversation.includes('Counted a, b and c so far.')) return { content: [text(conversation.includes('three') ? '{"count":3}' : '{"count":"three"}')] };
  const results = conversation.match(/tool_result/g)?.length ?? 0;
  // The primary is down for the first turn: the fallback answers it.
  if (results === 0) return model === 'claude-sonnet-5-5' ? { error: { status: 529 } } : { content: [toolUse('query_database', { sql: 'a' }, 'toolu_a1'), toolUse('query_database', { sql: 'a' }, 'toolu_a2')] };
  if (results === 2) return { content: [toolUse('query_database', { sql: 'b' }, 'toolu_b'), toolUse('query_database', { sql: 'c' }, 'toolu_c'), toolUse('query_database', { sql: 'd' }, 'toolu_d')] };
  return { content: [text(conversation.includes('three') ? '{"count":3}' : '{"count":"three"}')] };
}

describe.skipIf(!serverUrl)('durable runs replayed (tool-runner/dbos)', () => {
  let dbos: DBOSClient;
  beforeAll(async () => {
    const { url } = await createDatabase(serverUrl, 'tool_runner_replay');
    DBOS.setConfig({ name: 'tool-runner-replay', systemDatabaseUrl: url, logLevel: 'error' });
    await DBOS.launch();
    await DBOS.registerQueue('agents', { workerConcurrency: 4 });
    dbos = await DBOSClient.create({ systemDatabaseUrl: url });
  });
  afterAll(async () => {
    await dbos?.destroy();
    await DBOS.shutdown();
  });

  /** Runs `agent` to its end, then replays it whole from its record: both results, the step names, and what each run ran. */
  async function runAndReplay(agent: DurableToolRunner, id: string) {
    ran.length = 0;
    const result = await agent.run(id, params);
    const ranFirst = [...ran];
    const steps = (await dbos.listWorkflowSteps(id)) ?? [];
    ran.length = 0;
    const replayed = (await (await DBOS.forkWorkflow(id, steps.at(-1)!.functionID + 1)).getResult()) as DurableRunResult;
    return { result, replayed, steps: steps.map((step) => step.name), ranFirst, ranAgain: [...ran] };
  }

  it("a reply the connection cut while it was read fails the run as a ReplyError, as without durability: SDK 1.17's APIConnectionError keeps its cause (undici's `terminated`) in the step's record", async () => {
    const server = await mockServer([{ content: [text('The primary began to answer')], disconnectAfterEvents: 3 }]);
    mockUrl = server.url;
    const unread = /^The API's reply could not be read \(terminated\)\. Nothing of it was added to the history/;
    await expect(toolRunner(cutClient(), { ...params, tools: [query] }).runUntilDone()).rejects.toThrow(unread);
    // (It was replayed as an APIConnectionError without its cause, 'Connection error.': nothing said the reply had been cut.)
    await expect(cutOff.run(`cut-off-${Date.now()}`, params)).rejects.toThrow(unread);
    // A stream cut past its first event (on SDK 1.17 the same APIConnectionError).
    await expect(streamCut.run(`stream-cut-${Date.now()}`, { ...params, stream: true })).rejects.toThrow(unread);
    expect(server.requests).toHaveLength(1);
  });

  it("a streamed reply whose events skipped a block's start fails the run as a ReplyError, as without durability: not recorded and kept without the call, and a replay fails the same", async () => {
    const { client: sse, close } = await sseServer([skippingStart]);
    mockUrl = sse.baseURL;
    try {
      ran.length = 0;
      const unread = "The API's reply could not be read (its events skipped the start of block 1: a content_block_delta came before its content_block_start). Nothing of it was added to the history; iterate again to send the request again.";
      const without = await toolRunner(client(), { ...params, stream: true, tools: [query] }).runUntilDone().catch((error: unknown) => error);
      expect((without as Error).message).toBe(unread);
      const id = `skipped-start-${Date.now()}`;
      const durable = await skippedStart.run(id, { ...params, stream: true }).catch((error: unknown) => error);
      // (It was the reply without its call, recorded: the run ended on 'Querying.' as if the model had called nothing.)
      expect(durable).toBeInstanceOf(Error);
      expect((durable as Error).name).toBe('ReplyError');
      expect((durable as Error).message).toBe(unread);
      const steps = (await dbos.listWorkflowSteps(id)) ?? [];
      const replayed = await (await DBOS.forkWorkflow(id, steps.at(-1)!.functionID + 1)).getResult().catch((error: unknown) => error);
      expect((replayed as Error).message).toBe(unread);
      expect(ran).toEqual([]);
    } finally {
      await close();
    }
  });

  it("an API error fails the run with the SDK's error as without durability: its message and (SDK 1.17) the request it answered, which the step's record kept", async () => {
    const server = await mockServer([{ error: { status: 529 } }, { error: { status: 529 } }]);
    mockUrl = server.url;
    const without = await toolRunner(client(), { ...params, tools: [query] }).runUntilDone().catch((error: unknown) => error);
    const durable = await cutOff2.run(`api-error-${Date.now()}`, params).catch((error: unknown) => error);
    expect(durable).toBeInstanceOf(APIError);
    const seen = (error: unknown) => ({ name: (error as Error).name, status: (error as APIError).status, message: (error as Error).message.replace(/req_\w+/, 'req_'), request: (error as { request?: unknown }).request });
    expect(seen(durable)).toEqual(seen(without));
  });

  it("a run enqueued by a DBOSClient (docs/scaling.md) checks its params as start() does: params.tools fails the run saying why (they were dropped for the agent's in silence), params that are no object too", async () => {
    const server = await mockServer([{ content: [text('Answered with the agent\'s tools.')] }]);
    mockUrl = server.url;
    const enqueued = async (id: string, given: unknown) => (await dbos.enqueue({ workflowName: cutOff2.name, queueName: 'agents', workflowID: id }, given)).getResult();
    const mine = { name: 'mine', description: 'Mine', input_schema: { type: 'object' } };
    await expect(enqueued(`enqueued-tools-${Date.now()}`, { ...params, tools: [mine] })).rejects.toThrow(/^durableToolRunner: params.tools is not taken: a durable run's tools are the agent's/);
    await expect(enqueued(`enqueued-null-${Date.now()}`, null)).rejects.toThrow(/^durableToolRunner: params must be an object, got null$/);
    expect(server.requests).toHaveLength(0);
  });

  /** A run whose second request fails for good (a 529, no fallback) after its call ran; `step`: the failed request's step. */
  async function failedAtSecondRequest(prefix: string) {
    const server = await mockServer([
      { content: [toolUse('query_database', { sql: 'select count(*) from orders' }, 'toolu_query')] },
      { error: { status: 529 } },
      { content: [text('There are 42 orders.')] },
    ]);
    mockUrl = server.url;
    ran.length = 0;
    const id = `${prefix}-${Date.now()}`;
    await expect(cutOff2.run(id, params)).rejects.toThrow(/^529 /);
    const step = async () => ((await dbos.listWorkflowSteps(id)) ?? []).findLast((each) => each.name.startsWith('model request'))!.functionID;
    return { server, id, step };
  }

  it("a run that failed (a 529 after the client's retries, no fallback left) has failed for good: a resume replays the recorded failure, sending nothing; a fork from the failed request's step sends it again, the finished call not run again (README)", async () => {
    const { server, id, step } = await failedAtSecondRequest('failed');
    await expect((await DBOS.resumeWorkflow<DurableRunResult>(id)).getResult()).rejects.toThrow(/^529 /);
    expect(server.requests).toHaveLength(2);
    const forked = (await (await DBOS.forkWorkflow<DurableRunResult>(id, await step())).getResult())!;
    expect(forked.message.content).toEqual([{ type: 'text', text: 'There are 42 orders.', citations: null }]);
    expect(ran).toEqual(['query']);
    expect(server.requests).toHaveLength(3);
  });

  it("a streamed run's sub-agent sends no live text (README): its requests are steps read whole; the run's own reply streams as request.text", async () => {
    const server = await mockServer([{ content: [toolUse('clerk', { task: 'Say hello' }, 'toolu_clerk')] }, { content: [text('Hello from the clerk.')] }, { content: [text('The clerk says hello.')] }]);
    mockUrl = server.url;
    heard.length = 0;
    await streamedWithClerk.run(`streamed-with-clerk-${Date.now()}`, { ...params, stream: true });
    expect(heard).toContain('request.text');
    expect(heard).toContain('request.end@clerk');
    expect(heard.filter((type) => type.startsWith('agent.text') || type === 'request.text@clerk')).toEqual([]);
  });

  it("options.toolTimeoutMs does not bound an agent tool's whole call in a durable run, as it does without durability (README): a sub-agent's request slower than it is waited for", async () => {
    const server = await mockServer([{ content: [toolUse('clerk', { task: 'Say hello' }, 'toolu_clerk')] }, { content: [text('Hello from the clerk.')], delayMs: 800 }, { content: [text('The clerk says hello.')] }]);
    mockUrl = server.url;
    const result = await timedWithClerk.run(`timed-with-clerk-${Date.now()}`, params);
    expect(result.messages[2]!.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_clerk', content: 'Hello from the clerk.' }]);
  });

  it('a run with a fallback, compaction, a budget, a loop guard and an output repair, forked after its fallback, between two calls, between its summary and the next turn, before its repair and at its end (a crash there), ends as it did and as the run without durability: only the requests and calls after the cut go again', async () => {
    const server = await mockServer(Array.from({ length: 200 }, () => controlledModel));
    mockUrl = server.url;
    const runParams = { ...params, compactionControl: { enabled: true, contextTokenThreshold: 200 } };
    const plain = toolRunner(client(), { ...runParams, tools: [query] }, controlOptions);
    await plain.runUntilDone();
    const id = `controlled-${Date.now()}`;
    ran.length = 0;
    const result = await controlled.run(id, runParams);
    const seen = (run: { messages: unknown; usage: unknown; iterations: number; stoppedBy: unknown; output?: unknown }) => ({ messages: run.messages, usage: run.usage, iterations: run.iterations, stoppedBy: run.stoppedBy, output: run.output });
    expect(seen(result)).toEqual(seen({ messages: plain.params.messages, usage: plain.usage, iterations: plain.iteration, stoppedBy: plain.stoppedBy, output: plain.output }));
    expect(result.output).toEqual({ count: 3 });
    const steps = (await dbos.listWorkflowSteps(id)) ?? [];
    // The 529 and the fallback's reply, the calls the guards let run, the summary, the repair.
    expect(steps.map((step) => step.name)).toEqual(['model request', 'model request (fallback 0)', 'tool query_database', 'model request', 'tool query_database', 'tool query_database', 'model request', 'model request', 'model request']);
    // The repeat of 'a' answered by the loop guard, 'd' by the budget: neither ran.
    expect(ran).toEqual(['query', 'query', 'query']);
    // Cut after the fallback answered, between two calls, between the summary and the next turn, before the repair, and after the end.
    for (const at of [2, 5, 7, 8, steps.length]) {
      const step = steps[at];
      ran.length = 0;
      const sent = server.requests.length;
      const forked = (await (await DBOS.forkWorkflow<DurableRunResult>(id, step?.functionID ?? steps.at(-1)!.functionID + 1)).getResult())!;
      expect(seen(forked)).toEqual(seen(result));
      const after = steps.slice(at);
      expect(server.requests.length - sent).toBe(after.filter((later) => later.name.startsWith('model request')).length);
      expect(ran).toHaveLength(after.filter((later) => later.name.startsWith('tool')).length);
    }
  });

  it("a run that failed, rewound with DBOS.rewindWorkflow from the failed request's step, goes on under the same id: the request sent again, the finished call not run again, run() of that id giving the new result (README)", async () => {
    const { server, id, step } = await failedAtSecondRequest('rewound');
    const rewound = await DBOS.rewindWorkflow<DurableRunResult>(id, { startStep: await step() });
    expect(rewound.workflowID).toBe(id);
    const result = (await rewound.getResult())!;
    expect(result.message.content).toEqual([{ type: 'text', text: 'There are 42 orders.', citations: null }]);
    expect(ran).toEqual(['query']);
    expect(server.requests).toHaveLength(3);
    expect((await cutOff2.run(id, params)).message).toEqual(result.message);
    expect(server.requests).toHaveLength(3);
  });

  it("an async client function whose promise rejects: the run fails saying it returned a promise, the rejection not left unhandled", async () => {
    const unhandled = await unhandledDuring(async () => {
      await expect(failingAsyncClient.run(`failing-async-client-${Date.now()}`, params)).rejects.toThrow('`client` returned a promise');
    });
    expect(unhandled).toEqual([]);
  });

  it('a client made by an async function: the run fails saying the function returned a promise (not that the client has no messages API)', async () => {
    await expect(asyncClient.run(`async-client-${Date.now()}`, params)).rejects.toThrow("durableToolRunner 'replay-async-client': `client` returned a promise; the function must return the client itself");
  });

  it("a run's output whose schema transforms: result.output, as DBOS gives it back (its run, and read back later), is the value the schema made (a Date), not JSON to parse again", async () => {
    const server = await mockServer([{ content: [text('{"due":"2026-12-07T00:00:00.000Z"}')] }]);
    mockUrl = server.url;
    const id = `dated-${Date.now()}`;
    const result = await dated.run(id, params);
    const read = (await dbos.retrieveWorkflow<DurableRunResult>(id).getResult())!;
    for (const { output } of [result, read]) {
      expect((output as { due: unknown }).due).toEqual(new Date('2026-12-07T00:00:00.000Z'));
      // The README told to parse it again with the schema: that fails on the Date.
      expect(() => Dated.parse(output)).toThrow();
    }
  });

  it('a run cancelled while a call waits for approval lists none waiting, and a decision for it says the run has ended', async () => {
    const server = await mockServer([{ content: [toolUse('refund', { order: 'A-1' }, 'toolu_refund')] }, { content: [text('Refunded.')] }]);
    mockUrl = server.url;
    const id = `cancelled-${Date.now()}`;
    await refunds.start(id, params);
    const approvals = durableApprovals(dbos, id);
    expect((await approvals.pending({ timeoutSeconds: 10 })).map((call) => call.id)).toEqual(['toolu_refund']);
    await dbos.cancelWorkflow(id);
    expect(await approvals.pending()).toEqual([]);
    expect(await durableApprovals(DBOS, id).pending()).toEqual([]);
    await expect(approvals.approve('toolu_refund')).rejects.toThrow(`approve: run '${id}' has ended (CANCELLED): no call of it waits for approval`);
    expect(ran).not.toContain('refund');
  });

  it.each([
    ['a tool call', [{ content: [toolUse('wait', {}, 'toolu_wait')] }], 'execute_tool wait'],
    ['a model request', [{ content: [text('Never sent.')], stallAfterEvents: 0 }], 'chat claude-sonnet-5-5'],
  ] as const)('a run cancelled (DBOS.cancelWorkflow) during %s is a cancellation on its spans, as an abort: no error status', async (_what, steps, busy) => {
    spans.reset();
    busyWith = undefined;
    const server = await mockServer(steps as never);
    mockUrl = server.url;
    const id = `traced-${busy.split(' ')[0]}-${Date.now()}`;
    const handle = await traced.start(id, params);
    // Cancelled once the call runs (or the request waits).
    for (let i = 0; i < 200 && busyWith !== (busy === 'execute_tool wait' ? 'tool.start' : 'request.start'); i++) await sleep(25);
    await sleep(100);
    await DBOS.cancelWorkflow(id);
    await expect(handle.getResult()).rejects.toThrow(/cancelled/);
    for (let i = 0; i < 200 && !spans.getFinishedSpans().some((span) => span.name.startsWith('invoke_agent')); i++) await sleep(25);
    const ended = spans.getFinishedSpans().map((span) => [span.name, span.status.code, span.attributes['error.type']]);
    expect(ended).toContainEqual([busy, SpanStatusCode.UNSET, undefined]);
    expect(ended).toContainEqual(['invoke_agent tool-runner', SpanStatusCode.UNSET, undefined]);
  });

  it("a run whose client traces makes the SDK runner's own spans, as a run without durability: a span for the pass, and one for each call beside the client's request spans", async () => {
    sdkSpans.reset();
    const server = await mockServer([{ content: [toolUse('query_database', { sql: 'select count(*) from orders' }, 'toolu_query')] }, { content: [text('There are 42 orders.')] }]);
    mockUrl = server.url;
    await tracedByClient.run(`traced-by-client-${Date.now()}`, params);
    const spans = sdkSpans.getFinishedSpans();
    const pass = spans.find((span) => span.name === 'anthropic.messages.tool_runner');
    expect(spans.map((span) => span.name).sort()).toEqual(['anthropic.custom_tool_use query_database', 'anthropic.messages.create', 'anthropic.messages.create', 'anthropic.messages.tool_runner']);
    // Under the pass's span (no context manager here: the runner gives its call spans their parent).
    expect(spans.find((span) => span.name.startsWith('anthropic.custom_tool_use'))!.parentSpanContext?.spanId).toBe(pass!.spanContext().spanId);
  });

  it("a tool's step may not change its run (a recovery would lose the change): the model reads why, and a replay reads the same", async () => {
    const server = await mockServer([
      { content: [toolUse('login', { user: 'ada' }, 'toolu_login'), toolUse('note', {}, 'toolu_note')] },
      { content: [toolUse('query_database', { sql: 'select count(*) from orders' }, 'toolu_query')] },
      { content: [text('There are 42 orders.')] },
    ]);
    mockUrl = server.url;
    const { result, replayed, ranAgain } = await runAndReplay(addingInStep, `adding-in-step-${Date.now()}`);
    expect(result.messages[2]!.content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_login',
        content: expect.stringMatching(/^TypeError: durableToolRunner: tool 'login' called runner.addTools\(\), which a durable run's tool cannot: its step is not run again on recovery/),
        is_error: true,
      },
      { type: 'tool_result', tool_use_id: 'toolu_note', content: expect.stringMatching(/^TypeError: durableToolRunner: tool 'note' called runner.pushMessages\(\), which a durable run's tool cannot/), is_error: true },
    ]);
    // Replayed, the history is the run's (not "not found" where the added tool had run), and nothing ran again.
    expect(replayed.messages).toEqual(result.messages);
    expect(ranAgain).toEqual([]);
  });

  it('a tool an onEvent listener adds is a step, as the agent\'s own tools are: a replay does not run it again', async () => {
    const server = await mockServer([
      { content: [toolUse('login', { user: 'ada' }, 'toolu_login')] },
      { content: [toolUse('query_database', { sql: 'select count(*) from orders' }, 'toolu_query')] },
      { content: [text('There are 42 orders.')] },
    ]);
    mockUrl = server.url;
    const { result, replayed, steps, ranFirst, ranAgain } = await runAndReplay(addingInListener, `adding-in-listener-${Date.now()}`);
    expect(result.messages[5]!.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_query', content: '42 rows' }]);
    expect(steps).toEqual(['model request', 'tool login', 'model request', 'tool query_database', 'model request']);
    expect(ranFirst).toEqual(['login', 'query']);
    expect(replayed.messages).toEqual(result.messages);
    expect(ranAgain).toEqual([]);
    expect(server.requests).toHaveLength(3);
  });

  it("a replay on a worker whose listener adds a tool under a new name fails the run naming the tool the recorded reply calls, a tool added during the run (its tool_addition block) as one of the agent's: the request's step records the tools the history added", async () => {
    const server = await mockServer([
      { content: [toolUse('login', { user: 'ada' }, 'toolu_login')] },
      { content: [toolUse('query_database', { sql: 'select count(*) from orders' }, 'toolu_query')] },
      { content: [text('There are 42 orders.')] },
      // (Without the check, the replay answered the call "not found" and asked the model again.)
      { content: [text('There are no orders.')] },
    ]);
    mockUrl = server.url;
    const id = `adding-renamed-${Date.now()}`;
    addedQuery = query;
    ran.length = 0;
    await addingRenamed.run(id, params);
    // The query tool went to the model in a `system` message of the next request, its `tools` unchanged.
    expect((server.requests[1]!.body as { tools: Array<{ name: string }> }).tools.map((entry) => entry.name)).toEqual(['login']);
    const steps = (await dbos.listWorkflowSteps(id)) ?? [];
    expect(steps.map((step) => step.name)).toEqual(['model request', 'tool login', 'model request', 'tool query_database', 'model request']);
    expect((steps[2]!.output as { tools?: string[] }).tools).toEqual(['login', 'query_database']);
    // A new release names it `query_orders`; the call's step is gone (the crash cut it off): the replay takes it anew.
    addedQuery = tool({ name: 'query_orders', description: 'Runs a query', inputSchema: z.object({ sql: z.string() }), run: async () => (ran.push('query_orders'), '42 rows') });
    try {
      const forked = await DBOS.forkWorkflow(id, steps[3]!.functionID);
      await expect(forked.getResult()).rejects.toThrow(`recorded a reply that calls tool 'query_database', which this worker's agent does not have (it has: login, query_orders)`);
    } finally {
      addedQuery = query;
    }
    expect(server.requests).toHaveLength(3);
  });

  it("a tool an onEvent listener adds to a sub-agent is a step too, as the sub-agent's own tools are", async () => {
    const server = await mockServer([
      { content: [toolUse('clerk', { task: 'Count the orders' }, 'toolu_clerk')] },
      { content: [toolUse('login', { user: 'ada' }, 'toolu_login')] },
      { content: [toolUse('query_database', { sql: 'select count(*) from orders' }, 'toolu_query')] },
      { content: [text('42 orders')] },
      { content: [text('There are 42 orders.')] },
    ]);
    mockUrl = server.url;
    const { result, replayed, steps, ranFirst, ranAgain } = await runAndReplay(addingInSubAgent, `adding-in-sub-agent-${Date.now()}`);
    expect(result.messages[2]!.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_clerk', content: '42 orders' }]);
    expect(steps).toEqual(['model request', 'model request', 'tool login', 'model request', 'tool query_database', 'model request', 'model request']);
    expect(ranFirst).toEqual(['login', 'query']);
    expect(replayed.messages).toEqual(result.messages);
    expect(ranAgain).toEqual([]);
  });

  it("a tool's step may not ask for a compaction either (a recovery would not send it, and would read the next turn's reply from the compaction's step)", async () => {
    const server = await mockServer([
      { content: [toolUse('compact', {}, 'toolu_compact')] },
      { content: [{ type: 'compaction', content: 'Summary of the work.', encrypted_content: null } as never] },
      { content: [text('Done.')] },
    ]);
    mockUrl = server.url;
    const { result, replayed } = await runAndReplay(compactingInStep, `compacting-in-step-${Date.now()}`);
    expect(result.messages[2]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_compact', content: expect.stringMatching(/^TypeError: durableToolRunner: tool 'compact' called runner.compactBeforeNextTurn\(\), which a durable run's tool cannot/), is_error: true },
    ]);
    expect(replayed.messages).toEqual(result.messages);
    expect(replayed.stoppedBy).toEqual(result.stoppedBy);
  });

  it("a tool's context.runner is the run its listeners see (event.runner): state a listener keyed by the run is found", async () => {
    const server = await mockServer([{ content: [toolUse('who_am_i', {}, 'toolu_who')] }, { content: [text('Done.')] }]);
    mockUrl = server.url;
    const result = await keyedByRunner.run(`keyed-${Date.now()}`, params);
    expect(result.messages[2]!.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_who', content: 'run A; same=true' }]);
  });

  it("a sub-agent's tool step may not change the sub-agent either", async () => {
    const server = await mockServer([
      { content: [toolUse('clerk', { task: 'Log in' }, 'toolu_clerk')] },
      { content: [toolUse('login', { user: 'ada' }, 'toolu_login')] },
      { content: [text('could not')] },
      { content: [text('Done.')] },
    ]);
    mockUrl = server.url;
    const { result, replayed } = await runAndReplay(addingInSubAgentStep, `adding-in-sub-agent-step-${Date.now()}`);
    const sub = (server.requests[2]!.body as { messages: Array<{ content: unknown }> }).messages.at(-1)!.content;
    expect(sub).toEqual([expect.objectContaining({ tool_use_id: 'toolu_login', content: expect.stringMatching(/^TypeError: durableToolRunner: tool 'login' called runner.addTools\(\)/), is_error: true })]);
    expect(replayed.messages).toEqual(result.messages);
  });

  it.each([
    ['a toolset', () => settingToolsetInListener, { type: 'tool_use', id: 'toolu_shot', name: 'screenshot', input: {}, toolset_name: 'computer' }],
    ['a tool source (MCP)', () => settingSourceInListener, toolUse('query_database', { sql: 'select count(*) from orders' }, 'toolu_query')],
  ] as const)("%s an onEvent listener gives the run with setMessagesParams is refused, as in the agent's tools: its calls would run again on recovery", async (what, agent, call) => {
    const server = await mockServer([{ content: [toolUse('login', { user: 'ada' }, 'toolu_login')] }, { content: [call as never] }, { content: [text('No tool.')] }]);
    mockUrl = server.url;
    const { result, ranFirst, ranAgain } = await runAndReplay(agent(), `setting-${what.split(' ')[1]}-in-listener-${Date.now()}`);
    expect(ranAgain).toEqual([]);
    expect(ranFirst).toEqual(['login']);
    expect(result.messages[4]!.content).toEqual([expect.objectContaining({ tool_use_id: (call as { id: string }).id, is_error: true })]);
  });

  it('a tool an onEvent listener gives the run with setMessagesParams is a step too, as one it adds with addTools', async () => {
    const server = await mockServer([
      { content: [toolUse('login', { user: 'ada' }, 'toolu_login')] },
      { content: [toolUse('query_database', { sql: 'select count(*) from orders' }, 'toolu_query')] },
      { content: [text('There are 42 orders.')] },
    ]);
    mockUrl = server.url;
    const { result, replayed, steps, ranFirst, ranAgain } = await runAndReplay(settingInListener, `setting-in-listener-${Date.now()}`);
    expect(result.messages[4]!.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_query', content: '42 rows' }]);
    expect(steps).toEqual(['model request', 'tool login', 'model request', 'tool query_database', 'model request']);
    expect(ranFirst).toEqual(['login', 'query']);
    expect(replayed.messages).toEqual(result.messages);
    expect(ranAgain).toEqual([]);
  });
});
