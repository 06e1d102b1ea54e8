/**
 * Context overflow: a request rejected because the prompt is too long (400 `invalid_request_error`,
 * `prompt is too long: N tokens > M maximum`, as the API sends it; the testing kit's `contextWindow`
 * answers so) is a `ContextOverflowError`, or with `compactionControl` enabled a compaction at once
 * and the request sent again, once. Nothing is appended either way.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Anthropic, { BadRequestError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ContextOverflowError, type RunnerEvent, type ToolRunner, tool, toolRunner } from 'tool-runner';
import { type RecordedRequest, historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, captureLogger, mockServer, sleep, wire } from './helpers.js';

/** A tool whose result is long: 12,000 characters, about 3,000 of the kit's tokens. */
const readFile = tool({
  name: 'read_file',
  description: 'Reads a file',
  inputSchema: z.object({ path: z.string() }),
  run: ({ path }) => `${path}: ${'All work and no play makes Jack a dull boy. '.repeat(270)}`,
});
const WINDOW = 2_000;
const isSummaryRequest = (request: RecordedRequest) => String(wire(request).messages.at(-1)?.content).startsWith('You have been working on the task');
const isSummaryBody = (body: { messages: unknown }) => JSON.stringify((body.messages as unknown[]).at(-1)).includes('You have been working on the task');
const threadKind = (request: RecordedRequest) => (wire(request).body.thread as { type: string } | undefined)?.type ?? 'none';

