import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIUserAbortError, AnthropicError, RateLimitError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { ReplyError, tool, toolRunner } from 'tool-runner';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer, sleep, weatherTool, wire } from './helpers.js';
import { sseServer } from './fixtures/sse-server.js';

describe('API errors', () => {
  it('an error that escapes leaves the state as it was: iterating again retries the same request', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { error: { status: 400, message: 'bad request' } },
      { content: [text('ok')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] });
    const firstAttempt = runner.done();
    await expect(runner.runUntilDone()).rejects.toMatchObject({ status: 400 });
    await expect(firstAttempt).rejects.toMatchObject({ status: 400 });
    expect(historyProblems(runner.params.messages)).toEqual([]);
    const final = await runner;
    expect(final.content[0]).toMatchObject({ text: 'ok' });
    expect(wire(server.requests[2]!).body).toEqual(wire(server.requests[1]!).body);
    // Requests sent, the failed one included, as the SDK counts them (max_iterations too).
    expect(runner.iteration).toBe(3);
  });

  it('the client’s retries apply (429 with retry-after), and a retried request is counted once', async () => {
    const server = await mockServer([{ error: { status: 429, retryAfter: 0.01 } }, { content: [text('ok')] }]);
    const runner = toolRunner(server.client({ maxRetries: 2 }), baseParams);
    await runner;
    expect(server.requests).toHaveLength(2);
    expect(runner.iteration).toBe(1);
  });

  it('a rate limit beyond the retries reaches the caller as the SDK’s typed error', async () => {
    const server = await mockServer([{ error: { status: 429, retryAfter: 0.01 } }]);
    await expect(toolRunner(server.client({ maxRetries: 0 }), baseParams).runUntilDone()).rejects.toBeInstanceOf(RateLimitError);
  });

  for (const retry of ['await runner', 'iterate again'] as const) {
    it(`a stream that breaks while the loop body reads it leaves the run retryable (${retry})`, async () => {
      const server = await mockServer([
        { content: [text('partial answer that breaks'), toolUse('get_weather', { location: 'Paris' })], disconnectAfterEvents: 5 },
        { content: [toolUse('get_weather', { location: 'Paris' })] },
        { content: [text('ok')] },
      ]);
      const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, stream: true, tools: [weatherTool()] });
      const firstAttempt = runner.done();
      let caught: unknown;
      try {
        for await (const stream of runner) {
          for await (const _event of stream) {
            // The README's Streaming example reads every event here.
          }
        }
      } catch (error) {
        caught = error;
      }
      // The SDK's own stream error escaped the loop body; the attempt failed with a ReplyError that holds it; nothing was appended.
      expect(caught).toBeInstanceOf(AnthropicError);
      await expect(firstAttempt).rejects.toBeInstanceOf(ReplyError);
      await expect(firstAttempt).rejects.toMatchObject({ cause: caught });
      expect(runner.params.messages).toEqual(baseParams.messages);
      let final;
      if (retry === 'await runner') {
        final = await runner;
      } else {
        for await (const stream of runner) final = await stream.finalMessage();
      }
      expect(final!.content[0]).toMatchObject({ text: 'ok' });
      expect(server.requests).toHaveLength(3);
      expect(wire(server.requests[1]!).body).toEqual(wire(server.requests[0]!).body);
      expect(historyProblems(runner.params.messages)).toEqual([]);
      expect(runner.params.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    });
  }

  it("a body that breaks while it is read with a plain Error (as workerd and Bun raise it) is a ReplyError; the SDK's refusal to send without a key is not", async () => {
    const server = await mockServer([{ content: [text('unread')] }]);
    // A 200 whose body fails mid-read, with the plain Error a runtime's fetch raises there.
    const broken: typeof fetch = async () =>
      new Response(new ReadableStream({ pull: (controller) => controller.error(new Error('Network connection lost.')) }), { status: 200, headers: { 'content-type': 'application/json' } });
    const error = await toolRunner(server.client({ fetch: broken, maxRetries: 0 }), baseParams).runUntilDone().catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ReplyError);
    expect((error as ReplyError).cause).toMatchObject({ message: 'Network connection lost.' });
    const keyless = server.client({ apiKey: null, maxRetries: 0 });
    for (const stream of [false, true]) {
      const refused = await toolRunner(keyless, { ...baseParams, stream }).runUntilDone().catch((thrown: unknown) => thrown);
      expect(refused).not.toBeInstanceOf(ReplyError);
      expect((refused as Error).message).toMatch(/^Could not resolve authentication method/);
    }
    expect(server.requests).toHaveLength(0);
  });

  for (const stream of [false, true]) it(`a client middleware's own error, thrown before the request goes, reaches the caller as the SDK's runner gives it, not as a ReplyError (stream: ${stream})`, async () => {
    class PolicyError extends Error {}
    const server = await mockServer([{ content: [text('never')] }]);
    const policy = async () => {
      throw new PolicyError('blocked by policy');
    };
    const client = server.client({ maxRetries: 0, middleware: [policy] } as never);
    const error = await toolRunner(client, { ...baseParams, stream }).runUntilDone().catch((thrown: unknown) => thrown);
    const sdkError = await client.beta.messages.toolRunner({ ...baseParams, tools: [], stream } as never).runUntilDone().catch((thrown: unknown) => thrown);
    expect(error).not.toBeInstanceOf(ReplyError);
    expect([(error as Error).constructor, (error as Error).message]).toEqual([(sdkError as Error).constructor, (sdkError as Error).message]);
    expect((error as Error).message).toBe('blocked by policy');
    expect(server.requests).toHaveLength(0);
  });

  it('a body that is no JSON over an SDK thread, and a stream that breaks inside a client\'s own create (as a durable step client reads one): each a ReplyError, as from a plain client', async () => {
    const server = await mockServer([{ content: [text('x')], malformed: true }, { content: [text('The primary began to answer, a long text')], disconnectAfterEvents: 3 }]);
    const thread = server.client({ maxRetries: 0 }).beta.messages.thread({ ...baseParams } as never);
    expect(await toolRunner(thread, {}).runUntilDone().catch((thrown: unknown) => thrown)).toBeInstanceOf(ReplyError);
    const sdk = server.client({ maxRetries: 0 });
    const wrapper = { beta: { messages: { create: async (body: never, options: never) => sdk.beta.messages.stream(body, options).finalMessage(), stream: () => { throw new Error('not used'); } } } };
    const error = await toolRunner(wrapper as never, baseParams).runUntilDone().catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ReplyError);
  });

  it('output_format and output_config.format both given: refused when the runner is made, with the SDK runner\'s error', () => {
    const client = new Anthropic({ apiKey: 'none' });
    const params = { ...baseParams, output_format: { type: 'json_schema', schema: { type: 'object' } }, output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } } as never;
    const thrownBy = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const ours = thrownBy(() => toolRunner(client, params));
    const sdk = thrownBy(() => client.beta.messages.toolRunner({ ...(params as object), tools: [] } as never));
    expect(ours).toBeInstanceOf(AnthropicError);
    expect((ours as Error).message).toBe((sdk as Error).message);
  });

  it('a stream broken mid-reply is never half-appended; iterating again sends the same request', async () => {
    const server = await mockServer([
      { content: [text('partial answer that breaks'), toolUse('get_weather', { location: 'Paris' })], disconnectAfterEvents: 5 },
      { content: [text('ok')] },
    ]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, stream: true, tools: [weatherTool()] });
    await expect(runner.runUntilDone()).rejects.toThrow();
    expect(runner.params.messages).toEqual(baseParams.messages);
    expect(runner.iteration).toBe(1);
    await runner;
    expect(wire(server.requests[1]!).body).toEqual(wire(server.requests[0]!).body);
  });

  it('a stream that breaks after message_stop says so: the message was complete, the stream was not', async () => {
    const server = await mockServer([
      { content: [text('whole')], disconnectAfterEvents: 1_000 },
      { content: [text('partial answer that breaks')], disconnectAfterEvents: 5 },
      { content: [text('ok')] },
    ]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, stream: true });
    const afterTheMessage = await runner.runUntilDone().catch((e: unknown) => e);
    expect(afterTheMessage).toBeInstanceOf(ReplyError);
    expect((afterTheMessage as Error).message).toMatch(/^The reply stream broke after the message was complete, before the stream ended \(.+\)\. Nothing of it was added to the history/);
    const midReply = await runner.runUntilDone().catch((e: unknown) => e);
    expect((midReply as Error).message).toMatch(/^The reply stream broke before the message was complete \(.+\)\. Nothing of it was added/);
    await runner;
    expect(runner.params.messages.at(-1)).toMatchObject({ content: [{ text: 'ok' }] });
  });

  it("a stream broken after its message was whole counts the whole message's usage (it was paid for; none was counted)", async () => {
    const server = await mockServer([{ content: [text('whole')], usage: { input_tokens: 100, output_tokens: 50 }, disconnectAfterEvents: 1_000 }, { content: [text('ok')], usage: { input_tokens: 7, output_tokens: 3 } }]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, stream: true });
    await expect(runner.runUntilDone()).rejects.toThrow(/after the message was complete/);
    expect(runner.usage).toMatchObject({ input_tokens: 100, output_tokens: 50 });
    await runner;
    expect(runner.usage).toMatchObject({ input_tokens: 107, output_tokens: 53 });
  });

  it("the SDK's APIConnectionError of a connection lost while the reply was read (SDK >= 1.17) is a ReplyError, as the TypeError it wraps was", () => {
    const lost = new APIConnectionError({ cause: new TypeError('terminated') });
    const broken = ReplyError.from(lost, true, true);
    expect(broken).toBeInstanceOf(ReplyError);
    expect((broken as Error).message).toBe('The reply stream broke before the message was complete (terminated). Nothing of it was added to the history; iterate again to send the request again.');
    expect((broken as Error).cause).toBe(lost);
    expect((ReplyError.from(lost, false, true) as Error).message).toMatch(/^The API's reply could not be read \(terminated\)/);
    // Another runtime's words (Deno's): the same.
    const denoLost = new APIConnectionError({ cause: new TypeError('error reading a body from connection') });
    expect((ReplyError.from(denoLost, true, true) as Error).message).toMatch(/^The reply stream broke before the message was complete \(error reading a body from connection\)/);
    // Before any reply was read (the connection never made), and a timeout: the SDK's error as it is.
    expect(ReplyError.from(lost, true, false)).toBe(lost);
    const timedOut = new APIConnectionTimeoutError();
    expect(ReplyError.from(timedOut, true, true)).toBe(timedOut);
  });
  it('a message cut inside an emoji keeps the pair whole, and counts what it left out exactly', () => {
    // 499 characters, then an emoji (two UTF-16 units) across the 500th: the cut keeps 499, not half the pair.
    const said = `${'a'.repeat(499)}😀${'b'.repeat(99)}`;
    const message = (ReplyError.from(new Error(said), true, true) as Error).message;
    expect(message).toContain(`(${'a'.repeat(499)}… (101 more characters: see the cause))`);
  });
});

