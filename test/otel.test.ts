import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { SpanStatusCode, context } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { type AnyTool, type RunnerEvent, type ToolRunnerOptions, agentTool, tool, toolRunner } from 'tool-runner';
import { openTelemetry } from 'tool-runner/otel';
import { text, toolUse } from 'tool-runner/testing';
import { sseServer } from './fixtures/sse-server.js';
import { baseParams, mockServer, sleep } from './helpers.js';

function tracing() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, provider, tracer: provider.getTracer('test') };
}

const weather = tool({ name: 'get_weather', inputSchema: z.object({ city: z.string() }), run: ({ city }) => `sunny in ${city}` });
const broken = tool({
  name: 'broken',
  inputSchema: z.object({}),
  run: () => {
    throw new Error('offline');
  },
});

describe('OpenTelemetry spans (GenAI semantic conventions)', () => {
  it('a call that runs on while a hook fails about another ends its execute_tool span in the pass that iterates again', async () => {
    const { exporter, tracer } = tracing();
    const slow = tool({ name: 'slow', inputSchema: z.object({}), run: async () => (await sleep(200), 'done') });
    const server = await mockServer([{ content: [toolUse('slow', {}, 'toolu_s'), toolUse('get_weather', { city: 'x' }, 'toolu_w')] }, { content: [text('ok')] }]);
    let failedOnce = false;
    const onToolResult = (_result: unknown, call: { id: string }) => {
      if (call.id !== 'toolu_w' || failedOnce) return;
      failedOnce = true;
      throw new Error('audit log down');
    };
    const runner = toolRunner(server.client(), { ...baseParams, tools: [slow, weather] }, { onEvent: openTelemetry({ tracer }), hooks: { onToolResult } });
    await expect(runner.runUntilDone()).rejects.toThrow(/audit log down/);
    await runner.runUntilDone();
    const names = exporter.getFinishedSpans().map((span) => span.name);
    expect(names.filter((name) => name === 'execute_tool slow')).toHaveLength(1);
    expect(names.filter((name) => name === 'execute_tool get_weather')).toHaveLength(2);
  });

  it('the API key appears on no span when fetch cannot send it (a line break in it): the error that quotes the header is recorded without it', async () => {
    // Two lines of a key file read whole: fetch refuses the header, and its error (message and stack) quotes the value, key and all.
    const key = 'sk-ant-api03-never-show-me-0123456789\nsk-ant-api03-nor-me';
    const server = await mockServer([{ content: [text('never sent')] }]);
    for (const captureContent of [false, true]) {
      const { exporter, tracer } = tracing();
      const runner = toolRunner(server.client({ apiKey: key, maxRetries: 0 }), baseParams, { onEvent: openTelemetry({ tracer, captureContent }) });
      await expect(runner.runUntilDone()).rejects.toThrow(/never-show-me/);
      const spans = exporter.getFinishedSpans();
      expect(spans.map((span) => [span.name, span.status.code])).toEqual([
        ['chat claude-sonnet-5-5', SpanStatusCode.ERROR],
        ['invoke_agent tool-runner', SpanStatusCode.ERROR],
      ]);
      const shown = JSON.stringify(spans.map((span) => [span.status, span.attributes, span.events.map((each) => each.attributes)]));
      expect(shown).toContain('(the value, not shown) is an invalid header value');
      expect(shown).not.toContain('never-show-me');
    }
    expect(server.requests).toHaveLength(0);
  });

  it('a span for the run, each request and each tool call, linked as parent and children', async () => {
    const { exporter, tracer } = tracing();
    const server = await mockServer([
      { content: [toolUse('get_weather', { city: 'Paris' }, 'toolu_w'), toolUse('broken', {}, 'toolu_b')], usage: { input_tokens: 12, output_tokens: 7 } },
      { content: [text('Sunny.')], usage: { input_tokens: 30, output_tokens: 3 } },
    ]);
    await toolRunner(server.client(), { ...baseParams, tools: [weather, broken] }, { onEvent: openTelemetry({ tracer, agentName: 'weather-bot' }) });
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name).sort()).toEqual(
      ['chat claude-sonnet-5-5', 'chat claude-sonnet-5-5', 'execute_tool broken', 'execute_tool get_weather', 'invoke_agent weather-bot'].sort(),
    );
    const run = spans.find((span) => span.name.startsWith('invoke_agent'))!;
    for (const span of spans.filter((s) => s !== run)) {
      expect(span.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
      expect(span.spanContext().traceId).toBe(run.spanContext().traceId);
    }
    const [first] = spans.filter((span) => span.name.startsWith('chat'));
    expect(first!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'claude-sonnet-5-5',
      'gen_ai.request.max_tokens': 1024,
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.response.finish_reasons': ['tool_use'],
    });
    expect(first!.attributes['gen_ai.input.messages']).toBeUndefined();
    const ok = spans.find((span) => span.name === 'execute_tool get_weather')!;
    expect(ok.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'get_weather', 'gen_ai.tool.call.id': 'toolu_w' });
    expect(ok.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(ok.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    const failing = spans.find((span) => span.name === 'execute_tool broken')!;
    // The result's text is content: not on the span unless captured.
    expect(failing.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(failing.attributes['error.type']).toBe('tool_error');
    expect(run.status.code).toBe(SpanStatusCode.OK);
  });

  it('captures message content, tool arguments and results only when asked', async () => {
    const { exporter, tracer } = tracing();
    const server = await mockServer([{ content: [toolUse('get_weather', { city: 'Rome' })] }, { content: [text('Sunny.')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [weather] }, { onEvent: openTelemetry({ tracer, captureContent: true }) });
    const failing = await mockServer([{ content: [toolUse('broken', {})] }, { content: [text('Sorry.')] }]);
    await toolRunner(failing.client(), { ...baseParams, tools: [broken] }, { onEvent: openTelemetry({ tracer, captureContent: true }) });
    const spans = exporter.getFinishedSpans();
    expect(spans.find((span) => span.name === 'execute_tool broken')!.status).toEqual({ code: SpanStatusCode.ERROR, message: 'Error: offline' });
    const chat = spans.find((span) => span.name.startsWith('chat'))!;
    expect(JSON.parse(String(chat.attributes['gen_ai.input.messages']))).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] }]);
    expect(String(chat.attributes['gen_ai.output.messages'])).toContain('get_weather');
    const toolSpan = spans.find((span) => span.name === 'execute_tool get_weather')!;
    expect(toolSpan.attributes['gen_ai.tool.call.arguments']).toBe('{"city":"Rome"}');
    expect(toolSpan.attributes['gen_ai.tool.call.result']).toBe('"sunny in Rome"');
  });

  it.each([false, true])("a request rejected as too long, which the run compacts for and sends again: its span's error says so, not to shorten the history (stream: %s)", async (stream) => {
    const { exporter, tracer } = tracing();
    const big = tool({ name: 'big', inputSchema: z.object({}), run: () => 'x'.repeat(4000) });
    const server = await mockServer({ contextWindow: 1000, steps: [{ content: [toolUse('big', {})] }, { content: [text('<summary>A big result.</summary>')] }, { content: [text('Done.')] }] });
    const runner = toolRunner(server.client(), { ...baseParams, stream, tools: [big], compactionControl: { enabled: true } }, { onEvent: openTelemetry({ tracer }) });
    await runner;
    const chats = exporter.getFinishedSpans().filter((span) => span.name.startsWith('chat '));
    expect(chats.map((chat) => [chat.attributes['tool_runner.request.purpose'], chat.status.code])).toEqual([
      ['turn', SpanStatusCode.UNSET],
      ['turn', SpanStatusCode.ERROR],
      ['compaction', SpanStatusCode.UNSET],
      ['turn', SpanStatusCode.UNSET],
    ]);
    expect(chats[1]!.attributes['error.type']).toBe('ContextOverflowError');
    expect(chats[1]!.status.message).toMatch(/^400 .*prompt is too long: \d+ tokens > 1000 maximum.*\. compactionControl is on: the runner tries to compact the history and send the request again \(the requests that follow, and the run, tell whether it did\)\.$/);
    expect(runner.stoppedBy).toBe('model');
  });

  it("a request rejected as too long whose compaction then fails (its summary request too long too): its span does not say the request was sent again; the run's says what failed", async () => {
    const { exporter, tracer } = tracing();
    // A large tool input: the summary request does not cut it, and is too long too.
    const writeFile = tool({ name: 'write_file', inputSchema: z.object({ text: z.string() }), run: () => 'written' });
    const server = await mockServer({ contextWindow: 1000, steps: [{ content: [toolUse('write_file', { text: 'Jack is a dull boy. '.repeat(300) })] }, { content: [text('never')] }] });
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [writeFile], compactionControl: { enabled: true } }, { onEvent: openTelemetry({ tracer }) });
    await expect(runner.runUntilDone()).rejects.toThrow(/its summary request was too long too/);
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => [span.name, span.attributes['tool_runner.request.purpose'], span.status.code])).toEqual([
      ['chat claude-sonnet-5-5', 'turn', SpanStatusCode.UNSET],
      ['execute_tool write_file', undefined, SpanStatusCode.UNSET],
      ['chat claude-sonnet-5-5', 'turn', SpanStatusCode.ERROR],
      ['chat claude-sonnet-5-5', 'compaction', SpanStatusCode.ERROR],
      ['invoke_agent tool-runner', undefined, SpanStatusCode.ERROR],
    ]);
    const rejected = spans[2]!.status.message!;
    expect(rejected).not.toMatch(/sends the request again/);
    expect(rejected).toMatch(/tries to compact the history and send the request again \(the requests that follow, and the run, tell whether it did\)\.$/);
    expect(spans[4]!.status.message).toMatch(/compactionControl is on, but its summary request was too long too/);
    expect(server.requests).toHaveLength(3);
  });

  it("a call that stops to wait for approval: its execute_tool span ends with tool_runner.tool.pending_approval; decided, it runs under a span of its own", async () => {
    const { exporter, tracer } = tracing();
    const risky = tool({ name: 'risky', inputSchema: z.object({}), needsApproval: true, run: () => 'done' });
    const server = await mockServer([{ content: [toolUse('risky', {}, 'toolu_r')] }, { content: [text('Finished.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [risky] }, { onEvent: openTelemetry({ tracer }) });
    await runner;
    runner.approve('toolu_r');
    await runner;
    const calls = exporter.getFinishedSpans().filter((span) => span.name === 'execute_tool risky');
    expect(calls.map((span) => [span.attributes['tool_runner.tool.pending_approval'], span.status.code])).toEqual([
      [true, SpanStatusCode.UNSET],
      [undefined, SpanStatusCode.UNSET],
    ]);
  });

  it('a failed request marks its span and the run span with the error', async () => {
    const { exporter, tracer } = tracing();
    const server = await mockServer([{ error: { status: 400, message: 'bad' } }]);
    await expect(toolRunner(server.client(), baseParams, { onEvent: openTelemetry({ tracer }) }).runUntilDone()).rejects.toThrow();
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => [span.name, span.status.code, span.attributes['error.type']])).toEqual([
      ['chat claude-sonnet-5-5', SpanStatusCode.ERROR, 'BadRequestError'],
      ['invoke_agent tool-runner', SpanStatusCode.ERROR, 'BadRequestError'],
    ]);
  });

  it("a call whose hook throws ends its span with the error; a break in the loop body is a cancellation, not a failed request", async () => {
    const { exporter, tracer } = tracing();
    const server = await mockServer([{ content: [toolUse('get_weather', { city: 'Oslo' }, 'toolu_w')] }, { content: [text('A long reply that the loop body leaves early.')] }]);
    const hooks = {
      onToolCall: () => {
        throw new Error('policy service down');
      },
    };
    await expect(toolRunner(server.client(), { ...baseParams, tools: [weather] }, { onEvent: openTelemetry({ tracer }), hooks }).runUntilDone()).rejects.toThrow(/policy service down/);
    const toolSpan = exporter.getFinishedSpans().find((span) => span.name === 'execute_tool get_weather')!;
    expect([toolSpan.status.code, toolSpan.attributes['error.type']]).toEqual([SpanStatusCode.ERROR, 'HookError']);
    exporter.reset();
    // An onToolResult hook that throws: the call ends once, with the hook's error.
    const ends: unknown[] = [];
    const results = await mockServer([{ content: [toolUse('get_weather', { city: 'Oslo' }, 'toolu_w')] }]);
    const onResult = {
      onToolResult: () => {
        throw new Error('audit log down');
      },
    };
    const listeners = [openTelemetry({ tracer }), (event: RunnerEvent) => event.type === 'tool.end' && ends.push(event.error ? 'error' : 'result')];
    await expect(toolRunner(results.client(), { ...baseParams, tools: [weather] }, { onEvent: listeners, hooks: onResult }).runUntilDone()).rejects.toThrow(/audit log down/);
    expect(ends).toEqual(['error']);
    const resultSpan = exporter.getFinishedSpans().find((span) => span.name === 'execute_tool get_weather')!;
    expect([resultSpan.status.code, resultSpan.attributes['error.type']]).toEqual([SpanStatusCode.ERROR, 'HookError']);
    exporter.reset();
    const streamed = await mockServer({ steps: [{ content: [text('A long reply that the loop body leaves early.')] }], chunkSize: 4 });
    const runner = toolRunner(streamed.client(), { ...baseParams, stream: true }, { onEvent: openTelemetry({ tracer }) });
    for await (const stream of runner) {
      for await (const event of stream) if (event.type === 'content_block_delta') break;
      break;
    }
    const chat = exporter.getFinishedSpans().find((span) => span.name.startsWith('chat'))!;
    expect(chat.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(chat.attributes['error.type']).toBeUndefined();
    // The run left by the loop body has no status (as the SDK's runner span); one that ended on the model's answer is OK.
    const runs = () => exporter.getFinishedSpans().filter((span) => span.name.startsWith('invoke_agent')).map((span) => span.status.code);
    expect(runs()).toEqual([SpanStatusCode.UNSET]);
    exporter.reset();
    const whole = await mockServer([{ content: [text('Done.')] }]);
    await toolRunner(whole.client(), baseParams, { onEvent: openTelemetry({ tracer }) });
    expect(runs()).toEqual([SpanStatusCode.OK]);
  });
});

describe('without a context manager (a browser, a Worker)', () => {
  const parentOf = (spans: ReadableSpan[], span: ReadableSpan) => spans.find((other) => other.spanContext().spanId === span.parentSpanContext?.spanId);

  it("a sub-agent's run span is a child of the parent's execute_tool span, in the parent's trace", async () => {
    const { exporter, tracer } = tracing();
    const researcher = agentTool({ name: 'researcher', description: 'Researches', params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }] }) });
    const server = await mockServer([{ content: [toolUse('researcher', { task: 'otters' }, 'toolu_r')] }, { content: [text('They hold hands.')] }, { content: [text('Otters hold hands.')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [researcher] }, { onEvent: openTelemetry({ tracer, agentName: 'lead' }) });
    const spans = exporter.getFinishedSpans();
    const inner = spans.find((span) => span.name === 'invoke_agent researcher')!;
    expect(parentOf(spans, inner)?.name).toBe('execute_tool researcher');
    expect(parentOf(spans, parentOf(spans, inner)!)?.name).toBe('invoke_agent lead');
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
  });

  it("two runs resumed from one history, whose agent calls share their id, on one listener: each sub-agent's spans are in its own run's trace", async () => {
    const { exporter, tracer } = tracing();
    const listener = openTelemetry({ tracer, agentName: 'lead' });
    const researcher = agentTool({ name: 'researcher', description: 'Researches', params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }] }) });
    const messages = [...baseParams.messages, { role: 'assistant' as const, content: [toolUse('researcher', { task: 'otters' }, 'toolu_r')] }];
    const servers = await Promise.all(['A', 'B'].map((run) => mockServer([{ content: [text(`sub ${run}`)] }, { content: [text(`done ${run}`)] }])));
    try {
      await Promise.all(servers.map((server) => toolRunner(server.client(), { ...baseParams, messages, tools: [researcher] }, { onEvent: listener }).runUntilDone()));
      const spans = exporter.getFinishedSpans();
      const inners = spans.filter((span) => span.name === 'invoke_agent researcher');
      expect(inners).toHaveLength(2);
      // Each under an execute_tool span of its own, each in the trace of one run.
      expect(new Set(inners.map((span) => parentOf(spans, span)?.spanContext().spanId)).size).toBe(2);
      expect(new Set(inners.map((span) => span.spanContext().traceId)).size).toBe(2);
      for (const trace of new Set(spans.map((span) => span.spanContext().traceId))) {
        const names = spans.filter((span) => span.spanContext().traceId === trace).map((span) => span.name);
        expect(names.sort()).toEqual(['chat claude-sonnet-5-5', 'chat claude-sonnet-5-5', 'execute_tool researcher', 'invoke_agent lead', 'invoke_agent researcher']);
      }
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });

  it("one listener given to the parent and to the agent tool too hears the sub-agent's events once: every span ends, the agent's named after it", async () => {
    const { exporter } = tracing();
    const started: string[] = [];
    const spy = { onStart: (span: { name: string }) => started.push(span.name), onEnd: () => {}, forceFlush: async () => {}, shutdown: async () => {} };
    const traced = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter), spy as never] }).getTracer('test');
    const listener = openTelemetry({ tracer: traced, agentName: 'lead' });
    const researcher = agentTool({ name: 'researcher', description: 'Researches', params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }] }), options: { onEvent: listener } });
    const server = await mockServer([{ content: [toolUse('researcher', { task: 'otters' }, 'toolu_r')] }, { content: [text('They hold hands.')] }, { content: [text('Otters hold hands.')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [researcher] }, { onEvent: listener });
    const names = exporter.getFinishedSpans().map((span) => span.name);
    expect(started.sort()).toEqual([...names].sort());
    expect(names.sort()).toEqual(['chat claude-sonnet-5-5', 'chat claude-sonnet-5-5', 'chat claude-sonnet-5-5', 'execute_tool researcher', 'invoke_agent lead', 'invoke_agent researcher'].sort());
    // Two levels down, the listener given at each level: the innermost agent's events are heard once too.
    exporter.reset();
    started.length = 0;
    const inner = agentTool({ name: 'inner', description: 'Looks up', params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }] }), options: { onEvent: listener } });
    const outer = agentTool({ name: 'outer', description: 'Delegates', params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }], tools: [inner] }), options: { onEvent: listener } });
    const nested = await mockServer([
      { content: [toolUse('outer', { task: 'otters' }, 'toolu_o')] },
      { content: [toolUse('inner', { task: 'otters, deeper' }, 'toolu_i')] },
      { content: [text('Deep.')] },
      { content: [text('Found.')] },
      { content: [text('Done.')] },
    ]);
    await toolRunner(nested.client(), { ...baseParams, tools: [outer] }, { onEvent: listener });
    const nestedNames = exporter.getFinishedSpans().map((span) => span.name);
    expect(started.sort()).toEqual([...nestedNames].sort());
    expect(nestedNames.filter((name) => name.startsWith('invoke_agent')).sort()).toEqual(['invoke_agent inner', 'invoke_agent lead', 'invoke_agent outer']);
  });
});

