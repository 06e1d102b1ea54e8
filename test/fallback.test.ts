/**
 * Fallbacks (`options.fallback`): a request that still fails after the client's own retries goes to
 * each entry in order — another client and/or another model — with the whole history. Several
 * testing-kit servers in one test, the real SDK clients over real HTTP: an `Anthropic` client, and
 * an `AnthropicVertex` client (`@anthropic-ai/vertex-sdk`) whose Vertex paths the kit serves.
 */
import { APIUserAbortError, AuthenticationError, OverloadedError, RateLimitError } from '@anthropic-ai/sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { OAuth2Client } from 'google-auth-library';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type RunnerEvent, type RunnerSnapshot, type ToolRunnerOptions, toolRunner } from 'tool-runner';
import { openTelemetry } from 'tool-runner/otel';
import { type RecordedRequest, historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, captureLogger, mockServer, sleep, weatherTool, wire } from './helpers.js';

const overloaded = { error: { status: 529, retryAfter: 0.001 } };
const threadKind = (request: RecordedRequest) => (wire(request).body.thread as { type: string } | undefined)?.type ?? 'none';

/** An `AnthropicVertex` client pointed at a testing-kit server, with a Google access token that needs no network. */
function vertexClient(url: string, options: { maxRetries?: number } = {}) {
  const authClient = new OAuth2Client();
  authClient.setCredentials({ access_token: 'offline-token', expiry_date: Date.now() + 3_600_000 });
  return new AnthropicVertex({ region: 'us-east5', projectId: 'offline-project', baseURL: `${url}/v1`, authClient, ...options });
}