describe('a streamed tool input that is no JSON', () => {
  it("is a ReplyError whose message quotes the SDK's error cut short (it quotes the whole input) and still says what to do; the cause keeps it whole", async () => {
    const input = `{"query": "${'x'.repeat(300_000)}"}}`;
    const { client, close } = await sseServer([
      [
        { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-5-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 0 } } },
        { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} } },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: input } },
        { type: 'content_block_stop', index: 0 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } },
        { type: 'message_stop' },
      ],
    ]);
    try {
      const lookup = tool({ name: 'lookup', inputSchema: { type: 'object', properties: { query: { type: 'string' } } }, run: () => 'found' });
      const error = await toolRunner(client, { ...baseParams, stream: true, tools: [lookup] }).runUntilDone().then(() => undefined, (thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(ReplyError);
      const { message, cause } = error as ReplyError & { cause: Error };
      // 300 kB of the model's input in the message put its last words, what to do, out of any log line's reach.
      expect(message.length).toBeLessThan(1_000);
      expect(message).toMatch(/^The reply stream broke before the message was complete \(Unable to parse tool parameter JSON from model\. .*x… \(\d+ more characters: see the cause\)\)\. Nothing of it was added to the history; iterate again to send the request again\.$/);
      expect(cause.message).toContain(input);
    } finally {
      await close();
    }
  });
});

