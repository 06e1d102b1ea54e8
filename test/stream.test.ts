import { describe, expect, expectTypeOf, it } from 'vitest';
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import { z } from 'zod';
import { APIError } from '@anthropic-ai/sdk';
import { ReplyError, type RunnerEvent, resumeToolRunner, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer, sleep, weatherTool, wire } from './helpers.js';

describe('stream: true', () => {
  it('yields the SDK’s MessageStream per iteration; events reach the caller as they arrive', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { content: [text('It is twenty-one degrees in Paris today.')], chunkSize: 4, eventDelayMs: 15 },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, stream: true, tools: [weatherTool()] });
    const arrivals: number[] = [];
    const finals = [];
    for await (const stream of runner) {
      expectTypeOf(stream).toEqualTypeOf<BetaMessageStream>();
      for await (const event of stream) {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') arrivals.push(performance.now());
      }
      finals.push(await stream.finalMessage());
    }
    expect(finals.map((message) => message.stop_reason)).toEqual(['tool_use', 'end_turn']);
    // 10 deltas sent 15 ms apart: unbuffered delivery spreads them over time.
    expect(arrivals).toHaveLength(10);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(100);
    expect(wire(server.requests[0]!).body.stream).toBe(true);
    expect(runner.params.messages).toHaveLength(4);
  });

  it('consumes a stream the loop body did not read', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { content: [text('ok')] },
    ]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, stream: true, tools: [weatherTool(calls)] });
    let iterations = 0;
    for await (const _stream of runner) iterations++;
    expect(iterations).toBe(2);
    expect(calls).toEqual(['Paris']);
    expect((await runner.done()).content[0]).toMatchObject({ text: 'ok' });
  });

  it('onEvent gets each piece of the text as it streams (request.text), before the request ends; none without streaming', async () => {
    const reply = 'It is twenty-one degrees in Paris today.';
    const server = await mockServer([{ content: [text(reply)], chunkSize: 4, eventDelayMs: 5 }, { content: [text(reply)] }]);
    const seen: Array<[string, number, string?]> = [];
    const onEvent = (event: RunnerEvent) => {
      if (event.type === 'request.text') seen.push([event.type, event.requestId, event.text]);
      else if (event.type === 'request.end') seen.push([event.type, event.requestId]);
    };
    await toolRunner(server.client(), { ...baseParams, stream: true }, { onEvent });
    expect(seen.length).toBeGreaterThan(5);
    expect(seen.at(-1)).toEqual(['request.end', 1]);
    expect(seen.slice(0, -1).map(([, , piece]) => piece).join('')).toBe(reply);
    seen.length = 0;
    await toolRunner(server.client(), baseParams, { onEvent });
    expect(seen).toEqual([['request.end', 1]]);
  });
});

describe("leaving a stream after its reply's last event came, before its end was read", () => {
  const steps = () => [{ content: [text('Let me check. '), toolUse('get_weather', { location: 'Paris' }, 'toolu_1')], eventDelayMs: 5 }, { content: [text('It is 21.')] }];

  it('a break leaves at once, as from the SDK’s runner (a fetch aborted then never settles its read on Node 20: the run waited for it)', async () => {
    const server = await mockServer(steps());
    const runner = toolRunner(server.client(), { ...baseParams, stream: true, tools: [weatherTool()] });
    for await (const stream of runner) {
      await new Promise((resolve) => stream.on('message', resolve));
      break;
    }
    expect(runner.stoppedBy).toBe('break');
    expect(runner.params.messages).toEqual(baseParams.messages);
    // The run ended there, as after any break before a reply was whole.
    await expect(runner).rejects.toThrow(/ended without a message from the model: the loop body left the loop \(break\)/);
    expect(server.requests).toHaveLength(1);
  }, 5000);

  it("the run's signal aborting then ends the run with the abort, as the README says (it waited for the reply for ever)", async () => {
    const server = await mockServer(steps());
    const controller = new AbortController();
    const runner = toolRunner(server.client(), { ...baseParams, stream: true, tools: [weatherTool()] }, { signal: controller.signal });
    const iterate = async () => {
      for await (const stream of runner) stream.on('message', () => controller.abort());
    };
    await expect(iterate()).rejects.toThrow(/aborted/i);
    expect(runner.stoppedBy).toBe('abort');
  }, 5000);
});