describe('fallbacks across clients and models', () => {
  it('the primary overloaded on every try (the SDK retries counted): the fallback client answers the same turn', async () => {
    const primary = await mockServer([overloaded, overloaded, overloaded]);
    const fallback = await mockServer([{ content: [text('From the fallback.')], usage: { input_tokens: 11, output_tokens: 4 } }]);
    const { lines, logger } = captureLogger();
    const events: RunnerEvent[] = [];
    const runner = toolRunner(primary.client({ maxRetries: 2, logLevel: 'warn' }), { ...baseParams, system: 'Be brief.' }, {
      logger,
      onEvent: (event) => events.push(event),
      fallback: [{ client: fallback.client(), model: 'claude-haiku-5-5', max_tokens: 512 }],
    });
    const final = await runner;
    expect(final.content).toEqual([{ type: 'text', text: 'From the fallback.', citations: null }]);
    expect(final.model).toBe('claude-haiku-5-5');
    // The client's own retries ran first: three tries, numbered by the SDK.
    expect(primary.requests.map((request) => request.headers['x-stainless-retry-count'])).toEqual(['0', '1', '2']);
    // The fallback got the whole history, its overrides, and no thread.
    const sent = wire(fallback.requests[0]!).body;
    expect(sent.messages).toEqual(baseParams.messages);
    expect(sent).toMatchObject({ model: 'claude-haiku-5-5', max_tokens: 512, system: 'Be brief.' });
    expect(sent).not.toHaveProperty('thread');
    expect(fallback.requests[0]!.headers['anthropic-beta'] ?? '').not.toContain('message-threads');
    const end = events.filter((event) => event.type === 'request.end');
    expect(end).toHaveLength(1);
    expect(end[0]).toMatchObject({ requestId: 1, fallback: 0, message: final });
    expect(lines).toContainEqual({
      level: 'warn',
      message: expect.stringMatching(/^The request failed on the primary after the client's retries \(OverloadedError: 529 overloaded_error: Mock overloaded_error \(529\)\); sending it to fallback 0 \(Anthropic client, model 'claude-haiku-5-5'\)$/),
    });
    expect(runner.usage).toMatchObject({ input_tokens: 11, output_tokens: 4 });
    expect(runner.iteration).toBe(1);
    expect(runner.params.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
  });

  it("in a bundle that renamed the SDK's classes (Anthropic2, OverloadedError2): the warning names the error by its name, and no renamed client", async () => {
    const primary = await mockServer([{ error: { status: 529 } }]);
    const fallback = await mockServer([{ content: [text('From the fallback.')] }]);
    const { lines, logger } = captureLogger();
    const base = primary.client({ maxRetries: 0 });
    // As a bundler leaves them: another class name, the same behaviour (the SDK's errors keep their `name`).
    class OverloadedError2 extends OverloadedError {}
    const renamedErrors = { logLevel: 'warn', beta: { messages: { create: (body: never, options: never) => base.beta.messages.create(body, options).catch((error: OverloadedError) => Promise.reject(new OverloadedError2(529, error.error, undefined, error.headers))), stream: base.beta.messages.stream.bind(base.beta.messages) } } };
    const Anthropic2 = class extends (fallback.client().constructor as new (options: object) => object) {};
    await toolRunner(renamedErrors as never, { ...baseParams, thread: false }, { logger, fallback: [{ client: new Anthropic2({ baseURL: fallback.url, apiKey: 'k' }) as never }] });
    expect(lines.map((line) => line.message)).toContainEqual(expect.stringMatching(/\(OverloadedError: 529 .*\); sending it to fallback 0 \(its own client\)$/));
  });

  it('each turn starts at the primary again, with the whole history; a thread does not cross clients', async () => {
    const primary = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] },
      overloaded,
      { content: [text('Sunny in Paris and Rome.')] },
    ]);
    const fallback = await mockServer([{ content: [toolUse('get_weather', { location: 'Rome' }, 'toolu_2')] }]);
    const calls: string[] = [];
    const events: RunnerEvent[] = [];
    const runner = toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, tools: [weatherTool(calls)] }, {
      fallback: [{ client: fallback.client() }],
      onEvent: (event) => events.push(event),
    });
    const final = await runner;
    expect(final.content[0]).toMatchObject({ text: 'Sunny in Paris and Rome.' });
    expect(calls).toEqual(['Paris', 'Rome']);
    // Turn 1 on the primary's thread; turn 2 failed there and went to the fallback, whole history, no thread;
    // turn 3 is back on the primary, on a new thread with the whole history (its server never saw the fallback's reply).
    expect(primary.requests.map(threadKind)).toEqual(['create', 'continue', 'create']);
    expect(fallback.requests.map(threadKind)).toEqual(['none']);
    expect(wire(fallback.requests[0]!).body.messages).toHaveLength(3);
    expect(wire(primary.requests[2]!).body.messages).toHaveLength(5);
    expect(wire(primary.requests[2]!).body.model).toBe(baseParams.model);
    expect(events.filter((event) => event.type === 'request.end').map((event) => (event as { fallback?: number }).fallback)).toEqual([undefined, 0, undefined]);
    expect(runner.iteration).toBe(3);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('a fallback made with @anthropic-ai/vertex-sdk: served on its Vertex path, JSON and streamed', async () => {
    const primary = await mockServer([overloaded, overloaded]);
    const vertex = await mockServer([
      { content: [toolUse('get_weather', { location: 'Oslo' }, 'toolu_v')] },
      { content: [text('Cold in Oslo.')] },
    ]);
    const { lines, logger } = captureLogger();
    for (const stream of [false, true]) {
      if (stream) {
        primary.setSteps([overloaded]);
        vertex.setSteps([{ content: [text('Streamed from Vertex.')] }]);
      }
      const runner = toolRunner(primary.client({ maxRetries: 0, logLevel: 'warn' }), { ...baseParams, tools: [weatherTool()], stream, max_iterations: stream ? 1 : 2 }, {
        logger,
        fallback: [{ client: vertexClient(vertex.url, { maxRetries: 0 }), model: 'claude-sonnet-5-5@20260101' }],
      });
      let last;
      for await (const item of runner) last = stream ? await (item as { finalMessage(): Promise<unknown> }).finalMessage() : item;
      expect(last).toMatchObject({ model: 'claude-sonnet-5-5@20260101' });
    }
    // Turn 2 of the JSON run went to the primary first (each turn does), then to Vertex again.
    expect(vertex.requests.map((request) => request.path)).toEqual([
      '/v1/projects/offline-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-5-5@20260101:rawPredict',
      '/v1/projects/offline-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-5-5@20260101:rawPredict',
      '/v1/projects/offline-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-5-5@20260101:streamRawPredict',
    ]);
    expect(vertex.requests[0]!.headers['authorization']).toBe('Bearer offline-token');
    expect(wire(vertex.requests[1]!).body.messages).toHaveLength(3);
    expect(wire(vertex.requests[2]!).body.stream).toBe(true);
    expect(lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual(
      Array(3).fill(expect.stringContaining("sending it to fallback 0 (AnthropicVertex client, model 'claude-sonnet-5-5@20260101')")),
    );
  });

  it('an entry without a client uses the primary client with its overrides, for that entry only', async () => {
    const server = await mockServer([
      overloaded,
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { content: [text('Back on the primary model.')] },
    ]);
    await toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [weatherTool()] }, { fallback: [{ model: 'claude-haiku-5-5', stop_sequences: ['STOP'] }] });
    expect(server.requests.map((request) => wire(request).body.model)).toEqual([baseParams.model, 'claude-haiku-5-5', baseParams.model]);
    expect(server.requests.map(threadKind)).toEqual(['create', 'none', 'create']);
    expect(wire(server.requests[1]!).body.stop_sequences).toEqual(['STOP']);
    expect(wire(server.requests[2]!).body).not.toHaveProperty('stop_sequences');
  });

  it('all failing: the last error, nothing appended; iterating again starts at the primary and goes on', async () => {
    const primary = await mockServer([overloaded, { content: [text('Recovered.')] }]);
    const first = await mockServer([{ error: { status: 500 } }]);
    const second = await mockServer([{ error: { status: 429, retryAfter: 0.001 } }]);
    const events: RunnerEvent[] = [];
    const runner = toolRunner(primary.client({ maxRetries: 0 }), baseParams, {
      fallback: [{ client: first.client({ maxRetries: 0 }) }, { client: second.client({ maxRetries: 0 }) }],
      onEvent: (event) => events.push(event),
    });
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(RateLimitError);
    expect(runner.params.messages).toEqual(baseParams.messages);
    expect(events.find((event) => event.type === 'request.end')).toMatchObject({ fallback: 1, error: expect.any(RateLimitError) });
    const final = await runner;
    expect(final.content[0]).toMatchObject({ text: 'Recovered.' });
    expect([primary.requests.length, first.requests.length, second.requests.length]).toEqual([2, 1, 1]);
    expect(runner.usage.input_tokens).toBe(final.usage.input_tokens);
  });

  it('a failure that does not fall back ends the chain with that error: on the primary, or on a fallback', async () => {
    const primary = await mockServer([{ error: { status: 400, message: 'messages: bad' } }, overloaded]);
    const first = await mockServer([{ error: { status: 401 } }]);
    const second = await mockServer([]);
    const fallback = [{ client: first.client({ maxRetries: 0 }) }, { client: second.client() }];
    const runner = toolRunner(primary.client({ maxRetries: 0 }), baseParams, { fallback });
    await expect(runner.runUntilDone()).rejects.toMatchObject({ status: 400 });
    expect(first.requests).toHaveLength(0);
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(AuthenticationError);
    expect([primary.requests.length, first.requests.length, second.requests.length]).toEqual([2, 1, 0]);
  });

  it('a connection error after the retries falls back; an abort does not', async () => {
    const primary = await mockServer([{ disconnectAfterEvents: 0 }]);
    const fallback = await mockServer([{ content: [text('Connected.')] }]);
    const final = await toolRunner(primary.client({ maxRetries: 0 }), baseParams, { fallback: [{ client: fallback.client() }] });
    expect(final.content[0]).toMatchObject({ text: 'Connected.' });

    const slow = await mockServer([{ content: [text('late')], delayMs: 2_000 }]);
    const unused = await mockServer([]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const runner = toolRunner(slow.client({ maxRetries: 0 }), baseParams, { signal: controller.signal, fallback: [{ client: unused.client() }] });
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(APIUserAbortError);
    expect(unused.requests).toHaveLength(0);
  });

  it('OpenTelemetry: the request span carries the model that answered, and the fallback that did', async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    const primary = await mockServer([overloaded, { content: [text('Primary again.')] }]);
    const fallback = await mockServer([{ content: [toolUse('get_weather', { location: 'Paris' })] }]);
    await toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, tools: [weatherTool()] }, {
      onEvent: openTelemetry({ tracer }),
      fallback: [{ client: fallback.client(), model: 'claude-haiku-5-5' }],
    });
    const chats = exporter.getFinishedSpans().filter((span) => span.name.startsWith('chat'));
    expect(chats.map((span) => span.attributes['gen_ai.response.model'])).toEqual(['claude-haiku-5-5', baseParams.model]);
    expect(chats.map((span) => span.attributes['tool_runner.request.fallback'])).toEqual([0, undefined]);
  });

  it("OpenTelemetry: the spans name the provider of the client (a Vertex client's gcp.vertex_ai, as the SDK's own spans), a fallback's on the request it answered", async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('test');
    const primary = await mockServer([overloaded, { content: [text('Primary again.')] }]);
    const vertex = await mockServer([{ content: [toolUse('get_weather', { location: 'Paris' })] }, { content: [text('From Vertex.')] }]);
    await toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, tools: [weatherTool()] }, {
      onEvent: openTelemetry({ tracer }),
      fallback: [{ client: vertexClient(vertex.url), model: 'claude-sonnet-5-5@20260101' }],
    });
    await toolRunner(vertexClient(vertex.url), { ...baseParams, model: 'claude-sonnet-5-5@20260101' }, { onEvent: openTelemetry({ tracer }) });
    const provider = (span: { name: string; attributes: Record<string, unknown> }) => `${span.name.split(' ')[0]} ${String(span.attributes['gen_ai.provider.name'])}`;
    const ours = exporter.getFinishedSpans().filter((span) => /^(chat|invoke_agent) /.test(span.name));
    // The first run's two requests (the fallback answered the first), its run; the Vertex run's request and run.
    expect(ours.map(provider)).toEqual(['chat gcp.vertex_ai', 'chat anthropic', 'invoke_agent anthropic', 'chat gcp.vertex_ai', 'invoke_agent gcp.vertex_ai']);
  });

  it("an entry's output_config keeps the run's output format (options.output), which every request carries", async () => {
    const server = await mockServer([overloaded, { content: [text('{"city":"Lima"}')] }]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), baseParams, { output: z.object({ city: z.string() }), fallback: [{ model: 'claude-fallback', output_config: { effort: 'low' } }] });
    await runner;
    expect(runner.output).toEqual({ city: 'Lima' });
    const sent = wire(server.requests[1]!).body;
    expect(sent.model).toBe('claude-fallback');
    expect(sent.output_config).toEqual({ effort: 'low', format: wire(server.requests[0]!).body.output_config.format });
    expect(sent.output_config.format.type).toBe('json_schema');
  });

  it("an entry's output_config of null (plain JavaScript) keeps the run's output format too: the fallback's reply was asked for no format", async () => {
    const server = await mockServer([overloaded, { content: [text('{"city":"Lima"}')] }]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), baseParams, { output: z.object({ city: z.string() }), fallback: [{ model: 'claude-fallback', output_config: null as never }] });
    await runner;
    expect(runner.output).toEqual({ city: 'Lima' });
    expect(wire(server.requests[1]!).body.output_config).toEqual(wire(server.requests[0]!).body.output_config);
  });

  it("an entry's own format beside options.output: an error at construction, not in an outage (the SDK's refusal of output_format beside output_config.format, or replaced in silence)", async () => {
    const server = await mockServer([]);
    const format = { type: 'json_schema', schema: { type: 'object', properties: { other: { type: 'string' } } } } as const;
    const output = z.object({ city: z.string() });
    for (const entry of [{ model: 'claude-fallback', output_format: format }, { model: 'claude-fallback', output_config: { effort: 'low', format } }] as const) {
      expect(() => toolRunner(server.client(), baseParams, { output, fallback: [entry as never] })).toThrow(
        "toolRunner: options.fallback[0]: options.output and a format of the entry's own (output_config.format or output_format) were both given; keep options.output",
      );
      // Without options.output the entry's format is the entry's to give.
      expect(() => toolRunner(server.client(), baseParams, { fallback: [entry as never] })).not.toThrow();
    }
    expect(() => toolRunner(server.client(), baseParams, { output, fallback: [{ model: 'claude-fallback', output_config: { effort: 'low' }, output_format: null }] })).not.toThrow();
    expect(server.requests).toHaveLength(0);
  });

  it("the answer at a limit (onLimit: 'answer') keeps tool_choice none on a fallback entry that sets its own; the entry's is sent on the run's turns", async () => {
    const primary = await mockServer([overloaded, { content: [toolUse('get_weather', { location: 'Paris' })] }, overloaded, { content: [text('Sunny, it seems.')] }]);
    const runner = toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, tools: [weatherTool()], max_iterations: 1 }, {
      onLimit: 'answer',
      fallback: [{ model: 'claude-fallback', tool_choice: { type: 'any' } }],
    });
    await runner;
    expect(runner.stoppedBy).toBe('max_iterations');
    const bodies = primary.requests.map((request) => wire(request).body);
    expect(bodies.map((body) => [body.model, body.tool_choice])).toEqual([
      [baseParams.model, undefined],
      ['claude-fallback', { type: 'any' }],
      [baseParams.model, { type: 'none' }],
      ['claude-fallback', { type: 'none' }],
    ]);
    expect(runner.params.messages.at(-1)!.content).toEqual([expect.objectContaining({ text: 'Sunny, it seems.' })]);
  });

  it('a compaction summary request falls back too', async () => {
    const primary = await mockServer([{ content: [toolUse('get_weather', { location: 'Paris' })], usage: { input_tokens: 50_000 } }, overloaded, { content: [text('Done.')] }]);
    const fallback = await mockServer([{ content: [text('<summary>Asked for the weather in Paris.</summary>')], usage: { input_tokens: 7 } }]);
    const events: RunnerEvent[] = [];
    const runner = toolRunner(
      primary.client({ maxRetries: 0 }),
      { ...baseParams, tools: [weatherTool()], compactionControl: { enabled: true, contextTokenThreshold: 10_000 } },
      // The entry's tool_choice is for the run's turns: the summary keeps the runner's 'none'.
      { fallback: [{ client: fallback.client(), tool_choice: { type: 'any' } }], onEvent: (event) => events.push(event) },
    );
    await runner;
    expect(wire(fallback.requests[0]!).messages.at(-1)?.content).toMatch(/^You have been working on the task above/);
    expect(wire(fallback.requests[0]!).body.tool_choice).toEqual({ type: 'none' });
    const summaryEnd = events.find((event) => event.type === 'request.end' && event.requestId === 2);
    expect(summaryEnd).toMatchObject({ fallback: 0 });
    expect(wire(primary.requests[2]!).body.messages[0].content[0].text).toContain('Asked for the weather in Paris.');
    const final = await runner;
    expect(runner.usage.input_tokens).toBe(50_000 + 7 + final.usage.input_tokens);
  });

  it("a summary request that falls back goes without the entry's stop_sequences, context_management and output format, as without the run's", async () => {
    const primary = await mockServer([{ content: [toolUse('get_weather', { location: 'Paris' })], usage: { input_tokens: 50_000 } }, overloaded, { content: [text('Done.')] }]);
    const fallback = await mockServer([{ content: [text('<summary>Asked for the weather in Paris.</summary>')] }]);
    const edits = { edits: [{ type: 'clear_tool_uses_20250919' }] };
    const format = { type: 'json_schema', schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false } };
    await toolRunner(
      primary.client({ maxRetries: 0 }),
      { ...baseParams, tools: [weatherTool()], compactionControl: { enabled: true, contextTokenThreshold: 10_000 } },
      { fallback: [{ client: fallback.client(), stop_sequences: ['Observation:'], context_management: edits, output_config: { effort: 'low', format } } as never] },
    );
    const body = wire(fallback.requests[0]!).body;
    expect(body.messages.at(-1)?.content).toMatch(/^You have been working on the task above/);
    expect(body).not.toHaveProperty('stop_sequences');
    expect(body).not.toHaveProperty('context_management');
    expect(body.output_config).toEqual({ effort: 'low' });
  });

  it("a summary request that falls back: an entry's model takes the place of compactionControl.model, an entry without one keeps it", async () => {
    const primary = await mockServer([{ content: [toolUse('get_weather', { location: 'Paris' })], usage: { input_tokens: 50_000 } }, overloaded, { content: [text('Done.')] }]);
    const fallback = await mockServer([overloaded, { content: [text('<summary>Asked for the weather in Paris.</summary>')] }]);
    await toolRunner(
      primary.client({ maxRetries: 0 }),
      { ...baseParams, tools: [weatherTool()], compactionControl: { enabled: true, contextTokenThreshold: 10_000, model: 'claude-summaries' } },
      { fallback: [{ client: fallback.client({ maxRetries: 0 }) }, { client: fallback.client(), model: 'claude-haiku-5-5' }] },
    );
    expect(wire(primary.requests[1]!).body.model).toBe('claude-summaries');
    expect(fallback.requests.map((request) => wire(request).body.model)).toEqual(['claude-summaries', 'claude-haiku-5-5']);
  });

  it("a summary cut off on a fallback entry: the warning names the entry's model and the tokens it wrote, not the run's max_tokens", async () => {
    const primary = await mockServer([{ content: [toolUse('get_weather', { location: 'Paris' })], usage: { input_tokens: 50_000 } }, overloaded, { content: [text('Done.')] }]);
    const fallback = await mockServer([{ content: [text('<summary>Asked for')], stop_reason: 'max_tokens', usage: { output_tokens: 64 } }]);
    const { lines, logger } = captureLogger();
    await toolRunner(
      primary.client({ maxRetries: 0, logger, logLevel: 'warn' }),
      { ...baseParams, max_tokens: 4096, tools: [weatherTool()], compactionControl: { enabled: true, contextTokenThreshold: 10_000 } },
      { fallback: [{ client: fallback.client(), model: 'claude-haiku-5-5', max_tokens: 64 }] },
    );
    expect(wire(fallback.requests[0]!).body.max_tokens).toBe(64);
    const warning = lines.find((line) => line.message.startsWith('Compaction: the summary request'))?.message;
    expect(warning).toMatch(/^Compaction: the summary request was cut off at max_tokens \(64 tokens from claude-haiku-5-5\)/);
    expect(warning).not.toContain('4096');
  });
});