describe('abort (options.signal)', () => {
  it('aborts a request in flight', async () => {
    const server = await mockServer([{ content: [text('late')], delayMs: 2_000 }]);
    const controller = new AbortController();
    const runner = toolRunner(server.client(), baseParams, { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(APIUserAbortError);
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('aborts running tools: their signals fire, unfinished calls get an aborted result, the history stays valid', async () => {
    const controller = new AbortController();
    let toolSignal: AbortSignal | undefined;
    const hanging = tool({
      name: 'hang',
      inputSchema: { type: 'object' },
      run: (_input, context) => {
        toolSignal = context.signal;
        return new Promise<string>(() => {});
      },
    });
    const quick = tool({ name: 'quick', inputSchema: { type: 'object' }, run: () => 'done' });
    const server = await mockServer([
      { content: [toolUse('quick', {}, 'toolu_q'), toolUse('hang', {}, 'toolu_h')] },
      { content: [text('never requested')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [quick, hanging] }, { signal: controller.signal });
    const run = runner.runUntilDone();
    await sleep(100);
    controller.abort();
    await expect(run).rejects.toBeInstanceOf(APIUserAbortError);
    expect(toolSignal?.aborted).toBe(true);
    const messages = runner.params.messages;
    expect(historyProblems(messages)).toEqual([]);
    expect(messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_q', content: 'done' },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_h',
          is_error: true,
          content: "Error: the call to 'hang' was aborted before it finished.",
        },
      ],
    });
    expect(server.requests).toHaveLength(1);
  });

  it("aborted while a tool source's tools() is slow: the run rejects at once with the abort error, the source gets the signal, the history keeps the results", async () => {
    const controller = new AbortController();
    const given: Array<AbortSignal | undefined> = [];
    let slow = false;
    // A source that ignores the signal it is given (5 s), as a source written before it existed would.
    const source = {
      kind: 'tool-source' as const,
      tools: (options?: { signal?: AbortSignal }) => {
        given.push(options?.signal);
        return slow ? new Promise<never[]>((resolve) => setTimeout(() => resolve([]), 5_000)) : [];
      },
    };
    const slowDown = tool({ name: 'slow_down', inputSchema: { type: 'object' }, run: () => ((slow = true), 'ok') });
    const server = await mockServer([{ content: [toolUse('slow_down', {}, 'toolu_s')] }, { content: [text('never requested')] }]);
    const ends: unknown[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [slowDown, source] }, { signal: controller.signal, onEvent: (event) => event.type === 'run.end' && ends.push(event.error) });
    const started = performance.now();
    const run = runner.runUntilDone();
    await expect.poll(() => slow).toBe(true);
    await sleep(50);
    controller.abort();
    await expect(run).rejects.toBeInstanceOf(APIUserAbortError);
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(runner.stoppedBy).toBe('abort');
    expect(ends).toHaveLength(1);
    expect(given).toEqual([controller.signal, controller.signal]);
    expect(server.requests).toHaveLength(1);
    const messages = runner.params.messages;
    expect(historyProblems(messages)).toEqual([]);
    expect(messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_s', content: 'ok' }] });
  });

  it('a whole reply that fails (an API error, an onMessage hook that throws): one run.end, with the error', async () => {
    for (const fault of ['api', 'hook'] as const) {
      const server = await mockServer(fault === 'api' ? [{ error: { status: 400 } }] : [{ content: [text('hi')] }]);
      const ends: unknown[] = [];
      const hooks = fault === 'hook' ? { onMessage: () => { throw new Error('hook failed'); } } : undefined;
      const runner = toolRunner(server.client({ maxRetries: 0 }), baseParams, { hooks, onEvent: (event) => event.type === 'run.end' && ends.push(event.error) });
      await expect(runner.runUntilDone()).rejects.toThrow();
      expect(ends).toHaveLength(1);
      expect(ends[0]).toBeInstanceOf(Error);
      expect(runner.stoppedBy).toBe('error');
    }
  });

  it('aborted while the loop body reads a stream: the run rejects with the abort error, stoppedBy abort', async () => {
    const server = await mockServer([
      { content: [text('a reply that stalls')], stallAfterEvents: 3 },
      { content: [text('the whole reply')] },
    ]);
    const controller = new AbortController();
    const ends: unknown[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, stream: true }, { signal: controller.signal, onEvent: (event) => event.type === 'run.end' && ends.push(event.error) });
    const done = runner.done();
    setTimeout(() => controller.abort(), 100);
    const read = async () => {
      for await (const stream of runner) for await (const _event of stream);
    };
    await expect(read()).rejects.toBeInstanceOf(APIUserAbortError);
    await expect(done).rejects.toBeInstanceOf(APIUserAbortError);
    expect(runner.stoppedBy).toBe('abort');
    expect(ends).toHaveLength(1);
    expect(ends[0]).toBeInstanceOf(APIUserAbortError);
    expect(runner.params.messages).toEqual(baseParams.messages);
  });
});

describe('a 200 whose body is no message', () => {
  it("(a proxy's error envelope) is a reply that could not be read, on a thread and off it: nothing added, and iterating again sends the request again", async () => {
    let answers = 0;
    // A proxy of its own: the kit's server answers only messages and the API's errors.
    const proxy = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        answers++;
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const client = new Anthropic({ apiKey: 'test-key', baseURL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, maxRetries: 0 });
      for (const thread of [undefined, false as const]) {
        const runner = toolRunner(client, { ...baseParams, ...(thread === false && { thread }) });
        const error = await runner.runUntilDone().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ReplyError);
        expect((error as Error).message).toBe(
          "The API's reply could not be read (the body is no message: an object with type, error (no content blocks and usage)). Nothing of it was added to the history; iterate again to send the request again.",
        );
        expect(runner.params.messages).toEqual(baseParams.messages);
        const before = answers;
        await runner.runUntilDone().catch(() => undefined);
        expect(answers).toBe(before + 1);
      }
    } finally {
      proxy.close();
    }
  });
});