describe('a typed output that fails, without captureContent', () => {
  it("puts none of the model's answer on the run span (status, exception); with captureContent the parse error shows", async () => {
    for (const captureContent of [false, true]) {
      const { exporter, tracer } = tracing();
      const server = await mockServer([{ content: [text('My SSN is 078-05-1120.')] }]);
      const runner = toolRunner(server.client(), baseParams, { output: z.object({ city: z.string() }), outputRepairs: 0, onEvent: openTelemetry({ tracer, captureContent }) });
      await expect(runner.runUntilDone()).rejects.toMatchObject({ name: 'OutputError' });
      const run = exporter.getFinishedSpans().find((span) => span.name.startsWith('invoke_agent'))!;
      // (The events' attributes, not their times: a time's nanoseconds may hold "078".)
      const shown = JSON.stringify([run.status, run.events.map((event) => [event.name, event.attributes])]);
      expect(run.status.code).toBe(SpanStatusCode.ERROR);
      expect(run.events.map((event) => event.name)).toEqual(['exception']);
      if (captureContent) expect(shown).toContain('My SSN is');
      else expect(shown).not.toMatch(/SSN|078/);
    }
  });
});


/**
 * A run whose one call (`call`, of `tool`) stops it with an error quoting `secret`: its spans are the chat's, the call's
 * and the run's, the last two failed; `secret` shows on them only with `captureContent`. What they show, as JSON.
 */
