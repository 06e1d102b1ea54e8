/**
 * Run control (SPEC §9.2, §9.7): why a run stopped (`runner.stoppedBy`), budgets, the loop guard,
 * and an answer at the limit (`onLimit: 'answer'`) — over HTTP against the testing kit's server.
 */
import { APIUserAbortError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OutputError, type RunnerSnapshot, type StoppedBy, resumeToolRunner, tool, toolRunner } from 'tool-runner';
import { historyProblems, serverToolUse, text, toolResults, toolUse, webSearchResult } from 'tool-runner/testing';
import { baseParams, captureLogger, mockServer, sleep, weatherTool, wire } from './helpers.js';

const usage = (tokens: number) => ({ input_tokens: tokens - 150, output_tokens: 50, cache_creation_input_tokens: 60, cache_read_input_tokens: 40 });
const weather = (location: string, id?: string) => toolUse('get_weather', { location }, id);
const resultsOf = (request: Parameters<typeof toolResults>[0]) => toolResults(request).map((result) => ({ content: result.content, is_error: result.is_error ?? false }));

describe('budget.maxTokens', () => {
  it('no request once the tokens (input + output + cache creation + cache read) reach it; the reply’s calls are answered; raising it goes on', async () => {
    const server = await mockServer([
      { content: [weather('Paris')], usage: usage(600) },
      { content: [weather('Rome')], usage: usage(400) },
      { content: [text('Paris 21°C, Rome 25°C.')], usage: usage(300) },
    ]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)] }, { budget: { maxTokens: 1000 } });
    const last = await runner;
    expect(runner.stoppedBy).toBe('budget');
    expect(server.requests).toHaveLength(2);
    expect(last.content).toEqual([expect.objectContaining({ type: 'tool_use', input: { location: 'Rome' } })]);
    expect(calls).toEqual(['Paris', 'Rome']);
    expect(runner.params.messages.at(-1)!.role).toBe('user');
    expect(historyProblems(runner.params.messages)).toEqual([]);

    // Iterating again without a new budget stops at once; with one (resumed with new options) the run goes on.
    await runner;
    expect(server.requests).toHaveLength(2);
    const raised = resumeToolRunner(server.client(), runner.toJSON(), { tools: [weatherTool(calls)], options: { budget: { maxTokens: 2000 } } });
    expect(raised.stoppedBy).toBe('budget');
    expect((await raised).content).toEqual([expect.objectContaining({ text: 'Paris 21°C, Rome 25°C.' })]);
    expect(raised.stoppedBy).toBe('model');
    expect(raised.usage).toMatchObject({ input_tokens: 1300 - 450 });
  });

  it('summary requests of client-side compaction count, and none is sent once the budget is reached', async () => {
    const server = await mockServer([
      { content: [weather('Paris')], usage: usage(700) },
      { content: [text('<summary>Asked for the weather in Paris.</summary>')], usage: usage(400) },
      { content: [weather('Rome')], usage: usage(700) },
    ]);
    const runner = toolRunner(
      server.client(),
      { ...baseParams, tools: [weatherTool()], compactionControl: { enabled: true, contextTokenThreshold: 500 } },
      { budget: { maxTokens: 1000 } },
    );
    await runner;
    expect(runner.stoppedBy).toBe('budget');
    // The turn, then its summary (the history and the summary prompt; 1,100 tokens in all): no third request.
    expect(server.requests.map((request) => wire(request).messages.length)).toEqual([1, 4]);
  });
});

