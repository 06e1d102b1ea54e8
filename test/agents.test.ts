import { execFile } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ApprovalRequest, HookError, type RunnerEvent, type RunnerSnapshot, agentTool, resumeToolRunner, tool, toolRunner } from 'tool-runner';
import { type RecordedRequest, type ScriptedReply, createMockServer, historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, captureLogger, mockServer, sleep, wire } from './helpers.js';
import { agentRouter, byAgent, model, researchTools } from './fixtures/agent-tools.js';

const u = (input_tokens: number, output_tokens: number) => ({ input_tokens, output_tokens });
const textOfLast = (message: { content: Array<{ type: string; text?: string }> }) => message.content.map((block) => block.text ?? '').join('');

/** What the events say, by path: `researcher > tool.start search`. */
function trail(events: RunnerEvent[]): string[] {
  return events
    .filter((event) => event.type !== 'agent.text')
    .map((event) => `${(event.path ?? []).join(' > ') || 'parent'}: ${event.type}${'call' in event ? ` ${event.call.name}` : ''}`);
}

describe('agentTool: a sub-agent is one tool call', () => {
  it('two levels: the sub-agent runs on the parent client, its final text is the result; usage sums; events carry the path', async () => {
    const log: string[] = [];
    const { researcher } = researchTools(log);
    const server = await mockServer(
      byAgent({
        parent: [{ content: [toolUse('researcher', { task: 'Find facts on otters' }, 'toolu_r')], usage: u(10, 1) }, { content: [text('Otters hold hands.')], usage: u(20, 2) }],
        researcher: [{ content: [toolUse('search', { query: 'otters' }, 'toolu_s')], usage: u(100, 10) }, { content: [text('They hold hands when they sleep.')], usage: u(200, 20) }],
      }),
    );
    const events: RunnerEvent[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] }, { onEvent: (event) => events.push(event) });
    const final = await runner;
    expect(final.content).toMatchObject([{ type: 'text', text: 'Otters hold hands.' }]);
    expect(log).toEqual(['search otters']);
    // The sub-agent's first request holds exactly the messages its params gave.
    expect(wire(server.requests[1]!).body.messages).toEqual([{ role: 'user', content: 'Find facts on otters' }]);
    expect(wire(server.requests[3]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_r', content: 'They hold hands when they sleep.' }]);
    expect(runner.usage).toMatchObject({ input_tokens: 330, output_tokens: 33 });
    expect(runner.iteration).toBe(2);
    expect(trail(events)).toEqual([
      'parent: run.start',
      'parent: request.start',
      'parent: request.end',
      'parent: tool.start researcher',
      'researcher: run.start',
      'researcher: request.start',
      'researcher: request.end',
      'researcher: tool.start search',
      'researcher: tool.end search',
      'researcher: request.start',
      'researcher: request.end',
      'researcher: run.end',
      'parent: tool.end researcher',
      'parent: request.start',
      'parent: request.end',
      'parent: run.end',
    ]);
    expect(events.every((event) => event.path === undefined || event.runner !== runner)).toBe(true);
    // A forwarded event shows its fields only (a spread, toEqual, a log line): what it carries for otel and the inspector is hidden.
    expect(Object.getOwnPropertySymbols({ ...events.find((event) => event.path !== undefined)! })).toEqual([]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('three levels: paths outermost first, usage of every level in the outermost run', async () => {
    const log: string[] = [];
    const { search } = researchTools(log);
    const searcher = agentTool({
      name: 'searcher',
      description: 'Searches',
      params: ({ task }) => ({ model, max_tokens: 256, system: 'searcher', messages: [{ role: 'user', content: task }], tools: [search] }),
    });
    const lead = agentTool({
      name: 'lead',
      description: 'Leads a research',
      params: ({ task }) => ({ model, max_tokens: 256, system: 'lead', messages: [{ role: 'user', content: task }], tools: [searcher] }),
    });
    const server = await mockServer(
      byAgent({
        parent: [{ content: [toolUse('lead', { task: 'otters' })], usage: u(1, 1) }, { content: [text('done')], usage: u(1, 1) }],
        lead: [{ content: [toolUse('searcher', { task: 'otter sleep' })], usage: u(10, 10) }, { content: [text('lead report')], usage: u(10, 10) }],
        searcher: [{ content: [toolUse('search', { query: 'otter sleep' })], usage: u(100, 100) }, { content: [text('they float')], usage: u(100, 100) }],
      }),
    );
    const events: RunnerEvent[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lead] }, { onEvent: (event) => events.push(event) });
    await runner;
    expect(log).toEqual(['search otter sleep']);
    expect(runner.usage).toMatchObject({ input_tokens: 222, output_tokens: 222 });
    const paths = new Set(events.map((event) => (event.path ?? []).join('/')));
    expect([...paths]).toEqual(['', 'lead', 'lead/searcher']);
    expect(events.find((event) => event.type === 'tool.start' && event.call.name === 'search')?.path).toEqual(['lead', 'searcher']);
    expect(wire(server.requests.at(-1)!).messages.at(-1).content[0]).toMatchObject({ content: 'lead report' });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("a sub-agent without a logger of its own logs through the parent's options.logger (a tool of its failing went to the console)", async () => {
    const boom = tool({ name: 'boom', inputSchema: z.object({}), run: () => { throw new Error('inner kaboom'); } });
    const make = (options?: { logger: ReturnType<typeof captureLogger>['logger'] }) =>
      agentTool({ name: 'helper', description: 'Helps', params: ({ task }) => ({ model, max_tokens: 100, messages: [{ role: 'user', content: task }], tools: [boom] }), ...(options && { options }) });
    for (const own of [false, true]) {
      const server = await mockServer([
        { content: [toolUse('helper', { task: 'go' }, 'toolu_p')] },
        { content: [toolUse('boom', {}, 'toolu_b')] },
        { content: [text('It failed.')] },
        { content: [text('Done.')] },
      ]);
      const parent = captureLogger();
      const agent = captureLogger();
      await toolRunner(server.client({ logLevel: 'warn' }), { ...baseParams, tools: [make(own ? { logger: agent.logger } : undefined)] }, { logger: parent.logger });
      const failed = (lines: Array<{ message: string }>) => lines.filter((line) => line.message.startsWith("Tool 'boom' (toolu_b) failed: Error: inner kaboom"));
      // The agent's own logger, when it has one, else the run's.
      expect([failed(parent.lines).length, failed(agent.lines).length]).toEqual(own ? [0, 1] : [1, 0]);
    }
  });

  it('a given client is used instead of the parent one; a typed output comes back as JSON', async () => {
    const other = await mockServer([{ content: [text('{"answer":42}')], usage: u(5, 5) }]);
    const calc = agentTool({
      name: 'calc',
      description: 'Answers',
      inputSchema: z.object({ question: z.string() }),
      client: other.client(),
      options: { output: z.object({ answer: z.number() }) },
      params: ({ question }) => ({ model, max_tokens: 64, messages: [{ role: 'user', content: question }] }),
    });
    const server = await mockServer([{ content: [toolUse('calc', { question: '6*7?' })], usage: u(1, 1) }, { content: [text('42')], usage: u(1, 1) }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [calc] });
    await runner;
    expect(other.requests).toHaveLength(1);
    expect(wire(other.requests[0]!).body.output_config.format.type).toBe('json_schema');
    expect(wire(server.requests[1]!).messages.at(-1).content[0]).toEqual({ type: 'tool_result', tool_use_id: expect.any(String), content: '{"answer":42}' });
    expect(runner.usage).toMatchObject({ input_tokens: 7, output_tokens: 7 });
  });

  it('a typed output JSON cannot carry (a transform to a BigInt) comes back as the answer\'s text, not as a failure of the finished sub-agent', async () => {
    const server = await mockServer([
      { content: [toolUse('ledger', { task: 'Find the id' })] },
      { content: [text('{"id":"12345678901234567890"}')] },
      { content: [text('Found it.')] },
    ]);
    const ledger = agentTool({
      name: 'ledger',
      description: 'Looks up ids',
      options: { output: z.object({ id: z.string().transform((id) => BigInt(id)) }) },
      params: ({ task }) => ({ model, max_tokens: 64, messages: [{ role: 'user', content: task }] }),
    });
    const runner = toolRunner(server.client(), { ...baseParams, tools: [ledger] });
    await runner;
    expect(wire(server.requests[2]!).messages.at(-1).content[0]).toEqual({ type: 'tool_result', tool_use_id: expect.any(String), content: '{"id":"12345678901234567890"}' });
  });

  it('the default input requires task; a failing sub-agent is an is_error result with its error, the parent goes on valid', async () => {
    const { researcher } = researchTools([]);
    const server = await mockServer(
      byAgent({
        parent: [
          { content: [toolUse('researcher', {}, 'toolu_bad'), toolUse('researcher', { task: 'x' }, 'toolu_fail')] },
          { content: [text('sorry')] },
        ],
        researcher: [{ error: { status: 400, message: 'model not found' } }],
      }),
    );
    const { lines, logger } = captureLogger();
    const runner = toolRunner(server.client({ logger, logLevel: 'warn' }), { ...baseParams, tools: [researcher] });
    await runner;
    const results = wire(server.requests.at(-1)!).messages.at(-1).content;
    expect(results[0]).toMatchObject({ tool_use_id: 'toolu_bad', is_error: true, content: expect.stringContaining('task') });
    expect(results[1]).toMatchObject({ tool_use_id: 'toolu_fail', is_error: true, content: expect.stringMatching(/agent 'researcher' failed: .*model not found/) });
    // Logged as a failing tool is: at warn, with the failure's stack.
    expect(lines).toContainEqual({ level: 'warn', message: expect.stringMatching(/^Tool 'researcher' \(toolu_fail\) failed: BadRequestError: 400 .*model not found[^\n]*\n\s+at /s) });
    expect(runner.stoppedBy).toBe('model');
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("params the runner refuses (its params function's mistake): an is_error result naming the agent, which was not run; logged at warn with the runner's error", async () => {
    const helper = agentTool({ name: 'helper', description: 'Helps', params: ({ task }) => ({ model, max_tokens: 100, messages: task }) as never });
    const server = await mockServer([{ content: [toolUse('helper', { task: 'x' }, 'toolu_h')] }, { content: [text('sorry')] }]);
    const { lines, logger } = captureLogger();
    const runner = toolRunner(server.client({ logger, logLevel: 'warn' }), { ...baseParams, tools: [helper] });
    await runner;
    // It read "TypeError: toolRunner: params.messages must be an array of messages", as if of the parent's params.
    expect(wire(server.requests.at(-1)!).messages.at(-1).content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_h', is_error: true, content: "Error: the agent 'helper' was not run: the params its params function gave are refused: TypeError: toolRunner: params.messages must be an array of messages" },
    ]);
    expect(lines).toContainEqual({ level: 'warn', message: expect.stringMatching(/^Tool 'helper' \(toolu_h\) failed: TypeError: toolRunner: params\.messages must be an array of messages\n\s+at /) });
    expect(server.requests).toHaveLength(2);
  });

  it('a params function that returns nothing (a block body without its return): an is_error result naming the agent and the slip, streamed or not', async () => {
    for (const stream of [false, true]) {
      const helper = agentTool({ name: 'helper', description: 'Helps', params: (({ task }: { task: string }) => void [task]) as never });
      const server = await mockServer([{ content: [toolUse('helper', { task: 'x' }, 'toolu_h')] }, { content: [text('sorry')] }]);
      // Streamed to a listener, the sub-agent's params are read for their `stream` first.
      const runner = toolRunner(server.client(), { ...baseParams, stream, tools: [helper] }, { onEvent: () => {} });
      await runner.runUntilDone();
      // It read "TypeError: Cannot read properties of undefined (reading 'tools')" (or 'stream').
      expect(wire(server.requests.at(-1)!).messages.at(-1).content).toEqual([
        { type: 'tool_result', tool_use_id: 'toolu_h', is_error: true, content: "Error: the agent 'helper' was not run: its params function returned undefined; it returns the sub-agent's params, ({ task }) => ({ model, max_tokens, messages })" },
      ]);
      expect(server.requests).toHaveLength(2);
    }
  });

  it('a sub-agent a limit of its own stops while it still asks for tools: an is_error result naming the limit, with its last text', async () => {
    const search = tool({ name: 'search', inputSchema: z.object({ query: z.string() }), run: ({ query }) => `results for ${query}` });
    const limited = (name: string, options: Parameters<typeof agentTool>[0]['options'], max_iterations?: number) =>
      agentTool({ name, description: 'Researches', ...(options && { options }), params: ({ task }) => ({ model, max_tokens: 512, system: name, messages: [{ role: 'user', content: task }], tools: [search], ...(max_iterations && { max_iterations }) }) });
    const server = await mockServer(
      byAgent({
        parent: [{ content: [toolUse('by_iterations', { task: 'otters' }, 'toolu_i'), toolUse('by_budget', { task: 'seals' }, 'toolu_b')] }, { content: [text('Partial.')] }],
        by_iterations: [{ content: [text('Searching otters.'), toolUse('search', { query: 'otters' })] }],
        // The second call is past the budget (not run); calling past it again stops the sub-agent.
        by_budget: [
          { content: [toolUse('search', { query: 'seals' })] },
          { content: [toolUse('search', { query: 'more seals' })] },
          { content: [toolUse('search', { query: 'even more seals' })] },
        ],
      }),
    );
    const runner = toolRunner(server.client(), { ...baseParams, tools: [limited('by_iterations', undefined, 1), limited('by_budget', { budget: { maxToolCalls: 1 } })] });
    await runner;
    const results = wire(server.requests.at(-1)!).messages.at(-1).content;
    expect(results[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_i',
      is_error: true,
      content: "Error: the agent 'by_iterations' stopped before it finished its task: it reached its max_iterations. Its last text: Searching otters.",
    });
    expect(results[1]).toMatchObject({ tool_use_id: 'toolu_b', is_error: true, content: "Error: the agent 'by_budget' stopped before it finished its task: it reached its budget." });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("the parent's budget.maxTokens bounds its sub-agents' requests too, at every level: one sends none once the run's tokens (its own with theirs) reach it", async () => {
    for (const levels of [2, 3] as const) {
      const searched: string[] = [];
      const search = tool({ name: 'search', inputSchema: z.object({ query: z.string() }), run: ({ query }) => (searched.push(query), `results for ${query}`) });
      const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }], tools: [search] }) });
      const lead = agentTool({ name: 'lead', description: 'Leads', params: ({ task }) => ({ model, max_tokens: 64, system: 'lead', messages: [{ role: 'user', content: task }], tools: [worker] }) });
      // A worker that would search on and on, each request 1,000 tokens.
      const server = await mockServer(
        byAgent({
          parent: [{ content: [toolUse(levels === 2 ? 'worker' : 'lead', { task: 'go' })], usage: u(100, 0) }, { content: [text('Done.')], usage: u(100, 0) }],
          lead: [{ content: [toolUse('worker', { task: 'go' })], usage: u(100, 0) }, { content: [text('Led.')], usage: u(100, 0) }],
          worker: Array.from({ length: 10 }, (_, i) => ({ content: [toolUse('search', { query: `q${i}` })], usage: u(1000, 0) })),
        }),
      );
      const runner = toolRunner(server.client(), { ...baseParams, tools: [levels === 2 ? worker : lead] }, { budget: { maxTokens: 2_500 } });
      await runner;
      // 2,400 tokens left to the worker (2,300 under the lead): its third request reaches them, and it stops (that reply's calls run, as in any run).
      expect(searched, `${levels} levels`).toEqual(['q0', 'q1', 'q2']);
      expect(server.requests, `${levels} levels`).toHaveLength(levels === 2 ? 4 : 5);
      expect(runner.stoppedBy).toBe('budget');
      expect(runner.usage.input_tokens).toBe(levels === 2 ? 3_100 : 3_200);
      // The parent's own next request is not sent either: the run's tokens are past its budget.
      expect(runner.params.messages.at(-1)!.content).toEqual([
        expect.objectContaining({ is_error: true, content: `Error: the agent '${levels === 2 ? 'worker' : 'lead'}' stopped before it finished its task: it reached its budget.` }),
      ]);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it("a sub-agent called once the parent's budget.maxTokens is reached (another call's sub-agent spent it) is not run", async () => {
    const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 64, system: task, messages: [{ role: 'user', content: task }] }) });
    const server = await mockServer(
      byAgent({
        parent: [{ content: [toolUse('worker', { task: 'first' }, 'toolu_1'), toolUse('worker', { task: 'second' }, 'toolu_2')], usage: u(100, 0) }],
        first: [{ content: [text('Spent it all.')], usage: u(5_000, 0) }],
        second: [{ content: [text('Never asked.')] }],
      }),
    );
    const runner = toolRunner(server.client(), { ...baseParams, tools: [worker] }, { budget: { maxTokens: 1_000 }, concurrency: 1 });
    await runner;
    expect(server.requests).toHaveLength(2);
    expect(runner.stoppedBy).toBe('budget');
    expect(runner.params.messages.at(-1)!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Spent it all.' },
      { type: 'tool_result', tool_use_id: 'toolu_2', is_error: true, content: "Error: the call to 'worker' was not run: the run reached its limit of 1000 tokens (budget.maxTokens; 5100 used). Answer with what you have." },
    ]);
  });

  it('a sub-agent a limit stops right after a paused turn (pause_turn) did not finish either: an is_error result naming the limit', async () => {
    const paused = agentTool({ name: 'paused', description: 'Searches', params: ({ task }) => ({ model, max_tokens: 64, system: 'paused', max_iterations: 1, messages: [{ role: 'user', content: task }] }) });
    const server = await mockServer(
      byAgent({
        parent: [{ content: [toolUse('paused', { task: 'go' }, 'toolu_p')] }, { content: [text('ok')] }],
        paused: [{ content: [text('Searching the web, half way')], stop_reason: 'pause_turn' }],
      }),
    );
    await toolRunner(server.client(), { ...baseParams, tools: [paused] });
    expect(wire(server.requests.at(-1)!).messages.at(-1).content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_p',
      is_error: true,
      content: "Error: the agent 'paused' stopped before it finished its task: it reached its max_iterations. Its last text: Searching the web, half way",
    });
  });

  it("a mistake in the sub-agent's options is an error when the tool is made, not an answer to the model at its first call", () => {
    const params = ({ task }: { task: string }) => ({ model, max_tokens: 64, messages: [{ role: 'user' as const, content: task }] });
    expect(() => agentTool({ name: 'a', description: 'd', params, options: { timeuot: 5 } as never })).toThrow(/^agentTool 'a': options: unknown option 'timeuot'/);
    expect(() => agentTool({ name: 'a', description: 'd', params, options: { concurrency: -2 } })).toThrow(/agentTool 'a': options: options.concurrency must be a positive integer/);
    expect(() => agentTool({ name: 'a', description: 'd', params, options: { onLimit: 'answr' as never } })).toThrow(/agentTool 'a': options: .*onLimit/);
    expect(() => agentTool({ name: 'a', description: 'd', params, options: { output: 5 as never } })).toThrow(/^agentTool 'a': options: options\.output must be a zod schema, a Standard Schema or a JSON Schema object, got number$/);
    expect(() => agentTool({ name: 'a', description: 'd', params, options: [] as never })).toThrow(/^agentTool 'a': options: options must be an object$/);
    expect(() => agentTool({ name: 'a', description: 'd', params, client: 'abc' as never })).toThrow(/^agentTool 'a': `client` must be an Anthropic client \(or Bedrock, Vertex, \.\.\.\), got "abc"$/);
    expect(() => agentTool({ name: 'a', description: 'd', params, client: {} as never })).toThrow(/`client` must be an Anthropic client .*got an object/);
    // Replaced by the default { task } schema before, without a word.
    const schema = { type: 'object', properties: { q: { type: 'number' } }, required: ['q'] };
    expect(() => agentTool({ name: 'a', description: 'd', params, input_schema: schema } as never)).toThrow(/^agentTool 'a': the input's schema is `inputSchema` .*not `input_schema`$/);
  });

  it("an option of the sub-agent's own (for middleware) on the parent's client, which has none: an error when the parent's run is made, not the model's answer at its first call", async () => {
    const params = ({ task }: { task: string }) => ({ model, max_tokens: 64, messages: [{ role: 'user' as const, content: task }] });
    // Made without a client, the agent cannot tell yet: the parent's client may have middleware to read it.
    const worker = agentTool({ name: 'worker', description: 'd', params, options: { audit: 'on' } as never });
    const server = await mockServer([{ content: [toolUse('worker', { task: 'go' })] }, { content: [text('sub')] }, { content: [text('done')] }]);
    expect(() => toolRunner(server.client(), { ...baseParams, tools: [worker] })).toThrow(
      /^agentTool 'worker': options: unknown option 'audit'; .*neither these options nor the client have any$/,
    );
    expect(server.requests).toHaveLength(0);
    // On a client with middleware, it passes, as a run's own does.
    const withMiddleware = server.client({ middleware: [(request: unknown, next: (r: unknown) => unknown) => next(request)] } as never);
    await expect(toolRunner(withMiddleware, { ...baseParams, tools: [worker] })).resolves.toMatchObject({ content: [{ text: 'done' }] });
  });

  it("the same agent given to a run by addTools(): an error there, not the model's answer at its first call", async () => {
    const params = ({ task }: { task: string }) => ({ model, max_tokens: 64, messages: [{ role: 'user' as const, content: task }] });
    const worker = agentTool({ name: 'worker', description: 'd', params, options: { audit: 'on' } as never });
    const server = await mockServer([{ content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [] });
    expect(() => runner.addTools(worker)).toThrow(/^agentTool 'worker': options: unknown option 'audit'; .*neither these options nor the client have any$/);
    // Nothing was added: the run goes on without it.
    await expect(runner.runUntilDone()).resolves.toMatchObject({ content: [{ text: 'done' }] });
    expect(server.requests[0]!.body['tools'] ?? []).toEqual([]);
    // On a client with middleware, it is added, as a run's own option passes.
    const withMiddleware = toolRunner(server.client({ middleware: [(request: unknown, next: (r: unknown) => unknown) => next(request)] } as never), { ...baseParams, tools: [] });
    expect(() => withMiddleware.addTools(worker)).not.toThrow();
  });

  it("the same agent given by setMessagesParams(): an error there too, the params left as they were", async () => {
    const params = ({ task }: { task: string }) => ({ model, max_tokens: 64, messages: [{ role: 'user' as const, content: task }] });
    const worker = agentTool({ name: 'worker', description: 'd', params, options: { audit: 'on' } as never });
    const server = await mockServer([{ content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [] });
    expect(() => runner.setMessagesParams((previous) => ({ ...previous, tools: [worker] }))).toThrow(/^agentTool 'worker': options: unknown option 'audit'; .*neither these options nor the client have any$/);
    await expect(runner.runUntilDone()).resolves.toMatchObject({ content: [{ text: 'done' }] });
    expect(server.requests[0]!.body['tools'] ?? []).toEqual([]);
    const withMiddleware = toolRunner(server.client({ middleware: [(request: unknown, next: (r: unknown) => unknown) => next(request)] } as never), { ...baseParams, tools: [] });
    expect(() => withMiddleware.setMessagesParams((previous) => ({ ...previous, tools: [worker] }))).not.toThrow();
  });

  it('a sub-agent whose last reply is cut off, refused or out of context: an is_error result saying it stopped before it finished, and why, with its last text', async () => {
    const stops = { max_tokens: 'its reply was cut off at max_tokens', refusal: 'the model refused', model_context_window_exceeded: "its reply was cut off at the model's context window" } as const;
    for (const [stop, words] of Object.entries(stops)) {
      const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }] }) });
      const server = await mockServer(
        byAgent({
          parent: [{ content: [toolUse('worker', { task: 'go' }, 'toolu_w')] }, { content: [text('ok')] }],
          worker: [{ content: [text('The answer is definitely')], stop_reason: stop as 'max_tokens' }],
        }),
      );
      await toolRunner(server.client(), { ...baseParams, tools: [worker] });
      expect(wire(server.requests.at(-1)!).messages.at(-1).content[0]).toEqual({
        type: 'tool_result',
        tool_use_id: 'toolu_w',
        is_error: true,
        content: `Error: the agent 'worker' stopped before it finished its task: ${words}. Its last text: The answer is definitely`,
      });
    }
  });

  it("run by the SDK's own runner (no parent to borrow from), an agent tool with its own client runs", async () => {
    const own = await mockServer([{ content: [text('Sub answer.')] }, { content: [text('Sub answer.')] }]);
    const worker = agentTool({ name: 'worker', description: 'Works', client: own.client(), params: ({ task }) => ({ model, max_tokens: 64, messages: [{ role: 'user', content: task }] }) });
    const server = await mockServer([{ content: [toolUse('worker', { task: 'go' }, 'toolu_w')] }, { content: [text('done')] }]);
    await server.client().beta.messages.toolRunner({ ...baseParams, tools: [worker as never] });
    expect(wire(server.requests[1]!).messages.at(-1).content[0]).toEqual({ type: 'tool_result', tool_use_id: 'toolu_w', content: 'Sub answer.' });
    expect(await worker.run({ task: 'direct' } as never, undefined as never)).toBe('Sub answer.');
  });

  it("run by the SDK's own runner: the sub-agent's failure reads as ours (no 'Error: Error:'), and a call of its own that needs approval is answered with why it stopped", async () => {
    const own = await mockServer([{ error: { status: 400, message: 'bad request' } }, { content: [toolUse('publish', { title: 'x' })] }]);
    const { publish } = researchTools([]);
    const worker = agentTool({ name: 'worker', description: 'Works', client: own.client({ maxRetries: 0 }), params: ({ task }) => ({ model, max_tokens: 64, messages: [{ role: 'user', content: task }], tools: [publish] }) });
    const server = await mockServer([{ content: [toolUse('worker', { task: 'a' }, 'toolu_a')] }, { content: [toolUse('worker', { task: 'b' }, 'toolu_b')] }, { content: [text('done')] }]);
    await server.client().beta.messages.toolRunner({ ...baseParams, tools: [worker as never] });
    const resultOf = (i: number) => wire(server.requests[i]!).messages.at(-1).content[0];
    expect(resultOf(1)).toMatchObject({ is_error: true, content: expect.stringMatching(/^Error: the agent 'worker' failed: BadRequestError: 400/) });
    expect(resultOf(2)).toMatchObject({ is_error: true, content: expect.stringMatching(/^Error: the agent 'worker' stopped: a call of its own needs approval, and no tool-runner run is there to ask about it/) });
  });

  it('a parent over an SDK thread lends its sub-agents the thread\'s client, not the thread: their prompts and histories stay apart', async () => {
    const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model: 'sub-model', max_tokens: 64, messages: [{ role: 'user', content: `[S] ${task}` }] }) });
    const server = await mockServer([
      { content: [toolUse('worker', { task: 'a' }, 'toolu_a'), toolUse('worker', { task: 'b' }, 'toolu_b')] },
      { content: [text('sub a')] },
      { content: [text('sub b')] },
      { content: [text('Both done.')] },
    ]);
    const thread = server.client().beta.messages.thread({ ...baseParams, system: 'PARENT RULES', tools: [worker] } as never);
    const final = await toolRunner(thread, {});
    expect(final.content[0]).toMatchObject({ text: 'Both done.' });
    const subRequests = server.requests.filter((request) => wire(request).body.model === 'sub-model');
    expect(subRequests).toHaveLength(2);
    for (const request of subRequests) {
      expect(wire(request).body.system).toBeUndefined();
      // A conversation of its own (a thread it creates, not the parent's continued).
      expect(wire(request).messages.map((message: { content: unknown }) => message.content)).toEqual([expect.stringMatching(/^\[S\] [ab]$/)]);
    }
    // The parent's thread holds the parent's conversation only, and its last request continued it.
    expect(thread.messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(JSON.stringify(thread.messages)).not.toContain('[S]');
    expect(wire(server.requests.at(-1)!).body.thread).toMatchObject({ type: 'continue' });
  });

  it('nesting deeper than maxDepth is an is_error result, not a run (default 4: four levels run)', async () => {
    const run = async (maxDepth: number | undefined) => {
      const recursive: ReturnType<typeof agentTool> = agentTool({
        name: 'deeper',
        description: 'Goes one level deeper',
        ...(maxDepth !== undefined && { maxDepth }),
        params: ({ task }) => ({ model, max_tokens: 64, messages: [{ role: 'user', content: task }], tools: [recursive] }),
      });
      const levels = (maxDepth ?? 4) + 1;
      // Each level calls once; the deepest call is refused; then each level answers, innermost first.
      const server = await createMockServer({
        steps: [
          ...Array.from({ length: levels }, () => ({ content: [toolUse('deeper', { task: 'go' })] })),
          ...Array.from({ length: levels }, (_, i) => ({ content: [text(`level ${levels - 1 - i}`)] })),
        ],
      });
      try {
        const runner = toolRunner(server.client(), { ...baseParams, tools: [recursive] });
        await runner;
        server.assertComplete();
        return wire(server.requests[levels]!).messages.at(-1).content[0];
      } finally {
        await server.close();
      }
    };
    expect(await run(2)).toMatchObject({ is_error: true, content: expect.stringContaining('past its maxDepth of 2') });
    expect(await run(undefined)).toMatchObject({ is_error: true, content: expect.stringContaining('sub-agent level 5, past its maxDepth of 4') });
    expect(() => agentTool({ name: 'x', description: 'x', maxDepth: 0, params: () => ({ model, max_tokens: 1, messages: [] }) })).toThrow(/maxDepth/);
  });

  it("on the parent's client, a sub-agent falls back to the parent's clients and models (not its other overrides); one with a client or a fallback of its own keeps its own", async () => {
    const overloaded = () => ({ error: { status: 529 } });
    const primary = await mockServer(Array.from({ length: 7 }, overloaded));
    const backup = await mockServer([
      { content: [toolUse('helper', { task: 'Look it up' }, 'toolu_h1')] },
      { content: [text('Found on the backup.')] },
      { content: [toolUse('own_client', { task: 'Look again' }, 'toolu_h2')] },
      { content: [toolUse('no_fallback', { task: 'Once more' }, 'toolu_h3')] },
      { content: [text('done')] },
    ]);
    const subParams = ({ task }: { task: string }) => ({ ...baseParams, messages: [{ role: 'user' as const, content: task }] });
    const helper = agentTool({ name: 'helper', description: 'Looks things up', params: subParams });
    // Its own client is not the parent's: the parent's fallback entries are not its own.
    const ownClient = agentTool({ name: 'own_client', description: 'Looks things up', client: primary.client({ maxRetries: 0 }), params: subParams });
    // An empty fallback of its own: none.
    const noFallback = agentTool({ name: 'no_fallback', description: 'Looks things up', params: subParams, options: { fallback: [] } });
    try {
      const fallback = [{ client: backup.client(), model: 'claude-backup', system: 'You lead the team.' }];
      const runner = toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, tools: [helper, ownClient, noFallback] }, { fallback });
      expect(textOfLast(await runner)).toBe('done');
      // The sub-agent's request went to the primary, then to the parent's fallback client and model, which answered it;
      // the parent's system prompt stays the parent's.
      expect(wire(backup.requests[1]!).body).toMatchObject({ model: 'claude-backup', messages: [{ role: 'user', content: 'Look it up' }] });
      expect(wire(backup.requests[1]!).body.system).toBeUndefined();
      expect(wire(backup.requests[0]!).body).toMatchObject({ model: 'claude-backup', system: 'You lead the team.' });
      expect(wire(backup.requests[2]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_h1', content: 'Found on the backup.' }]);
      for (const [request, id, name] of [[3, 'toolu_h2', 'own_client'], [4, 'toolu_h3', 'no_fallback']] as const) {
        expect(wire(backup.requests[request]!).messages.at(-1).content[0]).toMatchObject({ tool_use_id: id, is_error: true, content: expect.stringContaining(`the agent '${name}' failed: OverloadedError: 529`) });
      }
      expect(primary.requests.map((request) => wire(request).body.messages.at(-1).content)).toEqual([
        'Weather in Paris?',
        'Look it up',
        expect.anything(),
        'Look again',
        expect.anything(),
        'Once more',
        expect.anything(),
      ]);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    } finally {
      await Promise.all([primary.close(), backup.close()]);
    }
  });
});