describe("a fallback's container", () => {
  it("is not adopted by the run: the primary's next request names none, nor a snapshot taken in the fallback reply's onMessage (a container of another account)", async () => {
    const primary = await mockServer([{ error: { status: 529 } }, { content: [text('done')] }]);
    const fallback = await mockServer([{ content: [toolUse('get_weather', { location: 'Paris' })], container: { id: 'container_on_fallback_account' } as never }]);
    const snapshots: RunnerSnapshot[] = [];
    const runner = toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, tools: [weatherTool()] }, {
      fallback: [{ client: fallback.client(), container: 'container_on_fallback_account' }],
      hooks: { onMessage: () => void snapshots.push(runner.toJSON()) },
    });
    await runner;
    expect(wire(fallback.requests[0]!).body.container).toBe('container_on_fallback_account');
    expect(wire(primary.requests[1]!).body.container).toBeUndefined();
    expect((runner.params as { container?: unknown }).container).toBeUndefined();
    expect((snapshots[0]!.params as { container?: unknown }).container).toBeUndefined();
  });

  // The run's container is of its client's account: named to another client it is refused (a 4xx, which does not fall
  // back), so a run that had run code could not fall back at all, the outage ending it.
  it("is not the run's either: an entry with a client of its own is sent no container id of the run's (one the primary's reply chose, one the params name), a config without an id as it is", async () => {
    const steps = (container: string) => [{ content: [toolUse('get_weather', { location: 'Paris' })], container: { id: container } as never }, { error: { status: 529 } }, { content: [text('done')] }];
    for (const container of [undefined, 'container_named', { skills: [{ type: 'anthropic', skill_id: 'xlsx' }] }]) {
      const primary = await mockServer(steps('container_on_primary_account'));
      const fallback = await mockServer([{ content: [text('answered by the fallback')] }]);
      const runner = toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, tools: [weatherTool()], ...(container && { container }) } as typeof baseParams, {
        fallback: [{ client: fallback.client() }],
      });
      await runner;
      expect(wire(primary.requests[1]!).body.container).toEqual(typeof container === 'object' ? { ...container, id: 'container_on_primary_account' } : (container ?? 'container_on_primary_account'));
      expect(wire(fallback.requests[0]!).body.container).toEqual(typeof container === 'object' ? container : undefined);
      // The run's next request names its container again.
      expect((runner.params as { container?: unknown }).container).toEqual(wire(primary.requests[1]!).body.container);
    }
  });

  // A copy of the run's client (`client.withOptions({ … })`, for retries or a timeout of the entry's own, which an entry
  // may not set) sends with the same key to the same place: the same account, whose container it can use. It was sent
  // none, so the fallback's code ran without the files of the run's, and its reply's container was not the run's.
  it("an entry whose client is a copy of the run's (the same key and base URL): its reply's container is the run's, and it is sent the run's", async () => {
    const server = await mockServer([
      { error: { status: 529 } },
      { content: [toolUse('get_weather', { location: 'Paris' })], container: { id: 'container_shared' } as never },
      { error: { status: 529 } },
      { content: [text('done')] },
    ]);
    const client = server.client({ maxRetries: 0 });
    const runner = toolRunner(client, { ...baseParams, tools: [weatherTool()] }, { fallback: [{ client: client.withOptions({ maxRetries: 1 }), model: 'claude-other' }] });
    await runner;
    expect(server.requests.map((request) => wire(request).body.model)).toEqual([baseParams.model, 'claude-other', baseParams.model, 'claude-other']);
    expect(server.requests.map((request) => wire(request).body.container)).toEqual([undefined, undefined, 'container_shared', 'container_shared']);
    // Another key to the same place is another account, for all the runner can tell.
    const other = await mockServer([{ content: [toolUse('get_weather', { location: 'Paris' })], container: { id: 'container_run' } as never }, { error: { status: 529 } }, { content: [text('done')] }]);
    const run = other.client({ maxRetries: 0 });
    await toolRunner(run, { ...baseParams, tools: [weatherTool()] }, { fallback: [{ client: run.withOptions({ apiKey: 'another-key' }) }] });
    expect(other.requests.map((request) => wire(request).body.container)).toEqual([undefined, 'container_run', undefined]);
  });

  it("an entry sending with the run's client, naming no container: the container the server chose is the run's", async () => {
    const server = await mockServer([{ error: { status: 529 } }, { content: [toolUse('get_weather', { location: 'Paris' })], container: { id: 'container_shared' } as never }, { content: [text('done')] }]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [weatherTool()] }, { fallback: [{ model: 'claude-other' }] });
    await runner;
    expect(wire(server.requests[2]!).body.container).toBe('container_shared');
  });

  // An entry given the run's very client (`fallback: [{ client, model }]`) sends with the run's client too: the container
  // was taken for another account's, and the primary's next request started a new one (the files of the code run were gone).
  it("an entry given the run's own client (the same object): the container the server chose is the run's, in its snapshot too", async () => {
    const server = await mockServer([{ error: { status: 529 } }, { content: [toolUse('get_weather', { location: 'Paris' })], container: { id: 'container_shared' } as never }, { content: [text('done')] }]);
    const client = server.client({ maxRetries: 0 });
    const snapshots: RunnerSnapshot[] = [];
    const runner = toolRunner(client, { ...baseParams, tools: [weatherTool()] }, { fallback: [{ client, model: 'claude-other' }], hooks: { onMessage: () => void snapshots.push(runner.toJSON()) } });
    await runner;
    expect(wire(server.requests[2]!).body.container).toBe('container_shared');
    expect((snapshots[0]!.params as { container?: unknown }).container).toBe('container_shared');
  });
});