describe('a prompt too long for the context window', () => {
  it('without compactionControl: ContextOverflowError with the API’s tokens and limit; nothing appended; a shorter history goes on', async () => {
    const server = await mockServer({ steps: [{ content: [toolUse('read_file', { path: 'a.txt' })] }, { content: [text('It is about Jack.')] }], contextWindow: WINDOW });
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [readFile] });
    const error = await runner.runUntilDone().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect(error).toBeInstanceOf(BadRequestError);
    const overflow = error as ContextOverflowError;
    expect(overflow.status).toBe(400);
    expect(overflow.type).toBe('invalid_request_error');
    expect(overflow.apiMessage).toMatch(/^prompt is too long: \d+ tokens > 2000 maximum$/);
    expect(overflow.tokens).toBeGreaterThan(WINDOW);
    expect(overflow.limit).toBe(WINDOW);
    expect(overflow.cause).toBeInstanceOf(BadRequestError);
    expect(overflow.message).toMatch(/Nothing was appended: shorten the history/);
    // The history is the one the rejected request sent: the call and its (long) result, no reply.
    const history = runner.params.messages;
    expect(history.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(historyProblems(history)).toEqual([]);
    // The caller shortens the result and iterates again: the run goes on.
    runner.setMessagesParams((params) => ({
      ...params,
      messages: params.messages.map((message, i) =>
        i === 2 ? { role: 'user', content: [{ type: 'tool_result', tool_use_id: (history[1]!.content as Array<{ id: string }>)[0]!.id, content: 'a.txt: (too long, skipped)' }] } : message,
      ),
    }));
    const final = await runner;
    expect(final.content[0]).toMatchObject({ text: 'It is about Jack.' });
    server.assertComplete();
  });

  it('the numbers come from the API’s message; a message without them leaves them undefined; another 400 is no overflow', async () => {
    const server = await mockServer([
      { error: { status: 400, message: 'prompt is too long: 208310 tokens > 200000 maximum' } },
      { error: { status: 400, message: 'prompt is too long' } },
      { error: { status: 400, message: 'messages.0.content: Field required' } },
    ]);
    const client = server.client({ maxRetries: 0 });
    const errors = [];
    for (let i = 0; i < 3; i++) errors.push(await toolRunner(client, { ...baseParams, thread: false }).runUntilDone().catch((caught: unknown) => caught));
    expect(errors[0]).toMatchObject({ name: 'ContextOverflowError', tokens: 208_310, limit: 200_000 });
    expect(errors[1]).toBeInstanceOf(ContextOverflowError);
    expect(errors[1]).toMatchObject({ tokens: undefined, limit: undefined });
    expect(errors[2]).toBeInstanceOf(BadRequestError);
    expect(errors[2]).not.toBeInstanceOf(ContextOverflowError);
  });

  // Amazon Bedrock (AnthropicBedrock) says it in its own words, in its own body ({ message }, no API envelope): it was a
  // BadRequestError that no `instanceof ContextOverflowError` caught, and compactionControl did not compact for it.
  // (From SDK 1.17 on, the SDK's message names the request's path after the API's words.)
  it("Bedrock's words (400 `Input is too long for requested model.`) are an overflow too, without numbers", async () => {
    const bedrockLike = createServer((request, response) => {
      request.resume();
      response.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException' });
      response.end(JSON.stringify({ message: 'Input is too long for requested model.' }));
    });
    await new Promise<void>((resolve) => bedrockLike.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = bedrockLike.address() as AddressInfo;
      const client = new Anthropic({ baseURL: `http://127.0.0.1:${port}`, apiKey: 'k', maxRetries: 0 });
      const error = await toolRunner(client, { ...baseParams, thread: false }).runUntilDone().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ContextOverflowError);
      expect(error).toMatchObject({ status: 400, tokens: undefined, limit: undefined, message: expect.stringMatching(/^400 Input is too long for requested model\.( \(path: \/v1\/messages\)\.)? Nothing was appended/) });
    } finally {
      await new Promise((resolve) => bedrockLike.close(resolve));
    }
  });

  it('with compactionControl: compacts at once over a history cut to fit, and sends the request again', async () => {
    const server = await mockServer({
      steps: [
        { content: [toolUse('read_file', { path: 'a.txt' })] },
        (request) => {
          expect(isSummaryRequest(request)).toBe(true);
          return { content: [text('<summary>Read a.txt: Jack works all day.</summary>')], usage: { input_tokens: 1_500, output_tokens: 20 } };
        },
        { content: [text('It is about Jack.')] },
      ],
      contextWindow: WINDOW,
    });
    const messages = [{ role: 'user' as const, content: 'What is a.txt about?' }];
    const events: RunnerEvent[] = [];
    const { lines, logger } = captureLogger();
    const runner = toolRunner(
      server.client({ maxRetries: 0, logger, logLevel: 'warn' }),
      { ...baseParams, messages, tools: [readFile], compactionControl: { enabled: true, contextTokenThreshold: 100_000, keepTurns: 2 } },
      { onEvent: (event) => events.push(event) },
    );
    const final = await runner;
    expect(final.content[0]).toMatchObject({ text: 'It is about Jack.' });
    // The turn, the rejected request (no step used), the summary (accepted: it fits), the request sent again.
    expect(server.requests).toHaveLength(4);
    const [, rejected, summary, again] = server.requests;
    expect(wire(rejected!).messages).toHaveLength(3);
    expect(isSummaryRequest(summary!)).toBe(true);
    const cutResult = wire(summary!).messages[2].content[0].content as string;
    expect(cutResult).toMatch(/\[… \d+ characters cut to fit the summary request\]$/);
    expect(cutResult.length).toBeLessThan(12_000);
    // Sent again from the summary alone (no turn kept verbatim: they are what overflowed), on a new thread.
    expect(wire(again!).messages).toHaveLength(1);
    expect(wire(again!).messages[0].content[0].text).toContain('Read a.txt: Jack works all day.');
    expect(threadKind(again!)).toBe('create');
    expect(runner.params.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    expect(messages).toEqual([{ role: 'user', content: 'What is a.txt about?' }]);
    expect(runner.iteration).toBe(2);
    expect(runner.usage.input_tokens).toBe(wireUsage(events, 1) + 1_500 + final.usage.input_tokens);
    expect(events.filter((event) => event.type === 'request.start').map((event) => [event.requestId, (event as { purpose: string }).purpose])).toEqual([
      [1, 'turn'],
      [2, 'turn'],
      [3, 'compaction'],
      [4, 'turn'],
    ]);
    expect(events.find((event) => event.type === 'request.end' && event.requestId === 2)).toMatchObject({ error: expect.any(ContextOverflowError) });
    // The rejected request ends before the summary's starts, each request ends once.
    const requestEvents = events.filter((event) => event.type === 'request.start' || event.type === 'request.end').map((event) => `${event.type === 'request.start' ? 'start' : 'end'} ${(event as { requestId: number }).requestId}`);
    expect(requestEvents).toEqual(['start 1', 'end 1', 'start 2', 'end 2', 'start 3', 'end 3', 'start 4', 'end 4']);
    expect(lines).toContainEqual({ level: 'warn', message: expect.stringMatching(/^Context overflow \(the prompt is too long: \d+ tokens > 2000\); compacting 3 messages at once/) });
  });

  // Pushed in the onRequest of the request sent again, or of the summary request before it: either way the note goes
  // with the request sent again, after the summary (it had been taken as the loop body taking control, the reply dropped).
  it.each([
    ['the request sent again', false],
    ['the request sent again', true],
    ['the summary request', false],
    ['the summary request', true],
  ] as const)("a message pushed in the onRequest of %s after an overflow goes with the request sent again (stream: %s)", async (which, stream) => {
    const server = await mockServer({
      steps: [
        { content: [toolUse('read_file', { path: 'a.txt' })] },
        { content: [text('<summary>Read a.txt: Jack works all day.</summary>')] },
        { content: [text('It is about Jack.')] },
      ],
      contextWindow: WINDOW,
    });
    const note = { role: 'user' as const, content: 'Answer in five words.' };
    const pushesFor = (body: { messages: unknown }) => (which === 'the summary request' ? isSummaryBody(body) : JSON.stringify((body.messages as unknown[])[0]).includes('Read a.txt'));
    const runner: ToolRunner<boolean> = toolRunner(
      server.client({ maxRetries: 0 }),
      { ...baseParams, stream, tools: [readFile], compactionControl: { enabled: true, contextTokenThreshold: 100_000, keepTurns: 2 } },
      { hooks: { onRequest: (body) => void (pushesFor(body) && runner.pushMessages(note)) } },
    );
    expect((await runner.runUntilDone()).content[0]).toMatchObject({ text: 'It is about Jack.' });
    expect(server.requests).toHaveLength(4);
    expect(wire(server.requests[3]!).messages.at(-1)).toEqual(note);
    expect(runner.params.messages.map((message) => message.role)).toEqual(['user', 'user', 'assistant']);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('once: a request still too long after compacting is a ContextOverflowError with the last rejection’s numbers', async () => {
    const server = await mockServer([
      { content: [toolUse('read_file', { path: 'a.txt' })] },
      { error: { status: 400, message: 'prompt is too long: 3100 tokens > 2000 maximum' } },
      { content: [text('<summary>S</summary>')] },
      { error: { status: 400, message: 'prompt is too long: 2400 tokens > 2000 maximum' } },
    ]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [readFile], compactionControl: { enabled: true } });
    await expect(runner.runUntilDone()).rejects.toMatchObject({ name: 'ContextOverflowError', tokens: 2_400, limit: 2_000 });
    server.assertComplete();
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("streamed: leaving the loop while the overflow's summary request hangs stops it (a break is a break, not a wait for the client's timeout)", async () => {
    const server = await mockServer({ steps: [{ content: [text('<summary>S</summary>')], delayMs: 60_000 }], contextWindow: WINDOW });
    const history = [
      { role: 'user' as const, content: 'x'.repeat(12_000) },
      { role: 'assistant' as const, content: 'ok' },
      { role: 'user' as const, content: 'go on' },
    ];
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, messages: history, stream: true, compactionControl: { enabled: true } });
    for await (const _stream of runner) {
      await sleep(200);
      break;
    }
    expect(runner.stoppedBy).toBe('break');
    // The rejected request and the summary request, which the break stopped.
    expect(server.requests).toHaveLength(2);
  });

  it('budget.maxTokens: a summary that reaches it is not followed by the request sent again; iterating again stops the run with budget', async () => {
    const server = await mockServer({
      steps: [
        { content: [toolUse('read_file', { path: 'a.txt' })], usage: { input_tokens: 10, output_tokens: 5 } },
        { content: [text('<summary>Read a.txt.</summary>')], usage: { input_tokens: 1_500, output_tokens: 10 } },
      ],
      contextWindow: WINDOW,
    });
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [readFile], compactionControl: { enabled: true } }, { budget: { maxTokens: 1_000 } });
    const failure = await runner.runUntilDone().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ContextOverflowError);
    expect((failure as Error).message).toMatch(/The history was compacted, but the request was not sent again \(budget\.maxTokens reached: 1525 of 1000 tokens\)/);
    // The turn, the rejected request, the summary; nothing after it.
    expect(server.requests).toHaveLength(3);
    expect(runner.params.messages).toHaveLength(1);
    expect(historyProblems(runner.params.messages)).toEqual([]);
    const last = await runner;
    expect(runner.stoppedBy).toBe('budget');
    expect(last.content[0]).toMatchObject({ type: 'tool_use', name: 'read_file' });
    expect(server.requests).toHaveLength(3);
  });

  it("budget.maxTokens already reached (onLimit: 'answer'): an overflow of the answer's request is not compacted", async () => {
    const write = tool({ name: 'write_file', description: 'Writes a file', inputSchema: z.object({ text: z.string() }), run: () => 'written' });
    const server = await mockServer({
      steps: [{ content: [toolUse('write_file', { text: 'Jack is a dull boy. '.repeat(600) })], usage: { input_tokens: 1_200, output_tokens: 300 } }],
      contextWindow: WINDOW,
    });
    const { lines, logger } = captureLogger();
    const runner = toolRunner(server.client({ maxRetries: 0, logger, logLevel: 'warn' }), { ...baseParams, tools: [write], compactionControl: { enabled: true } }, { budget: { maxTokens: 1_000 }, onLimit: 'answer' });
    const failure = await runner.runUntilDone().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ContextOverflowError);
    // The budget says why, not "shorten the history" alone nor "turn compactionControl on".
    expect((failure as Error).message).toMatch(/compactionControl is on, but the history was not compacted \(budget\.maxTokens reached: 1500 of 1000 tokens\)\. Nothing was appended: raise the budget/);
    // The reply, the answer's request rejected as too long; no summary asked for past the budget.
    expect(server.requests).toHaveLength(2);
    expect(wire(server.requests[1]!).body.tool_choice).toEqual({ type: 'none' });
    expect(lines).toContainEqual({ level: 'warn', message: 'Context overflow (the prompt is too long), not compacted: budget.maxTokens reached: 1500 of 1000 tokens' });
  });

  it('a disabled compactionControl counts as absent; a history of one message cannot be compacted', async () => {
    const server = await mockServer({ steps: [{ content: [toolUse('read_file', { path: 'a.txt' })] }], contextWindow: WINDOW });
    const disabled = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [readFile], compactionControl: { enabled: false } });
    await expect(disabled.runUntilDone()).rejects.toBeInstanceOf(ContextOverflowError);
    const long = { role: 'user' as const, content: 'x'.repeat(10_000) };
    const single = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, messages: [long], compactionControl: { enabled: true } });
    await expect(single.runUntilDone()).rejects.toBeInstanceOf(ContextOverflowError);
    expect(single.params.messages).toEqual([long]);
    // Two requests rejected, one summary never asked for.
    expect(server.requests).toHaveLength(3);
  });

  it("images in the history (screenshots): their base64 data is not counted as text, which cut every text, the task too, to nothing for the summary", async () => {
    const screenshot = (n: number) => ({ type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: String(n).repeat(250_000) } });
    const task = 'Compare the four screenshots with the log and list every error code. '.repeat(20);
    const messages = [
      { role: 'user' as const, content: [screenshot(1), screenshot(2), screenshot(3), screenshot(4), { type: 'text' as const, text: task }] },
      { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'toolu_log', name: 'read_file', input: { path: 'app.log' } }] },
      { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_log', content: 'line 1: ok\n'.repeat(20_000) }] },
    ];
    let summarised: any[] = [];
    const server = await mockServer([
      // About 50,000 tokens of text and 6,400 of the four images: a little over the limit.
      { error: { status: 400, message: 'prompt is too long: 56400 tokens > 50000 maximum' } },
      (request: RecordedRequest) => ((summarised = wire(request).messages), { content: [text('<summary>Error codes: none.</summary>')] }),
      { content: [text('No error codes.')] },
    ]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, messages, tools: [readFile], compactionControl: { enabled: true } });
    await runner;
    // The task is kept whole; the log is cut, not emptied; the screenshots go as they were.
    expect(summarised[0].content.at(-1).text).toBe(task);
    expect(summarised[2].content[0].content.length).toBeGreaterThan(100_000);
    expect(summarised[0].content[0]).toEqual(screenshot(1));
  });

  it('streamed: the yielded stream carries the reply to the request sent again after compacting', async () => {
    const server = await mockServer([
      { content: [toolUse('read_file', { path: 'a.txt' })] },
      { error: { status: 400, message: 'prompt is too long: 3100 tokens > 2000 maximum' } },
      { content: [text('<summary>S</summary>')] },
      { content: [text('Streamed after compacting.')], chunkSize: 6 },
    ]);
    const events: RunnerEvent[] = [];
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [readFile], stream: true, compactionControl: { enabled: true } }, { onEvent: (event) => events.push(event) });
    const texts: string[] = [];
    for await (const stream of runner) {
      let streamed = '';
      for await (const event of stream) if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') streamed += event.delta.text;
      texts.push(streamed);
    }
    expect(texts).toEqual(['', 'Streamed after compacting.']);
    // The text is the request sent again's (#4), not the rejected one's (#2).
    const streamed = events.filter((event) => event.type === 'request.text');
    expect(streamed.map((event) => (event as { text: string }).text).join('')).toBe('Streamed after compacting.');
    expect(new Set(streamed.map((event) => event.requestId))).toEqual(new Set([4]));
    expect(wire(server.requests[3]!).body.stream).toBe(true);
    expect(runner.params.messages).toHaveLength(2);
  });
});