describe('agentTool: the parent\'s fallback lent', () => {
  it("an entry of the parent's with neither a client nor a model lends nothing: the sub-agent's failed request is not sent again as it was to the client that failed it", async () => {
    const overloaded = () => ({ error: { status: 529 } });
    const primary = await mockServer([{ content: [toolUse('helper', { task: 'Look it up' }, 'toolu_h')] }, overloaded, overloaded, { content: [text('done')] }]);
    const backup = await mockServer([{ content: [text('Found on the backup.')] }]);
    const helper = agentTool({ name: 'helper', description: 'Looks things up', params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user' as const, content: task }] }) });
    // The parent's first entry: its own requests, smaller, on the primary; the sub-agent has its own max_tokens.
    const runner = toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, tools: [helper] }, { fallback: [{ max_tokens: 512 }, { client: backup.client() }] });
    expect(textOfLast(await runner)).toBe('done');
    // The sub-agent's request: once to the primary (it was sent twice, the second time to the entry it was lent as {}), then to the backup.
    expect(primary.requests.map((request) => [wire(request).body.max_tokens, wire(request).messages.at(-1).content])).toEqual([
      [1024, 'Weather in Paris?'],
      [1024, 'Look it up'],
      // The parent's own request falls back to its first entry as it did.
      [1024, [expect.objectContaining({ tool_use_id: 'toolu_h', content: 'Found on the backup.' })]],
      [512, [expect.objectContaining({ tool_use_id: 'toolu_h', content: 'Found on the backup.' })]],
    ]);
    expect(wire(backup.requests[0]!).messages).toEqual([{ role: 'user', content: 'Look it up' }]);
  });
});

