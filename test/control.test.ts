import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { resumeToolRunner, tool, toolRunner } from 'tool-runner';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer, weatherTool, wire } from './helpers.js';

describe('reading and changing the state (SPEC §4)', () => {
  it('params is a read-only copy; in the loop body it does not hold the message just yielded', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { content: [text('ok')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()], max_iterations: 5 });
    const lengths: number[] = [];
    for await (const _ of runner) {
      lengths.push(runner.params.messages.length);
      runner.params.messages.push({ role: 'user', content: 'not kept' });
    }
    expect(lengths).toEqual([1, 3]);
    expect(runner.params.messages).toHaveLength(4);
    expect(runner.params.max_iterations).toBe(5);
    expect(runner.params.model).toBe(baseParams.model);
  });

  it('never mutates the caller’s messages', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { content: [text('ok')] },
    ]);
    const messages = [{ role: 'user' as const, content: 'Weather?' }];
    const snapshot = structuredClone(messages);
    await toolRunner(server.client(), { ...baseParams, messages, tools: [weatherTool()] });
    expect(messages).toEqual(snapshot);
  });

  it('works on a deep copy of the caller’s messages: later edits of the caller’s objects change nothing it sends', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { content: [text('ok')] },
    ]);
    const block = { type: 'text' as const, text: 'Weather in Paris?', cache_control: { type: 'ephemeral' as string } };
    const messages = [{ role: 'user' as const, content: [block] }];
    const runner = toolRunner(server.client(), { ...baseParams, messages: messages as never, tools: [weatherTool()] });
    block.text = 'changed';
    block.cache_control.type = 'changed';
    await runner;
    const sent = { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?', cache_control: { type: 'ephemeral' } }] };
    expect(wire(server.requests[0]!).messages[0]).toEqual(sent);
    expect(wire(server.requests[1]!).messages[0]).toEqual(sent);
  });

  it('sends a message’s extra fields as given, as the SDK’s runner does: the testing kit’s server refuses them, as the API does', async () => {
    const server = await mockServer([{ content: [text('ok')] }]);
    const messages = [{ role: 'user' as const, content: 'Hi', note: { kept: true } }];
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, messages: messages as never });
    messages[0]!.note.kept = false;
    await expect(runner).rejects.toThrow(/messages: message 0 has fields the API does not take: note/);
    expect(wire(server.requests[0]!).messages[0]).toEqual({ role: 'user', content: 'Hi', note: { kept: true } });
  });

  it('pushMessages in the loop body takes control: the reply is not appended, the next request is exactly the state set', async () => {
    const server = await mockServer([{ content: [text('First answer')] }, { content: [text('Second answer')] }]);
    const runner = toolRunner(server.client(), baseParams);
    let turns = 0;
    for await (const message of runner) {
      if (turns++ === 0) {
        runner.pushMessages({ role: 'assistant', content: message.content }, { role: 'user', content: 'And Berlin?' });
      }
    }
    expect(wire(server.requests[1]!).messages).toEqual([
      baseParams.messages[0],
      { role: 'assistant', content: [{ type: 'text', text: 'First answer', citations: null }] },
      { role: 'user', content: 'And Berlin?' },
    ]);
    expect(runner.params.messages).toHaveLength(4);
  });

  it('setMessagesParams can drop the reply and resend (retry a turn) and change other params', async () => {
    const server = await mockServer([{ content: [text('bad answer')] }, { content: [text('good answer')] }]);
    const runner = toolRunner(server.client(), baseParams);
    let retried = false;
    for await (const message of runner) {
      if (!retried && message.content.some((block) => block.type === 'text' && block.text.includes('bad'))) {
        retried = true;
        runner.setMessagesParams((params) => ({ ...params, max_tokens: 2048 }));
      }
    }
    expect(wire(server.requests[1]!).messages).toEqual(baseParams.messages);
    expect(wire(server.requests[1]!).body.max_tokens).toBe(2048);
    expect(runner.params.messages.at(-1)).toEqual({
      role: 'assistant',
      content: [{ type: 'text', text: 'good answer', citations: null }],
    });
  });

  it('answers the tool calls of a state the caller set that ends with an assistant tool_use', async () => {
    const server = await mockServer([{ content: [text('Hi')] }, { content: [text('It is 21°C.')] }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)] });
    let turns = 0;
    for await (const _ of runner) {
      if (turns++ === 0) {
        runner.pushMessages({
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_manual', name: 'get_weather', input: { location: 'Oslo' } }],
        });
      }
    }
    expect(calls).toEqual(['Oslo']);
    const sent = wire(server.requests[1]!).messages;
    expect(sent.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_manual' }] });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('a state the caller set with a call left unanswered beside answered ones: its result joins theirs, all in the model\'s order, first', async () => {
    const server = await mockServer([{ content: [text('Noted.')] }]);
    const messages = [
      { role: 'user' as const, content: 'Weather in Oslo and Rome?' },
      { role: 'assistant' as const, content: [toolUse('get_weather', { location: 'Oslo' }, 'toolu_oslo'), toolUse('get_weather', { location: 'Rome' }, 'toolu_rome')] },
      { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_rome', content: 'Sunny' }, { type: 'text' as const, text: 'And Oslo?' }] },
    ];
    await toolRunner(server.client(), { ...baseParams, messages, tools: [weatherTool()] });
    const sent = wire(server.requests[0]!).messages;
    expect(sent).toHaveLength(3);
    expect(sent[2].content.map((block: { type: string; tool_use_id?: string }) => block.tool_use_id ?? block.type)).toEqual(['toolu_oslo', 'toolu_rome', 'text']);
    expect(sent[2].content[0]).toMatchObject({ is_error: true });
    expect(historyProblems(sent)).toEqual([]);
  });

  it('a history set without the results generateToolResponse gave (the calls ran): they are answered with those results, not as not run', async () => {
    const server = await mockServer([{ content: [toolUse('get_weather', { location: 'Oslo' }, 'toolu_ran')] }, { content: [text('Noted.')] }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)] });
    for await (const message of runner) {
      if (message.stop_reason !== 'tool_use') continue;
      const response = await runner.generateToolResponse();
      response!.content[0]!.content = 'Edited: sunny in Oslo';
      // The reply and a follow-up, without the results.
      runner.pushMessages({ role: 'assistant', content: message.content }, { role: 'user', content: 'And Berlin?' });
    }
    expect(calls).toEqual(['Oslo']);
    const sent = wire(server.requests[1]!).messages;
    expect(sent.slice(-2)).toEqual([
      { role: 'user', content: [expect.objectContaining({ type: 'tool_result', tool_use_id: 'toolu_ran', content: 'Edited: sunny in Oslo' })] },
      { role: 'user', content: 'And Berlin?' },
    ]);
    expect(sent.at(-2).content[0].is_error).toBeUndefined();
    expect(historyProblems(sent)).toEqual([]);
  });

  it('the same while the calls still run (generateToolResponse() not awaited): they are waited for and answered with their results, not as not run', async () => {
    const server = await mockServer([{ content: [toolUse('slow', {}, 'toolu_slow')] }, { content: [text('Noted.')] }]);
    const ended: string[] = [];
    const slow = tool({ name: 'slow', inputSchema: z.object({}), run: async () => (await new Promise((resolve) => setTimeout(resolve, 200)), ended.push('slow'), 'slow result') });
    const runner = toolRunner(server.client(), { ...baseParams, tools: [slow] });
    for await (const message of runner) {
      if (message.stop_reason !== 'tool_use') continue;
      void runner.generateToolResponse();
      runner.pushMessages({ role: 'assistant', content: message.content }, { role: 'user', content: 'Never mind.' });
    }
    expect(ended).toEqual(['slow']);
    const sent = wire(server.requests[1]!).messages;
    expect(sent.slice(-2)).toEqual([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_slow', content: 'slow result' }] }, { role: 'user', content: 'Never mind.' }]);
    expect(historyProblems(sent)).toEqual([]);
  });

  it('a history set without the calls at all: nothing waits for them (a tool that never ends does not hold the run)', async () => {
    const server = await mockServer([{ content: [toolUse('never', {}, 'toolu_never')] }, { content: [text('Hello again.')] }]);
    const never = tool({ name: 'never', inputSchema: z.object({}), run: () => new Promise<string>(() => {}) });
    const runner = toolRunner(server.client(), { ...baseParams, tools: [never] });
    for await (const message of runner) {
      if (message.stop_reason !== 'tool_use') continue;
      void runner.generateToolResponse();
      runner.setMessagesParams((params) => ({ ...params, messages: [{ role: 'user', content: 'Start over.' }] }));
    }
    expect(runner.stoppedBy).toBe('model');
    expect(wire(server.requests[1]!).messages).toEqual([{ role: 'user', content: 'Start over.' }]);
  }, 5000);

  it('the same, in a snapshot taken before the next request: the resumed run sends those results', async () => {
    const server = await mockServer([{ content: [toolUse('get_weather', { location: 'Oslo' }, 'toolu_snap')] }, { content: [text('Noted.')] }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)], max_iterations: 1 });
    for await (const message of runner) {
      const response = await runner.generateToolResponse();
      response!.content[0]!.content = 'Edited: sunny in Oslo';
      runner.pushMessages({ role: 'assistant', content: message.content }, { role: 'user', content: 'And Berlin?' });
    }
    const snapshot = runner.toJSON();
    await resumeToolRunner(server.client(), { ...snapshot, params: { ...snapshot.params, max_iterations: 2 } }, { tools: [weatherTool(calls)] });
    expect(calls).toEqual(['Oslo']);
    const sent = wire(server.requests[1]!).messages;
    expect(sent.at(-2)).toEqual({ role: 'user', content: [expect.objectContaining({ tool_use_id: 'toolu_snap', content: 'Edited: sunny in Oslo' })] });
    expect(historyProblems(sent)).toEqual([]);
  });

  it('generateToolResponse runs the tools once per iteration; mutating its message changes what is sent', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { content: [text('ok')] },
    ]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)] });
    for await (const _ of runner) {
      const response = await runner.generateToolResponse();
      const again = await runner.generateToolResponse();
      expect(again).toBe(response);
      if (response) {
        const result = response.content[0]!;
        result.cache_control = { type: 'ephemeral' };
        result.content = [{ type: 'text', text: 'rewritten' }];
      }
    }
    expect(calls).toEqual(['Paris']);
    expect(wire(server.requests[1]!).messages[2].content[0]).toMatchObject({
      cache_control: { type: 'ephemeral' },
      content: [{ type: 'text', text: 'rewritten' }],
    });
  });

  it('generateToolResponse lets the caller intercept tool errors and stop', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 42 })] },
      { content: [text('never requested')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] });
    let sawError = false;
    for await (const _ of runner) {
      const response = await runner.generateToolResponse();
      if (response?.content.some((result) => result.is_error)) {
        sawError = true;
        break;
      }
    }
    expect(sawError).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  it('generateToolResponse returns null when the message calls no tool', async () => {
    const server = await mockServer([{ content: [text('Hi')] }]);
    const runner = toolRunner(server.client(), baseParams);
    for await (const _ of runner) expect(await runner.generateToolResponse()).toBeNull();
  });

  it('setRequestOptions changes the headers of the next requests', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })] },
      { content: [text('ok')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] }, {
      requestOptions: { headers: { 'x-run': 'one' } },
    });
    for await (const _ of runner) runner.setRequestOptions({ headers: { 'x-run': 'two' } });
    expect(server.requests.map((request) => request.headers['x-run'])).toEqual(['one', 'two']);
  });
});
