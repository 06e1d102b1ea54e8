/** What the real SDK client makes of every response form and fault the local server produces. */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  type Anthropic,
  AuthenticationError,
  BadRequestError,
  InternalServerError,
  RateLimitError,
} from '@anthropic-ai/sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { OAuth2Client } from 'google-auth-library';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { type MockServer, type RecordedRequest, type Step, createMockServer, historyProblems, serverToolUse, text, thinking, toolResults, toolUse, webSearchResult } from 'tool-runner/testing';
import { mockServer, sleep, wire } from './helpers.js';

const body = { model: 'claude-sonnet-5-5', max_tokens: 100, messages: [{ role: 'user' as const, content: 'Hello there' }] };

describe('JSON replies', () => {
  it('parses into a message with API-like ids, an inferred stop_reason, derived usage and a request id', async () => {
    const server = await mockServer([{ content: [text('Hi'), toolUse('get_weather', { city: 'Paris' })] }, { content: [text('Bye')] }]);
    const client = server.client();
    const first = await client.beta.messages.create(body);
    expect(first.id).toMatch(/^msg_01[0-9A-Za-z]{22}$/);
    expect(first.content[1]).toMatchObject({ type: 'tool_use', id: expect.stringMatching(/^toolu_01[0-9A-Za-z]{22}$/), input: { city: 'Paris' } });
    expect(first.stop_reason).toBe('tool_use');
    expect(first.model).toBe('claude-sonnet-5-5');
    const requestChars = JSON.stringify(['', [], body.messages]).length;
    expect(first.usage.input_tokens).toBe(Math.ceil(requestChars / 4));
    expect(first.usage.output_tokens).toBeGreaterThan(0);
    expect(first._request_id).toMatch(/^req_01/);
    // Every field the SDK types as required is there, nullable ones as the API sends them.
    expect(first.usage).toMatchObject({
      cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      server_tool_use: null,
      service_tier: 'standard',
    });
    for (const key of ['fallback_credit', 'inference_geo', 'iterations', 'output_tokens_details', 'speed']) expect(first.usage).toHaveProperty(key, null);
    const second = await client.beta.messages.create(body);
    expect(second.stop_reason).toBe('end_turn');
    server.assertComplete();
  });

  it('scripted usage, stop_reason, stop_sequence and container are kept', async () => {
    const server = await mockServer([
      {
        content: [text('x')],
        stop_reason: 'stop_sequence',
        stop_sequence: 'END',
        usage: { input_tokens: 7, cache_read_input_tokens: 3 },
        container: { id: 'container_1' },
      },
    ]);
    const message = await server.client().beta.messages.create(body);
    expect(message).toMatchObject({
      stop_reason: 'stop_sequence',
      stop_sequence: 'END',
      usage: { input_tokens: 7, cache_read_input_tokens: 3 },
      container: { id: 'container_1' },
    });
  });

  it('every reply carries stop_details and diagnostics (null unless scripted), JSON and SSE alike; a refusal can script its stop_details', async () => {
    // The fields left out are sent as null, as the API sends them.
    const scripted = { category: 'cyber' as const, explanation: 'Not this.' };
    const refusal = { type: 'refusal', ...scripted, fallback_credit_token: null, fallback_has_prefill_claim: null, recommended_model: null };
    const steps = [{ content: [text('Hi')] }, { content: [text('No.')], stop_reason: 'refusal' as const, stop_details: scripted }];
    const server = await mockServer([...steps, ...steps]);
    const client = server.client();
    const json = [await client.beta.messages.create(body), await client.beta.messages.create(body)];
    const streamed = [await client.beta.messages.stream(body).finalMessage(), await client.beta.messages.stream(body).finalMessage()];
    for (const [plain, refused] of [json, streamed]) {
      expect(plain).toHaveProperty('stop_details', null);
      expect(plain).toHaveProperty('diagnostics', null);
      expect(refused).toMatchObject({ stop_reason: 'refusal', diagnostics: null });
      expect(refused!.stop_details).toEqual(refusal);
    }
    // The stream sends them where the API does: stop_details in message_delta's delta, null in message_start's message.
    server.setSteps([steps[1]!]);
    const events: any[] = [];
    // A copy of each event: the SDK builds its message on message_start's.
    await client.beta.messages.stream(body).on('streamEvent', (event) => events.push(structuredClone(event))).finalMessage();
    server.assertComplete();
    expect(events.find((event) => event.type === 'message_start').message).toMatchObject({ stop_details: null, diagnostics: null });
    expect(events.find((event) => event.type === 'message_delta').delta).toEqual({ stop_reason: 'refusal', stop_sequence: null, stop_details: refusal, container: null });
  });

  it('a step function gets the recorded request; every request is recorded with body, headers and time', async () => {
    const server = await mockServer([
      async (request) => ({ content: [text(`you said: ${wire(request).messages[0].content}`)] }),
    ]);
    const before = performance.now();
    const message = await server.client().beta.messages.create(body, { headers: { 'x-trace': 't1' } });
    expect(message.content[0]).toMatchObject({ text: 'you said: Hello there' });
    const [request] = server.requests;
    expect(request).toMatchObject({ index: 0, method: 'POST', path: '/v1/messages', body });
    expect(request!.headers['x-trace']).toBe('t1');
    expect(request!.headers['authorization']).toBe('Bearer test-key');
    expect(request!.time).toBeGreaterThanOrEqual(before);
  });

  it('a long test may empty requests as it goes: index counts on, and a request past the script is named by it', async () => {
    const server = await mockServer([{ content: [text('one')] }, { content: [text('two')] }]);
    await server.client().beta.messages.create(body);
    server.requests.length = 0;
    await server.client().beta.messages.create(body);
    expect(server.requests.map((request) => request.index)).toEqual([1]);
    await expect(server.client({ maxRetries: 0 }).beta.messages.create(body)).rejects.toThrow(/request #2 came after the last step/);
  });

  it('delayMs holds the first byte', async () => {
    const server = await mockServer([{ content: [text('late')], delayMs: 150 }]);
    const started = performance.now();
    await server.client().beta.messages.create(body);
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
  });
});

describe('SSE replies', () => {
  it('streams message_start, ping, block start/delta/stop, message_delta and message_stop in order', async () => {
    const server = await mockServer([
      {
        content: [thinking('Let me think about it.'), text('The answer is 42.'), toolUse('calc', { expression: '6 * 7', note: 'long enough to split' })],
        chunkSize: 5,
      },
    ]);
    const stream = server.client().beta.messages.stream(body);
    const events: string[] = [];
    const deltas: Record<string, number> = {};
    for await (const event of stream) {
      events.push(event.type);
      if (event.type === 'content_block_delta') deltas[event.delta.type] = (deltas[event.delta.type] ?? 0) + 1;
    }
    const message = await stream.finalMessage();
    expect(events[0]).toBe('message_start');
    expect(events.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(events.filter((type) => type === 'content_block_start')).toHaveLength(3);
    expect(events.filter((type) => type === 'content_block_stop')).toHaveLength(3);
    expect(deltas['thinking_delta']).toBeGreaterThan(1);
    expect(deltas['signature_delta']).toBe(1);
    expect(deltas['text_delta']).toBe(Math.ceil('The answer is 42.'.length / 5));
    expect(deltas['input_json_delta']).toBeGreaterThanOrEqual(3);
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Let me think about it.', signature: 'c2lnbmF0dXJl' },
      { type: 'text', text: 'The answer is 42.', citations: null },
      expect.objectContaining({ type: 'tool_use', name: 'calc', input: { expression: '6 * 7', note: 'long enough to split' } }),
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(wire(server.requests[0]!).body.stream).toBe(true);
  });

  it('server tool blocks stream as the API sends them', async () => {
    const call = serverToolUse('web_search', { query: 'tool runners' }, 'srvtoolu_1');
    const result = webSearchResult('srvtoolu_1', [{ url: 'https://example.com', title: 'Example' }]);
    const server = await mockServer([{ content: [call, result, text('Found.')] }]);
    const message = await server.client().beta.messages.stream(body).finalMessage();
    expect(message.content[0]).toEqual(call);
    expect(message.content[1]).toEqual(result);
  });

  it('a reply that searched or fetched is billed for it in its usage, as the API bills it (an error result is not); a container has its skills, null', async () => {
    const fetchError = { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_3', content: { type: 'web_fetch_tool_result_error', error_code: 'url_not_accessible' } };
    const steps = [
      {
        content: [
          serverToolUse('web_search', { query: 'a' }, 'srvtoolu_1'),
          webSearchResult('srvtoolu_1', [{ url: 'https://a.example', title: 'A' }]),
          serverToolUse('web_search', { query: 'b' }, 'srvtoolu_2'),
          webSearchResult('srvtoolu_2', [{ url: 'https://b.example', title: 'B' }]),
          serverToolUse('web_fetch', { url: 'https://c.example' }, 'srvtoolu_3'),
          fetchError as never,
          text('Found.'),
        ],
        container: { id: 'container_1' },
      },
      { content: [text('No search.')], usage: { server_tool_use: { web_search_requests: 0, web_fetch_requests: 4 } } },
      { content: [text('No search.')] },
    ];
    const server = await mockServer(steps);
    const whole = await server.client().beta.messages.create(body);
    expect(whole.usage.server_tool_use).toEqual({ web_search_requests: 2, web_fetch_requests: 0 });
    expect(whole.container).toEqual({ id: 'container_1', expires_at: expect.any(String), skills: null });
    // Scripted usage is kept as scripted; a reply without server tools has none.
    expect((await server.client().beta.messages.create(body)).usage.server_tool_use).toEqual({ web_search_requests: 0, web_fetch_requests: 4 });
    expect((await server.client().beta.messages.create(body)).usage.server_tool_use).toBeNull();
    server.setSteps(steps.slice(0, 1));
    const streamed = await server.client().beta.messages.stream(body).finalMessage();
    expect(streamed.usage.server_tool_use).toEqual({ web_search_requests: 2, web_fetch_requests: 0 });
    expect(streamed.container).toEqual(whole.container === null ? null : { ...whole.container, expires_at: expect.any(String) });
  });

  it("a reply handed to a fallback model (a fallback block) is labelled with that model, whole as streamed: the stream starts as the model asked's", async () => {
    const handed = { type: 'fallback', from: { model: 'claude-sonnet-5-5' }, to: { model: 'claude-haiku-5-5' }, trigger: { type: 'refusal' } };
    const step = { content: [text('I cannot help with that.'), handed as never, text('Here is the answer.')], stop_reason: 'end_turn' as const };
    const server = await mockServer([step, step]);
    const whole = await server.client().beta.messages.create(body);
    const stream = server.client().beta.messages.stream(body);
    const started: string[] = [];
    stream.on('streamEvent', (event) => event.type === 'message_start' && started.push(event.message.model));
    const streamed = await stream.finalMessage();
    expect(whole.model).toBe('claude-haiku-5-5');
    expect(streamed.model).toBe('claude-haiku-5-5');
    expect(started).toEqual(['claude-sonnet-5-5']);
  });

  it("webSearchResult() needs no Node Buffer (a page's block builders, as the README says): its content encoded as Node encodes it, UTF-8 in base64", () => {
    const results = [{ url: 'https://example.com', title: 'Café', content: 'Crème brûlée 🍮' }, { url: 'https://b.example', title: 'B' }];
    const inNode = webSearchResult('srvtoolu_1', results);
    const { Buffer: nodeBuffer } = globalThis;
    // A page has no Buffer: it threw "Buffer is not defined" there.
    Reflect.deleteProperty(globalThis, 'Buffer');
    try {
      expect(webSearchResult('srvtoolu_1', results)).toEqual(inNode);
    } finally {
      globalThis.Buffer = nodeBuffer;
    }
    expect((inNode as { content: Array<{ encrypted_content: string }> }).content.map((item) => nodeBuffer.from(item.encrypted_content, 'base64').toString())).toEqual(['Crème brûlée 🍮', 'B']);
  });

  it('a cited text block streams its citations as citations_delta events, as the API does', async () => {
    const citation = { type: 'char_location' as const, cited_text: 'The sky is blue.', document_index: 0, document_title: 'Sky', start_char_index: 0, end_char_index: 16, file_id: null };
    const second = { ...citation, cited_text: 'It is blue.', start_char_index: 17, end_char_index: 28 };
    const server = await mockServer([{ content: [text('As the document says, '), { type: 'text', text: 'the sky is blue', citations: [citation, second] }] }]);
    const stream = server.client().beta.messages.stream(body);
    const heard: unknown[] = [];
    const deltas: string[] = [];
    stream.on('citation', (cited) => heard.push(cited));
    stream.on('streamEvent', (event) => {
      if (event.type === 'content_block_delta') deltas.push(`${event.index}:${event.delta.type}`);
    });
    const message = await stream.finalMessage();
    expect(heard).toEqual([citation, second]);
    expect(deltas.filter((d) => d.endsWith('citations_delta'))).toEqual(['1:citations_delta', '1:citations_delta']);
    expect(message.content).toEqual([
      { type: 'text', text: 'As the document says, ', citations: null },
      { type: 'text', text: 'the sky is blue', citations: [citation, second] },
    ]);
  });

  it('eventDelayMs spaces the events out', async () => {
    const server = await mockServer([{ content: [text('abcdefghij')], chunkSize: 2, eventDelayMs: 20 }]);
    const times: number[] = [];
    const stream = server.client().beta.messages.stream(body);
    stream.on('text', () => times.push(performance.now()));
    await stream.finalMessage();
    expect(times).toHaveLength(5);
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(70);
  });

  it('a long reply cut one character a delta streams whole (no stack overflow building its events)', async () => {
    const long = 'a'.repeat(200_000);
    const server = await mockServer({ steps: [{ content: [text(long)] }], chunkSize: 1 });
    const message = await server.client({ maxRetries: 0 }).beta.messages.stream(body).finalMessage();
    expect(message.content[0]).toMatchObject({ type: 'text', text: long });
  });

  it('deltas are cut by characters (code points): an emoji is never split in two', async () => {
    const server = await mockServer({ steps: [{ content: [text('ab🌍cd🎉')] }], chunkSize: 3 });
    const deltas: string[] = [];
    await server.client().beta.messages.stream(body).on('text', (delta) => deltas.push(delta)).finalMessage();
    expect(deltas).toEqual(['ab🌍', 'cd🎉']);
  });
});

describe('API errors', () => {
  const cases = [
    [400, BadRequestError, 'invalid_request_error'],
    [401, AuthenticationError, 'authentication_error'],
    [402, APIError, 'billing_error'],
  ] as const;
  for (const [status, ErrorClass, type] of cases) {
    it(`${status} answers with the API's error body and is not retried`, async () => {
      const server = await mockServer([{ error: { status, message: 'nope' } }]);
      const error = await server.client().beta.messages.create(body).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ErrorClass);
      expect(error).toMatchObject({ status, error: { type: 'error', error: { type, message: 'nope' } } });
      expect((error as APIError).requestID).toMatch(/^req_01/);
      expect(server.requests).toHaveLength(1);
    });
  }

  it('504 is a timeout_error (a status without an SDK class of its own: an InternalServerError)', async () => {
    const server = await mockServer([{ error: { status: 504 } }]);
    const error = await server.client({ maxRetries: 0 }).beta.messages.create(body).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 504, error: { type: 'error', error: { type: 'timeout_error' } } });
  });

  it('429 sends retry-after; the client retries and meets the next step', async () => {
    const server = await mockServer([{ error: { status: 429, retryAfter: 0.05 } }, { content: [text('ok')] }]);
    const started = performance.now();
    const message = await server.client({ maxRetries: 1 }).beta.messages.create(body);
    expect(message.content[0]).toMatchObject({ text: 'ok' });
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.time - server.requests[0]!.time).toBeGreaterThanOrEqual(45);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
  });

  it('500 and 529 overloaded_error are retried up to maxRetries, then typed errors', async () => {
    const retryFast = { retryAfter: 0.01 };
    const server = await mockServer([
      { error: { status: 500, ...retryFast } },
      { error: { status: 529, ...retryFast } },
      { error: { status: 529, ...retryFast } },
    ]);
    const error = await server.client({ maxRetries: 2 }).beta.messages.create(body).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 529, error: { error: { type: 'overloaded_error' } } });
    expect(server.requests).toHaveLength(3);
    expect(server.requests.map((request) => request.headers['x-stainless-retry-count'])).toEqual(['0', '1', '2']);
  });

  it('an error may carry headers of its own: x-should-retry: false keeps the SDK from retrying a 500', async () => {
    const server = await mockServer([{ error: { status: 500, headers: { 'x-should-retry': 'false', 'x-custom': 'yes' } } }, { content: [text('a retry would get this')] }]);
    const error = (await server.client({ maxRetries: 2 }).beta.messages.create(body).catch((e: unknown) => e)) as APIError;
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.headers?.get('x-custom')).toBe('yes');
    expect(server.requests).toHaveLength(1);
  });

  it('a rate limit with no retries left is a RateLimitError', async () => {
    const server = await mockServer([{ error: { status: 429 } }]);
    await expect(server.client({ maxRetries: 0 }).beta.messages.create(body)).rejects.toBeInstanceOf(RateLimitError);
  });

  it('an SSE error event mid-stream reaches the stream as an APIError with the error type', async () => {
    const server = await mockServer([{ content: [text('partial text here')], error: { status: 529, afterEvents: 4 } }]);
    const stream = server.client().beta.messages.stream(body);
    const error = await stream.finalMessage().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect(String((error as Error).message)).toContain('overloaded_error');
  });

  it("an SSE error event carries the error whole, details included, as a JSON error answer does", async () => {
    const error = { status: 529, message: 'Overloaded', details: { error_code: 'some_code' } };
    const server = await mockServer([{ error }, { content: [text('partial text here')], error: { ...error, afterEvents: 4 } }]);
    const client = server.client({ maxRetries: 0 });
    const json = (await client.beta.messages.create(body).catch((e: unknown) => e)) as APIError;
    const streamed = (await client.beta.messages.stream(body).finalMessage().catch((e: unknown) => e)) as APIError;
    const sent = { type: 'overloaded_error', message: 'Overloaded', details: { error_code: 'some_code' } };
    expect(json.error).toMatchObject({ type: 'error', error: sent });
    expect(streamed).toBeInstanceOf(APIError);
    expect(streamed.error).toEqual({ type: 'error', error: sent });
  });

  it('an error answer carries one request id, in its request-id header and its body', async () => {
    const server = await mockServer([{ error: { status: 400 } }, { error: { status: 529 } }]);
    const client = server.client({ maxRetries: 0 });
    for (const _status of [400, 529]) {
      const error = (await client.beta.messages.create(body).catch((e: unknown) => e)) as APIError;
      expect(error.requestID).toMatch(/^req_01/);
      expect(error.error).toMatchObject({ request_id: error.requestID });
    }
  });

  it('a fault scheduled after more events than the reply has comes after the last one', async () => {
    const faults = [{ error: { status: 529, afterEvents: 50 } }, { disconnectAfterEvents: 50 }, { stallAfterEvents: 50 }];
    const server = await mockServer(faults.map((fault) => ({ content: [text('short')], ...fault })));
    const client = server.client({ maxRetries: 0 });
    const outcomes = [];
    for (const _fault of faults) {
      const stream = client.beta.messages.stream(body);
      const seen: string[] = [];
      stream.on('streamEvent', (event) => seen.push(event.type));
      const stillWaiting = new Promise((resolve) => setTimeout(() => resolve('still waiting'), 500));
      outcomes.push(await Promise.race([stream.finalMessage().catch((e: unknown) => e), stillWaiting]));
      stream.abort();
      expect(seen.at(-1)).toBe('message_stop');
    }
    expect(outcomes[0]).toBeInstanceOf(APIError);
    expect(String((outcomes[0] as Error).message)).toContain('overloaded_error');
    // A broken connection, no status: the runtime's error (SDK 1.14), or from SDK 1.17 on an APIConnectionError wrapping it.
    expect(outcomes[1]).toBeInstanceOf(Error);
    expect((outcomes[1] as { status?: unknown }).status).toBeUndefined();
    expect(outcomes[2]).toBe('still waiting');
  });
});