describe('agentTool: the parent signal, abort and tool timeout stop the sub-agent', () => {
  function slowTools(started: () => void, signals: AbortSignal[]) {
    const slow = tool({
      name: 'slow',
      inputSchema: z.object({}),
      run: (_input, context) =>
        new Promise<string>((resolve) => {
          signals.push(context.signal);
          started();
          context.signal.addEventListener('abort', () => resolve('stopped'));
        }),
    });
    return slow;
  }

  it('aborting the parent in the middle of a sub-agent tool aborts that tool; the parent history stays valid', async () => {
    const signals: AbortSignal[] = [];
    const controller = new AbortController();
    const slow = slowTools(() => controller.abort(), signals);
    const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }], tools: [slow] }) });
    const server = await mockServer(byAgent({ parent: [{ content: [toolUse('worker', { task: 'go' }, 'toolu_w')] }], worker: [{ content: [toolUse('slow', {})] }] }));
    const runner = toolRunner(server.client(), { ...baseParams, tools: [worker] }, { signal: controller.signal });
    await expect(runner.runUntilDone()).rejects.toThrow(/abort/i);
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(true);
    expect(runner.stoppedBy).toBe('abort');
    expect(runner.params.messages.at(-1)).toMatchObject({ content: [{ tool_use_id: 'toolu_w', is_error: true, content: expect.stringContaining('aborted') }] });
    expect(historyProblems(runner.params.messages)).toEqual([]);
    await sleep(20);
    expect(server.requests).toHaveLength(2);
  });

  it("aborted or timed out while a sub-agent's tool runs: the sub-agent's events (its call's end, its run.end) come before its call's end in the parent, at every level", async () => {
    for (const how of ['abort', 'timeout', 'abort, three levels'] as const) {
      const controller = new AbortController();
      // A tool that ignores its signal: the sub-agent answers it as aborted without waiting for it.
      const slow = tool({ name: 'slow', inputSchema: z.object({}), run: () => (how !== 'timeout' && setTimeout(() => controller.abort(), 20), sleep(500).then(() => 'late')) });
      const worker = agentTool({
        name: 'worker',
        description: 'Works',
        ...(how === 'timeout' && { timeoutMs: 100 }),
        params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }], tools: [slow] }),
      });
      const lead = agentTool({ name: 'lead', description: 'Leads', params: ({ task }) => ({ model, max_tokens: 64, system: 'lead', messages: [{ role: 'user', content: task }], tools: [worker] }) });
      const three = how === 'abort, three levels';
      const server = await mockServer(
        byAgent({
          parent: [{ content: [toolUse(three ? 'lead' : 'worker', { task: 'go' })] }, { content: [text('too slow')] }],
          lead: [{ content: [toolUse('worker', { task: 'go' })] }],
          worker: [{ content: [toolUse('slow', {})] }],
        }),
      );
      const events: RunnerEvent[] = [];
      const runner = toolRunner(server.client(), { ...baseParams, tools: [three ? lead : worker] }, { signal: controller.signal, onEvent: (event) => events.push(event) });
      await runner.runUntilDone().catch(() => undefined);
      const ended = events.length;
      await sleep(50);
      expect(events.length, how).toBe(ended);
      const ends = trail(events).filter((line) => /run\.end|tool\.end/.test(line));
      expect(ends, how).toEqual(
        three
          ? ['lead > worker: tool.end slow', 'lead > worker: run.end', 'lead: tool.end worker', 'lead: run.end', 'parent: tool.end lead', 'parent: run.end']
          : ['worker: tool.end slow', 'worker: run.end', 'parent: tool.end worker', 'parent: run.end'],
      );
    }
  });

  it('a call that times out while its params are made is answered at once: no sub-agent runs, so none is waited for', async () => {
    const stuck = agentTool({ name: 'stuck', description: 'Never starts', timeoutMs: 100, params: () => new Promise<never>(() => {}) });
    const server = await mockServer(byAgent({ parent: [{ content: [toolUse('stuck', { task: 'go' })] }, { content: [text('Gave up.')] }] }));
    const started = Date.now();
    let answeredAfter = 0;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [stuck] }, { onEvent: (event) => void (event.type === 'tool.end' && (answeredAfter = Date.now() - started)) });
    await runner;
    // The 100 ms timeout, and not the second a stopped sub-agent that runs is given to end.
    expect(answeredAfter).toBeGreaterThanOrEqual(100);
    expect(answeredAfter).toBeLessThan(900);
    expect(wire(server.requests[1]!).messages.at(-1).content[0]).toMatchObject({ is_error: true, content: expect.stringContaining('timed out after 100 ms') });
  });

  it('a call aborted while its params are made: the sub-agent does not start (no request, no events after the run ended)', async () => {
    const controller = new AbortController();
    const late = agentTool({
      name: 'late',
      description: 'Starts late',
      params: async ({ task }) => {
        controller.abort();
        await sleep(30);
        return { model, max_tokens: 64, messages: [{ role: 'user', content: task }] };
      },
    });
    const server = await mockServer(byAgent({ parent: [{ content: [toolUse('late', { task: 'go' }, 'toolu_l')] }], late: [{ content: [text('too late')] }] }));
    const events: RunnerEvent[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [late] }, { signal: controller.signal, onEvent: (event) => events.push(event) });
    await expect(runner.runUntilDone()).rejects.toThrow(/abort/i);
    const ended = events.length;
    await sleep(60);
    expect(events.slice(ended)).toEqual([]);
    expect(events.filter((event) => (event as { path?: unknown[] }).path?.length)).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it("the parent aborted or timed out while a sub-agent runs: the parent's usage holds what the sub-agent spent, when the parent settles", async () => {
    for (const how of ['abort', 'timeout'] as const) {
      const signals: AbortSignal[] = [];
      const controller = new AbortController();
      const slow = slowTools(() => (how === 'abort' ? controller.abort() : undefined), signals);
      const worker = agentTool({
        name: 'worker',
        description: 'Works',
        ...(how === 'timeout' && { timeoutMs: 100 }),
        // A slow audit hook keeps the sub-agent busy after it was told to stop.
        options: { hooks: { onToolResult: async () => void (await sleep(200)) } },
        params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }], tools: [slow] }),
      });
      const server = await mockServer(
        byAgent({ parent: [{ content: [toolUse('worker', { task: 'go' })], usage: u(1, 1) }, { content: [text('too slow')], usage: u(1, 1) }], worker: [{ content: [toolUse('slow', {})], usage: u(1000, 10) }] }),
      );
      const runner = toolRunner(server.client(), { ...baseParams, tools: [worker] }, { signal: controller.signal });
      await runner.runUntilDone().catch(() => undefined);
      const parentTokens = how === 'abort' ? 1 : 2;
      expect(runner.usage.input_tokens).toBe(parentTokens + 1000);
      await sleep(300);
      // Counted once: nothing more when the sub-agent ends later.
      expect(runner.usage.input_tokens).toBe(parentTokens + 1000);
    }
  });

  it('the agent tool timeout stops the sub-agent and its tools: a timeout result', async () => {
    const signals: AbortSignal[] = [];
    const slow = slowTools(() => {}, signals);
    const worker = agentTool({
      name: 'worker',
      description: 'Works',
      // Long enough for the sub-agent's request to reach its tool on a loaded machine (100 ms did not, once, beside the whole suite).
      timeoutMs: 1000,
      params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }], tools: [slow] }),
    });
    const server = await mockServer(byAgent({ parent: [{ content: [toolUse('worker', { task: 'go' })] }, { content: [text('too slow')] }], worker: [{ content: [toolUse('slow', {})] }] }));
    const runner = toolRunner(server.client(), { ...baseParams, tools: [worker] });
    await runner;
    expect(signals[0]!.aborted).toBe(true);
    expect(wire(server.requests.at(-1)!).messages.at(-1).content[0]).toMatchObject({ is_error: true, content: expect.stringContaining('timed out after 1000 ms') });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
});