describe('a 200 whose body has no assistant role', () => {
  it.each([false, true])('(a gateway that leaves `role` out, stream %s) is a reply that could not be read: the history is never given a message of no role', async (stream) => {
    const reply = { id: 'msg_1', type: 'message', model: 'claude-sonnet-5-5', content: [{ type: 'text', text: 'Sunny.' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 2 } };
    let answers = 0;
    const gateway = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        answers++;
        if (!stream) {
          response.writeHead(200, { 'content-type': 'application/json' });
          return void response.end(JSON.stringify(reply));
        }
        const { content, stop_reason, usage, ...head } = reply;
        const events = [
          { type: 'message_start', message: { ...head, content: [], stop_reason: null, usage } },
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: content[0]!.text } },
          { type: 'content_block_stop', index: 0 },
          { type: 'message_delta', delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: 2 } },
          { type: 'message_stop' },
        ];
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join(''));
      });
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    try {
      const client = new Anthropic({ apiKey: 'test-key', baseURL: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`, maxRetries: 0 });
      const runner = toolRunner(client, { ...baseParams, thread: false, stream });
      const error = await runner.runUntilDone().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReplyError);
      // Streamed too, the reply could not be read: the stream did not break (it ended with its message_stop).
      expect((error as Error).message).toBe(`The API's reply could not be read (the body is no message: a message of role undefined, not "assistant"). Nothing of it was added to the history; iterate again to send the request again.`);
      expect(runner.params.messages).toEqual(baseParams.messages);
      expect(historyProblems(runner.params.messages)).toEqual([]);
      expect(answers).toBe(1);
    } finally {
      gateway.close();
    }
  });
});

