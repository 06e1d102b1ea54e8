import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ApprovalRequest, type RunnerSnapshot, type ToolRunner, agentTool, resumeToolRunner, textOf, tool, toolRunner } from 'tool-runner';
import { historyProblems, serverToolUse, text, toolUse } from 'tool-runner/testing';
import { byAgent, researchTools } from './fixtures/agent-tools.js';
import { bankTools } from './fixtures/bank-tools.js';
import { baseParams, captureLogger, mockServer, sleep, wire } from './helpers.js';

const webSearch = { type: 'web_search_20250305' as const, name: 'web_search' as const };

/** A run stopped with two transfers waiting for approval (toolu_1: 500 to a, toolu_2: 700 to b); then it answers 'ok'. */
async function twoTransfersWaiting(log: string[]) {
  const server = await mockServer([
    { content: [toolUse('transfer', { amount: 500, to: 'a' }, 'toolu_1'), toolUse('transfer', { amount: 700, to: 'b' }, 'toolu_2')] },
    { content: [text('ok')] },
  ]);
  const runner = toolRunner(server.client(), { ...baseParams, tools: bankTools(log) });
  await runner;
  return { server, runner };
}

/** The researcher sub-agent publishes (which needs approval), then reports. */
const researchScript = () =>
  byAgent({
    parent: [{ content: [toolUse('researcher', { task: 'otters' }, 'toolu_r')] }, { content: [text('Published.')] }],
    researcher: [{ content: [toolUse('publish', { title: 'Otters' }, 'toolu_p')] }, { content: [text('Report published.')] }],
  });

/** What a request sent after the first message: each message's text, or its blocks' ids (calls) and contents (results). */
const sentAfterFirst = (request: { messages: unknown }) =>
  (wire(request as never).messages as Array<{ content: unknown }>).slice(1).map((message) => (typeof message.content === 'string' ? message.content : (message.content as Array<{ content?: unknown; id?: string }>).map((block) => block.content ?? block.id)));

/** A charge that ends at once and a receipt that takes 80 ms, each logging its runs. */
const chargeAndReceipt = () => {
  const log: string[] = [];
  const charge = tool({ name: 'charge', inputSchema: z.object({}), run: () => (log.push('charge'), 'charged') });
  const receipt = tool({ name: 'receipt', inputSchema: z.object({}), run: async () => (log.push('receipt'), await sleep(80), 'receipt sent') });
  return { log, charge, receipt };
};

/** A chat's next message, 30 ms on (the body done, the receipt still being sent); then a checkpoint, handed to `keep`. */
const thanksThenSnapshot = (runner: { pushMessages(message: { role: 'user'; content: string }): void; toJSON(): unknown }, keep: (snapshot: RunnerSnapshot) => void) =>
  setTimeout(() => {
    runner.pushMessages({ role: 'user', content: 'Thanks!' });
    keep(JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot);
  }, 30);