/** The researcher searches and publishes (publish needs approval), then reports. */
const script = () =>
  byAgent({
    parent: [{ content: [toolUse('researcher', { task: 'otters' }, 'toolu_r')], usage: u(1, 1) }, { content: [text('Published.')], usage: u(1, 1) }],
    researcher: [
      { content: [toolUse('search', { query: 'otters' }, 'toolu_s'), toolUse('publish', { title: 'Otters' }, 'toolu_p')], usage: u(10, 10) },
      { content: [text('Report published.')], usage: u(10, 10) },
    ],
  });

/** A sub-agent whose reply makes a slow call (200 ms) and one that needs approval: the parent's approver fails about the second while the first runs on. */
async function slowAndPublishWorker() {
  const log: string[] = [];
  const publish = tool({ name: 'publish', inputSchema: z.object({}), needsApproval: true, run: () => (log.push('publish'), 'published') });
  const slow = tool({ name: 'slow', inputSchema: z.object({}), run: async () => (log.push('slow'), await sleep(200), 'slow done') });
  const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }], tools: [publish, slow] }) });
  const server = await mockServer(
    byAgent({
      parent: [{ content: [toolUse('worker', { task: 'go' })], usage: u(1, 1) }, { content: [text('end')], usage: u(1, 1) }],
      worker: [{ content: [toolUse('slow', {}, 'toolu_slow'), toolUse('publish', {}, 'toolu_pub')], usage: u(10, 10) }, { content: [text('worked')], usage: u(10, 10) }],
    }),
  );
  return { log, worker, server };
}