describe('a streamed turn falls back only before its first event', () => {
  const failuresBeforeTheFirstEvent = {
    'a 529 after the retries': overloaded,
    'an SSE error event before any other': { content: [text('never sent')], error: { status: 529, afterEvents: 0 } },
    'the connection dropped after the headers': { content: [text('never sent')], disconnectAfterEvents: 0 },
  };
  for (const [name, failure] of Object.entries(failuresBeforeTheFirstEvent)) {
    it(`${name}: the yielded stream carries the fallback's reply, event by event`, async () => {
      const primary = await mockServer([failure]);
      const fallback = await mockServer([{ content: [text('Streamed by the fallback, in several pieces.')], chunkSize: 8 }]);
      const runner = toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, stream: true }, { fallback: [{ client: fallback.client() }] });
      const deltas: string[] = [];
      for await (const stream of runner) {
        for await (const event of stream) {
          if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') deltas.push(event.delta.text);
        }
      }
      expect(deltas.length).toBeGreaterThan(3);
      expect(deltas.join('')).toBe('Streamed by the fallback, in several pieces.');
      expect(runner.params.messages).toHaveLength(2);
      expect(fallback.requests).toHaveLength(1);
    });
  }

  const failuresMidStream = {
    'an SSE error event after some events': { content: [text('partial text that breaks')], error: { status: 529, afterEvents: 4 } },
    'the connection dropped after some events': { content: [text('partial text that breaks')], disconnectAfterEvents: 4 },
  };
  for (const [name, failure] of Object.entries(failuresMidStream)) {
    it(`${name}: no fallback (the caller may have shown the text); the error is the stream's, nothing appended`, async () => {
      const primary = await mockServer([failure]);
      const fallback = await mockServer([]);
      const runner = toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, stream: true }, { fallback: [{ client: fallback.client() }] });
      await expect(runner.runUntilDone()).rejects.toBeInstanceOf(Error);
      expect(fallback.requests).toHaveLength(0);
      expect(runner.params.messages).toEqual(baseParams.messages);
    });
  }

  it('with runToolsEagerly, a call of the fallback reply starts before its stream ends, and runs once', async () => {
    const primary = await mockServer([overloaded, { content: [text('Done.')] }]);
    const fallback = await mockServer([{ content: [toolUse('get_weather', { location: 'Lima' }), text('…and some more text after the call.')], eventDelayMs: 5 }]);
    const calls: string[] = [];
    await toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, tools: [weatherTool(calls)], runToolsEagerly: true }, { fallback: [{ client: fallback.client() }] });
    expect(calls).toEqual(['Lima']);
  });
});