describe('a 200 whose message holds a block that is none', () => {
  it.each([
    ['a null block', [null], 'block 0 is not a content block (an object with a type): null'],
    ['a block without a type', [{ type: 'text', text: 'Looking.' }, { text: 'hi' }], 'block 1 is not a content block (an object with a type): an object'],
    ['a call without an id', [{ type: 'tool_use', name: 'get_weather', input: { location: 'Paris' } }], 'tool_use block 0 has no string id'],
    ['a call without a name', [{ type: 'tool_use', id: 'toolu_1', input: { location: 'Paris' } }], 'tool_use block 0 has no string name'],
  ])('(%s, from a gateway) is a reply that could not be read: nothing kept, no call run, no TypeError', async (_case, content, said) => {
    let answers = 0;
    const gateway = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        answers++;
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-5-5', content, stop_reason: 'tool_use', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 2 } }));
      });
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    try {
      const client = new Anthropic({ apiKey: 'test-key', baseURL: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`, maxRetries: 0 });
      const calls: string[] = [];
      const runner = toolRunner(client, { ...baseParams, thread: false, max_iterations: 2, tools: [weatherTool(calls)] });
      const error = await runner.runUntilDone().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReplyError);
      expect((error as Error).message).toBe(`The API's reply could not be read (the body is no message: a message whose ${said}). Nothing of it was added to the history; iterate again to send the request again.`);
      expect(runner.params.messages).toEqual(baseParams.messages);
      expect(calls).toEqual([]);
      expect(answers).toBe(1);
    } finally {
      gateway.close();
    }
  });
});

describe('a stream whose events skip the start of a block', () => {
  it('(a content_block_start lost by a proxy) is a reply that could not be read: the history never keeps the reply without the call the server holds', async () => {
    const head = { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-5-5', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } };
    const { client, close } = await sseServer([
      [
        { type: 'message_start', message: head },
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Looking.' } },
        { type: 'content_block_stop', index: 0 },
        // Block 1's content_block_start (a get_weather call) never came.
        { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"location":"Paris"}' } },
        { type: 'content_block_stop', index: 1 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 9 } },
        { type: 'message_stop' },
      ],
    ]);
    try {
      const calls: string[] = [];
      const runner = toolRunner(client, { ...baseParams, thread: false, stream: true, max_iterations: 1, tools: [weatherTool(calls)] });
      const error = await runner.runUntilDone().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ReplyError);
      expect((error as Error).message).toBe(
        "The API's reply could not be read (its events skipped the start of block 1: a content_block_delta came before its content_block_start). Nothing of it was added to the history; iterate again to send the request again.",
      );
      expect(runner.params.messages).toEqual(baseParams.messages);
      expect(calls).toEqual([]);
    } finally {
      await close();
    }
  });
});