describe('compaction on, the request still too long', () => {
  it("the error says what failed, not to turn compactionControl on: the summary request too long too (a large tool input), or the request sent again", async () => {
    const writeFile = tool({ name: 'write_file', inputSchema: z.object({ text: z.string() }), run: () => 'written' });
    const server = await mockServer({ steps: [{ content: [toolUse('write_file', { text: 'Jack is a dull boy. '.repeat(600) })] }, { content: [text('never')] }], contextWindow: WINDOW });
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [writeFile], compactionControl: { enabled: true } });
    const error = await runner.runUntilDone().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ContextOverflowError);
    expect((error as Error).message).toMatch(/compactionControl is on, but its summary request was too long too .*Nothing was appended: shorten the history/);
    expect((error as Error).message).not.toMatch(/turn compactionControl on/);
    // A summary that fits, the request sent again still too long (the summary itself long).
    const again = await mockServer({ steps: [{ content: [toolUse('read_file', { path: 'a.txt' })] }, { content: [text(`<summary>${'Long summary. '.repeat(700)}</summary>`)] }, { content: [text('never')] }], contextWindow: WINDOW });
    const second = toolRunner(again.client({ maxRetries: 0 }), { ...baseParams, tools: [readFile], compactionControl: { enabled: true } });
    const stillTooLong = await second.runUntilDone().catch((caught: unknown) => caught);
    expect(stillTooLong).toBeInstanceOf(ContextOverflowError);
    expect((stillTooLong as Error).message).toMatch(/The history was compacted, but the request sent again was still too long\. Nothing was appended/);
  });
});

