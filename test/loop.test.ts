import { describe, expect, it } from 'vitest';
import { tool, toolRunner } from 'tool-runner';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, captureLogger, mockServer, sleep, weatherTool, wire } from './helpers.js';

describe('the loop', () => {
  it('yields each assistant message, runs the tools and sends their results back', async () => {
    const call = toolUse('get_weather', { location: 'Paris' });
    const server = await mockServer([{ content: [text('Let me check.'), call] }, { content: [text('21°C in Paris.')] }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)] });
    const seen = [];
    for await (const message of runner) seen.push(message);

    expect(seen.map((message) => message.stop_reason)).toEqual(['tool_use', 'end_turn']);
    expect(calls).toEqual(['Paris']);
    // The model sees the whole conversation; over the thread (the default) only the results are sent.
    expect(wire(server.requests[1]!).messages).toEqual([
      baseParams.messages[0],
      { role: 'assistant', content: [{ type: 'text', text: 'Let me check.', citations: null }, call] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: (call as { id: string }).id,
            content: '{"location":"Paris","unit":"celsius","temperature":21}',
          },
        ],
      },
    ]);
    const [first, second] = server.requests.map((request) => wire(request).body);
    expect(first.thread).toEqual({ type: 'create' });
    expect(first.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather for a city',
        input_schema: expect.objectContaining({ type: 'object', required: ['location'] }),
      },
    ]);
    expect(second.thread).toEqual({ type: 'continue', previous_message_id: seen[0]!.id });
    expect(second.messages).toEqual([wire(server.requests[1]!).messages[2]]);
    expect(second).not.toHaveProperty('tools');
    expect(second).not.toHaveProperty('max_iterations');
    expect(historyProblems(runner.params.messages)).toEqual([]);
    expect(await runner.done()).toBe(seen[1]);
    server.assertComplete();
  });

  it('await runner drives the loop and resolves to the last message', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { content: [text('Done.')] },
    ]);
    const final = await toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] });
    expect(final.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    expect(server.requests).toHaveLength(2);
  });
});

describe('driving and ending the loop', () => {
  it('break stops the loop: no further request, done() resolves to the last message', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { content: [text('never requested')] },
    ]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)] });
    let first;
    for await (const message of runner) {
      first = message;
      break;
    }
    expect(await runner.done()).toBe(first);
    expect(await runner).toBe(first);
    expect(server.requests).toHaveLength(1);
    expect(calls).toEqual([]);
    // The reply was not appended: the history stays valid (no unanswered tool_use).
    expect(runner.params.messages).toEqual(baseParams.messages);
  });

  it('done() waits for a run started elsewhere; runUntilDone() drives it', async () => {
    const server = await mockServer([{ content: [text('Hello')] }]);
    const runner = toolRunner(server.client(), baseParams);
    const done = runner.done();
    const final = await runner.runUntilDone();
    expect(await done).toBe(final);
    expect(final.content[0]).toMatchObject({ text: 'Hello' });
  });

  it('the runner awaited inside its own loop body (which never returns, as on the SDK) is warned about; a then() there settles after the loop', async () => {
    const { lines, logger } = captureLogger();
    const server = await mockServer([{ content: [toolUse('get_weather', { location: 'Paris' })] }, { content: [text('21°C.')] }]);
    const runner = toolRunner(server.client({ logger, logLevel: 'warn' }), { ...baseParams, tools: [weatherTool()] });
    let settled: unknown;
    for await (const message of runner) {
      // Not awaited (that would wait for this very loop): a callback for the end.
      if (message.stop_reason === 'tool_use') void runner.then((final) => (settled = final));
    }
    await sleep(0);
    expect(settled).toMatchObject({ content: [{ type: 'text', text: '21°C.' }] });
    expect(lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([expect.stringMatching(/^The runner was awaited \(or runUntilDone\(\) called\) inside its own loop body: .* never returns/)]);
    // Outside the loop body, nothing is said.
    await runner;
    expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
  });

  it('max_iterations stops after that many requests, even when the model wants more tools', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { content: [toolUse('get_weather', { location: 'Rome' })] },
      { content: [text('never requested')] },
    ]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)], max_iterations: 2 });
    const final = await runner;
    expect(final.stop_reason).toBe('tool_use');
    expect(server.requests).toHaveLength(2);
    expect(runner.iteration).toBe(2);
    expect(calls).toEqual(['Paris', 'Rome']);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('iterating a consumed runner throws', async () => {
    const server = await mockServer([{ content: [text('Hi')] }]);
    const runner = toolRunner(server.client(), baseParams);
    await runner;
    await expect(async () => {
      for await (const _ of runner) {
        // never reached
      }
    }).rejects.toThrow(/consumed/);
    // The failed attempt leaves the finished run as it was.
    expect((await runner.done()).content[0]).toMatchObject({ text: 'Hi' });
    await expect(runner.runUntilDone()).resolves.toMatchObject({ content: [{ text: 'Hi' }] });
    expect(server.requests).toHaveLength(1);
  });

  it('runs the tools of one message concurrently and keeps the model order in the results', async () => {
    let running = 0;
    let maxRunning = 0;
    const slow = (name: string, ms: number) =>
      tool({
        name,
        inputSchema: { type: 'object', properties: {} } as const,
        run: async () => {
          running++;
          maxRunning = Math.max(maxRunning, running);
          await sleep(ms);
          running--;
          return name;
        },
      });
    const server = await mockServer([
      { content: [toolUse('slow', {}, 'toolu_a'), toolUse('fast', {}, 'toolu_b'), toolUse('slow', {}, 'toolu_c')] },
      { content: [text('ok')] },
    ]);
    await toolRunner(server.client(), { ...baseParams, tools: [slow('slow', 60), slow('fast', 5)] });
    expect(maxRunning).toBe(3);
    const results = wire(server.requests[1]!).messages[2].content;
    expect(results.map((result: { tool_use_id: string }) => result.tool_use_id)).toEqual(['toolu_a', 'toolu_b', 'toolu_c']);
    expect(results.map((result: { content: string }) => result.content)).toEqual([
      'slow',
      'fast',
      'slow',
    ]);
  });

  it('sums usage and counts iterations', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })], usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 3 } },
      {
        content: [text('ok')],
        usage: { input_tokens: 20, output_tokens: 7, cache_creation_input_tokens: 4, server_tool_use: { web_search_requests: 2, web_fetch_requests: 1 } },
      },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] });
    await runner;
    expect(runner.iteration).toBe(2);
    expect(runner.usage).toMatchObject({
      input_tokens: 30,
      output_tokens: 12,
      cache_read_input_tokens: 3,
      cache_creation_input_tokens: 4,
      server_tool_use: { web_search_requests: 2, web_fetch_requests: 1 },
    });
  });

  it('falls back to client.messages for a client without beta', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { content: [text('ok')] },
    ]);
    const anthropic = server.client();
    const client = { messages: anthropic.messages };
    const final = await toolRunner(client, { ...baseParams, tools: [weatherTool()] });
    expect(final.content[0]).toMatchObject({ text: 'ok' });
    expect(server.requests.map((request) => request.path)).toEqual(['/v1/messages', '/v1/messages']);
    expect(server.requests[0]!.headers['anthropic-beta']).toBeUndefined();
  });
});