async function spansOfFailedCall(tool: AnyTool & { name: string }, call: ReturnType<typeof toolUse>, captureContent: boolean, secret: RegExp, options: ToolRunnerOptions = {}): Promise<string> {
  const { exporter, tracer } = tracing();
  const server = await mockServer([{ content: [call] }]);
  const runner = toolRunner(server.client(), { ...baseParams, tools: [tool] }, { onEvent: openTelemetry({ tracer, captureContent }), ...options });
  await expect(runner.runUntilDone()).rejects.toThrow(secret);
  const spans = exporter.getFinishedSpans();
  expect(spans.map((span) => [span.name, span.status.code])).toEqual([
    ['chat claude-sonnet-5-5', SpanStatusCode.UNSET],
    [`execute_tool ${tool.name}`, SpanStatusCode.ERROR],
    ['invoke_agent tool-runner', SpanStatusCode.ERROR],
  ]);
  const shown = JSON.stringify(spans.map((span) => [span.status, span.events.map((each) => each.attributes)]));
  if (captureContent) expect(shown).toMatch(secret);
  else expect(shown).not.toMatch(secret);
  return shown;
}

describe("an approver's or an onToolCall hook's value of the wrong shape, without captureContent", () => {
  it("puts none of the value (an edited input, a result) on the spans: the HookError's words without it; with captureContent it shows", async () => {
    const lookup = tool({ name: 'lookup', inputSchema: z.object({ ssn: z.string() }), needsApproval: ({ ssn }) => ssn.startsWith('078'), run: () => 'found' });
    const runs = {
      // A decision with a field it has not, beside the input the approver edited.
      approve: { approve: () => ({ decision: 'allow', input: { ssn: '999-05-1120' }, note: 'masked' }) as never, call: { ssn: '078-05-1120' } },
      // A result of one block, not in a list of blocks.
      onToolCall: { hooks: { onToolCall: () => ({ result: { type: 'text', text: 'ssn 999-05-1120 on file' } }) as never }, call: { ssn: '123-45-6789' } },
    };
    for (const [hook, { call, ...options }] of Object.entries(runs)) {
      for (const captureContent of [false, true]) {
        const shown = await spansOfFailedCall(lookup, toolUse('lookup', call, 'toolu_l'), captureContent, /999-05-1120/, options);
        expect(shown).toContain(`${hook} threw: TypeError: ${hook === 'approve' ? 'options.approve' : 'onToolCall'} returned`);
        if (!captureContent) expect(shown).not.toMatch(/ssn/);
      }
    }
  });
});