describe('budget.maxToolCalls and maxCallsPerTool', () => {
  it('calls past maxToolCalls are the last ones in the model’s order, answered “limit” and not run; a later reply past it stops the run', async () => {
    const server = await mockServer([
      { content: [weather('Paris', 'toolu_1'), weather('Rome', 'toolu_2'), weather('Oslo', 'toolu_3')] },
      { content: [weather('Berlin', 'toolu_4')] },
      { content: [text('never')] },
    ]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)] }, { budget: { maxToolCalls: 2 } });
    const last = await runner;
    expect(calls).toEqual(['Paris', 'Rome']);
    expect(server.requests).toHaveLength(2);
    const answered = resultsOf(server.requests[1]!);
    expect(answered.map((result) => result.is_error)).toEqual([false, false, true]);
    expect(answered[2]!.content).toMatch(/not run: the run reached its limit of 2 tool calls \(budget\.maxToolCalls\)/);
    expect(runner.stoppedBy).toBe('budget');
    expect(last.content[0]).toMatchObject({ id: 'toolu_4' });
    // The reply that stopped the run is answered too (not run), so the history can go on as it is.
    expect(runner.params.messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_4', is_error: true, content: expect.stringMatching(/limit/) }],
    });
    // The model reads that answer only if the run goes on (resumed with a larger budget): it is not told to give up.
    expect((runner.params.messages.at(-1)!.content as unknown[])[0]).toMatchObject({ content: expect.stringMatching(/stopped there and has gone on since: call it again if you still need it\.$/) });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('a call not run is seen as any call: tool.start and tool.end events, the onToolResult hook', async () => {
    const server = await mockServer([{ content: [weather('Paris', 'toolu_1'), weather('Rome', 'toolu_2')] }, { content: [text('ok')] }]);
    const seen: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] }, {
      budget: { maxToolCalls: 1 },
      onEvent: (event) => {
        if (event.type === 'tool.start') seen.push(`start ${event.call.id}`);
        if (event.type === 'tool.end') seen.push(`end ${event.call.id}${event.result?.is_error ? ' error' : ''}`);
      },
      hooks: { onToolResult: (result) => void seen.push(`hook ${result.tool_use_id}`) },
    });
    await runner;
    expect(seen.filter((entry) => entry.endsWith('toolu_2') || entry.includes('toolu_2 '))).toEqual(['start toolu_2', 'hook toolu_2', 'end toolu_2 error']);
    expect(seen.filter((entry) => entry.startsWith('hook')).sort()).toEqual(['hook toolu_1', 'hook toolu_2']);
  });

  it('maxCallsPerTool: a number for every tool, or a record by tool name', async () => {
    const lookups: string[] = [];
    const lookup = tool({ name: 'lookup', inputSchema: z.object({ q: z.string() }), run: ({ q }) => (lookups.push(q), `found ${q}`) });
    const server = await mockServer([
      { content: [weather('Paris'), toolUse('lookup', { q: 'a' }), weather('Rome'), toolUse('lookup', { q: 'b' })] },
      { content: [text('done')] },
    ]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls), lookup] }, { budget: { maxCallsPerTool: { get_weather: 1 } } });
    await runner;
    expect(calls).toEqual(['Paris']);
    expect(lookups).toEqual(['a', 'b']);
    const [, , rome] = resultsOf(server.requests[1]!);
    expect(rome).toEqual({ is_error: true, content: expect.stringMatching(/'get_weather' reached its limit of 1 calls in this run \(budget\.maxCallsPerTool\)/) });
    expect(runner.stoppedBy).toBe('model');

    const again = await mockServer([{ content: [toolUse('lookup', { q: 'c' }), toolUse('lookup', { q: 'd' })] }, { content: [text('done')] }]);
    const each = toolRunner(again.client(), { ...baseParams, tools: [lookup] }, { budget: { maxCallsPerTool: 1 } });
    await each;
    expect(lookups).toEqual(['a', 'b', 'c']);
  });

  it('a maxCallsPerTool name that is none of the run\'s tools: a warning naming it and the tools', () => {
    const { lines, logger } = captureLogger();
    const calls: string[] = [];
    const client = { logLevel: 'warn', beta: { messages: { create: () => Promise.reject(new Error('not sent')), stream: () => Promise.reject(new Error('not sent')) } } };
    toolRunner(client as never, { ...baseParams, tools: [weatherTool(calls)] }, { logger, budget: { maxCallsPerTool: { get_wether: 1, get_weather: 2 } } });
    expect(lines).toEqual([{ level: 'warn', message: "budget.maxCallsPerTool names no tool of this run: 'get_wether' (its tools: 'get_weather'); a misspelt name limits nothing" }]);
    toolRunner(client as never, { ...baseParams, tools: [weatherTool(calls)] }, { logger, budget: { maxCallsPerTool: { get_weather: 2 } } });
    expect(lines).toHaveLength(1);
  });

  // `{ web_search: 3 }` looked like a cap on the run's searches (each one billed), and was taken in silence: the calls
  // are the API's own (server_tool_use), which the budget never sees, so every search of the run went on.
  it('a maxCallsPerTool name of a server tool (web search, code execution): a warning that the budget cannot limit its calls, which the API runs; the searches are not counted', async () => {
    const { lines, logger } = captureLogger();
    const server = await mockServer([
      { content: [serverToolUse('web_search', { query: 'a' }, 'srvtoolu_1'), webSearchResult('srvtoolu_1', [{ url: 'https://a.example', title: 'A' }]), toolUse('get_weather', { location: 'Paris' })] },
      { content: [serverToolUse('web_search', { query: 'b' }, 'srvtoolu_2'), webSearchResult('srvtoolu_2', [{ url: 'https://b.example', title: 'B' }]), text('Sunny.')] },
    ]);
    const tools = [weatherTool(), { type: 'web_search_20250305' as const, name: 'web_search' as const }, { type: 'code_execution_20250825' as const, name: 'code_execution' as const }];
    const runner = toolRunner(server.client({ logger, logLevel: 'warn' }), { ...baseParams, tools }, { logger, budget: { maxCallsPerTool: { web_search: 1, code_execution: 1, get_weather: 1 } } });
    await runner;
    expect(lines).toEqual([
      {
        level: 'warn',
        message: "budget.maxCallsPerTool names a server tool: 'web_search', 'code_execution'; the API runs its calls within the turn, so the budget never sees them and limits nothing (a web search's or fetch's definition takes max_uses)",
      },
    ]);
    expect(runner.stoppedBy).toBe('model');
    expect(runner.usage.server_tool_use.web_search_requests).toBe(2);
  });

  // The code execution tool's calls come back named `bash_code_execution` and `text_editor_code_execution`, names no
  // definition has: capping one was told "a misspelt name", though it is spelt as the reply spells it.
  it('a maxCallsPerTool name of a code execution call (bash_code_execution) is warned about as a server tool, not as a misspelt name', async () => {
    const { lines, logger } = captureLogger();
    const server = await mockServer([
      { content: [serverToolUse('bash_code_execution', { command: 'ls' }, 'srvtoolu_1'), { type: 'bash_code_execution_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'bash_code_execution_result', stdout: 'a.txt', stderr: '', return_code: 0, content: [] } }, text('One file.')] },
    ]);
    const tools = [weatherTool(), { type: 'code_execution_20250825' as const, name: 'code_execution' as const }];
    const runner = toolRunner(server.client({ logger, logLevel: 'warn' }), { ...baseParams, tools }, { logger, budget: { maxCallsPerTool: { bash_code_execution: 2, text_editor_code_execution: 1 } } });
    await runner;
    expect(lines.map((line) => line.message)).toEqual([expect.stringMatching(/^budget\.maxCallsPerTool names a server tool: 'bash_code_execution', 'text_editor_code_execution'; /)]);
  });

  // The tool search tools' types go without a date too (`tool_search_tool_regex`, as the SDK types them): not taken for a
  // server tool's, its cap was taken in silence.
  it('a maxCallsPerTool name of a tool search of an undated type (tool_search_tool_regex) is warned about as a server tool', () => {
    const { lines, logger } = captureLogger();
    const client = { logLevel: 'warn', beta: { messages: { create: () => Promise.reject(new Error('not sent')), stream: () => Promise.reject(new Error('not sent')) } } };
    const search = { type: 'tool_search_tool_regex' as const, name: 'tool_search_tool_regex' as const };
    toolRunner(client as never, { ...baseParams, tools: [weatherTool(), search] }, { logger, budget: { maxCallsPerTool: { tool_search_tool_regex: 2 } } });
    expect(lines.map((line) => line.message)).toEqual([expect.stringMatching(/^budget\.maxCallsPerTool names a server tool: 'tool_search_tool_regex'; /)]);
  });

  // An MCP connector's toolset has no name: the check gave up on every key, and `{ web_search: 3 }` was taken in silence.
  it('a maxCallsPerTool name of a server tool is warned about beside an MCP connector toolset (whose tools no name tells)', () => {
    const { lines, logger } = captureLogger();
    const client = { logLevel: 'warn', beta: { messages: { create: () => Promise.reject(new Error('not sent')), stream: () => Promise.reject(new Error('not sent')) } } };
    const connector = { type: 'mcp_toolset' as const, mcp_server_name: 'docs' };
    const web = { type: 'web_search_20250305' as const, name: 'web_search' as const };
    const params = { ...baseParams, tools: [weatherTool(), web, connector], mcp_servers: [{ type: 'url', name: 'docs', url: 'https://mcp.example/sse' }] };
    toolRunner(client as never, params as never, { logger, budget: { maxCallsPerTool: { web_search: 3, search_docs: 2 } } });
    // (`search_docs` may be a tool of the MCP server's: no name of the run's tells it is not.)
    expect(lines.map((line) => line.message)).toEqual([expect.stringMatching(/^budget\.maxCallsPerTool names a server tool: 'web_search'; /)]);
  });

  it('a streamed run starting tools eagerly: a call past the limit never starts', async () => {
    const server = await mockServer([{ content: [weather('Paris'), weather('Rome')] }, { content: [text('done')] }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)], stream: true, runToolsEagerly: true }, { budget: { maxToolCalls: 1 } });
    for await (const stream of runner) await stream.finalMessage();
    expect(calls).toEqual(['Paris']);
    expect(resultsOf(server.requests[1]!).map((result) => result.is_error)).toEqual([false, true]);
    expect(runner.stoppedBy).toBe('model');
  });
});