describe('faults', () => {
  it('a connection dropped mid-stream fails the stream with a connection error', async () => {
    const server = await mockServer([{ content: [text('a fairly long reply that will break')], disconnectAfterEvents: 4 }]);
    const stream = server.client({ maxRetries: 0 }).beta.messages.stream(body);
    const seen: string[] = [];
    stream.on('streamEvent', (event) => seen.push(event.type));
    const error = await stream.finalMessage().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(seen.length).toBeLessThanOrEqual(4);
    expect(seen[0]).toBe('message_start');
  });

  it('a connection dropped before a JSON reply is a connection error the client retries', async () => {
    const server = await mockServer([{ disconnectAfterEvents: 0 }, { content: [text('second try')] }]);
    const message = await server.client({ maxRetries: 1 }).beta.messages.create(body);
    expect(message.content[0]).toMatchObject({ text: 'second try' });
    expect(server.requests).toHaveLength(2);
    const failing = await mockServer([{ disconnectAfterEvents: 0 }]);
    await expect(failing.client({ maxRetries: 0 }).beta.messages.create(body)).rejects.toBeInstanceOf(APIConnectionError);
  });

  it('a stream dropped before its first event has answered 200: the SDK does not retry it', async () => {
    const server = await mockServer([{ content: [text('never sent')], disconnectAfterEvents: 0 }]);
    const stream = server.client({ maxRetries: 2 }).beta.messages.stream(body);
    let connected = false;
    stream.on('connect', () => (connected = true));
    await expect(stream.finalMessage()).rejects.toThrow();
    expect(connected).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('a stream stalled before its first event has answered 200: the SDK does not time it out and retry it (it waits until aborted)', async () => {
    const server = await mockServer([{ content: [text('never sent')], stallAfterEvents: 0 }, { content: [text('a retry would get this')] }]);
    const stream = server.client({ maxRetries: 2, timeout: 200 }).beta.messages.stream(body);
    let connected = false;
    stream.on('connect', () => (connected = true));
    const outcome = await Promise.race([stream.finalMessage().catch((e: unknown) => e), sleep(800).then(() => 'still waiting')]);
    expect(outcome).toBe('still waiting');
    expect(connected).toBe(true);
    expect(server.requests).toHaveLength(1);
    stream.abort();
  });

  it('a body without model or max_tokens gets the API’s 400 and uses no step, so an offline test fails where production would', async () => {
    const server = await mockServer([{ content: [text('complete')] }]);
    const client = server.client({ maxRetries: 0 });
    const cases = [
      ['max_tokens', { model: body.model, messages: body.messages }],
      ['model', { max_tokens: 100, messages: body.messages }],
      ['messages', { model: body.model, max_tokens: 100 }],
    ] as const;
    for (const [field, partial] of cases) {
      const error = (await client.beta.messages.create(partial as never).catch((e: unknown) => e)) as APIError;
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: `${field}: Field required` } });
    }
    expect((await client.beta.messages.create(body)).content[0]).toMatchObject({ text: 'complete' });
    server.assertComplete();
  });

  it('more than four cache breakpoints (the body\'s own cache_control, tools, system blocks, message blocks, a result\'s own blocks): the API\'s 400, and no step used', async () => {
    const server = await mockServer([{ content: [text('four are taken')] }]);
    const client = server.client({ maxRetries: 0 });
    const ephemeral = { type: 'ephemeral' as const };
    const marked = (text: string) => ({ type: 'text' as const, text, cache_control: ephemeral });
    const four = {
      ...body,
      cache_control: ephemeral,
      tools: [{ name: 'lookup', input_schema: { type: 'object' as const }, cache_control: ephemeral }],
      system: [marked('You are terse.')],
      messages: [
        { role: 'user' as const, content: 'Look it up.' },
        { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'toolu_1', name: 'lookup', input: {} }] },
        { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_1', content: [marked('row 1')] }] },
      ],
    };
    const fifth = { ...four, messages: [...four.messages.slice(0, 2), { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_1', content: [marked('row 1')], cache_control: ephemeral }] }] };
    const error = (await client.beta.messages.create(fifth as never).catch((e: unknown) => e)) as APIError;
    expect(error).toBeInstanceOf(BadRequestError);
    expect(error.error).toMatchObject({ error: { type: 'invalid_request_error', message: 'A maximum of 4 blocks with cache_control may be provided. Found 5.' } });
    expect((await client.beta.messages.create(four as never)).content[0]).toMatchObject({ text: 'four are taken' });
    server.assertComplete();
  });

  it('no messages, a message with empty content, calls and results that do not pair, a custom tool name the API does not take: the API’s 400, and no step used', async () => {
    const server = await mockServer([{ content: [text('answered')] }, { content: [text('complete')] }]);
    const client = server.client({ maxRetries: 0 });
    const refused = async (sent: object) => ((await client.beta.messages.create({ ...body, ...sent } as never).catch((e: unknown) => e)) as APIError).error;
    expect(await refused({ messages: [] })).toMatchObject({ error: { type: 'invalid_request_error', message: 'messages: at least one message is required' } });
    const emptyMessage = 'messages.1: all messages must have non-empty content except for the optional final assistant message';
    for (const content of ['', []]) {
      expect(await refused({ messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content }, { role: 'user', content: 'Again' }] })).toMatchObject({ error: { message: emptyMessage } });
    }
    const named = (name: string) => ({ name, input_schema: { type: 'object' } });
    expect(await refused({ tools: [named('ok_tool'), named('files.read')] })).toMatchObject({ error: { message: "tools.1.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'" } });
    // An input schema the API refuses: composition at its top level, a property name out of its pattern (nested ones are not checked).
    const schema = (input_schema: object) => ({ name: 'tool', input_schema });
    expect(await refused({ tools: [named('ok_tool'), schema({ type: 'object', anyOf: [{ required: ['a'] }] })] })).toMatchObject({ error: { message: 'tools.1.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level' } });
    expect(await refused({ tools: [schema({ type: 'object', properties: { 'filter[id]': { type: 'string' } } })] })).toMatchObject({ error: { message: "tools.0.custom.input_schema.properties: Property keys should match pattern '^[a-zA-Z0-9_.-]{1,64}$'" } });
    // A custom tool with no input schema (a server tool, which has a `type`, needs none).
    expect(await refused({ tools: [named('ok_tool'), { name: 'no_schema', description: 'd' }] })).toMatchObject({ error: { message: 'tools.1.custom.input_schema: Field required' } });
    // Calls and results that do not pair: a call with no result in the next message, a result that answers no call of the message before.
    const call = (id: string) => ({ type: 'tool_use', id, name: 'get_weather', input: {} });
    const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'sunny' });
    const unanswered = [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: [call('toolu_a'), call('toolu_b')] }, { role: 'user', content: [result('toolu_a')] }];
    expect(await refused({ messages: unanswered })).toMatchObject({
      error: {
        type: 'invalid_request_error',
        message: 'messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message.',
      },
    });
    expect(await refused({ messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: [call('toolu_a')] }, { role: 'user', content: 'And?' }] })).toMatchObject({
      error: { message: expect.stringMatching(/^messages\.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a\./) },
    });
    const stray = [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: [call('toolu_a')] }, { role: 'user', content: [result('toolu_a'), result('toolu_z')] }];
    expect(await refused({ messages: stray })).toMatchObject({
      error: { message: 'messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_z. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.' },
    });
    expect(await refused({ messages: [{ role: 'user', content: [result('toolu_q')] }] })).toMatchObject({ error: { message: expect.stringMatching(/^messages\.0\.content\.0: unexpected `tool_use_id`/) } });
    // Taken: each call answered in the next message, text after the results.
    const answered = [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: [call('toolu_a')] }, { role: 'user', content: [result('toolu_a'), { type: 'text', text: 'Thanks' }] }];
    expect((await client.beta.messages.create({ ...body, messages: answered } as never)).content[0]).toMatchObject({ text: 'answered' });
    // Taken: an empty final assistant message (a prefill), a server tool's own name, a name of 128 characters.
    const taken = { messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: [] }], tools: [named('x'.repeat(128)), { type: 'web_search_20250305', name: 'web_search' }] };
    expect((await client.beta.messages.create({ ...body, ...taken } as never)).content[0]).toMatchObject({ text: 'complete' });
    server.assertComplete();
  });

  it('the rest of the API’s rules about a history (historyProblems): its 400, and no step used; a thread’s earlier messages, the server’s own, are not judged', async () => {
    const server = await mockServer([{ content: [text('answered')] }]);
    const client = server.client({ maxRetries: 0 });
    const refused = async (messages: unknown[]) => ((await client.beta.messages.create({ ...body, messages } as never).catch((e: unknown) => e)) as APIError).error;
    const call = (id: string) => ({ type: 'tool_use', id, name: 'get_weather', input: {} });
    const result = (id: string, more: object = {}) => ({ type: 'tool_result', tool_use_id: id, content: 'sunny', ...more });
    const asked = (...calls: object[]) => [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: calls }];
    const cases: Array<[unknown[], string]> = [
      [[...asked(call('a')), { role: 'user', content: [{ type: 'text', text: 'here:' }, result('a')] }], 'messages: message 2: tool_result a comes after a text block (block 0): results come first'],
      [[...asked(call('a'), call('a')), { role: 'user', content: [result('a')] }], 'messages: message 1: tool_use id a repeats an id of the same message'],
      [[{ role: 'user', content: [{ type: 'text', text: '  ' }] }], 'messages: message 0: text block 0 is only whitespace'],
      [[...asked(call('a')), { role: 'user', content: [result('a', { is_error: true, content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA==' } }] })] }], 'messages: message 2: tool_result a is an error with content other than text (the API takes only text there)'],
      [[...asked(call('a')), { role: 'user', content: [result('a', { is_error: true, content: [] })] }], 'messages: message 2: tool_result a is an error with empty content (the API refuses it)'],
      [[...asked(call('a')), { role: 'user', content: [result('a'), result('a')] }], 'messages: message 2: tool_use a answered twice'],
      [[{ role: 'user', content: 'Hi', id: 'msg_1' }], 'messages: message 0 has fields the API does not take: id'],
      [[{ role: 'bot', content: 'Hi' }], `messages: message 0 has role "bot": the API takes 'user', 'assistant' or 'system'`],
    ];
    for (const [messages, message] of cases) expect(await refused(messages)).toMatchObject({ error: { type: 'invalid_request_error', message } });
    // A body the SDK would not send (it reads each message), as another client may.
    const posted = await fetch(`${server.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...body, messages: [null] }) });
    expect(posted.status).toBe(400);
    expect(await posted.json()).toMatchObject({ error: { message: 'messages: message 0 is not a message (an object with role and content): null' } });
    // Results out of their calls' order are the runner's promise, not the API's rule: taken.
    const reordered = [...asked(call('a'), call('b')), { role: 'user', content: [result('b'), result('a')] }];
    expect((await client.beta.messages.create({ ...body, messages: reordered } as never)).content[0]).toMatchObject({ text: 'answered' });
    server.assertComplete();

    // Over a thread the server holds its own reply as it made it (blank text and all): only what the request sends is judged.
    const threaded = await mockServer([{ content: [text(' '), toolUse('get_weather', {}, 'toolu_t')] }, { content: [text('done')] }]);
    const runner = toolRunner(threaded.client(), { ...body, tools: [tool({ name: 'get_weather', inputSchema: z.object({}), run: () => 'sunny' })] });
    expect(textOf(await runner)).toBe('done');
  });

  it('a body with a lone surrogate’s escape (JSON.stringify of a text cut inside an emoji) gets the API’s 400 for invalid JSON, placed as it places it, and uses no step', async () => {
    const server = await mockServer([{ content: [text('taken')] }, { content: [text('taken too')] }]);
    const post = async (content: string) => {
      const raw = `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"${content}"}]}`;
      const response = await fetch(`${server.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
      return { status: response.status, message: ((await response.json()) as { error?: { message?: string } }).error?.message };
    };
    const notJson = (what: string, line: number, column: number, char: number) => ({ status: 400, message: `The request body is not valid JSON: ${what}: line ${line} column ${column} (char ${char})` });
    const start = '{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"'.length;
    // A high one alone: just after its escape. The emoji before it is one character (a code point), as in Python.
    expect(await post('😀 \\ud83d')).toEqual(notJson('no low surrogate in string', 1, start + 9, start + 8));
    // A low one alone: at its escape; a high one followed by another escape: at that escape.
    expect(await post('a\\ude00')).toEqual(notJson('invalid high surrogate in string', 1, start + 2, start + 1));
    expect(await post('\\ud83d\\ud83d')).toEqual(notJson('invalid low surrogate in string', 1, start + 7, start + 6));
    // Lines of the body count as in Python's errors.
    const spread = await fetch(`${server.url}/v1/messages`, { method: 'POST', body: '{\n  "model": "m",\n  "content": "\\ud83d"\n}' });
    expect({ status: spread.status, message: ((await spread.json()) as { error: { message: string } }).error.message }).toEqual(notJson('no low surrogate in string', 3, 21, 38));
    // Taken: a pair as escapes, a backslash before 'ud83d' (text, no escape).
    expect(await post('\\ud83d\\ude00')).toEqual({ status: 200, message: undefined });
    expect(await post('\\\\ud83d')).toEqual({ status: 200, message: undefined });
    server.assertComplete();
  });

  it('contextWindow: a longer prompt gets the API’s 400 word for word and uses no step', async () => {
    const server = await mockServer({ steps: [{ content: [text('short enough')] }], contextWindow: 50 });
    const client = server.client({ maxRetries: 0 });
    const long = { ...body, messages: [{ role: 'user' as const, content: 'x'.repeat(400) }] };
    const error = (await client.beta.messages.create(long).catch((e: unknown) => e)) as APIError;
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/^prompt is too long: \d+ tokens > 50 maximum$/) } });
    expect((await client.beta.messages.create(body)).content[0]).toMatchObject({ text: 'short enough' });
    server.assertComplete();
  });

  it('malformed JSON fails the request; a malformed SSE event fails the stream', async () => {
    const server = await mockServer([{ content: [text('x')], malformed: true }, { content: [text('y')], malformed: true }]);
    const client = server.client({ maxRetries: 0 });
    await expect(client.beta.messages.create(body)).rejects.toThrow();
    await expect(client.beta.messages.stream(body).finalMessage()).rejects.toThrow();
  });

  it('a stalled reply runs into the client timeout (and each retry meets the next step)', async () => {
    const server = await mockServer([{ content: [text('x')], stallAfterEvents: 0 }, { content: [text('y')], stallAfterEvents: 3 }]);
    const client = server.client({ maxRetries: 0, timeout: 200 });
    await expect(client.beta.messages.create(body)).rejects.toBeInstanceOf(APIConnectionTimeoutError);
    const stream = client.beta.messages.stream(body);
    const error = await Promise.race([stream.finalMessage().catch((e: unknown) => e), new Promise((resolve) => setTimeout(() => resolve('still waiting'), 1_000))]);
    // The SDK's timeout covers the wait for the response headers, not the body of a stream: a stream
    // that stalls after its first events waits until the caller aborts it.
    expect(error).toBe('still waiting');
    stream.abort();
  });
});