describe('a value of the wrong shape that holds no contents, without captureContent', () => {
  it("is shown on the spans (a decision's word, nothing, a boolean): the mistake is plain; a number stays hidden (it may be an amount from the input)", async () => {
    const guarded = tool({ name: 'guarded', inputSchema: z.object({ amount: z.number() }), needsApproval: true, run: () => 'done' });
    const answers: Array<[unknown, string]> = [
      ['allow', `options.approve returned "allow" for 'guarded'`],
      [undefined, "options.approve returned undefined for 'guarded'"],
      [true, "options.approve returned true for 'guarded'"],
      [4200, "options.approve returned a value (not shown: captureContent is off) for 'guarded'"],
    ];
    for (const [answer, said] of answers) {
      const { exporter, tracer } = tracing();
      const server = await mockServer([{ content: [toolUse('guarded', { amount: 4200 }, 'toolu_g')] }]);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [guarded] }, { onEvent: openTelemetry({ tracer }), approve: () => answer as never });
      await expect(runner.runUntilDone()).rejects.toThrow(/options\.approve returned/);
      for (const span of exporter.getFinishedSpans().filter((each) => each.name !== 'chat claude-sonnet-5-5')) {
        expect(span.status.message).toContain(`approve threw: TypeError: ${said}`);
        expect(JSON.stringify(span.events)).not.toContain('4200');
      }
    }
  });
});

describe("a tool's needsApproval rule that answers with a string, without captureContent", () => {
  it("puts none of it (a field of the call's input, returned for its truth) on the spans: the HookError's words without it; with captureContent it shows", async () => {
    // The rule meant "when there is a note": it returned the note.
    const refund = tool({ name: 'refund', inputSchema: z.object({ note: z.string() }), needsApproval: ({ note }) => note as never, run: () => 'refunded' });
    for (const captureContent of [false, true]) {
      const shown = await spansOfFailedCall(refund, toolUse('refund', { note: 'card 4111 1111 1111 1111' }, 'toolu_r'), captureContent, /4111/);
      expect(shown).toContain("needsApproval of 'refund' threw: TypeError: it returned ");
    }
  });
});

describe("a tool's validator that answers with something that is no result, without captureContent", () => {
  it("puts none of the input it quotes (a zod safeParse result holds it whole, an issue may quote it) on the spans; with captureContent it shows", async () => {
    const base = tool({ name: 'lookup', inputSchema: z.object({ ssn: z.string() }), run: () => 'found' });
    const standard = { '~standard': { version: 1, vendor: 'mine', validate: (input: { ssn: string }) => ({ issues: [`ssn ${input.ssn} is not on file`] }), jsonSchema: { input: () => ({ type: 'object' }), output: () => ({ type: 'object' }) } } };
    const tools = {
      // validateInput answering with zod's safeParse result: { success, data }, the input in it.
      validateInput: { ...base, validateInput: (input: unknown) => ({ success: true, data: input }) as never },
      // A Standard Schema whose issues are plain strings that quote the input.
      standard: tool({ name: 'lookup', inputSchema: standard as never, run: () => 'found' }),
    };
    for (const lookup of Object.values(tools)) {
      for (const captureContent of [false, true]) {
        const shown = await spansOfFailedCall(lookup, toolUse('lookup', { ssn: '078-05-1120' }, 'toolu_l'), captureContent, /078-05-1120/);
        expect(shown).toContain("The input validator of tool 'lookup' failed: TypeError: ");
      }
    }
  });
});

describe('a streamed tool call whose input the model sent as broken JSON, without captureContent', () => {
  it("puts none of the call's input on the chat and run spans (the SDK's parse error quotes it); with captureContent it shows", async () => {
    // The testing kit streams only valid JSON: a server of its own sends the broken input.
    const { client, close } = await sseServer([
      [
        { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-5-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 0 } } },
        { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"ssn": "078-05-1120"}}' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } },
        { type: 'message_stop' },
      ],
    ]);
    try {
      const lookup = tool({ name: 'lookup', inputSchema: z.object({ ssn: z.string() }), run: () => 'found' });
      for (const captureContent of [false, true]) {
        const { exporter, tracer } = tracing();
        const runner = toolRunner(client, { ...baseParams, stream: true, tools: [lookup] }, { onEvent: openTelemetry({ tracer, captureContent }) });
        await expect(runner.runUntilDone()).rejects.toThrow(/Unable to parse tool parameter JSON/);
        const spans = exporter.getFinishedSpans();
        expect(spans.map((span) => [span.name, span.status.code])).toEqual([
          ['chat claude-sonnet-5-5', SpanStatusCode.ERROR],
          ['invoke_agent tool-runner', SpanStatusCode.ERROR],
        ]);
        const shown = JSON.stringify(spans.map((span) => [span.status, span.events.map((each) => each.attributes)]));
        expect(shown).toContain('Unable to parse tool parameter JSON from model');
        if (captureContent) expect(shown).toContain('078-05-1120');
        else expect(shown).not.toMatch(/078-05-1120|ssn/);
      }
    } finally {
      await close();
    }
  });
});