describe('agentTool: approvals inside a sub-agent', () => {
  it('wait in the parent pendingApprovals with their path; approve on the parent reaches the sub-agent; no call runs twice', async () => {
    const log: string[] = [];
    const { researcher } = researchTools(log);
    const server = await mockServer(script());
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] });
    await runner;
    expect(runner.stoppedBy).toBe('approval');
    expect(runner.pendingApprovals).toEqual([{ id: 'toolu_p', name: 'publish', input: { title: 'Otters' }, toolUse: expect.objectContaining({ id: 'toolu_p' }), path: ['researcher'], callPath: ['toolu_r'] }]);
    expect(log).toEqual(['search otters']);
    expect(runner.usage).toMatchObject({ input_tokens: 11 });
    expect(() => runner.approve('toolu_r')).toThrow(/not waiting for approval.*toolu_p \(publish\)/);
    runner.approve('toolu_p');
    expect(runner.pendingApprovals).toEqual([]);
    await runner;
    expect(runner.stoppedBy).toBe('model');
    expect(log).toEqual(['search otters', 'publish Otters']);
    expect(wire(server.requests[2]!).messages.at(-1).content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_s', content: 'results for otters' },
      { type: 'tool_result', tool_use_id: 'toolu_p', content: 'published Otters' },
    ]);
    expect(wire(server.requests[3]!).messages.at(-1).content[0]).toMatchObject({ tool_use_id: 'toolu_r', content: 'Report published.' });
    expect(runner.usage).toMatchObject({ input_tokens: 22, output_tokens: 22 });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("listed in the parent's pendingApprovals once generateToolResponse() returns in its loop body; approved there, the sub-agent goes on in that pass", async () => {
    const log: string[] = [];
    const { researcher } = researchTools(log);
    const server = await mockServer(script());
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] });
    const waiting: string[][] = [];
    for await (const _message of runner) {
      const response = await runner.generateToolResponse();
      waiting.push(runner.pendingApprovals.map((call) => `${call.path?.join('/')}:${call.id}`));
      if (response === null && runner.pendingApprovals.length > 0) runner.approve('toolu_p');
    }
    expect(waiting).toEqual([['researcher:toolu_p'], []]);
    expect(runner.stoppedBy).toBe('model');
    expect(log).toEqual(['search otters', 'publish Otters']);
    expect(wire(server.requests[3]!).messages.at(-1).content[0]).toMatchObject({ tool_use_id: 'toolu_r', content: 'Report published.' });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('two calls of one agent waiting at once: their pendingApprovals name the call that started each (callPath)', async () => {
    const { researcher } = researchTools([]);
    const server = await mockServer(
      byAgent({
        parent: [{ content: [toolUse('researcher', { task: 'otters' }, 'toolu_r1'), toolUse('researcher', { task: 'seals' }, 'toolu_r2')] }],
        researcher: [{ content: [toolUse('publish', { title: 'A' }, 'toolu_pa')] }, { content: [toolUse('publish', { title: 'B' }, 'toolu_pb')] }],
      }),
    );
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] });
    await runner;
    const waiting = runner.pendingApprovals.map(({ id, path, callPath }) => ({ id, path, callPath }));
    expect(waiting.map((call) => call.path)).toEqual([['researcher'], ['researcher']]);
    expect(new Set(waiting.map((call) => call.callPath![0]))).toEqual(new Set(['toolu_r1', 'toolu_r2']));
  });

  it("the parent's approver that throws or answers nonsense about a sub-agent's call stops the parent's run, as for a call of its own", async () => {
    for (const [approve, error] of [
      [
        () => {
          throw new Error('approval service down');
        },
        new HookError('approve', new Error('approval service down')).message,
      ],
      [() => ({ decision: 'yes' }) as never, /options.approve returned \{"decision":"yes"\}/],
    ] as const) {
      const log: string[] = [];
      const { researcher } = researchTools(log);
      const server = await mockServer(script());
      const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] }, { approve });
      await expect(runner.runUntilDone()).rejects.toThrow(error);
      // The parent's request and the sub-agent's first: nothing went back to the model as an answer.
      expect(server.requests).toHaveLength(2);
      expect(log).toEqual(['search otters']);
    }
  });

  for (const via of ['iterating again', 'a snapshot'] as const) it(`after the parent's approver failed about a sub-agent's call, ${via} goes on from where the sub-agent stopped: no request of it sent again, no finished call run again`, async () => {
    const log: string[] = [];
    const { researcher } = researchTools(log);
    const server = await mockServer(script());
    let failing = true;
    const approve = () => {
      if (failing) throw new Error('approval service down');
      return { decision: 'allow' as const };
    };
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] }, { approve });
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(HookError);
    failing = false;
    const next = via === 'iterating again' ? runner : resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { tools: [researcher], options: { approve } });
    expect(await next.runUntilDone()).toMatchObject({ content: [{ text: 'Published.' }] });
    expect(log).toEqual(['search otters', 'publish Otters']);
    // The parent's, the sub-agent's two, the parent's answer: none twice.
    expect(server.requests).toHaveLength(4);
    expect(historyProblems(next.params.messages)).toEqual([]);
  });

  it("after the parent's approver failed about a sub-agent's call, iterating again uses what the sub-agent's other calls did since (finished, or still running): none runs again, its usage counts once", async () => {
    for (const waited of [0, 400]) {
      const { log, worker, server } = await slowAndPublishWorker();
      let failing = true;
      const approve = () => {
        if (failing) throw new Error('approval service down');
        return { decision: 'allow' as const };
      };
      const runner = toolRunner(server.client(), { ...baseParams, tools: [worker] }, { approve });
      await expect(runner.runUntilDone()).rejects.toBeInstanceOf(HookError);
      // The slow call runs on (the run's signal stops it); retried before it ends, or after.
      await sleep(waited);
      failing = false;
      expect(await runner.runUntilDone()).toMatchObject({ content: [{ text: 'end' }] });
      // It ran once: a sub-agent resumed from the state it failed with ran it again, its result lost.
      expect(log, `retried after ${waited} ms`).toEqual(['slow', 'publish']);
      expect(wire(server.requests[2]!).messages.at(-1).content).toEqual([
        { type: 'tool_result', tool_use_id: 'toolu_slow', content: 'slow done' },
        { type: 'tool_result', tool_use_id: 'toolu_pub', content: 'published' },
      ]);
      expect(runner.usage).toMatchObject({ input_tokens: 22, output_tokens: 22 });
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it("after the parent's approver failed about a sub-agent's call, the parent's signal still stops the sub-agent's calls that run on, as it stops the parent's own (at two levels and three, with a tool timeout or not)", async () => {
    for (const [levels, toolTimeoutMs] of [[2, undefined], [3, undefined], [2, 60_000], [3, 60_000]] as const) {
      const log: string[] = [];
      const publish = tool({ name: 'publish', inputSchema: z.object({}), needsApproval: true, run: () => (log.push('publish'), 'published') });
      const slow = tool({
        name: 'slow',
        inputSchema: z.object({}),
        run: (_input, { signal }) => (log.push('slow'), new Promise<string>((resolve) => signal.addEventListener('abort', () => (log.push('slow stopped'), resolve('stopped'))))),
      });
      const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }], tools: [publish, slow] }) });
      const manager = agentTool({ name: 'manager', description: 'Manages', params: ({ task }) => ({ model, max_tokens: 64, system: 'manager', messages: [{ role: 'user', content: task }], tools: [worker] }) });
      const top = levels === 2 ? worker : manager;
      const server = await mockServer(
        byAgent({
          parent: [{ content: [toolUse(top.name, { task: 'go' })] }],
          manager: [{ content: [toolUse('worker', { task: 'work' })] }],
          worker: [{ content: [toolUse('slow', {}, 'toolu_slow'), toolUse('publish', {}, 'toolu_pub')] }],
        }).slice(0, levels),
      );
      const controller = new AbortController();
      const runner = toolRunner(server.client(), { ...baseParams, tools: [top] }, { signal: controller.signal, toolTimeoutMs, approve: () => { throw new Error('approval service down'); } });
      await expect(runner.runUntilDone()).rejects.toBeInstanceOf(HookError);
      // The program gives up on the run: the sub-agent's slow call, which runs on, stops with it (it ran on for good).
      controller.abort();
      await sleep(50);
      expect(log, `${levels} levels, toolTimeoutMs ${toolTimeoutMs}`).toEqual(['slow', 'slow stopped']);
    }
  });

  it("a snapshot the parent takes after its approver failed about a sub-agent's call holds the sub-agent as it is then: a call of its that finished since is not run again, its usage counts once", async () => {
    const { log, worker, server } = await slowAndPublishWorker();
    const runner = toolRunner(server.client(), { ...baseParams, tools: [worker] }, {
      approve: () => {
        throw new Error('approval service down');
      },
    });
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(HookError);
    // The slow call runs on and finishes; then the process saves the run.
    await sleep(400);
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
    const resumed = resumeToolRunner(server.client(), snapshot, { tools: [worker], options: { approve: () => ({ decision: 'allow' }) } });
    expect(await resumed.runUntilDone()).toMatchObject({ content: [{ text: 'end' }] });
    // It ran once (the snapshot held the sub-agent as it failed, before the slow call ended, and ran it again).
    expect(log).toEqual(['slow', 'publish']);
    expect(resumed.usage).toMatchObject({ input_tokens: 22, output_tokens: 22 });
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });

  it("after the parent's approver failed about a sub-agent's call, a snapshot resumed without an approver stops with that call in pendingApprovals, and goes on once it is approved", async () => {
    const log: string[] = [];
    const { researcher } = researchTools(log);
    const server = await mockServer(script());
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] }, {
      approve: () => {
        throw new Error('approval service down');
      },
    });
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(HookError);
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { tools: [researcher] });
    await resumed;
    expect(resumed.stoppedBy).toBe('approval');
    expect(resumed.pendingApprovals.map(({ id, path }) => ({ id, path }))).toEqual([{ id: 'toolu_p', path: ['researcher'] }]);
    resumed.approve('toolu_p');
    expect(await resumed).toMatchObject({ content: [{ text: 'Published.' }] });
    expect(log).toEqual(['search otters', 'publish Otters']);
    expect(server.requests).toHaveLength(4);
  });

  it("a sub-agent's question abandoned while it waits in the parent's line (its call timed out) does not let a later question be asked beside the one being asked", async () => {
    const gated = tool({ name: 'gated', inputSchema: z.object({}), needsApproval: true, run: () => 'gated' });
    const later = tool({ name: 'later', inputSchema: z.object({}), needsApproval: async () => (await sleep(300), true), run: () => 'later' });
    const inner = tool({ name: 'inner', inputSchema: z.object({}), needsApproval: true, run: () => 'inner' });
    const helper = agentTool({ name: 'helper', description: 'Helps', timeoutMs: 150, params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }], tools: [inner] }) });
    const server = await mockServer([
      { content: [toolUse('gated', {}, 'toolu_g'), toolUse('helper', { task: 't' }, 'toolu_h'), toolUse('later', {}, 'toolu_l')] },
      { content: [toolUse('inner', {}, 'toolu_in')] },
      { content: [text('done')] },
    ]);
    const asking = new Set<string>();
    let most = 0;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [gated, helper, later] }, {
      approve: async (call) => {
        asking.add(call.name);
        most = Math.max(most, asking.size);
        // A person takes a while with the first (and does not heed the signal).
        await sleep(call.name === 'gated' ? 800 : 20);
        asking.delete(call.name);
        return { decision: 'allow' };
      },
    });
    await runner.runUntilDone();
    expect(most).toBe(1);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('an agent call approved with an edited input whose sub-agent then stops for approval: once its call is decided, the sub-agent goes on with the edit, not the model\'s input', async () => {
    const lookup = tool({ name: 'lookup', inputSchema: z.object({}), needsApproval: true, run: () => 'looked up' });
    const wipe = tool({ name: 'wipe_disk', inputSchema: z.object({}), run: () => 'wiped' });
    const seen: unknown[] = [];
    const sub = await mockServer([{ content: [toolUse('lookup', {}, 'toolu_in')] }, (request: RecordedRequest) => ({ content: [text(`tools: ${(request.tools ?? []).map((one) => one.name).join(', ')}`)] })]);
    const admin = agentTool({
      name: 'admin',
      description: 'Does admin work',
      needsApproval: true,
      client: sub.client(),
      inputSchema: z.object({ task: z.string(), mayWipe: z.boolean() }),
      params: (input) => (seen.push(input), { ...baseParams, messages: [{ role: 'user', content: input.task }], tools: input.mayWipe ? [lookup, wipe] : [lookup] }),
    });
    const server = await mockServer([{ content: [toolUse('admin', { task: 'clean up', mayWipe: true }, 'toolu_admin')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [admin] });
    await runner;
    runner.approve('toolu_admin', { input: { task: 'clean up', mayWipe: false } });
    await runner;
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_in']);
    runner.approve('toolu_in');
    expect(await runner).toMatchObject({ content: [{ text: 'Done.' }] });
    expect(seen).toEqual([{ task: 'clean up', mayWipe: false }, { task: 'clean up', mayWipe: false }]);
    expect(wire(server.requests[1]!).messages.at(-1).content[0]).toMatchObject({ tool_use_id: 'toolu_admin', content: 'tools: lookup' });
  });

  it('the same one level deeper: a sub-agent\'s agent call approved with an edit keeps it once the call inside it is decided', async () => {
    const lookup = tool({ name: 'lookup', inputSchema: z.object({}), needsApproval: true, run: () => 'looked up' });
    const seen: unknown[] = [];
    const deepest = await mockServer([{ content: [toolUse('lookup', {}, 'toolu_in')] }, { content: [text('cleaned')] }]);
    const admin = agentTool({
      name: 'admin',
      description: 'Does admin work',
      needsApproval: true,
      client: deepest.client(),
      inputSchema: z.object({ task: z.string() }),
      params: (input) => (seen.push(input), { ...baseParams, messages: [{ role: 'user', content: input.task }], tools: [lookup] }),
    });
    const middle = await mockServer([{ content: [toolUse('admin', { task: 'wipe all' }, 'toolu_admin')] }, { content: [text('managed')] }]);
    const manager = agentTool({ name: 'manager', description: 'Manages', client: middle.client(), params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }], tools: [admin] }) });
    const server = await mockServer([{ content: [toolUse('manager', { task: 'tidy' }, 'toolu_manager')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [manager] });
    await runner;
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_admin']);
    runner.approve('toolu_admin', { input: { task: 'clean up' } });
    await runner;
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_in']);
    runner.approve('toolu_in');
    expect(await runner).toMatchObject({ content: [{ text: 'Done.' }] });
    expect(seen).toEqual([{ task: 'clean up' }, { task: 'clean up' }]);
  });

  it('deny on the parent reaches the sub-agent', async () => {
    const log: string[] = [];
    const { researcher } = researchTools(log);
    const server = await mockServer(script());
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] });
    await runner;
    runner.deny('toolu_p', 'not today');
    // Decided already (inside the sub-agent): said so, not that it is not waiting.
    expect(() => runner.approve('toolu_p')).toThrow(/^Tool call 'toolu_p' was already decided/);
    await runner;
    expect(log).toEqual(['search otters']);
    expect(wire(server.requests[2]!).messages.at(-1).content[1]).toMatchObject({ is_error: true, content: expect.stringContaining('not today') });
  });

  it("the parent's options.approve is asked for them, with the path and the id of the call that started the agent", async () => {
    const log: string[] = [];
    const { researcher } = researchTools(log);
    const server = await mockServer(script());
    const asked: ApprovalRequest[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] }, { approve: (call) => (asked.push(call), { decision: 'allow' }) });
    await runner;
    expect(asked.map((call) => [call.name, call.path, call.callPath])).toEqual([['publish', ['researcher'], ['toolu_r']]]);
    expect(log).toEqual(['search otters', 'publish Otters']);
    expect(runner.stoppedBy).toBe('model');
  });

  it("one question at a time: two sub-agents' calls and the parent's own wait in one line", async () => {
    const log: string[] = [];
    const { researcher, publish } = researchTools(log);
    const server = await mockServer(
      byAgent({
        parent: [
          { content: [toolUse('researcher', { task: 'otters' }, 'toolu_r1'), toolUse('researcher', { task: 'seals' }, 'toolu_r2'), toolUse('publish', { title: 'Lead' }, 'toolu_lead')] },
          { content: [text('Done.')] },
        ],
        researcher: [
          { content: [toolUse('publish', { title: 'One' }, 'toolu_p1')] },
          { content: [toolUse('publish', { title: 'Two' }, 'toolu_p2')] },
          { content: [text('Report one.')] },
          { content: [text('Report two.')] },
        ],
      }),
    );
    let open = 0;
    let most = 0;
    const asked: string[] = [];
    const approve = async (call: ApprovalRequest) => {
      most = Math.max(most, ++open);
      asked.push(`${(call.path ?? ['parent']).join('/')}: ${(call.input as { title: string }).title}`);
      await sleep(30);
      open--;
      return { decision: 'allow' as const };
    };
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher, publish] }, { approve });
    await runner;
    expect(most).toBe(1);
    expect(asked.sort()).toEqual(['parent: Lead', 'researcher: One', 'researcher: Two']);
    expect(log.sort()).toEqual(['publish Lead', 'publish One', 'publish Two']);
    expect(runner.stoppedBy).toBe('model');
  });
});