describe('a streamed turn that may fall back (or go again after an overflow) stops when its stream is left', () => {
  const configs: Record<string, ToolRunnerOptions> = { 'a fallback': { fallback: [{ model: 'claude-fallback' }] }, 'compactionControl enabled': {} };
  for (const [name, options] of Object.entries(configs)) {
    const compaction = name === 'compactionControl enabled' ? { compactionControl: { enabled: true } } : {};
    it(`with ${name}: a break stops the request, and no call of the reply starts after it (runToolsEagerly)`, async () => {
      const server = await mockServer([{ content: [toolUse('get_weather', { location: 'Lima' }), toolUse('get_weather', { location: 'Oslo' }), toolUse('get_weather', { location: 'Rome' })], eventDelayMs: 40 }]);
      const calls: string[] = [];
      const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, ...compaction, tools: [weatherTool(calls)], stream: true, runToolsEagerly: true }, options);
      for await (const _stream of runner) break;
      expect(runner.stoppedBy).toBe('break');
      await sleep(300);
      expect(calls).toEqual([]);
    });

    it(`with ${name}: stream.abort() ends a stream that stalled`, async () => {
      const server = await mockServer([{ content: [text('A reply that stalls half way.')], chunkSize: 4, stallAfterEvents: 3 }]);
      const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, ...compaction, stream: true }, options);
      for await (const stream of runner) {
        setTimeout(() => stream.abort(), 50);
        await expect(stream.finalMessage()).rejects.toThrow();
        break;
      }
      expect(runner.stoppedBy).toBe('break');
      expect(runner.params.messages).toEqual(baseParams.messages);
    });
  }
});