describe('a compaction whose summary request fails or is cut off', () => {
  const longTurn = { content: [toolUse('read_file', { path: 'a.txt' }, 'toolu_r')], usage: { input_tokens: 5_000, output_tokens: 10 } };
  /** A run that compacts past 1,000 tokens, its warnings kept. */
  const compacting = (server: Awaited<ReturnType<typeof mockServer>>) => {
    const { lines, logger } = captureLogger();
    const runner = toolRunner(server.client({ maxRetries: 0, logger, logLevel: 'warn' }), { ...baseParams, tools: [readFile], compactionControl: { enabled: true, contextTokenThreshold: 1_000 } });
    return { runner, lines };
  };

  it('a threshold compaction whose summary request is too long itself: summarises the history cut to fit, and goes on', async () => {
    const server = await mockServer([
      longTurn,
      { error: { status: 400, message: 'prompt is too long: 3100 tokens > 2000 maximum' } },
      { content: [text('<summary>Read a.txt: Jack works all day.</summary>')] },
      { content: [text('It is about Jack.')] },
    ]);
    const { runner, lines } = compacting(server);
    const final = await runner;
    expect(final.content[0]).toMatchObject({ text: 'It is about Jack.' });
    const [, first, second, after] = server.requests;
    expect(isSummaryRequest(first!) && isSummaryRequest(second!)).toBe(true);
    expect(wire(second!).messages[2].content[0].content).toMatch(/\[… \d+ characters cut to fit the summary request\]$/);
    expect(wire(after!).messages[0].content[0].text).toContain('Read a.txt: Jack works all day.');
    expect(lines).toContainEqual({ level: 'warn', message: expect.stringMatching(/^Compaction: the summary request was too long too/) });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('the summary request too long itself: a question the model has not answered yet still goes word for word after the summary', async () => {
    const server = await mockServer([
      longTurn,
      { content: [text('The answer at the limit.')], usage: { input_tokens: 5_000, output_tokens: 10 } },
      { error: { status: 400, message: 'prompt is too long: 3100 tokens > 2000 maximum' } },
      { content: [text('<summary>Read a.txt: Jack works all day.</summary>')] },
      { content: [text('In Celsius, about 20.')] },
    ]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, max_iterations: 1, tools: [readFile], compactionControl: { enabled: true, contextTokenThreshold: 1_000 } }, { onLimit: 'answer' });
    await runner;
    runner.setMessagesParams((params) => ({ ...params, max_iterations: 10 }));
    runner.pushMessages({ role: 'user', content: 'And in Celsius?' });
    await runner;
    expect(isSummaryRequest(server.requests[2]!) && isSummaryRequest(server.requests[3]!)).toBe(true);
    const after = wire(server.requests[4]!).messages;
    expect(after.at(-1)).toEqual({ role: 'user', content: 'And in Celsius?' });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('a summary request too long itself without the API\'s numbers: nothing to cut, a ContextOverflowError at once (not the same request again)', async () => {
    const server = await mockServer([longTurn, { error: { status: 400, message: 'prompt is too long' } }]);
    const { runner } = compacting(server);
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(ContextOverflowError);
    expect(server.requests).toHaveLength(2);
  });

  it('a summary cut off at max_tokens is not adopted: the history stays whole, with one warning, and no summary is asked for again', async () => {
    const server = await mockServer([
      longTurn,
      { content: [text('<summary>1. The task: the user asked for')], stop_reason: 'max_tokens' },
      { ...longTurn, content: [toolUse('read_file', { path: 'b.txt' }, 'toolu_r2')] },
      { content: [text('It is about Jack.')] },
    ]);
    const { runner, lines } = compacting(server);
    await runner;
    // The next request still holds the call and its result: nothing was replaced by the half summary.
    expect(wire(server.requests[2]!).messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(runner.params.messages)).not.toContain('The task: the user asked for');
    // The next reply past the threshold asks for no summary: four requests, one of them a summary.
    expect(server.requests.filter(isSummaryRequest)).toHaveLength(1);
    server.assertComplete();
    expect(lines.filter((line) => line.message.startsWith('Compaction:'))).toEqual([
      { level: 'warn', message: expect.stringMatching(/^Compaction: the summary request was cut off at max_tokens \(\d+ tokens from [\w.-]+\); the conversation is kept as it is, and compacting past the threshold is off/) },
    ]);
  });

  it('refused, or cut off at the context window: not adopted either; the history stays whole, with one warning saying why', async () => {
    for (const [stop, why] of [
      ['refusal', /the model refused/],
      ['model_context_window_exceeded', /was cut off at the model's context window/],
    ] as const) {
      const server = await mockServer([
        longTurn,
        { content: [text("I'm sorry, I can't help with that.")], stop_reason: stop },
        { content: [text('It is about Jack.')] },
      ]);
      const { runner, lines } = compacting(server);
      await runner;
      expect(wire(server.requests[2]!).messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant', 'user']);
      expect(JSON.stringify(runner.params.messages)).not.toContain("I'm sorry");
      const warnings = lines.filter((line) => line.message.startsWith('Compaction:'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toMatch(why);
    }
  });
});

/** The input tokens of the reply to request `requestId`, as its request.end event carried it. */
function wireUsage(events: RunnerEvent[], requestId: number): number {
  const end = events.find((event) => event.type === 'request.end' && event.requestId === requestId);
  return (end as { message?: { usage: { input_tokens: number } } } | undefined)?.message?.usage.input_tokens ?? 0;
}