describe('agentTool: streaming', () => {
  it('with the parent streaming, the sub-agent text deltas reach onEvent as agent.text events with the path', async () => {
    const { researcher } = researchTools([]);
    const server = await mockServer({
      chunkSize: 4,
      steps: byAgent({
        parent: [{ content: [toolUse('researcher', { task: 'otters' })] }, { content: [text('ok')] }],
        researcher: [{ content: [text('Otters hold hands.')] }],
      }),
    });
    const events: RunnerEvent[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, stream: true, tools: [researcher] }, { onEvent: (event) => events.push(event) });
    for await (const stream of runner) await stream.finalMessage();
    const deltas = events.filter((event) => event.type === 'agent.text');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((event) => event.path?.join('/') === 'researcher')).toBe(true);
    expect(deltas.map((event) => (event as { text: string }).text).join('')).toBe('Otters hold hands.');
    expect(wire(server.requests[1]!).body.stream).toBe(true);
  });
});

describe('agentTool: a snapshot of the parent carries the sub-agent', () => {
  it('a parent resumed with listeners from a snapshot made without: the sub-agent goes on streamed, its text reaches onEvent and its answer the parent', async () => {
    const log: string[] = [];
    const { researcher } = researchTools(log);
    const server = await mockServer(script());
    const runner = toolRunner(server.client(), { ...baseParams, stream: true, tools: [researcher] });
    for await (const stream of runner) await stream.finalMessage();
    expect(runner.stoppedBy).toBe('approval');
    const events: RunnerEvent[] = [];
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { tools: [researcher], options: { onEvent: (event) => events.push(event) } });
    resumed.approve('toolu_p');
    expect(await resumed).toMatchObject({ content: [{ text: 'Published.' }] });
    expect(wire(server.requests[3]!).messages.at(-1).content[0]).toMatchObject({ tool_use_id: 'toolu_r', content: 'Report published.' });
    expect(events.filter((event) => event.type === 'agent.text').map((event) => (event as { text: string }).text).join('')).toBe('Report published.');
  });

  it("pendingApprovals keep the order they waited in (the model's) across a snapshot", async () => {
    const log: string[] = [];
    const { researcher, publish } = researchTools(log);
    const steps = () =>
      byAgent({
        parent: [{ content: [toolUse('researcher', { task: 'otters' }, 'toolu_r'), toolUse('publish', { title: 'Seals' }, 'toolu_ps')] }, { content: [text('Done.')] }],
        researcher: [{ content: [toolUse('publish', { title: 'Otters' }, 'toolu_p')] }, { content: [text('Report published.')] }],
      });
    const server = await mockServer(steps());
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher, publish] });
    await runner;
    const order = runner.pendingApprovals.map((call) => call.id);
    expect(order).toEqual(['toolu_p', 'toolu_ps']);
    const snapshot = JSON.stringify(runner.toJSON());
    expect(resumeToolRunner(server.client(), JSON.parse(snapshot), { tools: [researcher, publish] }).pendingApprovals.map((call) => call.id)).toEqual(order);
  });

  it('a sub-agent approval decided after a snapshot, resumed in another process: goes on inside the sub-agent without re-running its finished call', async () => {
    const log: string[] = [];
    const { researcher } = researchTools(log);
    const server = await mockServer(script());
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] });
    await runner;
    expect(log).toEqual(['search otters']);
    const saved = JSON.stringify(runner.toJSON());
    const child = await new Promise<string>((resolve, reject) => {
      const process_ = execFile(
        process.execPath,
        ['--import', 'tsx', 'test/fixtures/agent-resume-child.ts'],
        { env: { ...process.env, MOCK_URL: server.url } },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      );
      process_.stdin!.end(saved);
    });
    const result = JSON.parse(child);
    // The path is there on the resumed runner before it is iterated.
    expect(result.waiting).toEqual([{ id: 'toolu_p', path: ['researcher'] }]);
    expect(result.log).toEqual(['publish Otters']);
    expect(result.final).toEqual([{ type: 'text', text: 'Published.', citations: null }]);
    expect(result.stoppedBy).toBe('model');
    expect(result.usage).toMatchObject({ input_tokens: 22, output_tokens: 22 });
    expect(result.problems).toEqual([]);
    expect(wire(server.requests[2]!).messages.at(-1).content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_s', content: 'results for otters' },
      { type: 'tool_result', tool_use_id: 'toolu_p', content: 'published Otters' },
    ]);
  });

  it('resuming leaves the snapshot object as it was: a decision on one resumed runner, and the same object resumed again still waits and goes on', async () => {
    const log: string[] = [];
    const { researcher } = researchTools(log);
    const server = await mockServer(script());
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] });
    await runner;
    const snapshot = runner.toJSON(); // kept in memory, not written as JSON
    const before = JSON.stringify(snapshot);
    const first = resumeToolRunner(server.client(), snapshot, { tools: [researcher] });
    first.deny('toolu_p', 'not today');
    await first;
    expect(first.stoppedBy).toBe('model');
    expect(JSON.stringify(snapshot)).toBe(before);
    const again = await mockServer(byAgent({ parent: [{ content: [text('Published.')] }], researcher: [{ content: [text('Report published.')] }] }));
    const second = resumeToolRunner(again.client(), snapshot, { tools: [researcher] });
    expect(second.pendingApprovals.map((call) => [call.id, call.path])).toEqual([['toolu_p', ['researcher']]]);
    second.approve('toolu_p');
    await second;
    expect(second.stoppedBy).toBe('model');
    expect(log).toEqual(['search otters', 'publish Otters']);
    expect(historyProblems(second.params.messages)).toEqual([]);
  });

  it("a snapshot taken as the sub-agent's call ends waiting (its tool.end) holds the sub-agent's state: resumed, its finished calls do not run again", async () => {
    const log: string[] = [];
    const { researcher } = researchTools(log);
    const server = await mockServer(script());
    let snapshot: RunnerSnapshot | undefined;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] }, {
      onEvent: (event) => {
        if (event.type === 'tool.end' && event.pending && !event.path) snapshot = runner.toJSON();
      },
    });
    await runner;
    const rest = await mockServer(byAgent({ parent: [{ content: [text('Published.')] }], researcher: [{ content: [text('Report published.')] }] }));
    const resumed = resumeToolRunner(rest.client(), JSON.parse(JSON.stringify(snapshot)), { tools: [researcher] });
    await resumed;
    expect(resumed.pendingApprovals.map((call) => [call.id, call.path])).toEqual([['toolu_p', ['researcher']]]);
    resumed.approve('toolu_p');
    await resumed;
    expect(resumed.stoppedBy).toBe('model');
    expect(log).toEqual(['search otters', 'publish Otters']);
    const researcherAsked = rest.requests.filter((request) => JSON.stringify(wire(request).messages).includes('toolu_s'));
    // (A continued thread the new server does not know is sent again whole: the same last message.)
    expect(wire(researcherAsked.at(-1)!).messages.at(-1).content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_s', content: 'results for otters' },
      { type: 'tool_result', tool_use_id: 'toolu_p', content: 'published Otters' },
    ]);
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });

  for (const at of ["the sub-agent's call ends (its tool.end, with path)", "a parallel call's onToolResult hook"] as const) it(`a snapshot the parent takes while a sub-agent runs (${at}) holds the sub-agent's state: resumed, its finished calls do not run again, its usage counts once`, async () => {
    const ran: string[] = [];
    const charge = tool({ name: 'charge', inputSchema: z.object({ amount: z.number() }), run: ({ amount }) => (ran.push(`charge ${amount}`), `charged ${amount}`) });
    const quick = tool({ name: 'quick', inputSchema: z.object({}), run: () => (ran.push('quick'), 'quick done') });
    const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }], tools: [charge] }) });
    const parentFirst = { content: [toolUse('worker', { task: 'charge 5' }, 'toolu_w'), ...(at === "a parallel call's onToolResult hook" ? [toolUse('quick', {}, 'toolu_q')] : [])], usage: u(10, 5) };
    // Each agent's reply follows from its conversation: a worker that starts over is asked to charge again.
    const agentOf = agentRouter();
    const reply = (request: RecordedRequest): ScriptedReply => {
      const answered = JSON.stringify(request.messages).includes('"tool_result"');
      if (agentOf(request) === 'worker') return answered ? { content: [text('Charged 5.')], usage: u(100, 50) } : { content: [toolUse('charge', { amount: 5 }, 'toolu_c')], usage: u(100, 50) };
      return answered ? { content: [text('All done.')], usage: u(10, 5) } : parentFirst;
    };
    const server = await mockServer(Array.from({ length: 4 }, () => reply));
    let snapshot: RunnerSnapshot | undefined;
    let chargeEnded = false;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [worker, quick] }, {
      onEvent: (event) => {
        if (event.type === 'tool.end' && event.path && event.call.name === 'charge') {
          chargeEnded = true;
          if (at === "the sub-agent's call ends (its tool.end, with path)") snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
        }
      },
      hooks: {
        // The parallel call ends once the sub-agent's has: the sub-agent still runs (its next request).
        onToolResult: async (result) => {
          if (result.tool_use_id !== 'toolu_q') return;
          while (!chargeEnded) await sleep(5);
          snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
        },
      },
    });
    await runner;
    expect(ran.filter((entry) => entry.startsWith('charge'))).toEqual(['charge 5']);
    // Resumed from the snapshot: the worker's second request, then the parent's last.
    const again = await mockServer(Array.from({ length: 2 }, () => reply));
    const resumed = resumeToolRunner(again.client(), snapshot!, { tools: [worker, quick] });
    expect(textOfLast(await resumed)).toBe('All done.');
    expect(ran.filter((entry) => entry.startsWith('charge'))).toEqual(['charge 5']);
    // The sub-agent's first request counts once; its second and the parent's last are the resumed run's.
    expect(resumed.usage).toMatchObject({ input_tokens: 10 + 100 + 100 + 10, output_tokens: 5 + 50 + 50 + 5 });
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });

  it('a snapshot taken while a sub-agent ran, resumed under an aborted signal: its call is answered as aborted before it finished (it had started), not as one that never ran', async () => {
    const charge = tool({ name: 'charge', inputSchema: z.object({ amount: z.number() }), run: ({ amount }) => `charged ${amount}` });
    const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }], tools: [charge] }) });
    const server = await mockServer(byAgent({ parent: [{ content: [toolUse('worker', { task: 'charge 5' }, 'toolu_w')] }, { content: [text('All done.')] }], worker: [{ content: [toolUse('charge', { amount: 5 }, 'toolu_c')] }, { content: [text('Charged 5.')] }] }));
    let snapshot: RunnerSnapshot | undefined;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [worker] }, {
      onEvent: (event) => void (event.type === 'tool.end' && event.path && (snapshot = JSON.parse(JSON.stringify(runner.toJSON())))),
    });
    await runner;
    const resumed = resumeToolRunner(server.client(), snapshot!, { tools: [worker], options: { signal: AbortSignal.abort() } });
    await expect(resumed.runUntilDone()).rejects.toThrow(/abort/i);
    expect(resumed.params.messages.at(-1)!.content).toEqual([expect.objectContaining({ tool_use_id: 'toolu_w', content: "Error: the call to 'worker' was aborted before it finished." })]);
  });

  it("a snapshot the parent takes while a sub-agent runs after its call was approved holds its state as it is now: resumed, the approved call does not run again, its usage counts once", async () => {
    const ran: string[] = [];
    const charge = tool({ name: 'charge', inputSchema: z.object({ amount: z.number() }), needsApproval: true, run: ({ amount }) => (ran.push(`charge ${amount}`), `charged ${amount}`) });
    const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }], tools: [charge] }) });
    const agentOf = agentRouter();
    const reply = (request: RecordedRequest): ScriptedReply => {
      const answered = JSON.stringify(request.messages).includes('"tool_result"');
      if (agentOf(request) === 'worker') return answered ? { content: [text('Charged 5.')], usage: u(100, 50) } : { content: [toolUse('charge', { amount: 5 }, 'toolu_c')], usage: u(100, 50) };
      return answered ? { content: [text('All done.')], usage: u(10, 5) } : { content: [toolUse('worker', { task: 'charge 5' }, 'toolu_w')], usage: u(10, 5) };
    };
    const server = await mockServer(Array.from({ length: 4 }, () => reply));
    let snapshot: RunnerSnapshot | undefined;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [worker] }, {
      onEvent: (event) => {
        if (event.type === 'tool.end' && event.path && event.call.name === 'charge' && !event.pending) snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
      },
    });
    await runner;
    expect(runner.stoppedBy).toBe('approval');
    runner.approve('toolu_c');
    await runner;
    expect(ran).toEqual(['charge 5']);
    const again = await mockServer(Array.from({ length: 2 }, () => reply));
    const resumed = resumeToolRunner(again.client(), snapshot!, { tools: [worker] });
    expect(textOfLast(await resumed)).toBe('All done.');
    expect(ran).toEqual(['charge 5']);
    expect(resumed.usage).toMatchObject({ input_tokens: 10 + 100 + 100 + 10, output_tokens: 5 + 50 + 50 + 5 });
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });

  it("an agent's own options.signal and the run's: each call ties and unties them, leaving neither a listener nor a dependant signal behind (AbortSignal.any's stayed as long as both lived); the agent's own still stops it", async () => {
    const own = new AbortController();
    const shared = new AbortController();
    const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }] }), options: { signal: own.signal } });
    // Node keeps the signals `AbortSignal.any` made from a signal in a set on it (weakly, but never taken out).
    const dependants = (signal: AbortSignal) => {
      const key = Object.getOwnPropertySymbols(signal).find((symbol) => symbol.description === 'kDependantSignals');
      return key ? ((signal as unknown as Record<symbol, Set<unknown> | undefined>)[key]?.size ?? 0) : 0;
    };
    const run = async (id: string) => {
      const server = await mockServer(byAgent({ parent: [{ content: [toolUse('worker', { task: 'x' }, id)] }, { content: [text('done')] }], worker: [{ content: [text('worked')] }] }));
      await toolRunner(server.client(), { ...baseParams, tools: [worker] }, { signal: shared.signal });
      return wire(server.requests.at(-1)!).messages.at(-1).content[0];
    };
    for (let i = 0; i < 5; i++) expect(await run(`toolu_${i}`)).toMatchObject({ content: 'worked' });
    for (const signal of [own.signal, shared.signal]) {
      expect(getEventListeners(signal, 'abort')).toHaveLength(0);
      expect(dependants(signal)).toBe(0);
    }
    own.abort();
    expect(await run('toolu_aborted')).toMatchObject({ is_error: true });
  });

  it("aborted while a sub-agent's call waits for approval and another call runs: the waits end for the listeners, the sub-agent's with its path", async () => {
    const controller = new AbortController();
    const charge = tool({ name: 'charge', inputSchema: z.object({}), needsApproval: true, run: () => 'charged' });
    const slow = tool({
      name: 'slow',
      inputSchema: z.object({}),
      run: (_input, { signal }) => new Promise<string>((resolve) => (signal.addEventListener('abort', () => resolve('stopped')), setTimeout(() => controller.abort(), 30))),
    });
    const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }], tools: [charge] }) });
    const server = await mockServer(byAgent({ parent: [{ content: [toolUse('worker', { task: 'charge' }, 'toolu_w'), toolUse('slow', {}, 'toolu_s')] }], worker: [{ content: [toolUse('charge', {}, 'toolu_c')] }] }));
    const ends: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [worker, slow] }, {
      signal: controller.signal,
      onEvent: (event) => void (event.type === 'tool.end' && event.call.id !== 'toolu_s' && ends.push(`${event.path?.join('/') ?? ''}:${event.call.id}:${event.pending ? 'pending' : event.cancelled ? 'cancelled' : 'ended'}`)),
    });
    await expect(runner.runUntilDone()).rejects.toThrow(/abort/i);
    expect(ends).toEqual(['worker:toolu_c:pending', ':toolu_w:pending', ':toolu_w:cancelled', 'worker:toolu_c:cancelled']);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("aborted while a call inside a sub-agent waits for approval: the agent's call is answered as aborted before it finished (its sub-agent ran), not as never run, which would have the model call it again", async () => {
    for (const when of ['before the run goes on', 'while another call runs'] as const) {
      const ran: string[] = [];
      const controller = new AbortController();
      const charge = tool({ name: 'charge', inputSchema: z.object({}), run: () => (ran.push('charge'), 'charged') });
      const send = tool({ name: 'send', inputSchema: z.object({}), needsApproval: true, run: () => 'sent' });
      const slow = tool({
        name: 'slow',
        inputSchema: z.object({}),
        run: (_input, { signal }) => new Promise<string>((resolve) => signal.addEventListener('abort', () => resolve('stopped'))),
      });
      // While the slow call runs, the run is aborted once the sub-agent's call waits for approval (a timer raced the sub-agent's two requests under load).
      const abortAtWait = (event: RunnerEvent) => {
        if (when === 'while another call runs' && event.type === 'tool.end' && event.pending && event.call.id === 'toolu_x') setTimeout(() => controller.abort(), 0);
      };
      const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 64, system: 'worker', messages: [{ role: 'user', content: task }], tools: [charge, send] }) });
      const parentCalls = [toolUse('worker', { task: 'charge, then send' }, 'toolu_w'), ...(when === 'while another call runs' ? [toolUse('slow', {}, 'toolu_s')] : [])];
      const server = await mockServer(byAgent({ parent: [{ content: parentCalls }], worker: [{ content: [toolUse('charge', {}, 'toolu_c')] }, { content: [toolUse('send', {}, 'toolu_x')] }] }));
      const runner = toolRunner(server.client(), { ...baseParams, tools: [worker, slow] }, { signal: controller.signal, onEvent: abortAtWait });
      if (when === 'before the run goes on') {
        await runner;
        expect(runner.stoppedBy).toBe('approval');
        controller.abort();
      }
      await expect(runner.runUntilDone(), when).rejects.toThrow(/abort/i);
      expect(ran, when).toEqual(['charge']);
      const results = runner.params.messages.at(-1)!.content as Array<{ tool_use_id: string; content: string }>;
      expect(results.find((result) => result.tool_use_id === 'toolu_w'), when).toMatchObject({ is_error: true, content: "Error: the call to 'worker' was aborted before it finished." });
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it("a message pushed instead of deciding a call inside a sub-agent: the agent's call is answered as started, its result not kept (not as never run)", async () => {
    const log: string[] = [];
    const { researcher } = researchTools(log);
    const server = await mockServer(
      byAgent({
        parent: [{ content: [toolUse('researcher', { task: 'otters' }, 'toolu_r')] }, { content: [text('Fine.')] }],
        researcher: [{ content: [toolUse('search', { query: 'otters' }, 'toolu_s'), toolUse('publish', { title: 'Otters' }, 'toolu_p')] }],
      }),
    );
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] });
    await runner;
    runner.pushMessages({ role: 'user', content: 'Never mind.' });
    await runner;
    expect(log).toEqual(['search otters']);
    expect(wire(server.requests.at(-1)!).messages.slice(-2)).toEqual([
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_r', is_error: true, content: "Error: the conversation went on before the call to 'researcher' finished (it had started: its sub-agent ran); its result was not kept." }] },
      { role: 'user', content: 'Never mind.' },
    ]);
  });

  for (const form of ['spread with an option', 'wrapped in a tool of its own'] as const) it(`an agent tool ${form}: after a call inside it is approved, the sub-agent goes on from its state (its finished calls not run again)`, async () => {
    const log: string[] = [];
    const search = tool({ name: 'search', inputSchema: z.object({ q: z.string() }), run: ({ q }) => (log.push(`search ${q}`), 'found') });
    const publish = tool({ name: 'publish', inputSchema: z.object({ t: z.string() }), needsApproval: true, run: ({ t }) => (log.push(`publish ${t}`), 'published') });
    const researcher = agentTool({ name: 'researcher', description: 'R', params: ({ task }) => ({ model, max_tokens: 100, system: 'researcher', messages: [{ role: 'user', content: task }], tools: [search, publish] }) });
    const given = form === 'spread with an option' ? { ...researcher, timeoutMs: 60_000 } : tool({ name: 'researcher', inputSchema: z.object({ task: z.string() }), run: (input, context) => researcher.run(input, context) });
    const agentOf = agentRouter();
    const reply = (request: RecordedRequest): ScriptedReply => {
      const messages = JSON.stringify(request.messages);
      if (agentOf(request) === 'parent') return messages.includes('tool_result') ? { content: [text('Parent done.')] } : { content: [toolUse('researcher', { task: 'do it' }, 'toolu_r')] };
      if (!messages.includes('tool_result')) return { content: [toolUse('search', { q: 'x' }, 'toolu_s')] };
      return messages.includes('toolu_p') ? { content: [text('Researched.')] } : { content: [toolUse('publish', { t: 'T' }, 'toolu_p')] };
    };
    const server = await mockServer(Array.from({ length: 6 }, () => reply));
    const runner = toolRunner(server.client(), { ...baseParams, tools: [given] });
    await runner;
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_p']);
    runner.approve('toolu_p');
    expect(textOfLast(await runner)).toBe('Parent done.');
    expect(log).toEqual(['search x', 'publish T']);
  });

  it('three levels deep: the approval path names both agents, and a same-process resume goes on', async () => {
    const log: string[] = [];
    const { search, publish } = researchTools(log);
    const writer = agentTool({
      name: 'writer',
      description: 'Writes and publishes',
      params: ({ task }) => ({ model, max_tokens: 64, system: 'writer', messages: [{ role: 'user', content: task }], tools: [search, publish] }),
    });
    const editor = agentTool({
      name: 'editor',
      description: 'Edits',
      params: ({ task }) => ({ model, max_tokens: 64, system: 'editor', messages: [{ role: 'user', content: task }], tools: [writer] }),
    });
    const server = await mockServer(
      byAgent({
        parent: [{ content: [toolUse('editor', { task: 'a' })] }, { content: [text('end')] }],
        editor: [{ content: [toolUse('writer', { task: 'b' })] }, { content: [text('edited')] }],
        writer: [{ content: [toolUse('search', { query: 'q' }), toolUse('publish', { title: 'T' }, 'toolu_p')] }, { content: [text('written')] }],
      }),
    );
    const runner = toolRunner(server.client(), { ...baseParams, tools: [editor] });
    await runner;
    expect(runner.pendingApprovals.map((call) => [call.id, call.path])).toEqual([['toolu_p', ['editor', 'writer']]]);
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { tools: [editor] });
    expect(resumed.pendingApprovals.map((call) => [call.id, call.path])).toEqual([['toolu_p', ['editor', 'writer']]]);
    resumed.approve('toolu_p');
    const final = await resumed;
    expect(final.content).toMatchObject([{ text: 'end' }]);
    expect(log).toEqual(['search q', 'publish T']);
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });
});