describe('calls started while a reply streams (runToolsEagerly), of a reply that is not kept', () => {
  it('do not count against the budget or the loop guard: the retried turn makes the same call and it runs', async () => {
    for (const limits of [{ loopGuard: { maxRepeats: 1 } }, { budget: { maxToolCalls: 1 } }, { budget: { maxCallsPerTool: { lookup: 1 } } }]) {
      for (const stream of [false, true]) {
        let runs = 0;
        const lookup = tool({ name: 'lookup', inputSchema: z.object({ q: z.string() }), run: ({ q }) => (runs++, `found ${q}`) });
        const server = await mockServer([
          // The stream breaks after the call's block completed (it started), before the reply ends.
          { content: [toolUse('lookup', { q: 'x' }), text('and some more text after the call')], disconnectAfterEvents: 9 },
          { content: [toolUse('lookup', { q: 'x' })] },
          { content: [text('done')] },
        ]);
        const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [lookup], stream, runToolsEagerly: true }, limits);
        await expect(runner.runUntilDone()).rejects.toThrow();
        await runner.runUntilDone();
        expect(toolResults(runner.params.messages.slice(0, -1)).map((result) => result.content)).toEqual(['found x']);
        expect(runner.stoppedBy).toBe('model');
        expect(historyProblems(runner.params.messages)).toEqual([]);
      }
    }
  });
});

/** A lookup that counts its runs, a reply of two lookups cut off by max_tokens, the model's call of the first again, an answer; the guard on. */
async function cutReplyAfterCalls() {
  let count = 0;
  const lookup = tool({ name: 'lookup', inputSchema: z.object({ q: z.string() }), run: ({ q }) => (count++, `found ${q}`) });
  const server = await mockServer([
    { content: [toolUse('lookup', { q: 'x' }, 'toolu_1'), toolUse('lookup', { q: 'y' }, 'toolu_2')], stop_reason: 'max_tokens' },
    { content: [toolUse('lookup', { q: 'x' }, 'toolu_3')] },
    { content: [text('done')] },
  ]);
  return { lookup, server, options: { loopGuard: { maxRepeats: 1 } }, runs: () => count };
}