describe('the script', () => {
  it('a request after the last step fails with a message naming the request; assertComplete reports it', async () => {
    const server = await mockServer([{ content: [text('only one')] }]);
    const client = server.client({ maxRetries: 0 });
    await client.beta.messages.create(body);
    const error = await client.beta.messages.create({ ...body, messages: [{ role: 'user', content: 'one more' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as Error).message).toMatch(/request #1 came after the last step \(1 step scripted\).*one more/);
    expect(() => server.assertComplete()).toThrow(/request #1 came after the last step/);
  });

  it('a step that throws (a failed assertion about the request) fails the request, is not retried, and assertComplete throws it', async () => {
    const server = await mockServer([
      (request) => {
        assert.equal(request.body.system, 'You are terse.');
        return { content: [text('first')] };
      },
      { content: [text('second')] },
    ]);
    // The SDK's default retries: a retry would have taken the second step.
    const error = await server.client().beta.messages.create({ ...body, system: 'You are chatty.' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as Error).message).toMatch(/step #0 threw on request #0: Expected values to be strictly equal/);
    expect(server.requests).toHaveLength(1);
    let thrown: unknown;
    try {
      server.assertComplete();
    } catch (caught) {
      thrown = caught;
    }
    expect((thrown as Error).message).toMatch(/- step #0 threw on request #0: Expected values to be strictly equal[^]*You are chatty/);
    expect((thrown as Error).cause).toBeInstanceOf(assert.AssertionError);
  });

  it('assertComplete reports each problem once: a server reused by the next test (setSteps) does not fail it for the last one', async () => {
    const server = await mockServer([{ content: [text('only one')] }]);
    const client = server.client({ maxRetries: 0 });
    await client.beta.messages.create(body);
    await client.beta.messages.create(body).catch(() => {});
    expect(() => server.assertComplete()).toThrow(/request #1 came after the last step/);
    server.setSteps([{ content: [text('the next test')] }]);
    expect((await client.beta.messages.create(body)).content[0]).toMatchObject({ text: 'the next test' });
    expect(() => server.assertComplete()).not.toThrow();
  });

  it('a step function that returns no reply fails its request with an error naming the step, which assertComplete reports', async () => {
    const server = await mockServer([(() => undefined) as never]);
    const error = await server.client({ maxRetries: 0 }).beta.messages.create(body).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/step #0 threw on request #0: the step returned undefined, not a reply/);
    expect(() => server.assertComplete()).toThrow(/step #0 threw on request #0: the step returned undefined/);
  });

  it('assertComplete throws when steps are left over', async () => {
    const server = await mockServer([{ content: [text('a')] }, { content: [text('b')] }, { content: [text('c')] }]);
    await server.client().beta.messages.create(body);
    expect(() => server.assertComplete()).toThrow(/2 of 3 steps were never requested \(the first is step #1\)/);
    // One left, of one: named as it is ("1 of 1 step were never requested (the first is step #0)" before).
    const unused = await mockServer([{ content: [text('never requested')] }]);
    expect(() => unused.assertComplete()).toThrow(/^Mock server script not complete:\n- 1 of 1 step was never requested \(step #0\)$/);
  });

  it('setSteps replaces the steps not yet used; errors name a step by its index in the list it was given in, and the call', async () => {
    const server = await mockServer([{ content: [text('a')] }, { content: [text('never')] }]);
    const client = server.client({ maxRetries: 0 });
    await client.beta.messages.create(body);
    const steps: Step[] = [{ content: [text('b')] }, () => assert.fail('not the request this test expects')];
    server.setSteps(steps);
    const second = await client.beta.messages.create(body);
    expect(second.content[0]).toMatchObject({ text: 'b' });
    // steps[1] threw: `step #1` here, where the numbers counted on across scripts named it `step #2`, a step the test has not.
    await expect(client.beta.messages.create(body)).rejects.toThrow(/step #1 of setSteps #1 threw on request #2: not the request this test expects/);
    await expect(client.beta.messages.create(body)).rejects.toThrow(/request #3 came after the last step \(2 steps scripted by setSteps #1\)/);
    server.setSteps([{ content: [text('c')] }, { content: [text('never either')] }]);
    await client.beta.messages.create(body);
    // The problems of the first setSteps, and the step left of the second, each named in its own list.
    expect(() => server.assertComplete()).toThrow(
      /- step #1 of setSteps #1 threw on request #2: [^\n]*\n- Mock server: request #3 came after the last step \(2 steps scripted by setSteps #1\)[^\n]*\n- 1 of 2 steps was never requested \(step #1 of setSteps #2\)$/,
    );
  });

  it('answers an unknown route with 404', async () => {
    const server = await mockServer([]);
    const response = await fetch(`${server.url}/v1/models`);
    expect(response.status).toBe(404);
  });
});

describe('a browser page can use the server (CORS)', () => {
  it('answers a preflight with the headers it asked for, records nothing and uses no step', async () => {
    const server = await mockServer([{ content: [text('hi')] }]);
    const preflight = await fetch(`${server.url}/v1/messages`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://127.0.0.1:1',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'anthropic-version, content-type, x-api-key, x-stainless-retry-count, x-stainless-os, bad name',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toMatch(/POST/);
    expect(preflight.headers.get('access-control-allow-headers')).toBe('anthropic-version, content-type, x-api-key, x-stainless-retry-count, x-stainless-os');
    expect(server.requests).toHaveLength(0);
    await server.client().messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    server.assertComplete();
  });

  it('allows every header a preflight asks for: user-agent (the SDK sets it, Firefox asks for it), the trace context the SDK adds when tracing, the caller’s own', async () => {
    const server = await mockServer([]);
    const askedLists = [
      'anthropic-dangerous-direct-browser-access, anthropic-version, content-type, user-agent, x-api-key, x-stainless-retry-count',
      'anthropic-version, content-type, x-api-key, traceparent, tracestate, baggage, x-team',
    ];
    for (const asked of askedLists) {
      const preflight = await fetch(`${server.url}/v1/messages`, {
        method: 'OPTIONS',
        headers: { origin: 'http://localhost:5173', 'access-control-request-method': 'POST', 'access-control-request-headers': asked },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-headers')).toBe(asked);
    }
    expect(server.requests).toHaveLength(0);
  });

  it('lets the page read request-id, retry-after and the SDK’s other retry headers, on replies and errors alike, and an error’s scripted headers', async () => {
    const server = await mockServer([
      { error: { status: 429, retryAfter: 1 } },
      { content: [text('hi')] },
      { error: { status: 529, headers: { 'X-Should-Retry': 'false', 'x-team-note': 'a' } } },
    ]);
    const post = () => fetch(`${server.url}/v1/messages`, { method: 'POST', headers: { origin: 'http://127.0.0.1:1', 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answers = [await post(), await post()];
    expect(answers.map((response) => response.status)).toEqual([429, 200]);
    for (const response of answers) {
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-expose-headers')).toBe('request-id, retry-after, retry-after-ms, x-should-retry');
      expect(response.headers.get('request-id')).toMatch(/^req_/);
    }
    const scripted = await post();
    expect(scripted.status).toBe(529);
    expect(scripted.headers.get('access-control-expose-headers')).toBe('request-id, retry-after, retry-after-ms, x-should-retry, x-team-note');
    expect(scripted.headers.get('x-should-retry')).toBe('false');
  });
});

describe('message threads', () => {
  const threaded = { ...body, betas: ['message-threads-2026-08-12'] };
  const continued = (id: string) => ({ ...threaded, thread: { type: 'continue' as const, previous_message_id: id }, messages: [{ role: 'user' as const, content: 'more' }] });

  it("a step sees the system prompt and tools the model sees: on a continue that sends none, the thread's", async () => {
    const tools = [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object' as const, properties: {} } }];
    const seen: unknown[] = [];
    const step = (request: RecordedRequest) => (seen.push({ system: request.system, tools: request.tools?.map((tool) => tool.name), sent: 'tools' in request.body }), { content: [text('ok')] });
    const server = await mockServer([step, step]);
    const client = server.client();
    const first = await client.beta.messages.create({ ...threaded, system: 'Be brief.', tools, thread: { type: 'create' } });
    await client.beta.messages.create(continued(first.id));
    expect(seen).toEqual([
      { system: 'Be brief.', tools: ['get_weather'], sent: true },
      { system: 'Be brief.', tools: ['get_weather'], sent: false },
    ]);
    expect(server.requests[1]).toMatchObject({ system: 'Be brief.', tools });
  });

  /** A thread, and a `continue` of it that gets no reply (what `fault` does); then the same `continue` again. */
  async function continueAgainAfter(fault: (server: MockServer, client: Anthropic, again: ReturnType<typeof continued>) => Promise<void>) {
    const server = await mockServer([{ content: [text('one')] }]);
    const client = server.client({ maxRetries: 0 });
    const first = await client.beta.messages.create({ ...threaded, thread: { type: 'create' } });
    await fault(server, client, continued(first.id));
    server.setSteps([{ content: [text('two')] }]);
    return client.beta.messages.create(continued(first.id));
  }

  it("a continue counts the thread's system prompt and tools, as the model sees them: the same tokens and window as without a thread", async () => {
    const system = 'You answer briefly. '.repeat(300);
    const tools = [{ name: 'lookup', description: 'Looks things up. '.repeat(100), input_schema: { type: 'object' as const } }];
    const server = await mockServer({ steps: [{ content: [text('one')] }, { content: [text('two')] }, { content: [text('one')] }], contextWindow: 2_500 });
    const client = server.client({ maxRetries: 0 });
    const first = await client.beta.messages.create({ ...threaded, system, tools, thread: { type: 'create' } });
    const next = await client.beta.messages.create(continued(first.id));
    const whole = await client.beta.messages.create({ ...body, system, tools, messages: [...body.messages, { role: 'assistant', content: first.content }, { role: 'user', content: 'more' }] });
    expect(next.usage.input_tokens).toBeGreaterThan(1_500);
    expect(next.usage.input_tokens).toBe(whole.usage.input_tokens);
    // Past the window, on a continue too.
    const longer = (await client.beta.messages.create({ ...continued(next.id), messages: [{ role: 'user', content: 'x'.repeat(4_000) }] }).catch((e: unknown) => e)) as APIError;
    expect(longer.error).toMatchObject({ error: { message: expect.stringMatching(/^prompt is too long/) } });
  });

  it('a continue that came after the last step leaves the thread free to continue', async () => {
    const reply = await continueAgainAfter(async (_server, client, again) => {
      await expect(client.beta.messages.create(again)).rejects.toThrow(/came after the last step/);
    });
    expect(reply.content[0]).toMatchObject({ text: 'two' });
  });

  it('a continue whose step threw leaves the thread free to continue', async () => {
    const reply = await continueAgainAfter(async (server, client, again) => {
      server.setSteps([() => { throw new Error('boom'); }]);
      await expect(client.beta.messages.create(again)).rejects.toThrow(/step #0 of setSteps #1 threw on request #1: boom/);
    });
    expect(reply.content[0]).toMatchObject({ text: 'two' });
  });

  /** A `continue` that stalls (JSON, or streamed), and how the client gives it up. */
  const stalls = {
    'JSON reply': (server: MockServer, client: Anthropic, again: ReturnType<typeof continued>) => {
      server.setSteps([{ stallAfterEvents: 0 }]);
      const controller = new AbortController();
      return { stalled: client.beta.messages.create(again, { signal: controller.signal }).catch((e: unknown) => e), giveUp: () => controller.abort() };
    },
    stream: (server: MockServer, client: Anthropic, again: ReturnType<typeof continued>) => {
      server.setSteps([{ content: [text('never whole')], stallAfterEvents: 2 }]);
      const stream = client.beta.messages.stream(again);
      return { stalled: stream.finalMessage().catch((e: unknown) => e), giveUp: () => stream.abort() };
    },
  };
  for (const [kind, stall] of Object.entries(stalls)) {
    it(`a stalled ${kind} holds the thread in flight until the client gives up, then frees it`, async () => {
      const reply = await continueAgainAfter(async (server, client, again) => {
        const { stalled, giveUp } = stall(server, client, again);
        while (server.requests.length < 2) await sleep(5);
        // While the first request stalls, the thread is in flight.
        const meanwhile = (await client.beta.messages.create(again).catch((e: unknown) => e)) as APIError;
        expect(meanwhile.error).toMatchObject({ error: { details: { error_code: 'thread_continue_in_flight' } } });
        giveUp();
        expect(await stalled).toBeInstanceOf(APIUserAbortError);
        await sleep(50); // the server sees the connection close
      });
      expect(reply.content[0]).toMatchObject({ text: 'two' });
    });
  }

  it('a stream whose fault comes after message_stop delivered the whole reply: the thread continues from it', async () => {
    const server = await mockServer([{ content: [text('one')], error: { status: 529, afterEvents: 99 } }, { content: [text('two')] }]);
    const client = server.client({ maxRetries: 0 });
    const stream = client.beta.messages.stream({ ...threaded, thread: { type: 'create' } });
    const ids: string[] = [];
    stream.on('streamEvent', (event) => {
      if (event.type === 'message_start') ids.push(event.message.id);
    });
    await expect(stream.finalMessage()).rejects.toThrow(/overloaded/);
    const next = await client.beta.messages.create(continued(ids[0]!));
    expect(next.content[0]).toMatchObject({ text: 'two' });
    expect(server.requests[1]!.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
  });
});

describe('close()', () => {
  it('ends the delays still running: the process ends with the server, and the waiting client gets a connection error', async () => {
    const started = performance.now();
    const output = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, ['--import', 'tsx', 'test/fixtures/close-during-delay.ts'], { timeout: 15_000 }, (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout),
      );
    });
    expect(output.trim()).toBe('APIConnectionError');
    // The reply's delay is 60 s.
    expect(performance.now() - started).toBeLessThan(10_000);
  }, 20_000);
});

describe('token counts', () => {
  const counted = { ...body, system: 'Be brief.', tools: [{ name: 'get_weather', input_schema: { type: 'object' as const } }] };

  it('count_tokens answers the input tokens a reply to the same request reports, and uses no step', async () => {
    const server = await mockServer([{ content: [text('hi')] }]);
    const client = server.client();
    const { max_tokens: _maxTokens, ...countParams } = counted;
    const count = await client.messages.countTokens(countParams);
    const betaCount = await client.beta.messages.countTokens(countParams);
    const reply = await client.messages.create(counted);
    expect(count).toEqual({ input_tokens: reply.usage.input_tokens });
    expect(betaCount).toEqual({ input_tokens: reply.usage.input_tokens });
    expect(server.requests.map((request) => request.path)).toEqual(['/v1/messages/count_tokens', '/v1/messages/count_tokens', '/v1/messages']);
    server.assertComplete();
  });

  it("Vertex's count-tokens path is served the same, without a step", async () => {
    const server = await mockServer([{ content: [text('hi')] }]);
    const authClient = new OAuth2Client();
    authClient.setCredentials({ access_token: 'offline-token', expiry_date: Date.now() + 3_600_000 });
    const vertex = new AnthropicVertex({ region: 'us-east5', projectId: 'offline-project', baseURL: `${server.url}/v1`, authClient });
    const { max_tokens: _maxTokens, ...countParams } = counted;
    const count = await vertex.messages.countTokens(countParams);
    const reply = await vertex.messages.create(counted);
    expect(count).toEqual({ input_tokens: reply.usage.input_tokens });
    expect(server.requests[0]!.path).toMatch(/\/models\/count-tokens:rawPredict$/);
    server.assertComplete();
  });
});

describe('a step written by hand', () => {
  it('takes a text block without citations (typed so, in a step), and sends it with citations null, as the API does', async () => {
    const server = await mockServer([{ content: [{ type: 'text', text: 'Hello' }] }]);
    const reply = await server.client().beta.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] });
    expect(reply.content).toEqual([{ type: 'text', text: 'Hello', citations: null }]);
  });
});

describe('toolResults', () => {
  it('reads the results the runner sent also when a message follows them: the tool changes of addTools(), a question pushed while the reply streamed', async () => {
    const lookup = tool({ name: 'lookup', inputSchema: z.object({ q: z.string() }), run: ({ q }) => `found ${q}` });
    const more = tool({ name: 'more', inputSchema: z.object({}), run: () => 'more' });
    const seen: unknown[][] = [];
    const server = await mockServer({
      eventDelayMs: 2,
      steps: [
        { content: [toolUse('lookup', { q: 'a' })] },
        (request) => (seen.push(toolResults(request).map((result) => result.content)), { content: [text('Looking again.'), toolUse('lookup', { q: 'b' })] }),
        (request) => (seen.push(toolResults(request).map((result) => result.content)), { content: [text('Done.')] }),
      ],
    });
    const runner = toolRunner(server.client(), { ...body, stream: true, tools: [lookup] });
    for await (const stream of runner) {
      // The first reply's results go with a system message of tool changes after them.
      if (runner.iteration === 1) runner.addTools(more);
      // While the second reply streams, after the loop body: the question goes after the reply's results.
      if (runner.iteration === 2) stream.once('text', () => setTimeout(() => runner.pushMessages({ role: 'user', content: 'And c?' }), 0));
    }
    expect(seen).toEqual([['found a'], ['found b']]);
    expect(server.requests[1]!.messages.at(-1)!.role).toBe('system');
    expect(server.requests[2]!.messages.at(-1)).toEqual({ role: 'user', content: 'And c?' });
    // A request whose last turn is no call (the first, a repair, a question after a final answer) has none.
    expect(toolResults(server.requests[0]!)).toEqual([]);
    expect(toolResults([...runner.params.messages, { role: 'user', content: 'Thanks.' }])).toEqual([]);
  });
});

describe('historyProblems', () => {
  const call = (id: string) => ({ type: 'tool_use' as const, id, name: 't', input: {} });
  const result = (id: string) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'ok' });
  const ask = { role: 'user' as const, content: 'hi' };
  const calls = (...ids: string[]) => ({ role: 'assistant' as const, content: ids.map(call) });
  const results = (...blocks: any[]) => ({ role: 'user' as const, content: blocks });

  it('a valid history has none: results first and in the calls’ order, text after them, a call unanswered only at the end', () => {
    expect(historyProblems([ask, calls('a', 'b'), results(result('a'), result('b'), { type: 'text', text: 'and now?' }), calls('c')])).toEqual([]);
  });

  it('finds a result that comes after another block (the API takes results first)', () => {
    expect(historyProblems([ask, calls('a', 'b'), results(result('a'), { type: 'text', text: 'x' }, result('b'))])).toEqual([
      'message 2: tool_result b comes after a text block (block 1): results come first',
    ]);
  });

  it('finds two tool_use blocks with one id, in one message or across the history (the API wants them unique)', () => {
    expect(historyProblems([ask, calls('a', 'a'), results(result('a'))])).toEqual(['message 1: tool_use id a repeats an id of the same message']);
    expect(historyProblems([ask, calls('a'), results(result('a')), calls('a'), results(result('a'))])).toEqual([
      'message 3: tool_use id a repeats the id of a tool_use in message 1',
    ]);
  });

  it('finds a call without its id or name (the API requires them); a runner answers it without failing', async () => {
    expect(historyProblems([ask, { role: 'assistant', content: [{ type: 'tool_use', id: 'a', input: {} }] }] as never)).toEqual([
      'message 1: tool_use a has no string name (the API requires them)',
    ]);
    expect(historyProblems([ask, { role: 'assistant', content: [{ type: 'tool_use', input: 'x' }] }] as never)).toEqual([
      'message 1: tool_use undefined has no string id and no string name (the API requires them)',
    ]);
    // Given such a history, the runner answers the call (no tool has no name) and the server refuses the request, as the API does.
    const server = await mockServer([{ content: [text('never')] }]);
    const look = tool({ name: 'look', inputSchema: z.object({}), run: () => 'seen' });
    const runner = toolRunner(server.client({ maxRetries: 0 }), { model: 'm', max_tokens: 10, messages: [ask, { role: 'assistant', content: [{ type: 'tool_use', id: 't0', input: {} } as never] }], tools: [look] });
    await expect(runner).rejects.toThrow(/tool_use t0 has no string name/);
  });

  it('finds a text block that is empty or only whitespace (the API refuses both)', () => {
    expect(historyProblems([{ role: 'user', content: [{ type: 'text', text: '' }] }])).toEqual(['message 0: text block 0 is empty']);
    expect(historyProblems([ask, { role: 'assistant', content: [{ type: 'text', text: '\n\n' }, call('a')] }, results(result('a'))])).toEqual([
      'message 1: text block 0 is only whitespace',
    ]);
    // Content given as a string is one text block to the API.
    expect(historyProblems([{ role: 'user', content: '  \n' }])).toEqual(['message 0 has content of only whitespace']);
  });

  it('reads a history from JSON whatever it holds: what is not a message, a block or a role the API takes is a problem, never a TypeError', () => {
    expect(() => historyProblems(null as never)).toThrow(new TypeError('historyProblems: messages must be an array of message params, got null'));
    expect(historyProblems([{ role: 'user', content: [null] }] as never)).toEqual(['message 0: block 0 is not a content block (an object with a type): null']);
    expect(historyProblems([{ role: 'user' }] as never)).toEqual(['message 0 has no content']);
    expect(historyProblems([{ role: 'bot', content: 'Hi' }] as never)).toEqual([`message 0 has role "bot": the API takes 'user', 'assistant' or 'system'`]);
    // A system message may hold no content (its output_config alone), as the SDK's type says.
    expect(historyProblems([{ role: 'user', content: 'Hi' }, { role: 'system', output_config: { effort: 'low' } }, { role: 'user', content: 'And?' }] as never)).toEqual([]);
    expect(historyProblems([ask, { role: 'assistant', content: [result('x')] }] as never)).toEqual(['message 1: tool_result x is in an assistant message (results go in the user message after the call)']);
    expect(historyProblems([{ role: 'user', content: [result('q')] }] as never)).toEqual(['message 0: tool_result q answers no tool_use of a message before it (it is the first message)']);
    expect(historyProblems([ask, calls('a'), results({ ...result('a'), is_error: true, content: [] })] as never)).toEqual(['message 2: tool_result a is an error with empty content (the API refuses it)']);
  });

  it('finds a message with fields the API does not take (a reply placed as the SDK returned it)', () => {
    const reply = { id: 'msg_1', type: 'message', model: 'm', role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Hi' }], usage: {} };
    expect(historyProblems([ask, reply as never, { role: 'user', content: 'And?' }])).toEqual(['message 1 has fields the API does not take: id, type, model, usage']);
    // A system message has fields of its own.
    expect(historyProblems([ask, { role: 'system', content: 'Be brief.', clear_at: 'next_user_message' } as never, { role: 'user', content: 'And?' }])).toEqual([]);
  });

  it('finds results out of the calls’ order (the runner keeps them in order)', () => {
    expect(historyProblems([ask, calls('a', 'b', 'c'), results(result('b'), result('a'), result('c'))])).toEqual([
      "message 2: tool_result a comes after the result of a later call: results go in the calls' order",
    ]);
  });
});

describe('a mistake in the script is a clear 400 and a reported problem, never an empty or a retried reply', () => {
  /** A server of `steps`, asked `times` times: what each answer was (an error's message, or 'answered'), and `ask` for more. */
  async function askEach(times: number, steps: Step[]) {
    const server = await mockServer(steps);
    const client = server.client({ maxRetries: 0 });
    const ask = () => client.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    const errors: string[] = [];
    for (let i = 0; i < times; i++) errors.push(await ask().then(() => 'answered', (error: Error) => error.message));
    return { server, ask, errors };
  }

  it('a block where a reply belongs, content that is no array, a block without type, a text block without text', async () => {
    const { server, ask, errors } = await askEach(4, [text('hi'), { content: text('hi') }, { content: [{ text: 'hi' }] }, { content: [{ type: 'text' }] }, { content: [text('fine')] }] as never[]);
    expect(errors).toEqual([
      expect.stringMatching(/^400 .*step #0 threw on request #0: the step is a content block \(or a list of them\), not a reply/),
      expect.stringMatching(/step #1 .*the step's content is object, not an array of blocks/),
      expect.stringMatching(/step #2 .*the step's content\[0\] is no content block \(it has no type\)/),
      expect.stringMatching(/step #3 .*the step's content\[0\] is a text block without text/),
    ]);
    expect((await ask()).content).toEqual([expect.objectContaining({ text: 'fine' })]);
    expect(() => server.assertComplete()).toThrow(/step #0 threw/);
  });

  it('a misspelt field of a step (stopReason, chunksize, contents) is a 400 naming the field meant, not a reply scripted otherwise', async () => {
    const { ask, errors } = await askEach(3, [{ content: [text('hi')], stopReason: 'max_tokens' }, { content: [text('hi')], chunksize: 2 }, { contents: [text('hi')] }, { content: [text('fine')], stop_reason: 'max_tokens' }] as never[]);
    expect(errors).toEqual([
      expect.stringMatching(/step #0 threw on request #0: the step has no field `stopReason`: did you mean `stop_reason`\?/),
      expect.stringMatching(/step #1 .*no field `chunksize`: did you mean `chunkSize`\?/),
      expect.stringMatching(/step #2 .*no field `contents`: did you mean `content`\?/),
    ]);
    expect((await ask()).stop_reason).toBe('max_tokens');
  });

  it("a step's field of no reply ({ text }, a status outside its error) is a 400 naming it; a message recorded from the API is a step as it is", async () => {
    // Each was left out: the server answered an empty reply (content [], end_turn), not the one scripted.
    const { ask, errors } = await askEach(3, [{ text: 'hi' }, { status: 429 }, { content: [text('hi')], reply: 'x' }, { content: [text('fine')] }] as never[]);
    expect(errors).toEqual([
      expect.stringMatching(/step #0 threw on request #0: the step has no field `text`: the reply's text goes in its content, \{ content: \[text\('…'\)\] \}/),
      expect.stringMatching(/step #1 .*no field `status`: it belongs in its error \(\{ error: \{ status, … \} \}\)/),
      expect.stringMatching(/step #2 .*no field `reply`; a reply's fields are content, stop_reason, /),
    ]);
    const recorded = await ask();
    expect(recorded.content).toEqual([expect.objectContaining({ text: 'fine' })]);
    const replay = await askEach(1, [{ ...recorded, content: [text('again')] }] as never[]);
    expect(replay.errors).toEqual(['answered']);
  });

  it('a tool_use block without an id or a name, or an error step whose status is no error, is a 400 naming it, not a reply the API never gives', async () => {
    const { ask, errors } = await askEach(6, [
      { content: [{ type: 'tool_use', name: 'lookup', input: {} }] },
      { content: [{ type: 'tool_use', id: 'toolu_1', input: {} }] },
      { error: { status: 200 } },
      { content: [{ type: 'server_tool_use', name: 'web_search', input: {} }] },
      // An MCP connector's call without its input (the JSON reply had none, the stream `{}`), or without its server.
      { content: [{ type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'lookup', server_name: 'docs' }] },
      { content: [{ type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'lookup', input: {} }] },
      { content: [toolUse('lookup', {})] },
    ] as never[]);
    expect(errors).toEqual([
      expect.stringMatching(/step #0 .*the step's content\[0\] is a tool_use block without an id: make it with toolUse\(name, input\)/),
      expect.stringMatching(/step #1 .*the step's content\[0\] is a tool_use block without a name/),
      expect.stringMatching(/step #2 .*the step's error\.status must be an HTTP error status \(400 to 599\), got 200/),
      expect.stringMatching(/step #3 .*the step's content\[0\] is a server_tool_use block without an id: make it with serverToolUse\(name, input\)/),
      expect.stringMatching(/step #4 .*the step's content\[0\] is a mcp_tool_use block without an input: give it \{ type, id, name, server_name, input \}/),
      expect.stringMatching(/step #5 .*the step's content\[0\] is a mcp_tool_use block without a server_name/),
    ]);
    expect((await ask()).content[0]).toMatchObject({ type: 'tool_use', name: 'lookup', id: expect.stringMatching(/^toolu_/) });
  });

  it("an error's field given on the step (afterEvents, retryAfter), a field the error has not (afterEvent, retry_after), a step's number out of range, a time without its unit: each a 400 naming it, never a plain error the SDK retries", async () => {
    const { ask, errors } = await askEach(7, [
      { content: [text('hi')], afterEvents: 3, error: { status: 529 } },
      { content: [text('hi')], retryAfter: 1, error: { status: 429 } },
      { content: [text('hi')], error: { status: 529, afterEvent: 3 } },
      { error: { status: 429, retry_after: 0.5 } },
      { content: [text('hello world')], chunkSize: Number.NaN },
      { content: [text('hi')], disconnectAfterEvents: -1 },
      { content: [text('hi')], delay: 300 },
      { content: [toolUse('now')] },
    ] as never[]);
    expect(errors).toEqual([
      expect.stringMatching(/step #0 .*the step has no field `afterEvents`: it belongs in its error/),
      expect.stringMatching(/step #1 .*the step has no field `retryAfter`: it belongs in its error/),
      expect.stringMatching(/step #2 .*the step's error has no field `afterEvent`; its fields are status, type, message, retryAfter, afterEvents, details, headers/),
      expect.stringMatching(/step #3 .*the step's error has no field `retry_after`/),
      expect.stringMatching(/step #4 .*the step's chunkSize must be a whole number, 1 or more, got NaN/),
      expect.stringMatching(/step #5 .*the step's disconnectAfterEvents must be a whole number, 0 or more, got -1/),
      expect.stringMatching(/step #6 .*the step has no field `delay`: did you mean `delayMs`\?/),
    ]);
    // A call scripted without an input has the API's `{}`, in a whole reply as in a stream.
    expect((await ask()).content[0]).toMatchObject({ type: 'tool_use', name: 'now', input: {} });
  });

  it('a reply field or an error field of the wrong kind (a usage, a container or a message given as a string or a number): a 400 naming it, not a reply of its characters', async () => {
    const { ask, errors } = await askEach(5, [
      { content: [text('x')], container: 'container_1' },
      { content: [text('x')], usage: 'lots' },
      { content: [text('x')], stop_reason: 7 },
      { error: { status: 529, message: 42 } },
      { error: { status: 400, headers: 'x-should-retry: false' } },
      { content: [text('fine')], stop_reason: null, container: null },
    ] as never[]);
    expect(errors).toEqual([
      expect.stringMatching(/step #0 .*the step's container must be an object or null, got .*container_1/),
      expect.stringMatching(/step #1 .*the step's usage must be an object, got .*lots/),
      expect.stringMatching(/step #2 .*the step's stop_reason must be a string or null, got 7/),
      expect.stringMatching(/step #3 .*the step's error\.message must be a string, got 42/),
      expect.stringMatching(/step #4 .*the step's error\.headers must be an object, got .*x-should-retry: false/),
    ]);
    expect((await ask()).content[0]).toMatchObject({ text: 'fine' });
  });

  it("the kit's client keeps the server's address and key when given them as undefined (never api.anthropic.com); a malformed thread is a 400, not a lost thread", async () => {
    const server = await mockServer([{ content: [text('here')] }, { content: [text('never')] }]);
    const client = server.client({ baseURL: undefined, apiKey: undefined, maxRetries: 0 });
    expect(client.baseURL).toBe(server.url);
    expect((await client.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })).content).toEqual([expect.objectContaining({ text: 'here' })]);
    expect(server.requests[0]!.headers['authorization']).toBe('Bearer test-key');
    const malformed = await client.beta.messages
      .create({ model: 'claude-sonnet-5-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], betas: ['message-threads-2026-08-12'], thread: { type: 'continue' } } as never)
      .catch((error: { status?: number; message: string }) => error);
    expect(malformed).toMatchObject({ status: 400, message: expect.stringContaining('a continue needs previous_message_id') });
  });

  it("createMockServer's options and setSteps' steps: a misspelt option, steps that are no list, an unknown threads mode are TypeErrors at once", async () => {
    await expect(createMockServer({ step: [{ content: [text('hi')] }] } as never)).rejects.toThrow(new TypeError("createMockServer: unknown option 'step'. Did you mean 'steps'?"));
    await expect(createMockServer({ steps: [], chunksize: 2 } as never)).rejects.toThrow(/unknown option 'chunksize'\. Did you mean 'chunkSize'\?/);
    // A step's field on the server: left out silently, the server would run otherwise than asked.
    await expect(createMockServer({ steps: [], delayMs: 100 } as never)).rejects.toThrow(/^createMockServer: unknown option 'delayMs'; the options are steps, chunkSize, eventDelayMs, threads, contextWindow$/);
    await expect(createMockServer({ steps: {} } as never)).rejects.toThrow(/^createMockServer: steps must be an array of steps .*got object$/);
    // The steps themselves, as a first guess would pass them: it said "unknown option '0'", or of an empty list "steps must be an array … got undefined".
    const given = new TypeError('createMockServer takes an options object, not the steps themselves: createMockServer({ steps: [...] })');
    await expect(createMockServer([{ content: [text('hi')] }] as never)).rejects.toThrow(given);
    await expect(createMockServer([] as never)).rejects.toThrow(given);
    await expect(createMockServer({ steps: [], threads: 'on' } as never)).rejects.toThrow(`createMockServer: threads must be 'hold' or 'unsupported', got "on"`);
    // Each made replies other than the ones scripted (a chunk size of NaN streamed every text as ''), or no limit.
    await expect(createMockServer({ steps: [], chunkSize: Number.NaN })).rejects.toThrow(/^createMockServer: chunkSize must be a whole number of characters, 1 or more, got NaN$/);
    await expect(createMockServer({ steps: [], chunkSize: 'x' as never })).rejects.toThrow(TypeError);
    await expect(createMockServer({ steps: [], eventDelayMs: -1 })).rejects.toThrow(/eventDelayMs must be a whole number of ms, 0 or more, got -1/);
    await expect(createMockServer({ steps: [], contextWindow: 'big' as never })).rejects.toThrow(/contextWindow must be a whole number of tokens, 1 or more, got "big"/);
    const server = await mockServer([{ content: [text('first')] }]);
    expect(() => server.setSteps({ content: [text('hi')] } as never)).toThrow(/^setSteps: steps must be an array of steps/);
    // Nothing was lost: the script stands as it was.
    expect((await server.client().messages.create({ model: 'claude-sonnet-5-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })).content[0]).toMatchObject({ text: 'first' });
  });

  it('a streamed step that cannot be streamed is a 400 before any event: the SDK does not retry it into the next step', async () => {
    const server = await mockServer([{ content: [{ type: 'text' }] } as never, { content: [text('the next step')] }]);
    const stream = server.client({ maxRetries: 2 }).messages.stream({ model: 'claude-sonnet-5-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    await expect(stream.finalMessage()).rejects.toThrow(/400 .*a text block without text/);
    expect(server.requests).toHaveLength(1);
  });

  it('a step left undefined (a condition not met) is answered as a mistake; the steps after it are still taken', async () => {
    const server = await mockServer([{ content: [text('a')] }, undefined as never, { content: [text('c')] }]);
    const client = server.client({ maxRetries: 0 });
    const ask = () => client.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).then((reply) => reply.content[0], (error: Error) => error.message);
    expect(await ask()).toMatchObject({ text: 'a' });
    expect(await ask()).toMatch(/step #1 threw on request #1: the step is undefined, not a reply/);
    expect(await ask()).toMatchObject({ text: 'c' });
  });
});

describe('a reply recorded from the SDK is a step as it is', () => {
  it("a streamed reply's final message (the SDK adds `parsed_output` to it, as to one of messages.parse()) is taken, not a 400", async () => {
    const first = await mockServer([{ content: [text('Recorded.')] }]);
    const stream = first.client().beta.messages.stream({ model: 'claude-sonnet-5-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    const recorded = await stream.finalMessage();
    expect(recorded).toHaveProperty('parsed_output', null);
    const replay = await mockServer([JSON.parse(JSON.stringify(recorded))]);
    const again = await replay.client().beta.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
    expect(again.content).toEqual([expect.objectContaining({ type: 'text', text: 'Recorded.' })]);
    expect(again).not.toHaveProperty('parsed_output');
    replay.assertComplete();
  });
});