describe('an error event the API sends mid-reply', () => {
  it("is the SDK's APIError, as before the reply (not a broken stream's ReplyError): nothing of the reply is kept, and iterating again sends the request again", async () => {
    const server = await mockServer([{ content: [text('It is twenty-one degrees.')], chunkSize: 4, error: { status: 529, type: 'overloaded_error', afterEvents: 3 } }, { content: [text('It is 21.')] }]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, stream: true });
    const failure = await (async () => {
      for await (const _stream of runner) {
        // Not read by the body.
      }
    })().then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(APIError);
    expect(failure).not.toBeInstanceOf(ReplyError);
    expect((failure as APIError).error).toMatchObject({ error: { type: 'overloaded_error' } });
    expect(runner.params.messages).toEqual(baseParams.messages);
    expect((await runner).content).toEqual([expect.objectContaining({ text: 'It is 21.' })]);
    expect(server.requests).toHaveLength(2);
  });
});

describe('runToolsEagerly, the run given a new signal in the loop body (setRequestOptions)', () => {
  const hanging = (log: string[]) => tool({ name: 'hang', inputSchema: z.object({}), run: (_input, { signal, toolUse }) => (signal.addEventListener('abort', () => log.push(`aborted ${toolUse.id}`)), new Promise<string>(() => {})) });
  const steps = () => [{ content: [toolUse('hang', {}, 'toolu_a'), toolUse('hang', {}, 'toolu_b')] }, { content: [text('done')] }];

  it('the calls started while the reply streamed follow the new signal: it aborts them and the run (they ran on, and the run waited for ever)', async () => {
    const server = await mockServer(steps());
    const [first, second] = [new AbortController(), new AbortController()];
    const log: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [hanging(log)], runToolsEagerly: true }, { signal: first.signal });
    const iterate = async () => {
      for await (const _message of runner) {
        runner.setRequestOptions({ signal: second.signal });
        setTimeout(() => second.abort(), 50);
      }
    };
    await expect(iterate()).rejects.toThrow(/aborted/i);
    expect(runner.stoppedBy).toBe('abort');
    expect(log.sort()).toEqual(['aborted toolu_a', 'aborted toolu_b']);
  }, 5000);

  it('and no longer the old one: aborting it does nothing to them (it aborted them, and the run went on)', async () => {
    const server = await mockServer([{ content: [toolUse('wait', {}, 'toolu_a')] }, { content: [text('done')] }]);
    const [first, second] = [new AbortController(), new AbortController()];
    const wait = tool({ name: 'wait', inputSchema: z.object({}), run: async (_input, { signal }) => (await sleep(100), signal.aborted ? 'aborted' : 'waited') });
    const runner = toolRunner(server.client(), { ...baseParams, tools: [wait], runToolsEagerly: true }, { signal: first.signal });
    for await (const _message of runner) {
      runner.setRequestOptions({ signal: second.signal });
      first.abort();
    }
    expect(runner.stoppedBy).toBe('model');
    expect(wire(server.requests[1]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_a', content: 'waited' }]);
  });
});