describe('requests and tool calls run inside their span (AsyncLocalStorage context manager)', () => {
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterAll(() => {
    context.disable();
  });

  const parentOf = (spans: ReadableSpan[], span: ReadableSpan) => spans.find((other) => other.spanContext().spanId === span.parentSpanContext?.spanId);

  it.each([false, true])(
    "a span a tool starts is a child of its execute_tool span; the client's request spans are children of chat (stream: %s)",
    async (stream) => {
      const { exporter, provider, tracer } = tracing();
      const lookup = tool({
        name: 'lookup',
        inputSchema: z.object({ key: z.string() }),
        run: async ({ key }) => {
          await sleep(1);
          tracer.startSpan(`db.get ${key}`).end();
          return 'found';
        },
      });
      const server = await mockServer([
        { content: [toolUse('lookup', { key: 'a' }, 'toolu_a'), toolUse('lookup', { key: 'b' }, 'toolu_b')] },
        { content: [text('Both found.')] },
      ]);
      // A client that traces too: its own request spans (anthropic.messages.create) go under `chat`.
      const client = server.client({ openTelemetry: { tracerProvider: provider } });
      await tracer.startActiveSpan('caller', async (caller) => {
        await toolRunner(client, { ...baseParams, stream, tools: [lookup] }, { onEvent: openTelemetry({ tracer }) });
        caller.end();
      });
      const spans = exporter.getFinishedSpans();
      for (const key of ['a', 'b']) {
        const inner = spans.find((span) => span.name === `db.get ${key}`)!;
        const call = parentOf(spans, inner)!;
        expect(call.name).toBe('execute_tool lookup');
        expect(call.attributes['gen_ai.tool.call.id']).toBe(`toolu_${key}`);
      }
      const creates = spans.filter((span) => span.name === 'anthropic.messages.create');
      const chats = spans.filter((span) => span.name.startsWith('chat '));
      expect(creates).toHaveLength(2);
      expect(creates.map((create) => parentOf(spans, create))).toEqual(chats);
      const run = spans.find((span) => span.name.startsWith('invoke_agent'))!;
      expect(parentOf(spans, run)!.name).toBe('caller');
      // The listener's spans stand in for the SDK runner's own: none of those.
      expect(spans.map((span) => span.name).filter((name) => name.startsWith('anthropic.') && name !== 'anthropic.messages.create')).toEqual([]);
    },
  );

  it("a sub-agent's spans nest under the parent's execute_tool span, and its tools run inside theirs", async () => {
    const { exporter, tracer } = tracing();
    const search = tool({
      name: 'search',
      inputSchema: z.object({ query: z.string() }),
      run: async ({ query }) => {
        await sleep(1);
        tracer.startSpan(`index.query ${query}`).end();
        return `results for ${query}`;
      },
    });
    const researcher = agentTool({
      name: 'researcher',
      description: 'Researches a topic',
      params: ({ task }) => ({ ...baseParams, system: 'researcher', messages: [{ role: 'user', content: task }], tools: [search] }),
    });
    const server = await mockServer([
      { content: [toolUse('researcher', { task: 'otters' }, 'toolu_r')] },
      { content: [toolUse('search', { query: 'otters' }, 'toolu_s')] },
      { content: [text('They hold hands.')] },
      { content: [text('Otters hold hands.')] },
    ]);
    await toolRunner(server.client(), { ...baseParams, tools: [researcher] }, { onEvent: openTelemetry({ tracer, agentName: 'lead' }) });
    const spans = exporter.getFinishedSpans();
    const chain: string[] = [];
    for (let span: ReadableSpan | undefined = spans.find((s) => s.name === 'index.query otters'); span; span = parentOf(spans, span)) chain.push(span.name);
    // The sub-agent's run is named after its tool.
    expect(chain).toEqual(['index.query otters', 'execute_tool search', 'invoke_agent researcher', 'execute_tool researcher', 'invoke_agent lead']);
    const outer = spans.find((span) => span.name === 'invoke_agent lead')!;
    const inner = spans.find((span) => span.name === 'invoke_agent researcher')!;
    expect(inner.attributes['gen_ai.agent.name']).toBe('researcher');
    expect(spans.filter((span) => span.name.startsWith('chat ')).map((chat) => parentOf(spans, chat))).toEqual([outer, inner, inner, outer]);
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
  });

  it("the onToolResult hook of a call answered without running (an unknown tool, a call past the budget) runs inside that call's span too", async () => {
    const { exporter, tracer } = tracing();
    const server = await mockServer([
      { content: [toolUse('get_weather', { city: 'Oslo' }, 'toolu_1'), toolUse('get_wether', { city: 'Rome' }, 'toolu_2'), toolUse('get_weather', { city: 'Lima' }, 'toolu_3')] },
      { content: [text('Oslo is sunny.')] },
    ]);
    await toolRunner(
      server.client(),
      { ...baseParams, tools: [weather] },
      {
        onEvent: openTelemetry({ tracer }),
        budget: { maxToolCalls: 1 },
        // An audit log of every result: its span (or a log line that reads the active span) goes with the call.
        hooks: { onToolResult: (_result, call) => tracer.startSpan(`audit ${call.id}`).end() },
      },
    );
    const spans = exporter.getFinishedSpans();
    const parents = ['toolu_1', 'toolu_2', 'toolu_3'].map((id) => parentOf(spans, spans.find((span) => span.name === `audit ${id}`)!));
    expect(parents.map((span) => [span?.name, span?.attributes['gen_ai.tool.call.id']])).toEqual([
      ['execute_tool get_weather', 'toolu_1'],
      ['execute_tool get_wether', 'toolu_2'],
      ['execute_tool get_weather', 'toolu_3'],
    ]);
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
  });

  it.each([false, true])("the onRequest and onMessage hooks run inside the run's span (the pass's, when the client's own spans stand for the runner's): a span they start is in the run's trace (stream: %s)", async (stream) => {
    const { exporter, provider, tracer } = tracing();
    // An audit log of each request and reply: its span (or a log line that reads the active span) goes with the run.
    let requests = 0;
    let replies = 0;
    const hooks = {
      onRequest: async () => {
        await sleep(1);
        tracer.startSpan(`audit request ${++requests}`).end();
      },
      onMessage: () => tracer.startSpan(`audit reply ${++replies}`).end(),
    };
    const steps = [{ content: [toolUse('get_weather', { city: 'Oslo' }, 'toolu_1')] }, { content: [text('Sunny.')] }];
    const audits = ['audit request 1', 'audit reply 1', 'audit request 2', 'audit reply 2'];
    // tool-runner/otel's spans: under its invoke_agent span.
    const server = await mockServer(steps);
    await toolRunner(server.client(), { ...baseParams, stream, tools: [weather] }, { onEvent: openTelemetry({ tracer }), hooks });
    let spans = exporter.getFinishedSpans();
    expect(audits.map((name) => parentOf(spans, spans.find((span) => span.name === name)!)?.name)).toEqual(audits.map(() => 'invoke_agent tool-runner'));
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    // The SDK runner's own spans (a client that traces, no listener): under the pass's span.
    exporter.reset();
    [requests, replies] = [0, 0];
    const traced = await mockServer(steps);
    await toolRunner(traced.client({ openTelemetry: { tracerProvider: provider } }), { ...baseParams, stream, tools: [weather] }, { hooks });
    spans = exporter.getFinishedSpans();
    expect(audits.map((name) => parentOf(spans, spans.find((span) => span.name === name)!)?.name)).toEqual(audits.map(() => 'anthropic.messages.tool_runner'));
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
  });

  it('a hook or an approval a call waits for runs inside its span too', async () => {
    const { exporter, tracer } = tracing();
    const guarded = tool({ name: 'guarded', inputSchema: z.object({}), needsApproval: true, run: () => 'done' });
    const server = await mockServer([{ content: [toolUse('guarded', {}, 'toolu_g')] }, { content: [text('Done.')] }]);
    await toolRunner(
      server.client(),
      { ...baseParams, tools: [guarded] },
      {
        onEvent: openTelemetry({ tracer }),
        approve: () => {
          tracer.startSpan('ask a person').end();
          return { decision: 'allow' };
        },
      },
    );
    const spans = exporter.getFinishedSpans();
    expect(parentOf(spans, spans.find((span) => span.name === 'ask a person')!)!.name).toBe('execute_tool guarded');
  });
});