describe("a run over an SDK thread (toolRunner(thread, settings)) with fallbacks", () => {
  for (const [name, settings, options] of [
    ['streamed, with a fallback', { stream: true }, { fallback: [{ model: 'claude-fallback' }] }],
    ['streamed, with compactionControl', { stream: true, compactionControl: { enabled: true } }, {}],
    ['runToolsEagerly, with a fallback', { runToolsEagerly: true }, { fallback: [{ model: 'claude-fallback' }] }],
  ] as const) {
    it(`${name}: its turns stream over the thread`, async () => {
      const server = await mockServer([{ content: [toolUse('get_weather', { location: 'Lima' })] }, { content: [text('Sunny.')] }]);
      const calls: string[] = [];
      const thread = server.client({ maxRetries: 0 }).beta.messages.thread({ ...baseParams, tools: [weatherTool(calls)] } as never);
      const runner = toolRunner(thread, settings as never, options as ToolRunnerOptions);
      const final = await runner.runUntilDone();
      expect(final.content[0]).toMatchObject({ text: 'Sunny.' });
      expect(calls).toEqual(['Lima']);
      expect(server.requests.map((request) => [request.body.stream, wire(request).body.thread?.type])).toEqual([
        [true, 'create'],
        [true, 'continue'],
      ]);
    });
  }

  it('streamed with a fallback: stream.abort() ends a stalled turn over the thread', async () => {
    const server = await mockServer([{ content: [text('A reply that stalls half way.')], chunkSize: 4, stallAfterEvents: 3 }]);
    const thread = server.client({ maxRetries: 0 }).beta.messages.thread({ ...baseParams } as never);
    const runner = toolRunner(thread, { stream: true }, { fallback: [{ model: 'claude-fallback' }] });
    for await (const stream of runner) {
      setTimeout(() => stream.abort(), 50);
      await expect(stream.finalMessage()).rejects.toThrow();
      break;
    }
    expect(runner.stoppedBy).toBe('break');
  });

  it("an entry without a client goes to the thread's client, with the whole history and no thread", async () => {
    const server = await mockServer([{ content: [toolUse('get_weather', { location: 'Lima' })] }, overloaded, { content: [text('Sunny.')] }]);
    const calls: string[] = [];
    const thread = server.client({ maxRetries: 0 }).beta.messages.thread({ ...baseParams, tools: [weatherTool(calls)] } as never);
    const final = await toolRunner(thread, {}, { fallback: [{ model: 'claude-fallback' }] });
    expect(final.content[0]).toMatchObject({ text: 'Sunny.' });
    const answered = server.requests[2]!;
    expect(answered.body.model).toBe('claude-fallback');
    expect(answered.body.thread).toBeUndefined();
    expect(historyProblems(answered.messages)).toEqual([]);
    expect(answered.messages).toHaveLength(3);
  });
});