describe('pause and resume', () => {
  it("a snapshot taken in one call's onToolResult while another call of the reply still runs (README): the resumed run runs that call again, not the finished one", async () => {
    const { log, charge, receipt } = chargeAndReceipt();
    const server = await mockServer([{ content: [toolUse('charge', {}, 'toolu_c'), toolUse('receipt', {}, 'toolu_r')] }, { content: [text('Done.')] }]);
    let snapshot: RunnerSnapshot | undefined;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [charge, receipt] }, {
      hooks: { onToolResult: (result) => void (result.tool_use_id === 'toolu_c' && (snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot)) },
    });
    await runner;
    expect(log).toEqual(['charge', 'receipt']);
    const again = await mockServer([{ content: [text('Done.')] }]);
    await resumeToolRunner(again.client(), snapshot!, { tools: [charge, receipt] });
    expect(log).toEqual(['charge', 'receipt', 'receipt']);
  });

  it('a message pushed after the loop body while the final answer still streams: the run ends (it says so), and its snapshot, resumed, sends the message', async () => {
    const server = await mockServer([{ content: [text('first answer '.repeat(20))], chunkSize: 4, eventDelayMs: 5 }, { content: [text('second answer')] }]);
    const { lines, logger } = captureLogger();
    const runner = toolRunner(server.client({ logger, logLevel: 'warn' }), { ...baseParams, stream: true });
    setTimeout(() => runner.pushMessages({ role: 'user', content: 'And Berlin?' }), 30);
    for await (const _stream of runner) {
      // The body returns at once; the reply streams on.
    }
    expect(runner.stoppedBy).toBe('model');
    expect(server.requests).toHaveLength(1);
    expect(runner.params.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(lines).toEqual([{ level: 'warn', message: expect.stringMatching(/^The run has ended \(stoppedBy 'model'\)/) }]);
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())));
    expect((await resumed).content[0]).toMatchObject({ text: 'second answer' });
    expect(wire(server.requests[1]!).messages.at(-1)).toEqual({ role: 'user', content: 'And Berlin?' });
  });

  it.each(['blank', 'refusal'] as const)('a message pushed while a final answer the run does not keep streams (%s): the run says it ends without it, and its snapshot, resumed, sends it', async (kind) => {
    const first = kind === 'refusal' ? { content: [text('I will not '.repeat(20))], stop_reason: 'refusal' as const, chunkSize: 4, eventDelayMs: 5 } : { content: [text(' '.repeat(80))], chunkSize: 1, eventDelayMs: 5 };
    const server = await mockServer([first, { content: [text('second answer')] }]);
    const { lines, logger } = captureLogger();
    const runner = toolRunner(server.client({ logger, logLevel: 'warn' }), { ...baseParams, stream: true });
    setTimeout(() => runner.pushMessages({ role: 'user', content: 'And Berlin?' }), 30);
    for await (const _stream of runner) {
      // The body returns at once; the reply streams on.
    }
    expect(lines).toContainEqual({ level: 'warn', message: expect.stringMatching(/^The run has ended \(stoppedBy 'model'\)/) });
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())));
    expect((await resumed).content[0]).toMatchObject({ text: 'second answer' });
    expect(wire(server.requests[1]!).messages.at(-1)).toEqual({ role: 'user', content: 'And Berlin?' });
  });

  it('a snapshot taken while onToolError runs (the tool has thrown) does not run the tool again on resume', async () => {
    const server = await mockServer([{ content: [toolUse('act', { n: 1 }, 'toolu_a')] }, { content: [text('done')] }]);
    let runs = 0;
    const act = () => tool({ name: 'act', inputSchema: z.object({ n: z.number() }), run: async () => (runs++, Promise.reject(new Error('disk full'))) });
    const controller = new AbortController();
    let snapshot: RunnerSnapshot | undefined;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [act()] }, {
      signal: controller.signal,
      hooks: {
        onToolError: () => {
          snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
          controller.abort();
        },
      },
    });
    await expect(runner.runUntilDone()).rejects.toThrow();
    const resumed = resumeToolRunner(server.client(), snapshot!, { tools: [act()] });
    expect((await resumed).content[0]).toMatchObject({ text: 'done' });
    expect(runs).toBe(1);
    expect(wire(server.requests[1]!).messages.at(-1).content[0]).toMatchObject({ tool_use_id: 'toolu_a', is_error: true, content: 'Error: disk full' });
  });

  it.each(['request.start', 'stream'])('a snapshot taken while a request is in flight (%s) does not count it: resumed at the last allowed iteration, the request goes again', async (where) => {
    const server = await mockServer([{ content: [text('first reply, streamed in several events')], chunkSize: 4 }, { content: [text('second')] }]);
    const controller = new AbortController();
    let snapshot: RunnerSnapshot | undefined;
    const take = () => {
      snapshot ??= JSON.parse(JSON.stringify(runner.toJSON()));
      controller.abort();
    };
    const runner = toolRunner(server.client(), { ...baseParams, max_iterations: 1, stream: true }, {
      signal: controller.signal,
      ...(where === 'request.start' && { onEvent: (event: { type: string }) => void (event.type === 'request.start' && take()) }),
    });
    await expect(
      (async () => {
        for await (const stream of runner) for await (const event of stream) if (where === 'stream' && event.type === 'content_block_delta') take();
      })(),
    ).rejects.toThrow();
    expect(snapshot!.iteration).toBe(0);
    const resumed = resumeToolRunner(server.client(), snapshot!);
    expect((await resumed.runUntilDone()).content[0]).toMatchObject({ type: 'text' });
    expect(resumed.stoppedBy).toBe('model');
    expect(resumed.iteration).toBe(1);
  });

  it("a message pushed while the reply's calls run (after the loop body), then a snapshot: the resumed run answers the calls (the one still running runs again, the finished one keeps its result), the message after their results, as the run itself sends it", async () => {
    for (const stream of [false, true]) {
      const { log, charge, receipt } = chargeAndReceipt();
      const reply = { content: [toolUse('charge', {}, 'toolu_c'), toolUse('receipt', {}, 'toolu_r')] };
      const server = await mockServer([reply, { content: [text('Done.')] }]);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [charge, receipt], stream });
      let snapshot: RunnerSnapshot | undefined;
      for await (const item of runner) {
        const message = stream ? await (item as never as { finalMessage(): Promise<{ stop_reason: string }> }).finalMessage() : (item as { stop_reason: string });
        if (message.stop_reason === 'tool_use') thanksThenSnapshot(runner, (taken) => (snapshot = taken));
      }
      const history = [['toolu_c', 'toolu_r'], ['charged', 'receipt sent'], 'Thanks!'];
      expect(sentAfterFirst(server.requests[1]!)).toEqual(history);
      const again = await mockServer([{ content: [text('Done.')] }]);
      await resumeToolRunner(again.client(), snapshot!, { tools: [charge, receipt] });
      // The receipt still ran when the snapshot was taken: it runs again (at least once); the charge that had ended is not run again.
      expect(log).toEqual(['charge', 'receipt', 'receipt']);
      // (Its first request continues the snapshot's thread, which this server does not hold: the request sent again has it whole.)
      expect(sentAfterFirst(again.requests.at(-1)!)).toEqual(history);
    }
  });

  it("over an SDK thread too: a message pushed while the reply's calls run, then a snapshot: the resumed run answers the calls (the one still running runs again, the finished one keeps its result), the message after their results", async () => {
    const { log, charge, receipt } = chargeAndReceipt();
    const server = await mockServer([{ content: [toolUse('charge', {}, 'toolu_c'), toolUse('receipt', {}, 'toolu_r')] }, { content: [text('Done.')] }]);
    const thread = server.client().beta.messages.thread({ ...baseParams, tools: [charge, receipt] } as never);
    const runner = toolRunner(thread, {});
    let snapshot: RunnerSnapshot | undefined;
    for await (const message of runner) {
      if ((message as { stop_reason: string }).stop_reason === 'tool_use') thanksThenSnapshot(runner, (taken) => (snapshot = taken));
    }
    const history = [['toolu_c', 'toolu_r'], ['charged', 'receipt sent'], 'Thanks!'];
    expect(sentAfterFirst(server.requests[1]!)).toEqual(history);
    const again = await mockServer([{ content: [text('Done.')] }]);
    await resumeToolRunner(again.client(), snapshot!, { tools: [charge, receipt] });
    // The receipt still ran when the snapshot was taken: it runs again (at least once); the charge that had ended is not run again.
    expect(log).toEqual(['charge', 'receipt', 'receipt']);
    expect(sentAfterFirst(again.requests.at(-1)!)).toEqual(history);
  });

  it('a message pushed once the run ended on its answer is not sent by that runner, which says so; resumed, the run sends it', async () => {
    const server = await mockServer([{ content: [text('first answer')] }, { content: [text('second answer')] }]);
    const { lines, logger } = captureLogger();
    const runner = toolRunner(server.client({ logger, logLevel: 'warn' }), baseParams);
    await runner;
    // Pushed before the run ends (or before a resumed finished run is awaited): no warning.
    expect(lines).toEqual([]);
    runner.pushMessages({ role: 'user', content: 'And Berlin?' });
    expect(lines).toEqual([{ level: 'warn', message: expect.stringMatching(/^The run has ended \(stoppedBy 'model'\): the messages and params set now are not sent, .*resumeToolRunner\(client, runner\.toJSON\(\), \{ tools \}\) sends them\.$/) }]);
    expect((await runner).content[0]).toMatchObject({ text: 'first answer' });
    expect(server.requests).toHaveLength(1);
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())));
    expect((await resumed).content[0]).toMatchObject({ text: 'second answer' });
    expect(wire(server.requests[1]!).messages.at(-1)).toEqual({ role: 'user', content: 'And Berlin?' });
  });

  it('a snapshot is JSON-safe and versioned', async () => {
    const server = await mockServer([{ content: [toolUse('balance', {})], usage: { input_tokens: 11, output_tokens: 3 } }, { content: [text('ok')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [...bankTools([]), webSearch], max_iterations: 1 });
    await runner;
    const snapshot = runner.toJSON();
    expect(JSON.parse(JSON.stringify(snapshot))).toEqual(snapshot);
    expect(snapshot).toMatchObject({
      version: 1,
      iteration: 1,
      usage: { input_tokens: 11, output_tokens: 3 },
      tools: [{ runnable: 'transfer' }, { runnable: 'balance' }, { definition: webSearch }],
      params: { model: baseParams.model, max_iterations: 1 },
    });
    expect(snapshot.params.messages).toHaveLength(3);
  });

  it('a run with a toolset and tool changes (addTools / removeTools) resumes with them', async () => {
    const server = await mockServer([
      { content: [toolUse('ask', {}, 'toolu_a')] },
      {
        content: [
          { type: 'tool_use', id: 'toolu_c', name: 'left_click', input: {}, toolset_name: 'computer' } as never,
          toolUse('lookup', { q: 'x' }, 'toolu_l'),
          toolUse('get_weather', { location: 'Paris' }, 'toolu_w'),
        ],
      },
      { content: [text('done')] },
    ]);
    const log: string[] = [];
    const tools = () => {
      const computer = {
        type: 'computer_toolset_20260801' as const,
        display_width_px: 800,
        display_height_px: 600,
        run: async (_context: unknown, call: { name: string }) => {
          log.push(`computer ${call.name}`);
          return 'clicked';
        },
      };
      const ask = tool({ name: 'ask', inputSchema: z.object({}), needsApproval: true, run: () => 'asked' });
      const weather = tool({ name: 'get_weather', inputSchema: z.object({ location: z.string() }), run: () => 'sunny' });
      const lookup = tool({ name: 'lookup', inputSchema: z.object({ q: z.string() }), run: ({ q }) => (log.push(`lookup ${q}`), `found ${q}`) });
      return { computer, ask, weather, lookup };
    };
    const first = tools();
    const runner = toolRunner(server.client(), { ...baseParams, tools: [first.computer, first.ask, first.weather] });
    await runner; // stops for approval
    runner.addTools(first.lookup);
    runner.removeTools('get_weather');
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
    expect(snapshot.tools).toEqual([{ toolset: 'computer' }, { runnable: 'ask' }, { runnable: 'get_weather' }]);
    expect(snapshot.toolChanges).toEqual({
      overrides: { lookup: { runnable: 'lookup' }, get_weather: null },
      pending: [{ type: 'addition', runnable: 'lookup' }, { type: 'removal', name: 'get_weather' }],
    });
    expect(() => resumeToolRunner(server.client(), snapshot, { tools: [first.ask, first.weather] })).toThrow(/the 'computer' toolset; supply it again/);
    const again = tools();
    expect(() => resumeToolRunner(server.client(), snapshot, { tools: [again.computer, again.ask, again.weather] })).toThrow(/uses tool 'lookup', which was not supplied/);
    const resumed = resumeToolRunner(server.client(), snapshot, { tools: [again.computer, again.ask, again.weather, again.lookup] });
    for (const call of resumed.pendingApprovals) resumed.approve(call.id);
    await resumed;
    expect(log).toEqual(['computer left_click', 'lookup x']);
    const results = wire(server.requests[2]!).messages.at(-1).content;
    expect(results.map((block: { content: unknown }) => block.content)).toEqual(['clicked', 'found x', "Error: Tool 'get_weather' not found"]);
    expect(wire(server.requests[1]!).messages.at(-1)).toMatchObject({ role: 'system', content: [{ type: 'tool_addition' }, { type: 'tool_removal' }] });
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });

  it('a run stopped for approval resumes in another process: approved there, finished, no call run twice', async () => {
    const server = await mockServer([
      {
        content: [toolUse('balance', {}, 'toolu_b'), toolUse('transfer', { amount: 500, to: 'bob' }, 'toolu_t')],
        usage: { input_tokens: 10, output_tokens: 5 },
      },
      { content: [text('Sent.')], usage: { input_tokens: 20, output_tokens: 2 } },
    ]);
    const log: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: bankTools(log) });
    await runner;
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_t']);
    expect(log).toEqual(['balance']);
    const saved = JSON.stringify(runner.toJSON());

    const child = await new Promise<string>((resolve, reject) => {
      const process_ = execFile(
        process.execPath,
        ['--import', 'tsx', 'test/fixtures/resume-child.ts'],
        { env: { ...process.env, MOCK_URL: server.url } },
        (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout)),
      );
      process_.stdin!.end(saved);
    });
    const result = JSON.parse(child);
    expect(result.waiting).toEqual(['toolu_t']);
    // Only the approved call ran in the child; the balance call's result came from the snapshot.
    expect(result.log).toEqual(['transfer 500 to bob']);
    expect(result.final).toEqual([{ type: 'text', text: 'Sent.', citations: null }]);
    expect(result.iteration).toBe(2);
    expect(result.usage).toMatchObject({ input_tokens: 30, output_tokens: 7 });
    expect(result.problems).toEqual([]);
    const results = wire(server.requests[1]!).messages[2].content;
    expect(results).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_b', content: '1000' },
      { type: 'tool_result', tool_use_id: 'toolu_t', content: 'sent 500 to bob' },
    ]);
  });

  it("a call waiting for approval goes on, after a JSON snapshot, with its input validated again: a transform's value (a Date) as without the pause", async () => {
    const seen: string[] = [];
    const schedule = tool({
      name: 'schedule',
      inputSchema: z.object({ at: z.string().transform((value) => new Date(value)) }),
      needsApproval: true,
      run: ({ at }) => (seen.push(at instanceof Date ? `Date ${at.toISOString()}` : `not a Date: ${typeof at}`), 'scheduled'),
    });
    const server = await mockServer([{ content: [toolUse('schedule', { at: '2026-12-24T10:00:00.000Z' }, 'toolu_s')] }, { content: [text('ok')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [schedule] });
    await runner;
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
    // A damaged input in the snapshot does not reach the tool either: the model's, validated, does.
    snapshot.calls.held[0]!.input = { at: 42 };
    const resumed = resumeToolRunner(server.client(), snapshot, { tools: [schedule] });
    resumed.approve('toolu_s');
    await resumed;
    expect(seen).toEqual(['Date 2026-12-24T10:00:00.000Z']);
  });

  it("a resumed run numbers its requests after the snapshot's (requestId), a sub-agent's too: the inspector never takes two for one", async () => {
    const { researcher } = researchTools([]);
    const server = await mockServer(researchScript());
    const runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] });
    await runner;
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
    expect(snapshot.requests).toBe(1);
    const started: string[] = [];
    const resumed = resumeToolRunner(server.client(), snapshot, {
      tools: [researcher],
      options: { onEvent: (event) => void (event.type === 'request.start' && started.push(`${event.path?.join('/') ?? 'parent'} ${event.requestId}`)) },
    });
    resumed.approve('toolu_p');
    await resumed;
    expect(started).toEqual(['researcher 2', 'parent 2']);
  });

  it('resumes in the same process, keeping decisions taken before the snapshot', async () => {
    const log: string[] = [];
    const { server, runner } = await twoTransfersWaiting(log);
    runner.deny('toolu_1', 'too much');
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot, {
      tools: bankTools(log),
    });
    expect(resumed.pendingApprovals.map((call) => call.id)).toEqual(['toolu_2']);
    resumed.approve('toolu_2');
    await resumed;
    expect(log).toEqual(['transfer 700 to b']);
    expect(wire(server.requests[1]!).messages[2].content[0]).toMatchObject({ is_error: true, content: expect.stringContaining('too much') });
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });

  it('a run stopped for approval, resumed with options.approve: the approver is asked about the waiting calls, a sub-agent\'s too', async () => {
    const log: string[] = [];
    const { server, runner } = await twoTransfersWaiting(log);
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
    const asked: string[] = [];
    const approve = (call: ApprovalRequest) => (asked.push(call.toolUse.id), (call.input as { amount: number }).amount > 600 ? { decision: 'deny' as const, reason: 'too much' } : { decision: 'allow' as const });
    const resumed = resumeToolRunner(server.client(), snapshot, { tools: bankTools(log), options: { approve } });
    await resumed;
    expect(asked).toEqual(['toolu_1', 'toolu_2']);
    expect(resumed.stoppedBy).toBe('model');
    expect(log).toEqual(['transfer 500 to a']);
    expect(wire(server.requests[1]!).messages.at(-1).content[1]).toMatchObject({ tool_use_id: 'toolu_2', is_error: true, content: expect.stringContaining('too much') });

    // A sub-agent's waiting call: the sub-agent, resumed, asks the parent's approver (with the path).
    const research: string[] = [];
    const { researcher } = researchTools(research);
    const nested = await mockServer(researchScript());
    const parent = toolRunner(nested.client(), { ...baseParams, tools: [researcher] });
    await parent;
    const paths: Array<string[] | undefined> = [];
    const again = resumeToolRunner(nested.client(), JSON.parse(JSON.stringify(parent.toJSON())), {
      tools: [researcher],
      options: { approve: (call) => (paths.push(call.path), { decision: 'allow' }) },
    });
    await again;
    expect(paths).toEqual([['researcher']]);
    expect(again.stoppedBy).toBe('model');
    expect(research).toEqual(['publish Otters']);
    expect(historyProblems(again.params.messages)).toEqual([]);
  });

  it('a waiting call resumed with an approver slower than the tool\'s timeout: answered as timed out waiting for approval, not run', async () => {
    const server = await mockServer([{ content: [toolUse('transfer', { amount: 500, to: 'a' }, 'toolu_1')] }, { content: [text('ok')] }]);
    const log: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: bankTools(log) });
    await runner;
    const approve = () => new Promise<never>(() => {});
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { tools: bankTools(log), options: { approve, toolTimeoutMs: 50 } });
    await resumed;
    expect(log).toEqual([]);
    expect(wire(server.requests[1]!).messages.at(-1).content[0]).toMatchObject({ is_error: true, content: expect.stringContaining('timed out after 50 ms waiting for approval') });
  });

  it('a snapshot taken in the loop body holds the reply just yielded: the resumed run answers its calls, not the model again', async () => {
    // Streamed or not, with an onMessage hook or not (the reply is counted once the hook is done with it;
    // a stream's finalMessage() resolves before: the snapshot counts it in).
    for (const [stream, hooks] of [[false, undefined], [true, undefined], [false, { onMessage: () => {} }], [true, { onMessage: () => {} }]] as const) {
      const ran: string[] = [];
      const search = tool({ name: 'search', inputSchema: z.object({ q: z.string() }), run: ({ q }) => (ran.push(q), `found ${q}`) });
      const server = await mockServer([{ content: [toolUse('search', { q: 'otters' }, 'toolu_1')], usage: { input_tokens: 10, output_tokens: 5 } }, { content: [text('Otters hold hands.')] }]);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [search], stream }, hooks ? { hooks } : {});
      // A checkpoint after each reply; the process "dies" right after the first.
      const snapshot = await snapshotAtFirstReply(runner, stream);
      expect(snapshot.params.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1' }] });
      expect(snapshot.usage).toMatchObject({ input_tokens: 10, output_tokens: 5 });
      expect(snapshot.lastMessage).toMatchObject({ stop_reason: 'tool_use' });
      const resumed = resumeToolRunner(server.client(), snapshot, { tools: [search] });
      expect(await resumed).toMatchObject({ content: [{ type: 'text', text: 'Otters hold hands.' }] });
      expect(server.requests).toHaveLength(2);
      expect(wire(server.requests[1]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'found otters' }]);
      expect(ran).toEqual(['otters']);
      expect(resumed.iteration).toBe(2);
      expect(historyProblems(resumed.params.messages)).toEqual([]);
    }
  });

  it("a snapshot taken in the onMessage hook (the reply not yet in the history) counts the reply's usage: the resumed run asks again, and its budget counts both replies", async () => {
    for (const stream of [false, true]) {
      const ran: string[] = [];
      const search = tool({ name: 'search', inputSchema: z.object({ q: z.string() }), run: ({ q }) => (ran.push(q), `found ${q}`) });
      const reply = (q: string, id: string) => ({ content: [toolUse('search', { q }, id)], usage: { input_tokens: 90, output_tokens: 10 } });
      const server = await mockServer([reply('a', 'toolu_a'), reply('b', 'toolu_b'), reply('b', 'toolu_b2'), reply('c', 'toolu_c'), { content: [text('Done.')] }]);
      let seen = 0;
      let saved = '';
      const runner = toolRunner(server.client(), { ...baseParams, tools: [search], stream }, { hooks: { onMessage: () => void (++seen === 2 && (saved = JSON.stringify(runner.toJSON()))) } });
      for await (const item of runner) {
        if (stream) await (item as { finalMessage(): Promise<unknown> }).finalMessage();
        if (seen === 2) break;
      }
      const snapshot = JSON.parse(saved) as RunnerSnapshot;
      expect(snapshot.iteration).toBe(2);
      // Two replies paid for; the second is in the history only when the loop body had it (a stream): else the resumed run asks again.
      expect(snapshot.usage).toMatchObject({ input_tokens: 180, output_tokens: 20 });
      expect(toolUsesIn(snapshot)).toEqual(stream ? ['toolu_a', 'toolu_b'] : ['toolu_a']);
      const resumed = resumeToolRunner(server.client(), snapshot, { tools: [search], options: { budget: { maxTokens: 250 } } });
      await resumed;
      // 200 paid at the snapshot, 100 more for the next reply: past 250, the run stops before another request.
      expect(resumed.stoppedBy).toBe('budget');
      expect(resumed.usage).toMatchObject({ input_tokens: 270, output_tokens: 30 });
      expect(server.requests).toHaveLength(3);
      // The resumed run answers the held call (a stream's), then the reply's call before stopping.
      expect(ran).toEqual(stream ? ['a', 'b', 'b'] : ['a', 'b']);
    }
  });

  it("a snapshot taken in a request.end listener counts the reply that ended, as one taken in onMessage does (the iteration counts it too)", async () => {
    for (const stream of [false, true]) {
      const search = tool({ name: 'search', inputSchema: z.object({ q: z.string() }), run: ({ q }) => `found ${q}` });
      const server = await mockServer([
        { content: [toolUse('search', { q: 'a' }, 'toolu_a')], usage: { input_tokens: 90, output_tokens: 10 } },
        { content: [text('Done.')], usage: { input_tokens: 90, output_tokens: 10 } },
      ]);
      const atEnd: RunnerSnapshot[] = [];
      const atMessage: RunnerSnapshot[] = [];
      const runner = toolRunner(server.client(), { ...baseParams, tools: [search], stream }, {
        onEvent: (event) => void (event.type === 'request.end' && atEnd.push(JSON.parse(JSON.stringify(runner.toJSON())))),
        hooks: { onMessage: () => void atMessage.push(JSON.parse(JSON.stringify(runner.toJSON()))) },
      });
      for await (const item of runner) if (stream) await (item as { finalMessage(): Promise<unknown> }).finalMessage();
      expect(atEnd.map((snapshot) => [snapshot.iteration, snapshot.usage.input_tokens, snapshot.usage.output_tokens]), `stream ${stream}`).toEqual(
        atMessage.map((snapshot) => [snapshot.iteration, snapshot.usage.input_tokens, snapshot.usage.output_tokens]),
      );
      expect(atEnd[0]!.usage).toMatchObject({ input_tokens: 90, output_tokens: 10 });
    }
  });

  it("a snapshot taken while a call waits for approval and another of the reply still runs lists the waiting call: the resumed runner has it in pendingApprovals before it is iterated (the run's own call, or a sub-agent's)", async () => {
    // ('sub-agent, its other call running': the other call that still runs is the sub-agent's own.)
    for (const level of ['own', 'sub-agent', 'sub-agent, its other call running'] as const) {
      const log: string[] = [];
      const send = tool({ name: 'send', inputSchema: z.object({}), needsApproval: true, run: () => (log.push('send'), 'sent') });
      const slow = tool({ name: 'slow', inputSchema: z.object({}), run: async () => (await sleep(60), log.push('slow'), 'slow done') });
      const inside = level === 'sub-agent, its other call running';
      const helper = agentTool({ name: 'helper', description: 'Helps', params: ({ task }) => ({ ...baseParams, system: 'helper', messages: [{ role: 'user', content: task }], tools: inside ? [send, slow] : [send] }) });
      const own = level === 'own';
      const server = await mockServer(
        byAgent({
          parent: [{ content: [own ? toolUse('send', {}, 'toolu_send') : toolUse('helper', { task: 'go' }, 'toolu_helper'), ...(inside ? [] : [toolUse('slow', {}, 'toolu_slow')])] }, { content: [text('Done.')] }],
          helper: [{ content: [toolUse('send', {}, 'toolu_send'), ...(inside ? [toolUse('slow', {}, 'toolu_slow')] : [])] }, { content: [text('Helped.')] }],
        }),
      );
      let saved = '';
      const tools = own ? [send, slow] : [helper, slow];
      const runner = toolRunner(server.client(), { ...baseParams, tools }, { onEvent: (event) => void (event.type === 'tool.end' && event.pending && (saved ||= JSON.stringify(runner.toJSON()))) });
      await runner;
      expect(runner.stoppedBy).toBe('approval');
      const resumed = resumeToolRunner(server.client(), JSON.parse(saved) as RunnerSnapshot, { tools });
      expect(resumed.pendingApprovals.map((call) => call.id), level).toEqual(['toolu_send']);
      resumed.approve('toolu_send');
      expect(await resumed).toMatchObject({ content: [{ type: 'text', text: 'Done.' }] });
      expect(log.filter((entry) => entry === 'send'), level).toEqual(['send']);
      expect(historyProblems(resumed.params.messages)).toEqual([]);
    }
  });

  it('a snapshot taken while options.approve is asked (a person decides) lists the call asked as waiting and holds the answers given: resumed, only that call waits, and no call runs twice', async () => {
    for (const resumeWith of ['no approver', 'an approver'] as const) {
      const log: string[] = [];
      const transfer = tool({ name: 'transfer', inputSchema: z.object({ amount: z.number() }), needsApproval: true, run: ({ amount }) => (log.push(`sent ${amount}`), 'sent') });
      const server = await mockServer([{ content: [toolUse('transfer', { amount: 1 }, 'toolu_1'), toolUse('transfer', { amount: 2 }, 'toolu_2')] }, { content: [text('Done.')] }]);
      const controller = new AbortController();
      let saved = '';
      const runner = toolRunner(server.client(), { ...baseParams, tools: [transfer] }, {
        signal: controller.signal,
        // The first call is allowed at once; asked about the second, the process shuts down (snapshot, abort).
        approve: (call) => {
          if (call.toolUse.id === 'toolu_1') return { decision: 'allow' };
          saved = JSON.stringify(runner.toJSON());
          controller.abort();
          return new Promise(() => {});
        },
      });
      await expect(runner.runUntilDone()).rejects.toThrow();
      const asked: string[] = [];
      const resumed = resumeToolRunner(server.client(), JSON.parse(saved) as RunnerSnapshot, {
        tools: [transfer],
        options: resumeWith === 'an approver' ? { approve: (call) => (asked.push(call.toolUse.id), { decision: 'allow' }) } : {},
      });
      expect(resumed.pendingApprovals.map((call) => call.id), resumeWith).toEqual(['toolu_2']);
      if (resumeWith === 'no approver') resumed.approve('toolu_2');
      expect(await resumed).toMatchObject({ content: [{ type: 'text', text: 'Done.' }] });
      expect(asked, resumeWith).toEqual(resumeWith === 'an approver' ? ['toolu_2'] : []);
      expect(log.sort(), resumeWith).toEqual(['sent 1', 'sent 2']);
      expect(wire(server.requests.at(-1)!).messages.at(-1).content.map((block: { content: unknown }) => block.content)).toEqual(['sent', 'sent']);
    }
  });

  it("a snapshot taken while a sub-agent runs lists the waiting calls in the model's order, as the stopped run does (the run's own first, then the sub-agent's)", async () => {
    let saved = '';
    const send = tool({ name: 'send', inputSchema: z.object({}), needsApproval: true, run: () => 'sent' });
    // The sub-agent's slow call takes the snapshot while it runs (the run's own call and the sub-agent's both wait then).
    const slow = tool({ name: 'slow', inputSchema: z.object({}), run: async () => (await sleep(80), (saved ||= JSON.stringify(runner.toJSON())), 'slow done') });
    const helper = agentTool({ name: 'helper', description: 'Helps', params: ({ task }) => ({ ...baseParams, system: 'helper', messages: [{ role: 'user', content: task }], tools: [send, slow] }) });
    const server = await mockServer(
      byAgent({
        parent: [{ content: [toolUse('send', {}, 'toolu_own'), toolUse('helper', { task: 'go' }, 'toolu_helper')] }, { content: [text('Done.')] }],
        helper: [{ content: [toolUse('send', {}, 'toolu_inner'), toolUse('slow', {}, 'toolu_slow')] }, { content: [text('Helped.')] }],
      }),
    );
    const runner: ToolRunner = toolRunner(server.client(), { ...baseParams, tools: [send, helper] });
    await runner;
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_own', 'toolu_inner']);
    const resumed = resumeToolRunner(server.client(), JSON.parse(saved) as RunnerSnapshot, { tools: [send, helper] });
    expect(resumed.pendingApprovals.map((call) => call.id)).toEqual(['toolu_own', 'toolu_inner']);
  });

  it('a snapshot taken in the loop body on a paused turn (pause_turn) holds it: the resumed run sends it back as the run would (the thread continued), not the turn started over', async () => {
    for (const stream of [false, true]) {
      for (const thread of [undefined, false] as const) {
        const server = await mockServer([{ content: [serverToolUse('web_search', { query: 'otters' }, 'srvtoolu_1')], stop_reason: 'pause_turn' }, { content: [text('Otters hold hands.')] }]);
        const runner = toolRunner(server.client(), { ...baseParams, stream, ...(thread === false && { thread }) });
        const snapshot = await snapshotAtFirstReply(runner, stream);
        expect(snapshot.params.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1' }] });
        const resumed = resumeToolRunner(server.client(), snapshot);
        expect(await resumed).toMatchObject({ content: [{ type: 'text', text: 'Otters hold hands.' }] });
        const sent = wire(server.requests[1]!);
        // The paused turn goes back: alone, continuing the thread, or as the last message of the whole history.
        if (thread === false) expect(sent.body.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'server_tool_use', id: 'srvtoolu_1' }] });
        else expect(sent.body).toMatchObject({ messages: [], thread: { type: 'continue' } });
        expect(historyProblems(resumed.params.messages)).toEqual([]);
      }
    }
  });

  it("a snapshot taken after the approver lent to a sub-agent failed lists nothing pending (the call waits for a retry): resumed with an approver that works, it goes on", async () => {
    const ran: string[] = [];
    const send = tool({ name: 'send', inputSchema: z.object({}), needsApproval: true, run: () => (ran.push('send'), 'sent') });
    const helper = agentTool({ name: 'helper', description: 'Helps', params: ({ task }) => ({ ...baseParams, system: 'helper', messages: [{ role: 'user', content: task }], tools: [send] }) });
    const server = await mockServer(byAgent({ parent: [{ content: [toolUse('helper', { task: 'go' }, 'toolu_helper')] }, { content: [text('Done.')] }], helper: [{ content: [toolUse('send', {}, 'toolu_send')] }, { content: [text('Helped.')] }] }));
    const runner = toolRunner(server.client(), { ...baseParams, tools: [helper] }, { approve: () => { throw new Error('approver down'); } });
    await expect(runner.runUntilDone()).rejects.toThrow(/approver down/);
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
    expect(snapshot.calls.pending).toEqual([]);
    const resumed = resumeToolRunner(server.client(), snapshot, { tools: [helper], options: { approve: () => ({ decision: 'allow' as const }) } });
    expect(resumed.pendingApprovals).toEqual([]);
    expect(await resumed).toMatchObject({ content: [{ type: 'text', text: 'Done.' }] });
    expect(ran).toEqual(['send']);
  });

  it('the loop body pushed the reply back twice, then left with break: the history, and a snapshot taken in the body or after, hold it once', async () => {
    for (const when of ['in the body', 'after the break']) {
      const ran: string[] = [];
      const search = tool({ name: 'search', inputSchema: z.object({ q: z.string() }), run: ({ q }) => (ran.push(q), `found ${q}`) });
      const server = await mockServer([{ content: [toolUse('search', { q: 'otters' }, 'toolu_1')] }, { content: [text('Otters hold hands.')] }]);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [search] });
      let saved = '';
      for await (const message of runner) {
        runner.pushMessages(message, message);
        // The body has the answer: a snapshot taken now holds it after the reply (once).
        if (when === 'in the body') await runner.generateToolResponse();
        saved = JSON.stringify(runner.toJSON());
        break;
      }
      if (when === 'after the break') {
        expect(runner.params.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
        saved = JSON.stringify(runner.toJSON());
      }
      const snapshot = JSON.parse(saved) as RunnerSnapshot;
      // The reply once, as its role and content; its call waits to be answered (the resumed run answers it, without running it again).
      expect(snapshot.params.messages.map((message) => [message.role, Object.keys(message).sort().join()])).toEqual([['user', 'content,role'], ['assistant', 'content,role']]);
      expect(historyProblems(snapshot.params.messages)).toEqual([]);
      const resumed = resumeToolRunner(server.client(), snapshot, { tools: [search] });
      expect(await resumed).toMatchObject({ content: [{ type: 'text', text: 'Otters hold hands.' }] });
      expect(ran).toEqual(['otters']);
      expect(historyProblems(wire(server.requests[1]!).messages)).toEqual([]);
    }
  });

  it('a damaged snapshot fails before any request, with a TypeError naming the field', async () => {
    const server = await mockServer([{ content: [toolUse('transfer', { amount: 500, to: 'a' }, 'toolu_1')] }, { content: [text('never')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: bankTools([]), max_iterations: 3 }, { budget: { maxToolCalls: 5 } });
    await runner;
    const saved = JSON.stringify(runner.toJSON());
    // Each damage changes the snapshot, or returns another value to resume instead.
    const cases: Array<[(snapshot: any) => unknown, RegExp]> = [
      [() => [], /the snapshot must be an object/],
      [() => ({ version: 1 }), /snapshot\.params must be an object, got nothing \(it is missing\)/],
      [(s) => void delete s.params.messages, /snapshot\.params\.messages must be an array/],
      [(s) => void (s.tools = [{ foo: 1 }]), /snapshot\.tools\[0\] must be \{ runnable \}, \{ definition \}, \{ source: true \} or \{ toolset \}/],
      [(s) => void delete s.usage, /snapshot\.usage must be an object, got nothing/],
      [(s) => void (s.usage.input_tokens = '10'), /snapshot\.usage\.input_tokens must be a whole number, 0 or more, got "10"/],
      [(s) => void delete s.iteration, /snapshot\.iteration must be a whole number/],
      [(s) => void delete s.notRun, /snapshot\.notRun must be an object/],
      [(s) => void delete s.calls.held, /snapshot\.calls\.held must be an array/],
      [(s) => void (s.calls.pending = ['toolu_zzz']), /snapshot\.calls\.pending\[0\] must be the id of a call in calls\.held, got "toolu_zzz"/],
      [(s) => void (s.stoppedBy = 'bogus'), /snapshot\.stoppedBy must be one of 'model', .*got "bogus"/],
      [(s) => void (s.control.budget = 5), /snapshot\.control\.budget must be an object, got 5/],
      [(s) => void (s.version = '1'), /snapshot version "1" is not supported/],
      [(s) => void (s.calls.settled = { toolu_1: { type: 'tool_result', tool_use_id: 'toolu_2', content: 'x' } }), /snapshot\.calls\.settled\["toolu_1"\]\.tool_use_id must be the id it is kept under \("toolu_1"\), got "toolu_2"/],
      [(s) => void (s.toolChanges = { overrides: {}, pending: [{ type: 'addition' }] }), /snapshot\.toolChanges\.pending\[0\]\.definition must be an object/],
      [(s) => void (s.toolChanges = { overrides: {}, pending: [{ type: 'removal' }] }), /snapshot\.toolChanges\.pending\[0\]\.name must be/],
      [(s) => void (s.params.model = 5), /snapshot\.params\.model must be a string, got 5/],
      [(s) => void (s.params.max_tokens = '1024'), /snapshot\.params\.max_tokens must be a whole number, 0 or more, got "1024"/],
      [(s) => void s.tools.push({ definition: { nope: 1 } }), /snapshot\.tools\[\d+\]\.definition must be a tool definition \(with a name or a type\), got an object/],
      [(s) => void (s.calls.settled = { toolu_1: { type: 'tool_result', tool_use_id: 'toolu_1', content: 5 } }), /snapshot\.calls\.settled\["toolu_1"\]\.content must be a string or content blocks, got 5/],
      // A call of the history the runner answers: without its tool's name it failed deep inside (a TypeError of a "did you mean").
      [(s) => void delete s.params.messages[1].content[0].name, /snapshot\.params\.messages\[1\]\.content\[0\]\.name must be a string, got nothing/],
      [(s) => void (s.params.messages[1].content[0].id = 7), /snapshot\.params\.messages\[1\]\.content\[0\]\.id must be a string, got 7/],
      [(s) => void delete s.calls.held[0].toolUse.id, /snapshot\.calls\.held\[0\]\.toolUse\.id must be the call's id \("toolu_1"\), got nothing/],
      // Sent as they are: a result of another type or an is_error of no boolean (the API refuses them); a held call without its tool or input.
      [(s) => void (s.calls.settled = { toolu_1: { type: 'text', tool_use_id: 'toolu_1', content: 'x' } }), /snapshot\.calls\.settled\["toolu_1"\]\.type must be 'tool_result', got "text"/],
      [(s) => void (s.calls.settled = { toolu_1: { type: 'tool_result', tool_use_id: 'toolu_1', content: 'x', is_error: 'yes' } }), /snapshot\.calls\.settled\["toolu_1"\]\.is_error must be a boolean \(or none\), got "yes"/],
      [(s) => void delete s.calls.held[0].toolUse.name, /snapshot\.calls\.held\[0\]\.toolUse\.name must be a string, got nothing/],
      [(s) => void delete s.calls.held[0].toolUse.input, /snapshot\.calls\.held\[0\]\.toolUse\.input must be an object, got nothing/],
    ];
    for (const [damage, error] of cases) {
      const snapshot = JSON.parse(saved);
      const given = (damage(snapshot) ?? snapshot) as RunnerSnapshot;
      expect(() => resumeToolRunner(server.client(), given, { tools: bankTools([]), options: { budget: { maxToolCalls: 5 } } })).toThrow(error);
      expect(() => resumeToolRunner(server.client(), given, { tools: bankTools([]) })).toThrow(TypeError);
    }
    expect(server.requests).toHaveLength(1);
    // A sub-agent's state inside the snapshot is checked too, by its path.
    const { researcher } = researchTools([]);
    const nested = await mockServer(researchScript());
    const parent = toolRunner(nested.client(), { ...baseParams, tools: [researcher] });
    await parent;
    const snapshot = JSON.parse(JSON.stringify(parent.toJSON()));
    delete snapshot.calls.held[0].agent.snapshot.iteration;
    expect(() => resumeToolRunner(nested.client(), snapshot, { tools: [researcher] })).toThrow(/snapshot\.calls\.held\[0\]\.agent\.snapshot\.iteration must be a whole number/);
    // Its version missing: that part is damaged (not "pass what runner.toJSON() gave", which the caller did).
    const unversioned = JSON.parse(JSON.stringify(parent.toJSON()));
    delete unversioned.calls.held[0].agent.snapshot.version;
    expect(() => resumeToolRunner(nested.client(), unversioned, { tools: [researcher] })).toThrow(/^resumeToolRunner: snapshot\.calls\.held\[0\]\.agent\.snapshot\.version must be \d+ \(a sub-agent's state, as runner\.toJSON\(\) wrote it\), got nothing/);
    // What the parent had counted of a sub-agent that ran: not a usage, it failed the call inside, and the parent went on.
    const counted = JSON.parse(JSON.stringify(parent.toJSON()));
    counted.calls.held[0].agent.counted = { input_tokens: 'x', output_tokens: 1 };
    expect(() => resumeToolRunner(nested.client(), counted, { tools: [researcher] })).toThrow(/snapshot\.calls\.held\[0\]\.agent\.counted\.input_tokens must be a whole number/);
  });

  it('a snapshot taken after a history set without a call that waited for approval resumes (the call is forgotten at the next answer)', async () => {
    const danger = tool({ name: 'danger', inputSchema: z.object({}), needsApproval: true, run: async () => 'done' });
    const server = await mockServer([{ content: [toolUse('danger', {}, 'toolu_d')] }, { content: [text('ok')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [danger] });
    await runner;
    expect(runner.stoppedBy).toBe('approval');
    runner.setMessagesParams((params) => ({ ...params, messages: [{ role: 'user', content: 'Start over.' }] }));
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
    const resumed = resumeToolRunner(server.client(), snapshot, { tools: [danger] });
    expect(textOf(await resumed)).toBe('ok');
    expect(wire(server.requests[1]!).messages).toEqual([{ role: 'user', content: 'Start over.' }]);
  });

  it('tools supplied twice under one name, or that the snapshot does not use, fail before any request (they were dropped in silence)', async () => {
    const server = await mockServer([{ content: [text('first')] }, { content: [text('never')] }]);
    const make = (name: string) => tool({ name, inputSchema: z.object({}), run: () => `${name} ran` });
    const runner = toolRunner(server.client(), { ...baseParams, tools: [make('a')] });
    await runner;
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
    expect(() => resumeToolRunner(server.client(), snapshot, { tools: [make('a'), make('a')] })).toThrow("resumeToolRunner: two tools are named 'a'; tool names must be unique");
    expect(() => resumeToolRunner(server.client(), snapshot, { tools: [make('a'), make('b')] })).toThrow(
      /tool 'b' was supplied, but the snapshot does not use it \(it uses: a\): .*call runner\.addTools\(\)/,
    );
    const computer = { type: 'computer_toolset_20260801' as const, display_width_px: 800, display_height_px: 600, run: async () => 'clicked' };
    expect(() => resumeToolRunner(server.client(), snapshot, { tools: [make('a'), computer] })).toThrow(/the 'computer' toolset was supplied, but the snapshot does not use it/);
    expect(server.requests).toHaveLength(1);
    // The way to give a resumed run another tool.
    const resumed = resumeToolRunner(server.client(), snapshot, { tools: [make('a')] });
    resumed.addTools(make('b'));
    expect(resumed.toJSON().toolChanges?.overrides).toEqual({ b: { runnable: 'b' } });
  });

  it('a snapshot taken in the loop body after generateToolResponse() holds the answer as the body changed it, as the run would send it', async () => {
    const change = {
      replace: (response: any) => void (response.content[0] = { ...response.content[0], content: 'MODIFIED', cache_control: { type: 'ephemeral' } }),
      append: (response: any) => void response.content.push({ type: 'text', text: 'Note: checked by hand.' }),
    };
    for (const [how, edit] of Object.entries(change)) {
      const ran: string[] = [];
      const search = tool({ name: 'search', inputSchema: z.object({ q: z.string() }), run: ({ q }) => (ran.push(q), `found ${q}`) });
      const sent = async (pause: boolean) => {
        const server = await mockServer([{ content: [toolUse('search', { q: 'otters' }, 'toolu_1')] }, { content: [text('Otters hold hands.')] }]);
        const runner = toolRunner(server.client(), { ...baseParams, tools: [search] });
        for await (const message of runner) {
          if (message.stop_reason !== 'tool_use') continue;
          edit(await runner.generateToolResponse());
          if (!pause) continue;
          const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { tools: [search] });
          expect(await resumed).toMatchObject({ content: [{ text: 'Otters hold hands.' }] });
          expect(historyProblems(resumed.params.messages)).toEqual([]);
          break;
        }
        expect(server.requests).toHaveLength(2);
        return wire(server.requests[1]!).messages.at(-1);
      };
      const unpaused = await sent(false);
      expect(await sent(true), how).toEqual(unpaused);
      expect(JSON.stringify(unpaused)).toMatch(how === 'replace' ? /MODIFIED/ : /checked by hand/);
      expect(ran).toEqual(['otters', 'otters']);
    }
  });

  it('fails before any request for an unknown version or a tool that is not supplied', async () => {
    const server = await mockServer([{ content: [text('never')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: bankTools([]) });
    const snapshot = runner.toJSON();
    expect(() => resumeToolRunner(server.client(), { ...snapshot, version: 2 as never }, { tools: bankTools([]) })).toThrow(
      /snapshot version 2 is not supported/,
    );
    const other = tool({ name: 'other', inputSchema: z.object({}), run: () => '' });
    expect(() => resumeToolRunner(server.client(), snapshot, { tools: [other] })).toThrow(
      /uses tool 'transfer', which was not supplied \(supplied: other\)/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it("a snapshot taken while an agent call options.approve allowed runs its sub-agent holds that call once, with its sub-agent's state: resumed, the sub-agent goes on, its finished calls not run again", async () => {
    let snapshot: RunnerSnapshot | undefined;
    let runner: ToolRunner<false> | undefined;
    const log: string[] = [];
    const search = tool({ name: 'search', inputSchema: z.object({ query: z.string() }), run: ({ query }) => (log.push(`search ${query}`), `found ${query}`) });
    const note = tool({ name: 'note', inputSchema: z.object({ n: z.string() }), run: ({ n }) => (log.push(`note ${n}`), (snapshot ??= JSON.parse(JSON.stringify(runner!.toJSON())) as RunnerSnapshot), 'noted') });
    const researcher = agentTool({ name: 'researcher', description: 'Researches', needsApproval: true, params: ({ task }) => ({ ...baseParams, system: 'researcher', messages: [{ role: 'user', content: task }], tools: [search, note] }) });
    const script = (suffix: string) => ({
      researcher: [{ content: [toolUse('search', { query: 'otters' }, `toolu_s${suffix}`)] }, { content: [toolUse('note', { n: 'x' }, `toolu_n${suffix}`)] }, { content: [text('Found.')] }],
    });
    const server = await mockServer(byAgent({ parent: [{ content: [toolUse('researcher', { task: 'otters' }, 'toolu_r')] }, { content: [text('Done.')] }], ...script('') }));
    const approve = () => ({ decision: 'allow' as const });
    runner = toolRunner(server.client(), { ...baseParams, tools: [researcher] }, { approve });
    await runner;
    expect(snapshot!.calls!.held.map((call) => [call.id, call.agent !== undefined])).toEqual([['toolu_r', true]]);
    log.length = 0;
    const again = await mockServer(byAgent({ parent: [{ content: [text('Done.')] }], researcher: [{ content: [text('Found.')] }] }));
    await resumeToolRunner(again.client(), snapshot!, { tools: [researcher], options: { approve } });
    // The sub-agent goes on from its state (its call of note ran when the snapshot was taken: it runs again, as a running call does); search is not run again.
    expect(log).toEqual(['note x']);
  });
});

/** The ids of the calls in a snapshot's history. */
function toolUsesIn(snapshot: RunnerSnapshot): string[] {
  return snapshot.params.messages.flatMap((message) => (Array.isArray(message.content) ? message.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : [])) : []));
}

/** The snapshot taken in the loop body at the first reply (a stream read to its end first), as JSON would carry it; the body then leaves. */
async function snapshotAtFirstReply(runner: AsyncIterable<unknown> & { toJSON(): unknown }, stream: boolean): Promise<RunnerSnapshot> {
  let saved = '';
  for await (const item of runner) {
    if (stream) await (item as { finalMessage(): Promise<unknown> }).finalMessage();
    saved = JSON.stringify(runner.toJSON());
    break;
  }
  return JSON.parse(saved) as RunnerSnapshot;
}
