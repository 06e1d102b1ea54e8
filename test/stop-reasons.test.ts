import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { resumeToolRunner, tool, toolRunner } from 'tool-runner';
import { historyProblems, serverToolUse, text, thinking, toolUse, webSearchResult } from 'tool-runner/testing';
import { baseParams, mockServer, weatherTool, wire } from './helpers.js';

describe('stop_reason table (SPEC §3)', () => {
  for (const stop_reason of ['end_turn', 'stop_sequence', 'refusal', 'model_context_window_exceeded'] as const) {
    it(`${stop_reason} stops the loop without running tools`, async () => {
      const server = await mockServer([{ content: [text('…'), toolUse('get_weather', { location: 'Paris' })], stop_reason }]);
      const calls: string[] = [];
      const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)] });
      const final = await runner;
      expect(final.stop_reason).toBe(stop_reason);
      expect(calls).toEqual([]);
      expect(server.requests).toHaveLength(1);
    });
  }

  it('pause_turn sends the history back so the server continues; server tool blocks are never run locally', async () => {
    const search = serverToolUse('web_search', { query: 'paris weather' });
    const searchId = (search as { id: string }).id;
    const server = await mockServer([
      { content: [search, webSearchResult(searchId, [{ url: 'https://example.com', title: 'Paris' }])], stop_reason: 'pause_turn' },
      { content: [text('Sunny in Paris.')] },
    ]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), {
      ...baseParams,
      tools: [weatherTool(calls), { type: 'web_search_20250305', name: 'web_search' }],
    });
    const final = await runner;
    expect(final.content[0]).toMatchObject({ text: 'Sunny in Paris.' });
    expect(calls).toEqual([]);
    const resent = wire(server.requests[1]!).messages;
    expect(resent).toHaveLength(2);
    expect(resent[1].role).toBe('assistant');
    expect(resent[1].content.map((block: { type: string }) => block.type)).toEqual(['server_tool_use', 'web_search_tool_result']);
    expect(runner.params.messages).toHaveLength(3);
  });

  for (const stop of ['pause_turn', 'compaction'] as const) {
    it(`a paused turn (${stop}) that holds a client tool_use (the API does not send one) runs no tools: its calls are answered as not run, and the history stays valid`, async () => {
      const server = await mockServer([
        { content: [serverToolUse('web_search', { query: 'paris' }), toolUse('get_weather', { location: 'Paris' }, 'toolu_p')], stop_reason: stop },
        { content: [text('Sunny in Paris.')] },
      ]);
      const calls: string[] = [];
      const runner = toolRunner(server.client(), { ...baseParams, thread: false, tools: [weatherTool(calls), { type: 'web_search_20250305', name: 'web_search' }] });
      await runner;
      expect(calls).toEqual([]);
      expect(wire(server.requests[1]!).messages.at(-1).content).toEqual([
        { type: 'tool_result', tool_use_id: 'toolu_p', is_error: true, content: `Error: the call to 'get_weather' came in a paused turn (${stop}), whose calls do not run, so it was not run.` },
      ]);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    });
  }

  it('a paused turn runs no tools on the other paths either: generateToolResponse() in the loop body, and runToolsEagerly while it streams', async () => {
    const paused = { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_p')], stop_reason: 'pause_turn' as const };
    const server = await mockServer([paused, { content: [text('Sunny.')] }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, thread: false, tools: [weatherTool(calls)] });
    for await (const message of runner) {
      if (message.stop_reason !== 'pause_turn') continue;
      const response = await runner.generateToolResponse();
      expect(response?.content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_p', is_error: true, content: expect.stringMatching(/came in a paused turn/) }]);
    }
    expect(calls).toEqual([]);

    // The call, then text: it starts while the reply streams (runToolsEagerly), before the turn is known to pause.
    const streamed = await mockServer([{ ...paused, content: [...paused.content, text('Pausing here.')], chunkSize: 4, eventDelayMs: 1 }, { content: [text('Sunny.')] }]);
    const eager = toolRunner(streamed.client(), { ...baseParams, thread: false, stream: true, runToolsEagerly: true, tools: [weatherTool(calls)] });
    await eager.runUntilDone();
    expect(calls).toEqual(['Paris']);
    // Its result is not kept, and the model is told why.
    expect(wire(streamed.requests[1]!).messages.at(-1).content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_p', is_error: true, content: "Error: the turn was paused (pause_turn) after the call to 'get_weather' had started; its result was not kept." },
    ]);
  });

  it('an empty reply is not kept in the history: a paused one is sent again as the history was, a final one ends the run', async () => {
    const server = await mockServer([{ content: [], stop_reason: 'pause_turn' }, { content: [] }]);
    const runner = toolRunner(server.client(), { ...baseParams, thread: false });
    const final = await runner;
    expect(final.content).toEqual([]);
    expect(wire(server.requests[1]!).messages).toEqual(baseParams.messages);
    expect(runner.params.messages).toEqual(baseParams.messages);
    runner.pushMessages({ role: 'user', content: 'Still there?' });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('a text block of whitespace only (which the API refuses in a request) is left out of the kept reply; a reply with thinking is kept as it came (its blocks must not change)', async () => {
    const server = await mockServer([
      { content: [text('\n\n'), toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] },
      { content: [thinking('Paris again'), text(' '), toolUse('get_weather', { location: 'Paris' }, 'toolu_2')] },
      { content: [text('\n')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, thread: false, tools: [weatherTool()] });
    const final = await runner;
    expect(final.content).toEqual([{ type: 'text', text: '\n', citations: null }]);
    const sent = wire(server.requests[2]!).messages;
    expect(sent[1].content).toEqual([expect.objectContaining({ type: 'tool_use', id: 'toolu_1' })]);
    expect(sent[3].content.map((block: { type: string }) => block.type)).toEqual(['thinking', 'text', 'tool_use']);
    // The last reply, blank, is not kept: the history ends with the results it answered.
    expect(runner.params.messages.at(-1)?.role).toBe('user');
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('blank text left out of a reply does not break a thread: the run continues its own and an SDK thread; a reply of blank text only replays the history, so the next message is sent', async () => {
    const lookup = tool({ name: 'lookup', inputSchema: z.object({ n: z.number() }), run: ({ n }) => `row ${n}` });
    const steps = () => [
      { content: [text('\n\n'), toolUse('lookup', { n: 1 }, 'toolu_1')] },
      { content: [text('\n\n'), toolUse('lookup', { n: 2 }, 'toolu_2')] },
      { content: [text('Rows 1 and 2.')] },
    ];
    const own = await mockServer(steps());
    await toolRunner(own.client(), { ...baseParams, tools: [lookup] });
    expect(own.requests.map((request) => wire(request).body.thread?.type)).toEqual(['create', 'continue', 'continue']);
    const overSdk = await mockServer(steps());
    const thread = overSdk.client().beta.messages.thread({ ...baseParams, tools: [lookup] });
    await toolRunner(thread, {});
    expect(overSdk.requests.map((request) => wire(request).body.thread?.type)).toEqual(['create', 'continue', 'continue']);
    expect(overSdk.requests.map((request) => wire(request).body.messages.length)).toEqual([1, 1, 1]);

    const repaired = await mockServer([{ content: [text('\n\n')] }, { content: [text('{"city":"Paris"}')] }]);
    const runner = toolRunner(repaired.client(), baseParams, { output: z.object({ city: z.string() }) });
    await runner;
    expect(runner.output).toEqual({ city: 'Paris' });
    const second = wire(repaired.requests[1]!);
    expect(second.body.thread?.type).toBe('create');
    expect(second.messages.at(-1).role).toBe('user');
  });

  for (const thread of [true, false]) it(`a reply with blank text that the loop body keeps as it came (take control): the thread goes on, and the blank block is never sent (${thread ? 'a thread' : 'no thread'})`, async () => {
    const lookup = tool({ name: 'lookup', inputSchema: z.object({ n: z.number() }), run: ({ n }) => `row ${n}` });
    const server = await mockServer([{ content: [text('\n\n'), toolUse('lookup', { n: 1 }, 'toolu_1')] }, { content: [text('Row 1.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], ...(!thread && { thread: false as const }) });
    for await (const message of runner) {
      const response = await runner.generateToolResponse();
      if (response) runner.pushMessages({ role: 'assistant', content: message.content }, response);
    }
    expect(server.requests.map((request) => wire(request).body.thread?.type ?? 'none')).toEqual(thread ? ['create', 'continue'] : ['none', 'none']);
    // Over the thread only the results go; without one, the whole history, valid.
    // Over the thread only the results go (the server holds its reply as it wrote it); without one, the whole history, valid.
    if (thread) expect((server.requests[1]!.body.messages as Array<{ role: string }>).map((message) => message.role)).toEqual(['user']);
    else expect(historyProblems(wire(server.requests[1]!).messages)).toEqual([]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
    expect(runner.params.messages[1]!.content).toEqual([expect.objectContaining({ type: 'tool_use', id: 'toolu_1' })]);
  });

  it('with runToolsEagerly, a complete call of a reply then cut off by max_tokens ran: going on, the model is told it had started, not that it was not run', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_ran'), text('And then I will')], stop_reason: 'max_tokens' },
      { content: [text('ok')] },
    ]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, thread: false, tools: [weatherTool(calls)], runToolsEagerly: true });
    for await (const message of runner) {
      if (message.stop_reason === 'max_tokens') runner.pushMessages({ role: 'assistant', content: message.content }, { role: 'user', content: 'Go on.' });
    }
    expect(calls).toEqual(['Paris']);
    const results = wire(server.requests[1]!).messages.flatMap((message: { content: unknown }) => (Array.isArray(message.content) ? message.content : [])).filter((block: { type: string }) => block.type === 'tool_result');
    expect(results).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_ran', is_error: true, content: expect.stringMatching(/after the call to 'get_weather' had started; its result was not kept/) }]);
  });

  // The model's context window cuts a reply off as max_tokens does: its calls were answered as never answered (a call that
  // ran while the reply streamed, as not run), and generateToolResponse() ran a call whose input may have been cut with it.
  it("a reply cut off at the model's context window (model_context_window_exceeded) is answered as cut off, as at max_tokens: a call that ran while it streamed is told so on resume", async () => {
    const reply = { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_ran'), text('And then I will')], stop_reason: 'model_context_window_exceeded' as const };
    const server = await mockServer([reply, { content: [text('ok')] }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, thread: false, tools: [weatherTool(calls)], runToolsEagerly: true });
    await runner;
    expect(calls).toEqual(['Paris']);
    runner.pushMessages({ role: 'user', content: 'Go on.' });
    await resumeToolRunner(server.client(), runner.toJSON(), { tools: [weatherTool(calls)] });
    expect(calls).toEqual(['Paris']);
    const sent = wire(server.requests[1]!).messages;
    expect(sent[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_ran', is_error: true, content: "Error: the reply was cut off (it reached the model's context window) after the call to 'get_weather' had started; its result was not kept." }] });
    expect(historyProblems(sent)).toEqual([]);

    server.setSteps([{ ...reply, content: [toolUse('get_weather', { location: 'Pa' }, 'toolu_cut')] }]);
    const cut = toolRunner(server.client(), { ...baseParams, thread: false, tools: [weatherTool(calls)] });
    for await (const _message of cut) {
      expect(await cut.generateToolResponse()).toMatchObject({ content: [{ tool_use_id: 'toolu_cut', is_error: true, content: "Error: the call to 'get_weather' was cut off (the reply reached the model's context window), so it was not run." }] });
    }
    expect(calls).toEqual(['Paris']);
  });

  it('a tool_use cut off by max_tokens is never run and stays the last message', async () => {
    const server = await mockServer([{ content: [toolUse('get_weather', { location: 'Pa' })], stop_reason: 'max_tokens' }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)] });
    const final = await runner;
    expect(final.stop_reason).toBe('max_tokens');
    expect(calls).toEqual([]);
    expect(runner.params.messages.at(-1)).toEqual({ role: 'assistant', content: final.content });
  });

  it('when the caller continues after max_tokens, the cut-off calls are answered with an error first', async () => {
    const cut = toolUse('get_weather', { location: 'Pa' }, 'toolu_cut');
    const server = await mockServer([{ content: [cut], stop_reason: 'max_tokens' }, { content: [text('Sorry, go on.')] }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)] });
    for await (const message of runner) {
      if (message.stop_reason === 'max_tokens') {
        expect(await runner.generateToolResponse()).toMatchObject({ content: [{ tool_use_id: 'toolu_cut', is_error: true }] });
        runner.pushMessages({ role: 'assistant', content: message.content }, { role: 'user', content: 'Please go on.' });
      }
    }
    expect(calls).toEqual([]);
    const sent = wire(server.requests[1]!).messages;
    expect(sent).toHaveLength(4);
    expect(sent[2]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_cut',
          is_error: true,
          content: "Error: the call to 'get_weather' was cut off (the reply reached max_tokens), so it was not run.",
        },
      ],
    });
    expect(sent[3]).toEqual({ role: 'user', content: 'Please go on.' });
    expect(historyProblems(sent)).toEqual([]);
  });

  it('forwards the container id the API returned to the next request', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' })], container: { id: 'container_abc' } },
      { content: [text('ok')] },
    ]);
    await toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] });
    expect(wire(server.requests[0]!).body.container).toBeUndefined();
    expect(wire(server.requests[1]!).body.container).toBe('container_abc');
  });
});