describe('a call started while a reply streams (runToolsEagerly), the reply then cut off by max_tokens', () => {
  it('is no earlier call for the loop guard: the model never read its result, and calling it again runs it (as without runToolsEagerly)', async () => {
    for (const runToolsEagerly of [true, false]) {
      const { lookup, server, options, runs } = await cutReplyAfterCalls();
      const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [lookup], runToolsEagerly }, options);
      await runner;
      expect(runs()).toBe(runToolsEagerly ? 1 : 0);
      // Gone on from its snapshot, with a message: the model calls it again, having read no result of it.
      const resumed = resumeToolRunner(server.client({ maxRetries: 0 }), JSON.parse(JSON.stringify(runner.toJSON())), { tools: [lookup], options });
      resumed.pushMessages({ role: 'user', content: 'Go on.' });
      await resumed;
      expect(resultsOf(server.requests[2]!)).toEqual([{ content: 'found x', is_error: false }]);
      expect(resumed.stoppedBy).toBe('model');
      expect(historyProblems(resumed.params.messages)).toEqual([]);
    }
  });
  it('a snapshot taken in the onMessage hook of the cut-off reply (counted into the snapshot) forgets it too: resumed, calling it again runs it', async () => {
    const { lookup, server, options, runs } = await cutReplyAfterCalls();
    let snapshot: RunnerSnapshot | undefined;
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, stream: true, tools: [lookup], runToolsEagerly: true }, {
      ...options,
      // (Once the eager call has ended: its result is not kept either way.)
      hooks: { onMessage: async () => void (await sleep(50), (snapshot = JSON.parse(JSON.stringify(runner.toJSON())))) },
    });
    await runner;
    expect(runs()).toBe(1);
    const resumed = resumeToolRunner(server.client({ maxRetries: 0 }), snapshot!, { tools: [lookup], options });
    resumed.pushMessages({ role: 'user', content: 'Go on.' });
    await resumed;
    expect(resultsOf(server.requests[2]!)).toEqual([{ content: 'found x', is_error: false }]);
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });
});

describe('a snapshot taken in the loop body while a reply streams, then a break (the reply not kept)', () => {
  it('does not count the calls that reply started: the resumed run runs the call the model makes again', async () => {
    for (const limits of [{ loopGuard: { maxRepeats: 1 } }, { budget: { maxCallsPerTool: { lookup: 1 } } }]) {
      let runs = 0;
      const lookup = tool({ name: 'lookup', inputSchema: z.object({ q: z.string() }), run: ({ q }) => (runs++, `found ${q}`) });
      const server = await mockServer([
        { content: [toolUse('lookup', { q: 'x' }, 'toolu_1'), text('and some more text after the call')], eventDelayMs: 10 },
        { content: [toolUse('lookup', { q: 'x' }, 'toolu_2')] },
        { content: [text('done')] },
      ]);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], stream: true, runToolsEagerly: true }, limits);
      let snapshot: unknown;
      for await (const stream of runner) {
        // The call's block is complete (it started), the reply is not.
        await new Promise<void>((resolve) => stream.on('contentBlock', (block) => block.type === 'tool_use' && setTimeout(resolve, 20)));
        snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
        break;
      }
      const resumed = resumeToolRunner(server.client(), snapshot as never, { tools: [lookup], options: limits });
      await resumed;
      expect(resumed.stoppedBy).toBe('model');
      expect(wire(server.requests[2]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'found x' }]);
    }
  });
});