describe('a sub-agent that added a tool with addTools()', () => {
  it('goes on after a stop for approval inside it with the tool its own run added, never another run\'s tool of that name', async () => {
    const ran: string[] = [];
    const danger = tool({ name: 'danger', inputSchema: z.object({}), needsApproval: true, run: () => (ran.push('danger'), 'boom') });
    // Each sub-agent's login adds a query bound to its own user.
    const login = tool({ name: 'login', inputSchema: z.object({ user: z.string() }), run: ({ user }, context) => (context.runner.addTools(tool({ name: 'query', inputSchema: z.object({}), run: () => (ran.push(`query as ${user}`), '42') })), 'logged in') });
    const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 100, system: 'worker', messages: [{ role: 'user', content: task }], tools: [login, danger] }) });
    const runFor = async (user: string) => {
      const server = await mockServer(
        byAgent({
          parent: [{ content: [toolUse('worker', { task: user })] }, { content: [text('lead done')] }],
          worker: [{ content: [toolUse('login', { user })] }, { content: [toolUse('danger', {})] }, { content: [toolUse('query', {})] }, { content: [text('sub done')] }],
        }),
      );
      const runner = toolRunner(server.client(), { model, max_tokens: 100, messages: [{ role: 'user', content: 'go' }], tools: [worker] }, { headers: { 'anthropic-beta': 'inline-tools-2026-09-15' } });
      await runner;
      expect(runner.pendingApprovals.map((call) => [call.name, call.path])).toEqual([['danger', ['worker']]]);
      // (Wrapped: a runner is thenable, an async function would await it.)
      return { runner };
    };
    // Two runs of one agent tool stop for approval, alice's first; bob's sub-agent added its own query since.
    const { runner: alice } = await runFor('alice');
    const { runner: bob } = await runFor('bob');
    alice.approve(alice.pendingApprovals[0]!.id);
    expect((await alice).content[0]).toMatchObject({ text: 'lead done' });
    expect(ran).toEqual(['danger', 'query as alice']);
    expect(alice.params.messages.at(-2)!.content).toEqual([expect.objectContaining({ content: 'sub done' })]);
    bob.approve(bob.pendingApprovals[0]!.id);
    await bob;
    expect(ran).toEqual(['danger', 'query as alice', 'danger', 'query as bob']);
  });

  it("a sub-agent's sub-agent goes on with the tool its run added after a stop for approval inside it; so does a sub-agent retried after the parent's approver failed", async () => {
    for (const how of ['a level deeper', 'after the approver failed'] as const) {
      const ran: string[] = [];
      const danger = tool({ name: 'danger', inputSchema: z.object({}), needsApproval: true, run: () => (ran.push('danger'), 'boom') });
      const login = tool({ name: 'login', inputSchema: z.object({ user: z.string() }), run: ({ user }, context) => (context.runner.addTools(tool({ name: 'query', inputSchema: z.object({}), run: () => (ran.push(`query as ${user}`), '42') })), 'logged in') });
      const worker = agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 100, system: 'worker', messages: [{ role: 'user', content: task }], tools: [login, danger] }) });
      const lead = agentTool({ name: 'lead', description: 'Leads', params: ({ task }) => ({ model, max_tokens: 100, system: 'lead', messages: [{ role: 'user', content: task }], tools: [worker] }) });
      const worked = [{ content: [toolUse('login', { user: 'alice' })] }, { content: [toolUse('danger', {})] }, { content: [toolUse('query', {})] }, { content: [text('sub done')] }];
      const server = await mockServer(
        how === 'a level deeper'
          ? byAgent({ parent: [{ content: [toolUse('lead', { task: 'lead it' })] }, { content: [text('parent done')] }], lead: [{ content: [toolUse('worker', { task: 'alice' })] }, { content: [text('lead done')] }], worker: worked })
          : byAgent({ parent: [{ content: [toolUse('worker', { task: 'alice' })] }, { content: [text('parent done')] }], worker: worked }),
      );
      let failing = true;
      const approve = () => {
        if (failing) throw new Error('approval service down');
        return { decision: 'allow' as const };
      };
      const runner = toolRunner(server.client(), { model, max_tokens: 100, messages: [{ role: 'user', content: 'go' }], tools: [how === 'a level deeper' ? lead : worker] }, {
        headers: { 'anthropic-beta': 'inline-tools-2026-09-15' },
        ...(how === 'after the approver failed' && { approve }),
      });
      if (how === 'a level deeper') {
        await runner;
        expect(runner.pendingApprovals.map((call) => [call.name, call.path])).toEqual([['danger', ['lead', 'worker']]]);
        runner.approve(runner.pendingApprovals[0]!.id);
      } else {
        await expect(runner.runUntilDone()).rejects.toBeInstanceOf(HookError);
        failing = false;
      }
      expect((await runner.runUntilDone()).content[0], how).toMatchObject({ text: 'parent done' });
      // The approved call ran, and the tool the sub-agent's own run added answered its next call (it failed: 'could not go on').
      expect(ran, how).toEqual(['danger', 'query as alice']);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it('resumed from a snapshot without it, the call fails saying where the tool goes (not a bare TypeError)', async () => {
    const query = tool({ name: 'query', inputSchema: z.object({}), run: () => '42' });
    const danger = tool({ name: 'danger', inputSchema: z.object({}), needsApproval: true, run: () => 'boom' });
    const login = tool({ name: 'login', inputSchema: z.object({}), run: (_input, context) => (context.runner.addTools(query), 'logged in') });
    const make = () => agentTool({ name: 'worker', description: 'Works', params: ({ task }) => ({ model, max_tokens: 100, system: 'worker', messages: [{ role: 'user', content: task }], tools: [login, danger] }) });
    const server = await mockServer(
      byAgent({
        parent: [{ content: [toolUse('worker', { task: 't' })] }, { content: [text('lead done')] }],
        worker: [{ content: [toolUse('login', {})] }, { content: [toolUse('query', {}), toolUse('danger', {})] }],
      }),
    );
    const runner = toolRunner(server.client(), { model, max_tokens: 100, messages: [{ role: 'user', content: 'go' }], tools: [make()] }, { headers: { 'anthropic-beta': 'inline-tools-2026-09-15' } });
    await runner;
    // From a snapshot (here or in another process): a tool is code, which a snapshot does not hold.
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { tools: [make()] });
    resumed.approve(resumed.pendingApprovals[0]!.id);
    await resumed;
    expect(resumed.params.messages.at(-2)!.content).toEqual([
      expect.objectContaining({ is_error: true, content: expect.stringMatching(/^Error: the agent 'worker' could not go on from where it stopped: TypeError: resumeToolRunner: the snapshot uses tool 'query', which was not supplied .*put it in the agent's params tools\)$/) }),
    ]);
  });
});