describe('every call that starts ends: its tool.end is sent and its span ended', () => {
  /** The tool.start / tool.end events of a run, as `start id` and `end id (error|result)` lines. */
  const lifecycle = (lines: string[]) => (event: RunnerEvent) => {
    if (event.type === 'tool.start') lines.push(`start ${event.call.id}`);
    if (event.type === 'tool.end') lines.push(`end ${event.call.id} ${event.error !== undefined ? 'error' : 'result'}`);
  };

  it('a toolset member call cut short by the run\'s abort ends as a cancellation (answered as aborted, kept in the history), and its span ends with no error status', async () => {
    const { exporter, tracer } = tracing();
    const controller = new AbortController();
    const computer = {
      type: 'computer_toolset_20260801' as const,
      display_width_px: 1024,
      display_height_px: 768,
      // A screenshot that takes long, stopped by its signal; the run is aborted once it started.
      run: (call: { signal?: AbortSignal }) =>
        new Promise((resolve, reject) => {
          const timer = setTimeout(() => resolve([{ type: 'text', text: 'a screenshot' }]), 5_000);
          call.signal?.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(new Error('stopped'));
          });
          setTimeout(() => controller.abort(), 5);
        }),
    };
    const member = { type: 'tool_use', id: 'toolu_m', name: 'screenshot', input: {}, toolset_name: 'computer' } as never;
    const server = await mockServer([{ content: [member] }, { content: [text('Done.')] }]);
    const lines: string[] = [];
    const ends: RunnerEvent[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [computer as never] }, { signal: controller.signal, onEvent: [openTelemetry({ tracer }), lifecycle(lines), (event) => void (event.type === 'tool.end' && ends.push(event))] });
    await expect(runner.runUntilDone()).rejects.toThrow();
    expect(lines).toEqual(['start toolu_m', 'end toolu_m result']);
    expect(ends[0]).toMatchObject({ cancelled: true, result: { is_error: true, content: "Error: the call to 'screenshot' was aborted before it finished." } });
    expect(runner.params.messages.at(-1)).toMatchObject({ role: 'user', content: [{ tool_use_id: 'toolu_m', is_error: true }] });
    const span = exporter.getFinishedSpans().find((each) => each.name === 'execute_tool screenshot');
    expect(span).toBeDefined();
    expect(span!.status.code).not.toBe(SpanStatusCode.ERROR);
    expect(span!.attributes['error.type']).toBeUndefined();
  });

  it('a call cut short by an abort or a `break` is a cancellation: tool.end says so, and its span has no error status; a timeout stays an error', async () => {
    const { exporter, tracer } = tracing();
    const slow = tool({
      name: 'slow',
      inputSchema: z.object({}),
      run: (_input, { signal }) =>
        new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => resolve('done'), 5_000);
          signal.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(signal.reason);
          });
        }),
    });
    // Ignores its signal: the runner answers for it when the run is aborted.
    const deaf = tool({ name: 'deaf', inputSchema: z.object({}), run: () => sleep(300).then(() => 'done') });
    const cancelled: string[] = [];
    const seen = (event: RunnerEvent) => event.type === 'tool.end' && event.cancelled && cancelled.push(event.call.name);
    const statuses = () => {
      const spans = exporter.getFinishedSpans().filter((span) => span.name.startsWith('execute_tool'));
      exporter.reset();
      return spans.map((span) => [span.name, span.status.code, span.attributes['error.type']]);
    };
    for (const name of ['slow', 'deaf']) {
      const server = await mockServer([{ content: [toolUse(name, {})] }, { content: [text('Done.')] }]);
      const controller = new AbortController();
      // Aborted while the tool runs (a timer from the run's start could fire while a slow machine still waits for the reply).
      const abortSoonAfterStart = (event: RunnerEvent) => event.type === 'tool.start' && setTimeout(() => controller.abort(), 30);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [slow, deaf] }, { signal: controller.signal, onEvent: [openTelemetry({ tracer }), seen, abortSoonAfterStart] });
      await expect(runner.runUntilDone()).rejects.toThrow();
      expect(statuses()).toEqual([[`execute_tool ${name}`, SpanStatusCode.UNSET, undefined]]);
    }
    // A call started while its reply streamed, left by a `break` in the loop body.
    const streamed = await mockServer({ steps: [{ content: [toolUse('slow', {}), text('more '.repeat(40))], chunkSize: 2 }], eventDelayMs: 2 });
    for await (const stream of toolRunner(streamed.client(), { ...baseParams, stream: true, runToolsEagerly: true, tools: [slow] }, { onEvent: [openTelemetry({ tracer }), seen] })) {
      for await (const event of stream) if (event.type === 'content_block_start' && event.index === 1) break;
      await sleep(20);
      break;
    }
    expect(statuses()).toEqual([['execute_tool slow', SpanStatusCode.UNSET, undefined]]);
    // A toolset member call under `toolTimeoutMs`, aborted by the run's signal.
    const controller = new AbortController();
    const computer = {
      type: 'computer_toolset_20260801' as const,
      display_width_px: 1024,
      display_height_px: 768,
      run: () => {
        setTimeout(() => controller.abort(), 5);
        return new Promise(() => {});
      },
    };
    const member = { type: 'tool_use', id: 'toolu_m', name: 'screenshot', input: {}, toolset_name: 'computer' } as never;
    const members = await mockServer([{ content: [member] }, { content: [text('Done.')] }]);
    const options = { signal: controller.signal, toolTimeoutMs: 5_000, onEvent: [openTelemetry({ tracer }), seen] };
    await expect(toolRunner(members.client(), { ...baseParams, tools: [computer as never] }, options).runUntilDone()).rejects.toThrow();
    expect(statuses()).toEqual([['execute_tool screenshot', SpanStatusCode.UNSET, undefined]]);
    expect(cancelled).toEqual(['slow', 'deaf', 'slow', 'screenshot']);
    // A call stopped by its timeout failed: an error.
    const late = await mockServer([{ content: [toolUse('deaf', {})] }, { content: [text('Done.')] }]);
    await toolRunner(late.client(), { ...baseParams, tools: [deaf] }, { toolTimeoutMs: 10, onEvent: [openTelemetry({ tracer }), seen] });
    expect(statuses()).toEqual([['execute_tool deaf', SpanStatusCode.ERROR, 'tool_error']]);
    expect(cancelled).toHaveLength(4);
  });
});

describe('chat spans as the GenAI conventions and the SDK record them', () => {
  it('gen_ai.usage.input_tokens counts the cached tokens too, as the SDK\'s own request span does; the cache counts stay apart', async () => {
    const { exporter, provider, tracer } = tracing();
    const usage = { input_tokens: 10, cache_read_input_tokens: 5_000, cache_creation_input_tokens: 300, output_tokens: 7 };
    const server = await mockServer([{ content: [text('Hi.')], usage }]);
    await toolRunner(server.client({ openTelemetry: { tracerProvider: provider } }), baseParams, { onEvent: openTelemetry({ tracer }) });
    const spans = exporter.getFinishedSpans();
    const chat = spans.find((span) => span.name.startsWith('chat'))!;
    const create = spans.find((span) => span.name === 'anthropic.messages.create')!;
    expect(chat.attributes).toMatchObject({
      'gen_ai.usage.input_tokens': 5_310,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.usage.cache_read.input_tokens': 5_000,
      'gen_ai.usage.cache_creation.input_tokens': 300,
    });
    expect(chat.attributes['gen_ai.usage.input_tokens']).toBe(create.attributes['gen_ai.usage.input_tokens']);
  });
});

describe('the conversation a run belongs to', () => {
  it('requestOptions.openTelemetry.conversationId is gen_ai.conversation.id on the run, chat and execute_tool spans; setRequestOptions changes it for the spans that start after', async () => {
    const { exporter, tracer } = tracing();
    const server = await mockServer([
      { content: [toolUse('get_weather', { city: 'Rome' }, 'toolu_1')] },
      { content: [toolUse('get_weather', { city: 'Oslo' }, 'toolu_2')] },
      { content: [text('Sunny, then snow.')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weather] }, { requestOptions: { openTelemetry: { conversationId: 'conv-42' } }, onEvent: openTelemetry({ tracer }) });
    let turns = 0;
    for await (const _message of runner) if (++turns === 2) runner.setRequestOptions({ openTelemetry: { conversationId: 'conv-43' } });
    const ids = exporter
      .getFinishedSpans()
      .map((span) => `${span.name} ${span.attributes['gen_ai.tool.call.id'] ?? ''}${span.attributes['gen_ai.conversation.id']}`)
      .sort();
    expect(ids).toEqual(
      [
        'chat claude-sonnet-5-5 conv-42',
        'chat claude-sonnet-5-5 conv-42',
        'chat claude-sonnet-5-5 conv-43',
        'execute_tool get_weather toolu_1conv-42',
        'execute_tool get_weather toolu_2conv-43',
        'invoke_agent tool-runner conv-42',
      ].sort(),
    );
    // None without one.
    exporter.reset();
    const plain = await mockServer([{ content: [text('Hi.')] }]);
    await toolRunner(plain.client(), baseParams, { onEvent: openTelemetry({ tracer }) });
    expect(exporter.getFinishedSpans().filter((span) => span.attributes['gen_ai.conversation.id'] !== undefined)).toEqual([]);
  });
});

describe("a sub-agent's conversation", () => {
  it("a sub-agent's spans have the parent's gen_ai.conversation.id (its requests' own client spans too), unless its options give one of its own", async () => {
    const { exporter, provider, tracer } = tracing();
    const researcher = (conversationId?: string) =>
      agentTool({
        name: 'researcher',
        description: 'Researches',
        params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }], tools: [weather] }),
        ...(conversationId && { options: { requestOptions: { openTelemetry: { conversationId } } } }),
      });
    const steps = [
      { content: [toolUse('researcher', { task: 'weather' }, 'toolu_r')] },
      { content: [toolUse('get_weather', { city: 'Rome' }, 'toolu_w')] },
      { content: [text('Sunny.')] },
      { content: [text('Sunny in Rome.')] },
    ];
    // The parent's id: on every span, the sub-agent's own and its requests' client spans too.
    const server = await mockServer(steps);
    const run = (client: ReturnType<typeof server.client>, own?: string) =>
      toolRunner(client, { ...baseParams, tools: [researcher(own)] }, { requestOptions: { openTelemetry: { conversationId: 'conv-42' } }, onEvent: openTelemetry({ tracer, agentName: 'lead' }) });
    // The client traces too: its own request spans carry the id their request options give.
    await run(server.client({ openTelemetry: { tracerProvider: provider } }));
    const named = () => exporter.getFinishedSpans().map((span) => `${span.name} ${span.attributes['gen_ai.conversation.id']}`).sort();
    expect(named()).toEqual(
      [
        'invoke_agent lead conv-42',
        'execute_tool researcher conv-42',
        'invoke_agent researcher conv-42',
        'execute_tool get_weather conv-42',
        ...Array.from({ length: 4 }, () => ['chat claude-sonnet-5-5 conv-42', 'anthropic.messages.create conv-42']).flat(),
      ].sort(),
    );
    // Its own: the sub-agent's spans have it, the parent's keep theirs.
    exporter.reset();
    const again = await mockServer(steps);
    await run(again.client({ openTelemetry: { tracerProvider: provider } }), 'conv-sub');
    const spans = exporter.getFinishedSpans();
    const sub = spans.find((span) => span.name === 'invoke_agent researcher')!;
    const subChats = spans.filter((span) => span.name.startsWith('chat ') && span.parentSpanContext?.spanId === sub.spanContext().spanId);
    expect([sub, ...subChats, spans.find((span) => span.name === 'execute_tool get_weather')!].map((span) => span.attributes['gen_ai.conversation.id'])).toEqual(['conv-sub', 'conv-sub', 'conv-sub', 'conv-sub']);
    expect(named().filter((name) => name.endsWith(' conv-sub'))).toHaveLength(6);
    expect(named().filter((name) => name.endsWith(' conv-42'))).toHaveLength(6);
  });
});