describe('calls started while a reply streams, of a reply the loop body replaces', () => {
  it("do not count against the budget: the body's own call runs", async () => {
    const ran: number[] = [];
    const lookup = tool({
      name: 'lookup',
      inputSchema: z.object({ n: z.number() }),
      run: async ({ n }, { signal }) => {
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, 300);
          signal.addEventListener('abort', () => (clearTimeout(timer), resolve(undefined)), { once: true });
        });
        if (!signal.aborted) ran.push(n);
        return `row ${n}`;
      },
    });
    const server = await mockServer([{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')] }, { content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], runToolsEagerly: true }, { budget: { maxToolCalls: 1 } });
    let first = true;
    for await (const _message of runner) {
      if (!first) continue;
      first = false;
      // The body replaces the model's call with its own.
      runner.pushMessages({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_mine', name: 'lookup', input: { n: 2 } }] });
    }
    expect(ran).toEqual([2]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
});

describe('loopGuard', () => {
  it('a call deep-equal to maxRepeats earlier ones (key order aside) is not run and “repeats”; a second repeat stops the run', async () => {
    const log: unknown[] = [];
    const search = tool({ name: 'search', inputSchema: z.object({ q: z.string(), page: z.number() }), run: (input) => (log.push(input), 'nothing') });
    const server = await mockServer([
      { content: [toolUse('search', { q: 'x', page: 1 })] },
      { content: [toolUse('search', { page: 1, q: 'x' }), toolUse('search', { q: 'x', page: 2 })] },
      { content: [toolUse('search', { q: 'x', page: 1 })] },
      { content: [text('never')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [search] }, { loopGuard: { maxRepeats: 1 } });
    await runner;
    expect(log).toEqual([
      { q: 'x', page: 1 },
      { q: 'x', page: 2 },
    ]);
    expect(server.requests).toHaveLength(3);
    expect(resultsOf(server.requests[2]!)[0]).toEqual({ is_error: true, content: expect.stringMatching(/not run: it repeats an earlier call with the same input/) });
    expect(runner.stoppedBy).toBe('loop_guard');
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('earlier calls include ones that were not run; repeats within one reply count', async () => {
    const server = await mockServer([
      { content: [weather('Paris'), weather('Paris'), weather('Paris')] },
      { content: [text('done')] },
    ]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)] }, { loopGuard: { maxRepeats: 2 }, budget: { maxCallsPerTool: 0 } });
    await runner;
    expect(calls).toEqual([]);
    expect(resultsOf(server.requests[1]!).map((result) => String(result.content).match(/limit|repeats/)?.[0])).toEqual(['limit', 'limit', 'repeats']);
    expect(runner.stoppedBy).toBe('model');
  });
});

describe("onLimit: 'answer'", () => {
  it('a snapshot taken after the answer request at a call limit failed resumes by asking for it (tool_choice: none), as iterating again does', async () => {
    const options = { onLimit: 'answer' as const, budget: { maxToolCalls: 1 } };
    const weather = (location: string) => toolUse('get_weather', { location });
    const server = await mockServer([{ content: [weather('Paris'), weather('Rome')] }, { content: [weather('Oslo')] }, { error: { status: 500 } }, { content: [text('The answer.')] }]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, thread: false, tools: [weatherTool()] }, options);
    await expect(runner.runUntilDone()).rejects.toMatchObject({ status: 500 });
    expect(wire(server.requests[2]!).body.tool_choice).toEqual({ type: 'none' });
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { tools: [weatherTool()], options });
    expect(textOf(await resumed)).toBe('The answer.');
    expect(wire(server.requests[3]!).body.tool_choice).toEqual({ type: 'none' });
    expect(resumed.stoppedBy).toBe('budget');
  });

  it('a snapshot taken in the loop body of the answer at a call limit resumes by asking for it again (tool_choice: none), not for another turn', async () => {
    const options = { onLimit: 'answer' as const, budget: { maxToolCalls: 1 } };
    const server = await mockServer([{ content: [weather('Paris'), weather('Rome')] }, { content: [weather('Oslo')] }, { content: [text('Only Paris.')] }, { content: [text('Only Paris, again.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, thread: false, tools: [weatherTool()] }, options);
    let snapshot: ReturnType<typeof runner.toJSON> | undefined;
    for await (const message of runner) if (message.stop_reason === 'end_turn') snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
    expect(runner.stoppedBy).toBe('budget');
    // The answer is settled once the body is done: the snapshot asks for it again, with the request that may call no tool.
    const resumed = resumeToolRunner(server.client(), snapshot!, { tools: [weatherTool()], options });
    expect(textOf(await resumed)).toBe('Only Paris, again.');
    expect(server.requests).toHaveLength(4);
    expect(wire(server.requests[3]!).body.tool_choice).toEqual({ type: 'none' });
    expect(resumed.stoppedBy).toBe('budget');
  });

  it('max_iterations: the last reply’s calls are answered as not run, one more request with tool_choice none gets the answer', async () => {
    const server = await mockServer([{ content: [weather('Paris')] }, { content: [weather('Rome')] }, { content: [text('Paris is 21°C; Rome I could not check.')] }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)], max_iterations: 2 }, { onLimit: 'answer' });
    const final = await runner;
    expect(calls).toEqual(['Paris']);
    expect(final.content).toEqual([expect.objectContaining({ text: 'Paris is 21°C; Rome I could not check.' })]);
    expect(runner.stoppedBy).toBe('max_iterations');
    expect(runner.iteration).toBe(3);
    expect(server.requests.map((request) => wire(request).body.tool_choice)).toEqual([undefined, undefined, { type: 'none' }]);
    expect(resultsOf(server.requests[2]!)).toEqual([{ is_error: true, content: expect.stringMatching(/limit of 2 requests \(max_iterations\)/) }]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('a token budget, with a typed output: the answer at the limit is parsed', async () => {
    const server = await mockServer([
      { content: [weather('Paris')], usage: usage(1200) },
      { content: [text('{"answer":"unknown"}')], usage: usage(100) },
    ]);
    const calls: string[] = [];
    const runner = toolRunner(
      server.client(),
      { ...baseParams, tools: [weatherTool(calls)] },
      { onLimit: 'answer', budget: { maxTokens: 1000 }, output: z.object({ answer: z.string() }) },
    );
    await runner;
    expect(calls).toEqual([]);
    expect(runner.output).toEqual({ answer: 'unknown' });
    expect(runner.stoppedBy).toBe('budget');
    expect(wire(server.requests[1]!).body).toMatchObject({ tool_choice: { type: 'none' }, output_config: { format: { type: 'json_schema' } } });
    expect(resultsOf(server.requests[1]!)[0]!.content).toMatch(/limit of 1000 tokens \(budget\.maxTokens; 1200 used\)/);
  });

  it('a token budget with tools started eagerly: the reply that reaches it has its calls answered as not run, none started', async () => {
    const server = await mockServer([
      { content: [weather('Paris')], usage: usage(1200) },
      { content: [text('Unknown.')], usage: usage(100) },
    ]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)], stream: true, runToolsEagerly: true }, { onLimit: 'answer', budget: { maxTokens: 1000 } });
    for await (const stream of runner) await stream.finalMessage();
    expect(calls).toEqual([]);
    expect(resultsOf(server.requests[1]!)[0]!.content).toMatch(/limit of 1000 tokens/);
    expect(runner.stoppedBy).toBe('budget');
  });

  it('a second call past maxCallsPerTool, with onLimit answer: its answer, read in the request that may call no tool, offers no other tool', async () => {
    const server = await mockServer([{ content: [weather('Paris'), weather('Rome')] }, { content: [weather('Oslo')] }, { content: [text('Only Paris.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] }, { onLimit: 'answer', budget: { maxCallsPerTool: { get_weather: 1 } } });
    await runner;
    expect(resultsOf(server.requests[1]!)[1]!.content).toMatch(/budget\.maxCallsPerTool\)\. Answer with what you have, or use another tool\.$/);
    expect(wire(server.requests[2]!).body.tool_choice).toEqual({ type: 'none' });
    expect(resultsOf(server.requests[2]!)[0]!.content).toMatch(/budget\.maxCallsPerTool\)\. Answer with what you have\.$/);
  });

  it('a second call past maxToolCalls: the run ends on an answer too', async () => {
    const server = await mockServer([{ content: [weather('Paris'), weather('Rome')] }, { content: [weather('Oslo')] }, { content: [text('Only Paris.')] }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)] }, { onLimit: 'answer', budget: { maxToolCalls: 1 } });
    expect(textOf(await runner)).toBe('Only Paris.');
    expect(calls).toEqual(['Paris']);
    expect(runner.stoppedBy).toBe('budget');
    expect(wire(server.requests[2]!).body.tool_choice).toEqual({ type: 'none' });
    // The model reads the answer to the call that stopped the run at once, in the request for its answer.
    expect(resultsOf(server.requests[2]!)[0]!.content).toMatch(/limit of 1 tool calls \(budget\.maxToolCalls\)\. Answer with what you have\.$/);
    // Ended on its answer at the limit: awaited again, or resumed, it ends at once on it (no request after the answer).
    expect(textOf(await runner)).toBe('Only Paris.');
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { tools: [weatherTool(calls)], options: { onLimit: 'answer', budget: { maxToolCalls: 1 } } });
    expect(textOf(await resumed)).toBe('Only Paris.');
    expect([runner.stoppedBy, resumed.stoppedBy]).toEqual(['budget', 'budget']);
    expect(server.requests).toHaveLength(3);
  });

  it('a run a limit stopped right after a paused turn (pause_turn) goes on when resumed with a larger budget: it had not answered', async () => {
    const server = await mockServer([
      { content: [serverToolUse('web_search', { query: 'q' }, 'srvtoolu_1'), webSearchResult('srvtoolu_1', [{ url: 'https://a.example', title: 'A' }])], stop_reason: 'pause_turn', usage: usage(1200) },
      { content: [text('The answer.')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [] }, { budget: { maxTokens: 1000 }, onLimit: 'answer' });
    await runner;
    expect(runner.stoppedBy).toBe('budget');
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { options: { budget: { maxTokens: 100_000 }, onLimit: 'answer' } });
    expect(textOf(await resumed)).toBe('The answer.');
    expect(resumed.stoppedBy).toBe('model');
  });

  it('an answer at the limit that was not kept (empty): raising the limit, the run goes on', async () => {
    const server = await mockServer([{ content: [weather('Paris')] }, { content: [] }, { content: [text('Sunny in Paris.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()], max_iterations: 1 }, { onLimit: 'answer' });
    await runner;
    expect(runner.stoppedBy).toBe('max_iterations');
    expect(runner.toJSON().control?.answered).toBeUndefined();
    runner.setMessagesParams((params) => ({ ...params, max_iterations: 5 }));
    expect(textOf(await runner)).toBe('Sunny in Paris.');
    expect(runner.stoppedBy).toBe('model');
  });

  it('an answer at the limit, then a server compaction as the last request: resumed with a raised limit, the run ends on the compacted history', async () => {
    const server = await mockServer({
      steps: [{ content: [weather('Paris')] }, { content: [text('Paris it is.')] }, { content: [{ type: 'compaction', content: 'Summary of the work.', encrypted_content: null } as never] }],
      threads: 'unsupported',
    });
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()], max_iterations: 1 }, { onLimit: 'answer' });
    for await (const message of runner) if (textOf(message) === 'Paris it is.') runner.compactBeforeNextTurn();
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
    expect(snapshot.control?.answered).toBe(true);
    const sent = server.requests.length;
    const resumed = resumeToolRunner(server.client(), { ...snapshot, params: { ...snapshot.params, max_iterations: 5 } }, { tools: [weatherTool()], options: { onLimit: 'answer' } });
    await resumed;
    expect(resumed.stoppedBy).toBe('max_iterations');
    expect(server.requests).toHaveLength(sent);
  });

  it('a stop by the loop guard sends no further request', async () => {
    const server = await mockServer([{ content: [weather('Paris')] }, { content: [weather('Paris')] }, { content: [weather('Paris')] }, { content: [text('never')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()] }, { onLimit: 'answer', loopGuard: { maxRepeats: 1 } });
    await runner;
    expect(runner.stoppedBy).toBe('loop_guard');
    expect(server.requests).toHaveLength(3);
  });

  it('a model that calls tools even then: they are not run, and the run stops', async () => {
    const server = await mockServer([{ content: [weather('Paris')] }, { content: [weather('Rome')] }, { content: [text('never')] }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)], max_iterations: 1 }, { onLimit: 'answer' });
    await runner;
    expect(calls).toEqual([]);
    expect(server.requests).toHaveLength(2);
    expect(runner.stoppedBy).toBe('max_iterations');
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
});

describe("onLimit: 'answer' with options.output", () => {
  it('an answer at the limit that is no valid output: an OutputError, and iterating again sends the repair (it stopped at once on the limit)', async () => {
    for (const raise of [true, false]) {
      const server = await mockServer([
        { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] },
        { content: [text('{"a":"bad"}')] },
        { content: [text('{"a":2}')] },
      ]);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool()], max_iterations: 1 }, { output: z.object({ a: z.number() }), onLimit: 'answer' });
      // It says why no repair turn was sent.
      await expect(runner.runUntilDone()).rejects.toThrow(/^The final reply is not valid output for options\.output \(no repair turn: the run reached its limit, max_iterations\):\n  - a: /);
      if (raise) runner.setMessagesParams((params) => ({ ...params, max_iterations: 10 }));
      await runner.runUntilDone();
      expect(runner.output).toEqual({ a: 2 });
      expect(server.requests).toHaveLength(3);
      // The repair went out: the last request ends with the issues.
      expect(JSON.stringify(wire(server.requests[2]!).messages.at(-1))).toMatch(/not valid|invalid|schema/i);
      expect(runner.stoppedBy).toBe(raise ? 'model' : 'max_iterations');
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });
});

describe('runner.stoppedBy', () => {
  it('a limit reached before any reply (a failed request used the last iteration): await rejects with that failure again, and goes on once the limit is raised', async () => {
    const server = await mockServer([{ error: { status: 529 } }, { content: [text('done')] }]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, max_iterations: 1 });
    await expect(runner.runUntilDone()).rejects.toMatchObject({ status: 529 });
    // At the limit nothing is sent again: the failure stands, as in the SDK's runner.
    await expect(runner.runUntilDone()).rejects.toMatchObject({ status: 529 });
    // A stop that rejects is an 'error' (every other stop resolves to the last reply), the second time as the first.
    expect(runner.stoppedBy).toBe('error');
    expect(runner.toJSON().stoppedBy).toBe('error');
    runner.setMessagesParams((params) => ({ ...params, max_iterations: 2 }));
    expect(await runner.runUntilDone()).toMatchObject({ content: [{ text: 'done' }] });
    // The last allowed request aborted by the run's signal: 'abort', the second time too.
    const slow = await mockServer([{ content: [text('slow')], delayMs: 500 }]);
    const controller = new AbortController();
    const aborted = toolRunner(slow.client({ maxRetries: 0 }), { ...baseParams, max_iterations: 1 }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(aborted.runUntilDone()).rejects.toThrow(APIUserAbortError);
    expect(aborted.stoppedBy).toBe('abort');
    await expect(aborted.runUntilDone()).rejects.toThrow(APIUserAbortError);
    expect(aborted.stoppedBy).toBe('abort');
  });

  it('a step that failed after its reply came (a hook), then went through: the limit stop resolves to the reply, the failure does not stand', async () => {
    const server = await mockServer([{ content: [toolUse('echo', { x: 1 }, 'toolu_h1')] }, { content: [text('never sent')] }]);
    const echo = tool({ name: 'echo', inputSchema: z.object({ x: z.number() }), run: ({ x }) => `got ${x}` });
    let hookCalls = 0;
    const onToolCall = () => {
      if (hookCalls++ === 0) throw new Error('transient hook failure');
    };
    const runner = toolRunner(server.client(), { ...baseParams, tools: [echo], max_iterations: 1 }, { hooks: { onToolCall } });
    await expect(runner.runUntilDone()).rejects.toThrow(/transient hook failure/);
    // Iterated again: the hook goes through, the call is answered, and the run stops at the limit on its reply.
    expect(await runner.runUntilDone()).toMatchObject({ stop_reason: 'tool_use' });
    expect(runner.stoppedBy).toBe('max_iterations');
    expect(server.requests).toHaveLength(1);
  });

  it('aborted in the loop body on a reply that asks for tools: the calls never start, and are answered so (not "before it finished")', async () => {
    const server = await mockServer([{ content: [toolUse('echo', { x: 1 }, 'toolu_ab')] }, { content: [text('never sent')] }]);
    const ran: number[] = [];
    const echo = tool({ name: 'echo', inputSchema: z.object({ x: z.number() }), run: ({ x }) => (ran.push(x), `got ${x}`) });
    const controller = new AbortController();
    const runner = toolRunner(server.client(), { ...baseParams, tools: [echo], max_iterations: 1 }, { signal: controller.signal });
    await expect(async () => {
      for await (const _message of runner) controller.abort();
    }).rejects.toBeInstanceOf(APIUserAbortError);
    expect(ran).toEqual([]);
    expect(runner.params.messages.at(-1)!.content).toEqual([
      expect.objectContaining({ tool_use_id: 'toolu_ab', is_error: true, content: "Error: the call to 'echo' was aborted before it started, so it was not run." }),
    ]);
  });

  it('is undefined while the run runs, and names each way a run ends', async () => {
    const seen: Array<StoppedBy | undefined> = [];
    const probe = tool({ name: 'probe', inputSchema: z.object({}), run: (_input, { runner }) => (seen.push(runner.stoppedBy), 'ok') });
    const ask = tool({ name: 'ask', inputSchema: z.object({}), needsApproval: true, run: () => 'asked' });
    const stops: Record<string, StoppedBy | undefined> = {};

    let server = await mockServer([{ content: [toolUse('probe', {})] }, { content: [text('done')] }]);
    let runner = toolRunner(server.client(), { ...baseParams, tools: [probe] });
    await runner;
    stops['model'] = runner.stoppedBy;

    server = await mockServer([{ content: [toolUse('probe', {})] }]);
    runner = toolRunner(server.client(), { ...baseParams, tools: [probe], max_iterations: 1 });
    await runner;
    stops['max_iterations'] = runner.stoppedBy;

    server = await mockServer([{ content: [toolUse('ask', {})] }]);
    runner = toolRunner(server.client(), { ...baseParams, tools: [ask] });
    await runner;
    stops['approval'] = runner.stoppedBy;

    server = await mockServer([{ content: [toolUse('probe', {})] }, { content: [text('more')] }]);
    runner = toolRunner(server.client(), { ...baseParams, tools: [probe] });
    for await (const _ of runner) break;
    stops['break'] = runner.stoppedBy;

    server = await mockServer([{ error: { status: 500 } }]);
    runner = toolRunner(server.client({ maxRetries: 0 }), baseParams);
    await runner.then(undefined, () => undefined);
    stops['error'] = runner.stoppedBy;

    const controller = new AbortController();
    const hang = tool({ name: 'hang', inputSchema: z.object({}), run: (_input, { signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))) });
    server = await mockServer([{ content: [toolUse('hang', {})] }]);
    runner = toolRunner(server.client(), { ...baseParams, tools: [hang] }, { signal: controller.signal, hooks: { onToolCall: () => void setTimeout(() => controller.abort(), 10) } });
    await expect(runner).rejects.toBeInstanceOf(APIUserAbortError);
    stops['abort'] = runner.stoppedBy;
    expect(historyProblems(runner.params.messages)).toEqual([]);

    expect(stops).toEqual({ model: 'model', max_iterations: 'max_iterations', approval: 'approval', break: 'break', error: 'error', abort: 'abort' });
    expect(seen).toEqual([undefined, undefined]);
  });

  it('after max_iterations, raising it with setMessagesParams and iterating again goes on', async () => {
    const server = await mockServer([{ content: [weather('Paris')] }, { content: [weather('Rome')] }, { content: [text('done')] }]);
    const calls: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [weatherTool(calls)], max_iterations: 1 });
    await runner;
    expect(runner.stoppedBy).toBe('max_iterations');
    // Iterated again at the same limit: it stops at once, with no request, on the same reply.
    expect((await runner).content[0]).toMatchObject({ input: { location: 'Paris' } });
    expect(server.requests).toHaveLength(1);
    runner.setMessagesParams((params) => ({ ...params, max_iterations: 5 }));
    const seen: string[] = [];
    for await (const message of runner) seen.push(message.stop_reason ?? '');
    expect(seen).toEqual(['tool_use', 'end_turn']);
    expect(runner.stoppedBy).toBe('model');
    expect(calls).toEqual(['Paris', 'Rome']);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('bad options are clear errors at construction, before any request', async () => {
    const server = await mockServer([]);
    const make = (options: object) => () => toolRunner(server.client(), baseParams, options as never);
    expect(make({ budget: { maxTokens: -5 } })).toThrow(/options\.budget\.maxTokens must be a whole number of at least 1, got -5/);
    expect(make({ budget: { maxTokens: 0 } })).toThrow(/budget\.maxTokens must be a whole number of at least 1, got 0/);
    expect(make({ budget: { maxToolCalls: 2.5 } })).toThrow(/budget\.maxToolCalls must be a whole number of at least 0, got 2\.5/);
    expect(make({ budget: { maxCallsPerTool: { search: -1 } } })).toThrow(/budget\.maxCallsPerTool\['search'\] must be a whole number/);
    expect(make({ budget: { maxCallsPerTool: '3' } })).toThrow(/budget\.maxCallsPerTool must be a whole number of at least 0, got "3"/);
    expect(make({ budget: { maxCallsPerTool: [1] } })).toThrow(/budget\.maxCallsPerTool must be a whole number \(each tool's limit\) or an object of limits by tool name \(\{ search: 3 \}\), got an array/);
    expect(make({ budget: { maxToken: 5 } })).toThrow(/unknown key options\.budget\.maxToken; the keys are maxTokens, maxToolCalls, maxCallsPerTool/);
    expect(make({ budget: 100 })).toThrow(/options\.budget must be an object/);
    expect(make({ loopGuard: { maxRepeats: 0 } })).toThrow(/loopGuard\.maxRepeats must be a whole number of at least 1, got 0/);
    expect(make({ loopGuard: {} })).toThrow(/loopGuard\.maxRepeats is required/);
    expect(make({ loopGuard: { maxRepeat: 2 } })).toThrow(/unknown key options\.loopGuard\.maxRepeat/);
    expect(make({ onLimit: 'retry' })).toThrow(/options\.onLimit must be 'stop' or 'answer', got "retry"/);
    expect(make({ onlimit: 'answer' })).toThrow(/unknown option 'onlimit'; the options are .*onLimit/);
    expect(server.requests).toHaveLength(0);
  });
});

function textOf(message: { content: Array<{ type: string; text?: string }> }): string {
  return message.content.map((block) => block.text ?? '').join('');
}