describe('options.fallback is checked at construction', () => {
  const server = { beta: { messages: { create: () => Promise.reject(new Error('unused')), stream: () => ({}) as never } } };
  const cases: Array<[string, unknown, RegExp]> = [
    ['not an array', { model: 'x' }, /options\.fallback must be an array/],
    ['an entry that is not an object', ['claude-haiku-5-5'], /options\.fallback\[0\] must be an object/],
    ['a client without messages', [{ client: {} }], /options\.fallback\[0\]\.client must be an Anthropic client/],
    ['an empty model', [{ model: '' }], /options\.fallback\[0\]\.model must be a non-empty string/],
    ['messages', [{ messages: [] }], /options\.fallback\[0\]\.messages: .*not 'messages' \(the whole history goes to every entry\)/],
    ['stream', [{ model: 'a' }, { stream: true }], /options\.fallback\[1\]\.stream/],
    ['tools', [{ tools: [] }], /not 'tools'/],
    // A request option or an option of the runner would be sent as a field of the request, refused by the API in an outage.
    ['a request option', [{ model: 'a', timeout: 5000 }], /options\.fallback\[0\]\.timeout: `timeout` is an option of the runner, not a request param/],
    ['maxRetries', [{ maxRetries: 1 }], /fallback\[0\]\.maxRetries: `maxRetries` is an option of the runner/],
    ['an option of the runner', [{ budget: { maxTokens: 10 } }], /fallback\[0\]\.budget: `budget` is an option of the runner/],
    // Found only in an outage otherwise: a request the API refuses, or no fallback at all.
    ['a misspelt param', [{ modle: 'claude-haiku-5-5' }], /^toolRunner: options\.fallback\[0\]: unknown param 'modle'\. Did you mean 'model'\?$/],
    ['a param in camel case', [{ model: 'a', maxTokens: 100 }], /fallback\[0\]: unknown param 'maxTokens'\. Did you mean 'max_tokens'\?/],
    ['a param of another case', [{ Model: 'a' }], /fallback\[0\]: unknown param 'Model'\. Did you mean 'model'\?/],
    ['a misspelt client', [{ clinet: {} }], /^toolRunner: options\.fallback\[0\]: unknown key 'clinet'\. Did you mean 'client'\?$/],
    ['a hole in the array', [, { model: 'a' }], /^toolRunner: options\.fallback\[0\] must be an object: \{ client\?, model\?, \.\.\.params \}, got undefined$/],
    ['a client whose messages cannot create', [{ client: { messages: true } }], /fallback\[0\]\.client must be an Anthropic client/],
    ['max_tokens that is no whole number', [{ max_tokens: 'abc' }], /fallback\[0\]\.max_tokens must be a whole number of at least 1, got "abc"/],
    ['max_tokens of 0', [{ max_tokens: 0 }], /fallback\[0\]\.max_tokens must be a whole number of at least 1, got 0/],
    ['system that is no text', [{ system: 5 }], /fallback\[0\]\.system must be a string or an array of text blocks, got 5/],
  ];
  for (const [name, fallback, message] of cases) {
    it(name, () => {
      expect(() => toolRunner(server, baseParams, { fallback: fallback as never })).toThrow(message);
    });
  }
  it('a param the API may take that this version does not know (near none it knows) passes', () => {
    expect(() => toolRunner(server, baseParams, { fallback: [{ model: 'a', some_new_param: true } as never] })).not.toThrow();
  });
});

describe('a fallback param given as undefined', () => {
  it("keeps the run's (model: process.env.FALLBACK_MODEL, unset, and the others): laid over the body it removed it", async () => {
    const primary = await mockServer([overloaded]);
    const backup = await mockServer([{ content: [text('{"answer":"42"}')] }]);
    const output = z.object({ answer: z.string() });
    const entry = { client: backup.client({ maxRetries: 0 }), model: undefined, max_tokens: undefined, system: undefined, output_config: undefined };
    const runner = toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, system: 'You are terse.' }, { fallback: [entry], output });
    await runner;
    expect(runner.output).toEqual({ answer: '42' });
    const sent = wire(backup.requests[0]!).body;
    expect([sent.model, sent.max_tokens, sent.system, sent.output_config?.format?.type]).toEqual([baseParams.model, baseParams.max_tokens, 'You are terse.', 'json_schema']);
  });
});