describe('captured content in the GenAI conventions\' shape (captureContent)', () => {
  // The client's own request spans need a context manager to be recorded beside the listener's.
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterAll(() => {
    context.disable();
  });

  /** Each chat span and the client's own span of the same request, in the order they ended. */
  const pairs = (spans: ReadableSpan[]) => {
    const creates = spans.filter((span) => span.name === 'anthropic.messages.create');
    return spans.filter((span) => span.name.startsWith('chat ')).map((chat, index) => [chat, creates[index]!] as const);
  };

  it('system instructions, input and output messages as parts, as the SDK\'s own request span records them (the output with its finish_reason)', async () => {
    const { exporter, provider, tracer } = tracing();
    const server = await mockServer([
      { content: [text('Let me look.'), toolUse('get_weather', { city: 'Rome' }, 'toolu_w')] },
      { content: [text('Sunny in Rome.')] },
    ]);
    const client = server.client({ openTelemetry: { tracerProvider: provider, traces: { contentMode: 'content' } } });
    // Without a thread, the client's span sees the whole history too (over one, only what each request adds).
    await toolRunner(client, { ...baseParams, system: 'Be brief.', tools: [weather], thread: false }, { onEvent: openTelemetry({ tracer, captureContent: true }) });
    const spans = exporter.getFinishedSpans();
    expect(pairs(spans)).toHaveLength(2);
    for (const [chat, create] of pairs(spans)) {
      for (const key of ['gen_ai.system_instructions', 'gen_ai.input.messages']) expect(JSON.parse(String(chat.attributes[key]))).toEqual(JSON.parse(String(create.attributes[key])));
      const [ours] = JSON.parse(String(chat.attributes['gen_ai.output.messages']));
      const [sdk] = JSON.parse(String(create.attributes['gen_ai.output.messages']));
      expect(ours).toEqual({ ...sdk, finish_reason: chat.attributes['gen_ai.response.finish_reasons']![0 as never] });
    }
    const [first, second] = pairs(spans).map(([chat]) => chat);
    expect(JSON.parse(String(first!.attributes['gen_ai.system_instructions']))).toEqual([{ type: 'text', content: 'Be brief.' }]);
    expect(JSON.parse(String(first!.attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [
          { type: 'text', content: 'Let me look.' },
          { type: 'tool_call', id: 'toolu_w', name: 'get_weather', arguments: { city: 'Rome' } },
        ],
        finish_reason: 'tool_use',
      },
    ]);
    expect(JSON.parse(String(second!.attributes['gen_ai.input.messages'])).at(-1)).toEqual({
      role: 'user',
      parts: [{ type: 'tool_call_response', id: 'toolu_w', response: [{ type: 'text', text: 'sunny in Rome' }] }],
    });
  });

  it('a misspelt option (captureContents, agent_name) is a TypeError naming the one meant, not content left uncaptured; maxContentBytes must be a count', () => {
    expect(() => openTelemetry({ captureContents: true } as never)).toThrow(
      new TypeError("openTelemetry: unknown option 'captureContents'; the options are tracer, captureContent, maxContentBytes, agentName. Did you mean 'captureContent'?"),
    );
    expect(() => openTelemetry({ agent_name: 'bot' } as never)).toThrow(/unknown option 'agent_name'.*Did you mean 'agentName'\?$/);
    expect(() => openTelemetry({ maxContentBytes: -1 })).toThrow(/maxContentBytes must be a number of bytes \(0 or more\), got -1/);
    expect(() => openTelemetry({ maxContentBytes: Infinity, captureContent: true })).not.toThrow();
  });

  it('any other option, or an option of another kind, is an error, not a listener that records no span', () => {
    const { provider, tracer } = tracing();
    // Each of these made a listener that recorded nothing, or not what was asked, with no word.
    expect(() => openTelemetry({ spans: true } as never)).toThrow(new TypeError("openTelemetry: unknown option 'spans'; the options are tracer, captureContent, maxContentBytes, agentName"));
    expect(() => openTelemetry({ tracerProvider: provider } as never)).toThrow(/^openTelemetry: unknown option 'tracerProvider'; pass a tracer from it: \{ tracer: provider\.getTracer\('my-agent'\) \}$/);
    expect(() => openTelemetry({ conversationId: 'c-1' } as never)).toThrow(/conversationId is given for each run, in the runner's options: requestOptions: \{ openTelemetry: \{ conversationId \} \}/);
    expect(() => openTelemetry({ tracer: provider as never })).toThrow(/^openTelemetry: tracer must be a Tracer \(with startSpan\), got a TracerProvider: pass provider\.getTracer\('my-agent'\)$/);
    expect(() => openTelemetry({ tracer: 'tool-runner' as never })).toThrow(new TypeError('openTelemetry: tracer must be a Tracer (with startSpan), got "tool-runner"'));
    expect(() => openTelemetry({ tracer: null as never })).toThrow(/tracer must be a Tracer \(with startSpan\), got null/);
    expect(() => openTelemetry({ captureContent: 'true' as never })).toThrow(new TypeError('openTelemetry: captureContent must be true or false, got "true"'));
    expect(() => openTelemetry({ agentName: 42 as never })).toThrow(/^openTelemetry: agentName must be a non-empty string, got 42$/);
    expect(() => openTelemetry({ agentName: '' })).toThrow(/agentName must be a non-empty string, got ""/);
    expect(() => openTelemetry([] as never)).toThrow(/^openTelemetry: options must be an object$/);
    expect(() => openTelemetry({ tracer, captureContent: false, agentName: 'bot', maxContentBytes: 10 })).not.toThrow();
  });

  it('within maxContentBytes: whole parts are left out, oldest first, and the span says so', async () => {
    const { exporter, tracer } = tracing();
    const history = Array.from({ length: 6 }, (_, index) => ({ role: index % 2 === 0 ? ('user' as const) : ('assistant' as const), content: `message ${index} ${'é'.repeat(60)}` }));
    const server = await mockServer([{ content: [text(`the reply ${'ü'.repeat(60)}`)] }]);
    const limit = 700;
    await toolRunner(server.client(), { ...baseParams, system: `system ${'x'.repeat(60)}`, messages: history }, { onEvent: openTelemetry({ tracer, captureContent: true, maxContentBytes: limit }) });
    const chat = exporter.getFinishedSpans().find((span) => span.name.startsWith('chat '))!;
    const keys = ['gen_ai.system_instructions', 'gen_ai.input.messages', 'gen_ai.output.messages'];
    const size = keys.reduce((sum, key) => sum + new TextEncoder().encode(String(chat.attributes[key] ?? '')).length, 0);
    expect(size).toBeLessThanOrEqual(limit);
    expect(size).toBeGreaterThan(limit / 2);
    expect(chat.attributes['tool_runner.content.truncated']).toBe(true);
    // The oldest went first: the system instructions and the first messages; the last message and the reply stay.
    expect(chat.attributes['gen_ai.system_instructions']).toBeUndefined();
    const input = JSON.parse(String(chat.attributes['gen_ai.input.messages'])) as Array<{ parts: Array<{ content: string }> }>;
    expect(input.at(-1)!.parts[0]!.content).toBe(history.at(-1)!.content);
    expect(input[0]!.parts[0]!.content).not.toBe(history[0]!.content);
    expect(JSON.parse(String(chat.attributes['gen_ai.output.messages']))[0].parts[0].content).toMatch(/^the reply/);
    // Within the limit, nothing is left out.
    exporter.reset();
    const roomy = await mockServer([{ content: [text('Hi.')] }]);
    await toolRunner(roomy.client(), baseParams, { onEvent: openTelemetry({ tracer, captureContent: true, maxContentBytes: limit }) });
    expect(exporter.getFinishedSpans().find((span) => span.name.startsWith('chat '))!.attributes['tool_runner.content.truncated']).toBeUndefined();
    // A tool call's arguments (or result) over the limit are left out whole.
    exporter.reset();
    const big = await mockServer([{ content: [toolUse('get_weather', { city: 'ß'.repeat(400) }, 'toolu_big')] }, { content: [text('Done.')] }]);
    await toolRunner(big.client(), { ...baseParams, tools: [weather] }, { onEvent: openTelemetry({ tracer, captureContent: true, maxContentBytes: limit }) });
    const call = exporter.getFinishedSpans().find((span) => span.name === 'execute_tool get_weather')!;
    expect(call.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    expect(call.attributes['gen_ai.tool.call.result']).toBeUndefined();
    expect(call.attributes['tool_runner.content.truncated']).toBe(true);
  });

  it('within maxContentBytes whatever a list the request started with: a list left out at the end is not on the span; a call\'s arguments and result together', async () => {
    const { exporter, tracer } = tracing();
    const limit = 1000;
    const bytes = (value: unknown) => (value === undefined ? 0 : new TextEncoder().encode(String(value)).length);
    const server = await mockServer([{ content: [text('R'.repeat(600))] }]);
    await toolRunner(server.client(), { ...baseParams, system: 'S'.repeat(300), messages: [{ role: 'user', content: 'U'.repeat(300) }] }, {
      onEvent: openTelemetry({ tracer, captureContent: true, maxContentBytes: limit }),
    });
    const chat = exporter.getFinishedSpans().find((span) => span.name.startsWith('chat '))!;
    const keys = ['gen_ai.system_instructions', 'gen_ai.input.messages', 'gen_ai.output.messages'];
    expect(keys.reduce((sum, key) => sum + bytes(chat.attributes[key]), 0)).toBeLessThanOrEqual(limit);
    expect(chat.attributes['gen_ai.system_instructions']).toBeUndefined();
    exporter.reset();
    const echo = tool({ name: 'echo', inputSchema: z.object({ s: z.string() }), run: ({ s }) => s });
    const echoing = await mockServer([{ content: [toolUse('echo', { s: 'a'.repeat(700) }, 'toolu_e')] }, { content: [text('ok')] }]);
    await toolRunner(echoing.client(), { ...baseParams, tools: [echo] }, { onEvent: openTelemetry({ tracer, captureContent: true, maxContentBytes: limit }) });
    const call = exporter.getFinishedSpans().find((span) => span.name === 'execute_tool echo')!;
    expect(JSON.parse(String(call.attributes['gen_ai.tool.call.arguments']))).toEqual({ s: 'a'.repeat(700) });
    expect(call.attributes['gen_ai.tool.call.result']).toBeUndefined();
    expect(call.attributes['tool_runner.content.truncated']).toBe(true);
    exporter.reset();
    // A message without content ahead of the others (a history the API refuses; its span is recorded all the same).
    const refused = await mockServer([{ content: [text('ok')] }]);
    const many = Array.from({ length: 10 }, (_, i) => ({ role: i % 2 ? ('assistant' as const) : ('user' as const), content: `message ${i} ${'x'.repeat(200)}` }));
    await toolRunner(refused.client(), { ...baseParams, messages: [{ role: 'user', content: [] }, { role: 'assistant', content: 'ok' }, ...many] }, {
      onEvent: openTelemetry({ tracer, captureContent: true, maxContentBytes: limit }),
    }).runUntilDone().catch(() => {});
    const refusedChat = exporter.getFinishedSpans().find((span) => span.name.startsWith('chat '))!;
    expect(keys.reduce((sum, key) => sum + bytes(refusedChat.attributes[key]), 0)).toBeLessThanOrEqual(limit);
    expect(refusedChat.attributes['tool_runner.content.truncated']).toBe(true);
  });

  it('a long run past maxContentBytes: the messages left out of a chat span are not made into its JSON on every turn (a cost that grew with the history)', async () => {
    const { exporter, tracer } = tracing();
    const echo = tool({ name: 'echo', inputSchema: z.object({ s: z.string() }), run: ({ s }) => s });
    const turns = 8;
    const server = await mockServer([...Array.from({ length: turns }, (_, i) => ({ content: [toolUse('echo', { s: 'x'.repeat(400) }, `toolu_${i}`)] })), { content: [text('done')] }]);
    const task = 'the task, long ago';
    let shapedTask = 0;
    const stringify = JSON.stringify;
    // The first message's part, as the span shapes it: counted each time it is made into JSON.
    const spy = vi.spyOn(JSON, 'stringify').mockImplementation(function (this: unknown, ...args: Parameters<typeof JSON.stringify>) {
      const value = args[0] as { type?: unknown; content?: unknown } | undefined;
      if (value?.type === 'text' && value.content === task) shapedTask++;
      return stringify.apply(JSON, args);
    });
    try {
      await toolRunner(server.client(), { ...baseParams, messages: [{ role: 'user', content: [{ type: 'text', text: task }] }], tools: [echo] }, { onEvent: openTelemetry({ tracer, captureContent: true, maxContentBytes: 1000 }) });
    } finally {
      spy.mockRestore();
    }
    const chats = exporter.getFinishedSpans().filter((span) => span.name.startsWith('chat '));
    expect(chats).toHaveLength(turns + 1);
    // Once the later messages alone fill the limit, the task is left out of every span, and not shaped for them.
    expect(String(chats.at(-1)!.attributes['gen_ai.input.messages'])).not.toContain(task);
    expect(chats.at(-1)!.attributes['tool_runner.content.truncated']).toBe(true);
    expect(shapedTask).toBeLessThanOrEqual(3);
  });

  it("a tool result's image and document data are not on the execute_tool span (their type is)", async () => {
    const { exporter, tracer } = tracing();
    const data = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const picture = tool({
      name: 'picture',
      inputSchema: z.object({}),
      run: () => [
        { type: 'text' as const, text: 'Here it is' },
        { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data } },
        { type: 'document' as const, source: { type: 'base64' as const, media_type: 'application/pdf' as const, data: 'JVBERi0xLjQK' } },
      ],
    });
    const server = await mockServer([{ content: [toolUse('picture', {}, 'toolu_p')] }, { content: [text('A pixel.')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [picture] }, { onEvent: openTelemetry({ tracer, captureContent: true }) });
    const call = exporter.getFinishedSpans().find((span) => span.name === 'execute_tool picture')!;
    expect(JSON.parse(String(call.attributes['gen_ai.tool.call.result']))).toEqual([{ type: 'text', text: 'Here it is' }, { type: 'image' }, { type: 'document' }]);
    for (const span of exporter.getFinishedSpans()) expect(JSON.stringify(span.attributes)).not.toContain('JVBERi0x');
  });
});