describe('runToolsEagerly', () => {
  function timedTool(log: Array<[string, number]>) {
    return tool({
      name: 'lookup',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      run: async () => {
        log.push(['tool start', performance.now()]);
        await sleep(20);
        return 'found';
      },
    });
  }
  const steps = () => [
    { content: [toolUse('lookup', { q: 'x' }), text('Now some long text while the tool runs. '.repeat(3))], chunkSize: 8, eventDelayMs: 10 },
    { content: [text('done')] },
  ];

  it('starts a tool as soon as its block is complete, while the reply still streams', async () => {
    const server = await mockServer(steps());
    const log: Array<[string, number]> = [];
    const runner = toolRunner(server.client(), { ...baseParams, stream: true, runToolsEagerly: true, tools: [timedTool(log)] });
    for await (const stream of runner) {
      await stream.finalMessage();
      log.push(['reply end', performance.now()]);
    }
    expect(log.map(([what]) => what)).toEqual(['tool start', 'reply end', 'reply end']);
    expect(wire(server.requests[1]!).messages[2].content[0]).toMatchObject({ content: 'found' });
  });

  it('works without stream: true: the caller gets whole messages, the tool still starts early', async () => {
    const server = await mockServer(steps());
    const log: Array<[string, number]> = [];
    const runner = toolRunner(server.client(), { ...baseParams, runToolsEagerly: true, tools: [timedTool(log)] });
    for await (const message of runner) {
      expectTypeOf(message.stop_reason).toEqualTypeOf<typeof message.stop_reason>();
      log.push(['reply end', performance.now()]);
    }
    expect(log.map(([what]) => what)).toEqual(['tool start', 'reply end', 'reply end']);
  });

  /** A tool that waits until told or aborted, and logs how it ended. */
  function heedingTool(log: string[]) {
    return tool({
      name: 'lookup',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      run: async (_input, { signal }) => {
        log.push('tool start');
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 2_000);
          signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
        log.push(`tool end (aborted: ${signal.aborted})`);
        return 'found';
      },
    });
  }

  it('a break while an eager call runs: the call is aborted, and ends before the run does', async () => {
    const server = await mockServer(steps());
    const log: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, stream: true, runToolsEagerly: true, tools: [heedingTool(log)] }, { onEvent: (event) => event.type.startsWith('tool.') || event.type.startsWith('run.') ? log.push(event.type) : undefined });
    for await (const stream of runner) {
      for await (const event of stream) if (event.type === 'content_block_start' && event.content_block.type === 'text') break;
      break;
    }
    log.push(`loop left (${runner.stoppedBy})`);
    expect(log).toEqual(['run.start', 'tool.start', 'tool start', 'tool end (aborted: true)', 'tool.end', 'run.end', 'loop left (break)']);
  });

  it('the loop body drops the reply (setMessagesParams) while its eager call runs: the call is aborted, and ends before the next request', async () => {
    const server = await mockServer([{ content: [toolUse('lookup', { q: 'x' }, 'toolu_1')] }, { content: [text('done')] }]);
    const log: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, runToolsEagerly: true, tools: [heedingTool(log)] }, {
      onEvent: (event) => (event.type === 'request.start' || event.type.startsWith('run.') ? log.push(event.type) : undefined),
    });
    let first = true;
    for await (const _message of runner) {
      if (!first) continue;
      first = false;
      runner.setMessagesParams((params) => ({ ...params, messages: [{ role: 'user', content: 'Something else' }] }));
    }
    expect(log).toEqual(['run.start', 'request.start', 'tool start', 'tool end (aborted: true)', 'request.start', 'run.end']);
    expect(runner.params.messages.map((message) => message.content)).toEqual(['Something else', [expect.objectContaining({ text: 'done' })]]);
  });

  it('a stream that breaks after an eager call started: the call is aborted before the run rejects', async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { q: 'x' }, 'toolu_1'), text('Long text. '.repeat(10))], chunkSize: 8, eventDelayMs: 5, disconnectAfterEvents: 12 },
      { content: [toolUse('lookup', { q: 'x' }, 'toolu_2')] },
      { content: [text('done')] },
    ]);
    const log: string[] = [];
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, stream: true, runToolsEagerly: true, tools: [heedingTool(log)] });
    await expect(runner.runUntilDone()).rejects.toThrow(/The reply stream broke/);
    expect(log).toEqual(['tool start', 'tool end (aborted: true)']);
  });

  it('a stream that breaks mid-reply counts the usage its events said (runner.usage, budget.maxTokens): it was paid for', async () => {
    const reply = { content: [text('Long text. '.repeat(10))], chunkSize: 8, usage: { input_tokens: 700, output_tokens: 30 } };
    const server = await mockServer([{ ...reply, disconnectAfterEvents: 6 }, { ...reply, disconnectAfterEvents: 6 }, reply]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, stream: true }, { budget: { maxTokens: 1000 } });
    await expect(runner.runUntilDone()).rejects.toThrow(/The reply stream broke/);
    // message_start says the input tokens (and the first output token, as the API's does).
    expect(runner.usage).toMatchObject({ input_tokens: 700, output_tokens: 1 });
    await expect(runner.runUntilDone()).rejects.toThrow(/The reply stream broke/);
    expect(runner.usage).toMatchObject({ input_tokens: 1400, output_tokens: 2 });
    // Two broken replies used the budget up: the run stops before a third request (with no reply to end on).
    await expect(runner.runUntilDone()).rejects.toThrow(/the budget was reached before any reply was kept/);
    expect(runner.stoppedBy).toBe('budget');
    expect(server.requests).toHaveLength(2);
  });

  it('a stream that breaks after eager calls started, retried: the retried reply (its calls of the same ids) runs them anew, not answered as aborted', async () => {
    const reply = { content: [toolUse('lookup', { q: 'a' }, 'toolu_1'), toolUse('lookup', { q: 'b' }, 'toolu_2'), text('Long text. '.repeat(10))], chunkSize: 8, eventDelayMs: 2 };
    const server = await mockServer([{ ...reply, disconnectAfterEvents: 22 }, reply, { content: [text('done')] }]);
    const log: string[] = [];
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, stream: true, runToolsEagerly: true, tools: [heedingTool(log)] });
    await expect(runner.runUntilDone()).rejects.toThrow(/The reply stream broke/);
    expect(log.filter((line) => line === 'tool start')).toHaveLength(2);
    await runner.runUntilDone();
    expect(runner.stoppedBy).toBe('model');
    expect(log.filter((line) => line === 'tool start')).toHaveLength(4);
    const results = wire(server.requests[2]!).messages[2].content as Array<{ tool_use_id: string; is_error?: boolean; content: unknown }>;
    expect(results.map((result) => [result.tool_use_id, result.is_error ?? false])).toEqual([
      ['toolu_1', false],
      ['toolu_2', false],
    ]);
  });

  it('the body takes control and keeps the reply, which stops for approval: an eager call that finished is not run again once the other is approved', async () => {
    let runs = 0;
    const signals: AbortSignal[] = [];
    const quick = tool({ name: 'quick', inputSchema: z.object({}), run: async (_input, { signal }) => (runs++, signals.push(signal), 'quick done') });
    const guarded = tool({ name: 'guarded', inputSchema: z.object({}), needsApproval: true, run: async () => 'guarded done' });
    const server = await mockServer([{ content: [toolUse('quick', {}, 'toolu_q'), toolUse('guarded', {}, 'toolu_g')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [quick, guarded], runToolsEagerly: true });
    for await (const message of runner) {
      runner.setMessagesParams((params) => ({ ...params, max_tokens: 200, messages: [...params.messages, { role: 'assistant', content: message.content }] }));
    }
    expect(runner.stoppedBy).toBe('approval');
    expect(Object.keys(runner.toJSON().calls.settled)).toEqual(['toolu_q']);
    runner.approve('toolu_g');
    await runner;
    expect(runs).toBe(1);
    expect(wire(server.requests[1]!).messages.at(-1).content.map((result: { content: string }) => result.content)).toEqual(['quick done', 'guarded done']);
    // Kept and answered: its signal was never aborted as if its reply had been dropped.
    expect(signals[0]!.aborted).toBe(false);
  });

  it('the body takes control and keeps the whole reply: its eager call, answered, is not aborted afterwards as if its reply had been dropped', async () => {
    const signals: AbortSignal[] = [];
    const quick = tool({ name: 'quick', inputSchema: z.object({}), run: async (_input, { signal }) => (signals.push(signal), 'quick done') });
    const server = await mockServer([{ content: [toolUse('quick', {}, 'toolu_q'), text('Asked.')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [quick], runToolsEagerly: true });
    for await (const message of runner) {
      if (message.stop_reason === 'tool_use') runner.setMessagesParams((params) => ({ ...params, messages: [...params.messages, { role: 'assistant', content: message.content }] }));
    }
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(false);
  });

  it('an eager call that finished is not run again when the body keeps only part of the reply, or keeps it and breaks (a checkpoint, then a resume)', async () => {
    let runs = 0;
    const quick = tool({ name: 'quick', inputSchema: z.object({}), run: async () => (runs++, 'quick done') });
    // The slow call ends only once the test lets it (or is stopped): a loaded machine cannot let it finish early.
    let slowMayEnd = false;
    const slow = tool({
      name: 'slow',
      inputSchema: z.object({}),
      run: async (_input, { signal }) => {
        while (!slowMayEnd && !signal?.aborted) await sleep(5);
        signal?.throwIfAborted();
        return 'slow done';
      },
    });
    const reply = { content: [toolUse('quick', {}, 'toolu_q'), toolUse('slow', {}, 'toolu_s'), text('Both.')], chunkSize: 8, eventDelayMs: 2 };
    const server = await mockServer([reply, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, stream: true, tools: [quick, slow], runToolsEagerly: true });
    for await (const stream of runner) {
      const message = await stream.finalMessage();
      if (message.content.length < 3) continue;
      await sleep(10);
      // Keeps the reply without its slow call.
      runner.setMessagesParams((params) => ({ ...params, messages: [...params.messages, { role: 'assistant', content: message.content.filter((block) => block.type !== 'tool_use' || block.name === 'quick') }] }));
    }
    expect(runs).toBe(1);
    expect(wire(server.requests[1]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_q', content: 'quick done' }]);

    const again = await mockServer([reply, { content: [text('Done.')] }]);
    const breaking = toolRunner(again.client(), { ...baseParams, stream: true, tools: [quick, slow], runToolsEagerly: true });
    for await (const stream of breaking) {
      const message = await stream.finalMessage();
      await sleep(10);
      breaking.setMessagesParams((params) => ({ ...params, messages: [...params.messages, { role: 'assistant', content: message.content }] }));
      break;
    }
    await sleep(60);
    const snapshot = JSON.parse(JSON.stringify(breaking.toJSON()));
    expect(Object.keys(snapshot.calls.settled)).toEqual(['toolu_q']);
    slowMayEnd = true;
    await resumeToolRunner(again.client(), snapshot, { tools: [quick, slow] });
    expect(runs).toBe(2);
    expect(wire(again.requests[1]!).messages.at(-1).content.map((result: { content: string }) => result.content)).toEqual(['quick done', 'slow done']);
  });

  it('the body keeps the reply and adds a question after it: an eager call that finished is answered with its result (it ran), one it stopped as aborted once started (not as never run)', async () => {
    const ran: string[] = [];
    const quick = tool({ name: 'quick', inputSchema: z.object({}), run: async () => (ran.push('quick'), 'quick done') });
    const slow = tool({
      name: 'slow',
      inputSchema: z.object({}),
      run: async (_input, { signal }) => {
        await new Promise((resolve, reject) => {
          const timer = setTimeout(resolve, 500);
          signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)));
        });
        ran.push('slow');
        return 'slow done';
      },
    });
    const server = await mockServer([{ content: [toolUse('quick', {}, 'toolu_q'), toolUse('slow', {}, 'toolu_s')] }, { content: [text('Noted.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, stream: true, tools: [quick, slow], runToolsEagerly: true });
    for await (const stream of runner) {
      const message = await stream.finalMessage();
      await sleep(10);
      if (message.stop_reason === 'tool_use') runner.pushMessages(message, { role: 'user', content: 'And Oslo?' });
    }
    expect(ran).toEqual(['quick']);
    const [, , results, question] = wire(server.requests[1]!).messages;
    expect(results.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_q', content: 'quick done' },
      { type: 'tool_result', tool_use_id: 'toolu_s', is_error: true, content: "Error: the call to 'slow' was aborted before it finished." },
    ]);
    expect(question).toEqual({ role: 'user', content: 'And Oslo?' });
  });

  it('a reply cut off by max_tokens after an eager call started: the run ends once that call has', async () => {
    const server = await mockServer([{ content: [toolUse('lookup', { q: 'x' }), text('Now some long text while the tool runs. '.repeat(3))], chunkSize: 8, eventDelayMs: 2, stop_reason: 'max_tokens' }]);
    const log: string[] = [];
    const slow = tool({ name: 'lookup', inputSchema: { type: 'object', properties: { q: { type: 'string' } } }, run: async () => (log.push('tool start'), await sleep(150), log.push('tool end'), 'found') });
    const runner = toolRunner(server.client(), { ...baseParams, stream: true, runToolsEagerly: true, tools: [slow] }, { onEvent: (event) => (event.type === 'run.end' ? log.push('run.end') : undefined) });
    const final = await runner;
    log.push('settled');
    expect(final.stop_reason).toBe('max_tokens');
    expect(log).toEqual(['tool start', 'tool end', 'run.end', 'settled']);
  });

  it('never starts a tool whose block was cut off by max_tokens', async () => {
    const server = await mockServer([{ content: [text('thinking aloud'), toolUse('lookup', { q: 'x' })], stop_reason: 'max_tokens' }]);
    const log: Array<[string, number]> = [];
    await toolRunner(server.client(), { ...baseParams, stream: true, runToolsEagerly: true, tools: [timedTool(log)] });
    expect(log).toEqual([]);
  });
});
