/**
 * Message threads: on an `Anthropic` client a run goes over a thread (the server holds the
 * conversation; each request sends only what it lacks), and every thread error the API defines is
 * handled without losing the run. The testing kit's server holds threads as the API does.
 */
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { type RunnerSnapshot, resumeToolRunner, toolRunner } from 'tool-runner';
import { type RecordedRequest, historyProblems, text, toolUse } from 'tool-runner/testing';
import { z } from 'zod';
import { tool } from 'tool-runner';
import { baseParams, captureLogger, mockServer, wire } from './helpers.js';
import { bodiesOf, model } from './side-by-side.js';

const lookupOptions = {
  name: 'lookup',
  description: 'Looks a row up',
  inputSchema: z.object({ n: z.number() }),
  run: ({ n }: { n: number }) => `row ${n}`,
};
const lookup = tool(lookupOptions);

const threadOf = (request: RecordedRequest) => wire(request).body.thread as { type: string; previous_message_id?: string } | undefined;
const kinds = (requests: RecordedRequest[]) => requests.map((request) => threadOf(request)?.type ?? 'none');

/** Three turns: two lookups, then an answer. */
const threeTurns = () => [
  { content: [toolUse('lookup', { n: 1 }, 'toolu_1')] },
  { content: [toolUse('lookup', { n: 2 }, 'toolu_2')] },
  { content: [text('Rows 1 and 2.')] },
];

describe('a run over a message thread', () => {
  const cases = ['a fallback', "a compaction's summary", 'the turns the server no longer threads', 'a fallback of a run over an SDK thread'] as const;
  for (const outside of cases) it(`${outside}, sent outside the thread with the whole history, leaves out the cache markers of answered messages, as a new thread does`, async () => {
    const calls = [1, 2, 3, 4, 5].map((n) => ({ content: [toolUse('lookup', { n }, `toolu_${n}`)] }));
    const unthreaded = { error: { status: 400, details: { error_code: 'thread_unsupported_request', unsupported: ['x'] } } };
    const steps = {
      'a fallback': [...calls, { error: { status: 529 } }, { content: [text('From the fallback.')] }],
      "a compaction's summary": [...calls.slice(0, 4), { ...calls[4]!, usage: { input_tokens: 50_000 } }, { content: [text('<summary>Five rows.</summary>')] }, { content: [text('Done.')] }],
      'the turns the server no longer threads': [...calls.slice(0, 3), unthreaded, ...calls.slice(3), { content: [text('Done.')] }],
      'a fallback of a run over an SDK thread': [...calls, { error: { status: 529 } }, { content: [text('From the fallback.')] }],
    }[outside];
    const server = await mockServer(steps);
    const params = { ...baseParams, tools: [lookup], ...(outside === "a compaction's summary" ? { compactionControl: { enabled: true, contextTokenThreshold: 10_000 } } : {}) };
    const options = outside.includes('fallback') ? { fallback: [{ model: 'claude-fallback' }] } : {};
    const runner =
      outside === 'a fallback of a run over an SDK thread'
        ? toolRunner(server.client({ maxRetries: 0 }).beta.messages.thread(params as never), {}, options)
        : toolRunner(server.client({ maxRetries: 0 }), params, options);
    // Each result marked for caching (README, "Modifying tool results"): one marker a request over the thread.
    for await (const _message of runner) {
      const response = await runner.generateToolResponse();
      for (const result of response?.content ?? []) result.cache_control = { type: 'ephemeral' };
    }
    const markers = (request: RecordedRequest) => (JSON.stringify(wire(request).body.messages).match(/cache_control/g) ?? []).length;
    // Only the results after the last reply keep theirs (the API takes at most four), on every request.
    // (The compacted history holds none: the summary stands for them.)
    expect(server.requests.map(markers)).toEqual(server.requests.map((_, i) => (i === 0 || (outside === "a compaction's summary" && i === 6) ? 0 : 1)));
    // The requests outside the thread: the fallback's (after the primary's failed attempt), the summary, every turn after the stop.
    const outsideRequests = outside === "a compaction's summary" ? [5] : outside === 'the turns the server no longer threads' ? [4, 5, 6] : [6];
    for (const i of outsideRequests) {
      expect(threadOf(server.requests[i]!)).toBeUndefined();
      expect(wire(server.requests[i]!).body.messages.length).toBeGreaterThan(6);
    }
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("a run's first request sends the caller's history with its cache markers, as the SDK's thread does (none of its replies answered yet)", async () => {
    const server = await mockServer([{ content: [text('Answer.')] }]);
    const marked = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text, cache_control: { type: 'ephemeral' as const } }] });
    await toolRunner(server.client(), { ...baseParams, messages: [marked('A long document.'), { role: 'assistant', content: 'Read.' }, marked('The question.')] });
    expect(threadOf(server.requests[0]!)).toEqual({ type: 'create' });
    expect((JSON.stringify(wire(server.requests[0]!).body.messages).match(/cache_control/g) ?? []).length).toBe(2);
  });

  it('over an SDK thread that already holds replies, the first fallback leaves out the markers of the answered messages', async () => {
    const marked = (q: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text: q, cache_control: { type: 'ephemeral' as const } }] });
    const server = await mockServer([...['one', 'two', 'three', 'four'].map((answer) => ({ content: [text(answer)] })), { error: { status: 529 } }, { content: [text('From the fallback.')] }]);
    const thread = server.client({ maxRetries: 0 }).beta.messages.thread({ model: baseParams.model, max_tokens: 100, messages: [] } as never) as unknown as {
      send(messages: unknown[]): Promise<unknown>;
      append(message: unknown): void;
    };
    for (const q of ['q1', 'q2', 'q3', 'q4']) await thread.send([marked(q)]);
    thread.append(marked('q5'));
    await toolRunner(thread as never, {}, { fallback: [{ model: 'claude-fallback' }] });
    const fallback = wire(server.requests.at(-1)!).body;
    expect(fallback.model).toBe('claude-fallback');
    expect(fallback.messages).toHaveLength(9);
    expect((JSON.stringify(fallback.messages).match(/cache_control/g) ?? []).length).toBe(1);
  });

  it('a run resumed from a snapshot taken before any reply, or one whose first reply was refused, sends the caller\'s markers as given (as the run would)', async () => {
    const marked = (q: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text: q, cache_control: { type: 'ephemeral' as const } }] });
    const messages = [marked('A long document.'), { role: 'assistant' as const, content: 'Read.' }, marked('The question.')];
    const markers = (request: RecordedRequest) => (JSON.stringify(wire(request).body.messages).match(/cache_control/g) ?? []).length;
    const server = await mockServer([{ error: { status: 500 } }, { content: [text('Answer.')] }, { content: [text('No.')], stop_reason: 'refusal' }, { content: [text('Answer.')] }]);
    const failed = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, messages });
    await expect(failed.runUntilDone()).rejects.toThrow();
    await resumeToolRunner(server.client(), JSON.parse(JSON.stringify(failed.toJSON())), {});
    const refused = toolRunner(server.client(), { ...baseParams, messages });
    for await (const message of refused) if (message.stop_reason === 'refusal') refused.pushMessages(marked('Put differently.'));
    expect(server.requests.map(markers)).toEqual([2, 2, 2, 3]);
    // A run that ended on a refused first reply, resumed: the same.
    const later = await mockServer([{ content: [text('No.')], stop_reason: 'refusal' }, { content: [text('Answer.')] }]);
    const first = toolRunner(later.client(), { ...baseParams, messages });
    await first;
    const resumed = resumeToolRunner(later.client(), JSON.parse(JSON.stringify(first.toJSON())), {});
    resumed.pushMessages(marked('Put differently.'));
    await resumed;
    expect(later.requests.map(markers)).toEqual([2, 3]);
  });

  // The snapshot held the reply (29776da) but the thread of the reply before it: the resumed run continued from that one,
  // which the server refused as continued already, then sent the whole history again under a new thread.
  it("a snapshot taken at a streamed reply's message event continues the thread from that reply: the resumed run sends only its calls' results", async () => {
    const server = await mockServer([{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')] }, { content: [toolUse('lookup', { n: 2 }, 'toolu_2')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, stream: true as const, tools: [lookup] });
    let snapshot: RunnerSnapshot | undefined;
    let second: string | undefined;
    for await (const stream of runner) {
      const message = await new Promise<{ id: string; content: Array<{ type: string; id?: string }> }>((resolve) => stream.once('message', resolve));
      if (!message.content.some((block) => block.id === 'toolu_2')) continue;
      second = message.id;
      snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
      break;
    }
    const sent = server.requests.length;
    const resumed = resumeToolRunner(server.client(), snapshot!, { tools: [lookup] });
    await resumed;
    const requests = server.requests.slice(sent).map((request) => wire(request).body);
    expect(requests).toHaveLength(1);
    expect(requests[0].thread).toEqual({ type: 'continue', previous_message_id: second });
    expect(requests[0].messages).toEqual([{ role: 'user', content: [expect.objectContaining({ type: 'tool_result', tool_use_id: 'toolu_2' })] }]);
    expect(historyProblems(resumed.params.messages)).toEqual([]);
    server.assertComplete();
  });

  it('a run resumed from a snapshot that holds no thread (taken after a break) starts its thread without the cache markers of answered messages', async () => {
    const calls = [1, 2, 3, 4, 5].map((n) => ({ content: [toolUse('lookup', { n }, `toolu_${n}`)] }));
    const server = await mockServer([...calls, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup] });
    for await (const message of runner) {
      if (message.content.some((block) => block.type === 'tool_use' && block.id === 'toolu_5')) break;
      const response = await runner.generateToolResponse();
      for (const result of response?.content ?? []) result.cache_control = { type: 'ephemeral' };
    }
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
    expect(snapshot.thread ?? undefined).toBeUndefined();
    const resumed = resumeToolRunner(server.client(), snapshot, { tools: [lookup] });
    await resumed;
    const first = wire(server.requests.at(-1)!).body;
    expect(first.thread).toEqual({ type: 'create' });
    // Four results marked; only the last, after the last reply, keeps its marker.
    expect(first.messages).toHaveLength(9);
    expect((JSON.stringify(first.messages).match(/cache_control/g) ?? []).length).toBe(1);
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });

  it('a refused reply is not kept on a thread: a call it started while streaming (runToolsEagerly) is stopped before the run ends', async () => {
    // The first call starts once the second block starts (a refusal's last call never starts).
    const server = await mockServer([{ content: [toolUse('slow', {}, 'toolu_slow'), toolUse('slow', {}, 'toolu_slow2')], stop_reason: 'refusal' }]);
    const log: string[] = [];
    const slow = tool({
      name: 'slow',
      inputSchema: z.object({}),
      run: async (_input, { signal }) => {
        await new Promise((resolve) => (signal.addEventListener('abort', resolve), setTimeout(resolve, 2_000)));
        log.push(signal.aborted ? 'stopped' : 'finished');
        return 'done';
      },
    });
    const runner = toolRunner(server.client(), { ...baseParams, tools: [slow], runToolsEagerly: true });
    const last = await runner;
    expect(last.stop_reason).toBe('refusal');
    expect(kinds(server.requests)).toEqual(['create']);
    expect(log).toEqual(['stopped']);
    expect(runner.params.messages).toEqual(baseParams.messages);
  });

  it('creates the thread with the whole history, then sends only the new messages; the caller sees the whole history', async () => {
    const server = await mockServer(threeTurns());
    const runner = toolRunner(server.client(), { ...baseParams, system: 'Be brief.', tools: [lookup] });
    const replies = [];
    for await (const message of runner) replies.push(message);
    expect(kinds(server.requests)).toEqual(['create', 'continue', 'continue']);
    const [create, second, third] = server.requests.map((request) => wire(request).body);
    expect(create.messages).toEqual(baseParams.messages);
    expect(create.system).toBe('Be brief.');
    expect(server.requests[0]!.headers['anthropic-beta']).toContain('message-threads-2026-08-12');
    expect(second.thread.previous_message_id).toBe(replies[0]!.id);
    expect(third.thread.previous_message_id).toBe(replies[1]!.id);
    expect(second).not.toHaveProperty('system');
    expect(second).not.toHaveProperty('tools');
    expect(second.messages).toEqual([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'row 1' }] }]);
    // The model saw the whole conversation; the caller holds it too.
    expect(wire(server.requests[2]!).messages).toHaveLength(5);
    expect(runner.params.messages).toHaveLength(6);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('a request that failed after the loop body dropped a reply: the retry replays the history set, never continues from the dropped reply', async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')] },
      { content: [toolUse('lookup', { n: 2 }, 'toolu_2')] },
      { error: { status: 529 } },
      { content: [text('Summed up.')] },
    ]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [lookup] });
    let turn = 0;
    await expect(
      (async () => {
        for await (const _message of runner) if (++turn === 2) runner.pushMessages({ role: 'user', content: 'Stop and sum up.' });
      })(),
    ).rejects.toThrow(/^529 /);
    await runner;
    expect(kinds(server.requests)).toEqual(['create', 'continue', 'create', 'create']);
    // The model saw the history the caller set, without the reply it dropped.
    const seen = wire(server.requests[3]!).messages;
    expect(seen.at(-1)).toEqual({ role: 'user', content: 'Stop and sum up.' });
    expect(JSON.stringify(seen)).not.toContain('toolu_2');
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('a stream the loop body left unread, taking control: the next requests continue the thread as the SDK does', async () => {
    const server = await mockServer([{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')] }, { content: [toolUse('lookup', { n: 2 }, 'toolu_2')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [lookup], stream: true });
    let turn = 0;
    // The second stream is left unread; the body sets the params (the same) in its place.
    for await (const _stream of runner) if (++turn === 2) runner.setMessagesParams((params) => ({ ...params }));
    expect(server.requests.map((request) => `${threadOf(request)?.type} ${wire(request).body.messages.length}`)).toEqual(['create 1', 'continue 1', 'continue 1']);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('thread: false, or a client without threads, sends the whole history every turn', async () => {
    const server = await mockServer([...threeTurns(), ...threeTurns()]);
    await toolRunner(server.client(), { ...baseParams, tools: [lookup], thread: false });
    const client = server.client();
    const plain = { beta: { messages: client.beta.messages } };
    await toolRunner(plain, { ...baseParams, tools: [lookup] });
    expect(kinds(server.requests)).toEqual(['none', 'none', 'none', 'none', 'none', 'none']);
    expect(wire(server.requests[2]!).body.messages).toHaveLength(5);
    expect(wire(server.requests[5]!).body.messages).toHaveLength(5);
  });

  it('thread: false is chosen when the runner is made: runner.params leaves it out (as the SDK\'s), new params keep it, and so does a snapshot', async () => {
    const server = await mockServer(threeTurns());
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], thread: false });
    let resumed: ReturnType<typeof resumeToolRunner> | undefined;
    for await (const _message of runner) {
      expect(runner.params).not.toHaveProperty('thread');
      // New params built from runner.params (no `thread`): the run goes on without a thread, and so does its snapshot.
      runner.setMessagesParams((params) => ({ ...params, max_tokens: 512 }));
      const snapshot = runner.toJSON();
      expect(snapshot.params.thread).toBe(false);
      resumed = resumeToolRunner(server.client(), snapshot, { tools: [lookup] });
      break;
    }
    await resumed!;
    expect(kinds(server.requests)).toEqual(['none', 'none', 'none']);
  });

  it('thread_not_found (the server lost the thread): replays the whole history under a new thread', async () => {
    const server = await mockServer(threeTurns());
    const { lines, logger } = captureLogger();
    const runner = toolRunner(server.client({ logger, logLevel: 'info' }), { ...baseParams, tools: [lookup] });
    let turn = 0;
    for await (const _message of runner) if (++turn === 1) server.forgetThreads();
    expect(kinds(server.requests)).toEqual(['create', 'continue', 'create', 'continue']);
    expect(wire(server.requests[2]!).body.messages).toHaveLength(3);
    expect(wire(server.requests[2]!).body.tools).toHaveLength(1);
    expect(lines).toContainEqual({ level: 'info', message: expect.stringMatching(/Thread rejected \(thread_not_found, previous_message_id msg_\w+\); replaying/) });
    expect(runner.iteration).toBe(3);
  });

  it('thread_not_found on the continue of a paused turn (which sends no messages): replayed under a new thread too, not refused for its empty messages', async () => {
    const server = await mockServer([{ content: [text('Searching…')], stop_reason: 'pause_turn' as never }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), baseParams);
    let turn = 0;
    for await (const _message of runner) if (++turn === 1) server.forgetThreads();
    expect(kinds(server.requests)).toEqual(['create', 'continue', 'create']);
    expect(wire(server.requests[1]!).body.messages).toHaveLength(0);
    expect(wire(server.requests[2]!).body.messages).toHaveLength(2);
    expect(runner.stoppedBy).toBe('model');
  });

  it("a paused turn with empty content (not kept in the history) goes on over the thread with no new message, as the SDK's runner sends it; anything added after it replays", async () => {
    const paused = { content: [], stop_reason: 'pause_turn' as never };
    const steps = () => [{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')] }, paused, { content: [text('Done.')] }, paused, { content: [text('Later.')] }];
    const bodies = [];
    for (const ours of [false, true]) {
      const server = await mockServer(steps());
      const client = server.client({ maxRetries: 0 });
      const runner = ours ? toolRunner(client, { ...baseParams, tools: [lookup] }) : client.beta.messages.toolRunner({ ...baseParams, tools: [lookup] } as never);
      await runner.runUntilDone();
      expect(kinds(server.requests)).toEqual(['create', 'continue', 'continue']);
      expect(wire(server.requests[2]!).body.messages).toEqual([]);
      bodies.push(bodiesOf(server));
      if (!ours) continue;
      expect(historyProblems(runner.params.messages)).toEqual([]);
      // Paused empty again, then a question pushed after it: the server would hold the empty reply before the question.
      const again = toolRunner(client, { ...baseParams, tools: [lookup] });
      again.setMessagesParams((params) => ({ ...params, messages: [...runner.params.messages, { role: 'user', content: 'More?' }] }));
      for await (const message of again) if (message.stop_reason === 'pause_turn') again.pushMessages({ role: 'user', content: 'Go on.' });
      expect(kinds(server.requests).slice(3)).toEqual(['create', 'create']);
      expect(historyProblems(wire(server.requests[4]!).messages)).toEqual([]);
    }
    expect(bodies[1]).toEqual(bodies[0]);
  });

  it("a replay leaves out the cache markers in the definitions of tools added to answered turns (addTools), as the SDK's thread does", async () => {
    const marked = (name: string) => tool({ ...lookupOptions, name, cache_control: { type: 'ephemeral' } });
    const server = await mockServer([...[0, 1, 2, 3, 4, 5].map((n) => ({ content: [toolUse(`t${n}`, { n }, `toolu_${n}`)] })), { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [marked('t0')], betas: ['inline-tools-2026-09-15'] });
    let turn = 0;
    for await (const _message of runner) {
      turn++;
      if (turn < 6) runner.addTools(marked(`t${turn}`));
      if (turn === 6) server.forgetThreads();
    }
    const markers = (request: RecordedRequest) => (JSON.stringify(wire(request).body.messages).match(/cache_control/g) ?? []).length;
    const replay = server.requests.at(-1)!;
    expect(threadOf(replay)).toEqual({ type: 'create' });
    expect(markers(replay)).toBe(0);
    expect(server.requests.slice(1, 6).map(markers)).toEqual([1, 1, 1, 1, 1]);
  });

  it('thread_not_found on a streamed turn: the stream the caller holds carries the replayed request', async () => {
    const server = await mockServer(threeTurns());
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], stream: true });
    const events: string[][] = [];
    for await (const stream of runner) {
      const types: string[] = [];
      for await (const event of stream) types.push(event.type);
      events.push(types);
      if (events.length === 1) server.forgetThreads();
    }
    expect(kinds(server.requests)).toEqual(['create', 'continue', 'create', 'continue']);
    expect(events.map((types) => [types[0], types.at(-1)])).toEqual([
      ['message_start', 'message_stop'],
      ['message_start', 'message_stop'],
      ['message_start', 'message_stop'],
    ]);
    expect((await runner.done()).content).toEqual([{ type: 'text', text: 'Rows 1 and 2.', citations: null }]);
  });

  it('thread_fingerprint_mismatch: replays under a new thread', async () => {
    const mismatch = { status: 400, message: 'Differs from the thread: system', details: { error_code: 'thread_fingerprint_mismatch' } };
    const server = await mockServer([threeTurns()[0]!, { error: mismatch }, ...threeTurns().slice(1)]);
    await toolRunner(server.client(), { ...baseParams, tools: [lookup] });
    expect(kinds(server.requests)).toEqual(['create', 'continue', 'create', 'continue']);
    expect(wire(server.requests[2]!).body.messages).toHaveLength(3);
  });

  it('a changed system prompt, tools or model starts a new thread at once (no rejected request)', async () => {
    const server = await mockServer(threeTurns());
    const runner = toolRunner(server.client(), { ...baseParams, system: 'Be brief.', tools: [lookup] });
    let turn = 0;
    for await (const _message of runner) {
      if (++turn === 1) runner.setMessagesParams((params) => ({ ...params, system: 'Be thorough.' }));
    }
    // The body took control at turn 1: it answers the call itself on the next iteration.
    expect(kinds(server.requests)).toEqual(['create', 'create', 'continue']);
    expect(wire(server.requests[1]!).body.system).toBe('Be thorough.');
  });

  it('thread_not_found right after a replay (a server that cannot hold threads): the run goes on without a thread, as the SDK\'s runner does', async () => {
    const bodies = [];
    for (const ours of [false, true]) {
      const server = await mockServer(threeTurns());
      // The server loses every thread once its reply has come: each continue meets thread_not_found.
      const forgetful = tool({ ...lookupOptions, run: (input) => (server.forgetThreads(), lookupOptions.run(input)) });
      const { lines, logger } = captureLogger();
      const client = server.client({ logger, logLevel: 'info' });
      const params = { model, max_tokens: 1024, messages: [...baseParams.messages], tools: [forgetful] };
      const runner = ours ? toolRunner(client, params) : client.beta.messages.toolRunner(params as never);
      for await (const _message of runner);
      // The first loss is replayed; the second, on the new thread's first continue, stops threading for the run.
      expect(kinds(server.requests)).toEqual(['create', 'continue', 'create', 'continue', 'none']);
      expect(wire(server.requests[4]!).body.messages).toHaveLength(5);
      if (ours) expect(lines).toContainEqual({ level: 'info', message: expect.stringMatching(/lost the thread again right after a replay/) });
      expect(historyProblems(runner.params.messages)).toEqual([]);
      bodies.push(bodiesOf(server));
    }
    expect(bodies[1]).toEqual(bodies[0]);
  });

  it('thread_already_continued (the reply was lost on the way, the client retried): replays', async () => {
    const [first, second, third] = threeTurns();
    // The server computes the second reply, then the connection drops; the SDK retries the same continue.
    const server = await mockServer([first!, { ...second!, disconnectAfterEvents: 0 }, second!, third!]);
    await toolRunner(server.client({ maxRetries: 1 }), { ...baseParams, tools: [lookup] });
    expect(kinds(server.requests)).toEqual(['create', 'continue', 'continue', 'create', 'continue']);
    expect(server.requests.slice(0, 3).map((request) => request.path)).toEqual(Array(3).fill('/v1/messages'));
    expect(wire(server.requests[3]!).body.messages).toHaveLength(3);
  });

  it('a stream that broke after the whole reply (message_stop), which the server holds: the next attempt replays at once, no continue refused first', async () => {
    const [first, second, third] = threeTurns();
    const broken = { ...second!, error: { status: 529, type: 'overloaded_error', message: 'Overloaded', afterEvents: 100 } };
    const server = await mockServer([first!, broken, second!, third!]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, stream: true, tools: [lookup] });
    await expect(runner.runUntilDone()).rejects.toThrow(/Overloaded/);
    const final = await runner;
    expect(final.content[0]).toMatchObject({ text: 'Rows 1 and 2.' });
    expect(kinds(server.requests)).toEqual(['create', 'continue', 'create', 'continue']);
    expect(wire(server.requests[2]!).body.messages).toHaveLength(3);
  });

  it('thread_continue_in_flight (a retry while the first attempt still runs): replays', async () => {
    const [first, second, third] = threeTurns();
    // The server is still computing the first attempt's reply (delayMs) when the timed-out client retries.
    const server = await mockServer([first!, { ...second!, delayMs: 1_500 }, second!, third!]);
    await toolRunner(server.client({ maxRetries: 1, timeout: 300 }), { ...baseParams, tools: [lookup] });
    expect(kinds(server.requests)).toEqual(['create', 'continue', 'continue', 'create', 'continue']);
  });

  it('thread_unsupported_request: the run goes on with the whole history, without a thread', async () => {
    const server = await mockServer({ steps: threeTurns(), threads: 'unsupported' });
    const { lines, logger } = captureLogger();
    const final = await toolRunner(server.client({ logger, logLevel: 'info' }), { ...baseParams, tools: [lookup] });
    expect(final.content[0]).toMatchObject({ text: 'Rows 1 and 2.' });
    expect(kinds(server.requests)).toEqual(['create', 'none', 'none', 'none']);
    expect(wire(server.requests[3]!).body.messages).toHaveLength(5);
    expect(lines).toContainEqual({ level: 'info', message: expect.stringMatching(/cannot thread this run \(unsupported: hipaa\)/) });
  });

  it('a snapshot keeps the thread: the resumed run continues it, or replays if the server lost it', async () => {
    const guarded = tool({ ...lookupOptions, needsApproval: true });
    const server = await mockServer([threeTurns()[0]!, { content: [text('Done.')] }, { content: [text('Done again.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [guarded] });
    await runner; // stops for approval
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
    expect(snapshot.thread).toMatchObject({ previous_message_id: expect.stringMatching(/^msg_/), held: 2 });

    const resumed = resumeToolRunner(server.client(), snapshot, { tools: [guarded] });
    resumed.approve('toolu_1');
    expect((await resumed).content[0]).toMatchObject({ text: 'Done.' });
    expect(kinds(server.requests)).toEqual(['create', 'continue']);
    expect(wire(server.requests[1]!).body.messages).toEqual([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'row 1' }] }]);

    server.forgetThreads();
    const again = resumeToolRunner(server.client(), snapshot, { tools: [guarded] });
    again.approve('toolu_1');
    expect((await again).content[0]).toMatchObject({ text: 'Done again.' });
    expect(kinds(server.requests).slice(2)).toEqual(['continue', 'create']);
    expect(wire(server.requests[3]!).body.messages).toHaveLength(3);
  });

  it('a snapshot continues its thread only from the reply its history holds: after a break, taking control, or a history set after the resume, the whole history goes under a new thread', async () => {
    // A snapshot taken in the loop body (a checkpoint every turn) holds the body's reply: the resumed run continues from it.
    const checkpoint = await mockServer([{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')] }, { content: [text('Done.')] }]);
    const saving = toolRunner(checkpoint.client(), { ...baseParams, tools: [lookup] });
    let saved: RunnerSnapshot | undefined;
    for await (const _ of saving) {
      saved = JSON.parse(JSON.stringify(saving.toJSON())) as RunnerSnapshot;
      break;
    }
    expect(saved!.thread).toMatchObject({ held: 2 });
    await resumeToolRunner(checkpoint.client(), saved!, { tools: [lookup] });
    expect(kinds(checkpoint.requests)).toEqual(['create', 'continue']);
    expect(wire(checkpoint.requests[1]!).body.messages).toEqual([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'row 1' }] }]);

    // A break: the reply the body broke on is not kept, though the server holds it.
    const server = await mockServer([{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup] });
    for await (const _ of runner) break;
    const broken = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
    expect(broken.thread).toBeUndefined();
    const resumed = resumeToolRunner(server.client(), broken, { tools: [lookup] });
    resumed.pushMessages({ role: 'user', content: 'Go on.' });
    await resumed;
    expect(kinds(server.requests)).toEqual(['create', 'create']);
    expect(historyProblems(wire(server.requests[1]!).body.messages)).toEqual([]);

    // Taking control: the body replaces the reply with a message of its own before the snapshot.
    const taken = await mockServer([{ content: [text('A bad answer.')] }, { content: [text('About cats.')] }]);
    const control = toolRunner(taken.client(), baseParams);
    for await (const message of control) {
      control.setMessagesParams((params) => ({ ...params, messages: [...params.messages, { role: 'assistant', content: [{ type: 'text', text: 'Let me think.' }] }, { role: 'user', content: 'Make it about cats.' }] }));
      expect(message.content[0]).toMatchObject({ text: 'A bad answer.' });
      break;
    }
    const replaced = JSON.parse(JSON.stringify(control.toJSON())) as RunnerSnapshot;
    expect(replaced.thread).toBeUndefined();
    await resumeToolRunner(taken.client(), replaced, {});
    expect(kinds(taken.requests)).toEqual(['create', 'create']);
    expect(JSON.stringify(wire(taken.requests[1]!).body.messages)).not.toContain('A bad answer.');

    // A resumed run whose history the caller replaces (as long as the old one): not continued.
    const third = await mockServer([{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')] }, { content: [text('Done.')] }]);
    const guarded = tool({ ...lookupOptions, needsApproval: true });
    const waiting = toolRunner(third.client(), { ...baseParams, tools: [guarded] });
    await waiting;
    const held = JSON.parse(JSON.stringify(waiting.toJSON())) as RunnerSnapshot;
    expect(held.thread).toMatchObject({ held: 2 });
    const other = resumeToolRunner(third.client(), held, { tools: [guarded] });
    other.setMessagesParams((params) => ({ ...params, messages: [{ role: 'user', content: 'Another question.' }, { role: 'assistant', content: [{ type: 'text', text: 'Yes?' }] }, { role: 'user', content: 'Well?' }] }));
    await other;
    expect(kinds(third.requests)).toEqual(['create', 'create']);
    expect(wire(third.requests[1]!).body.messages).toHaveLength(3);
  });

  it('client-side compaction: the compacted history starts a new thread', async () => {
    const big = { input_tokens: 30_000, output_tokens: 50 };
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big },
      { content: [text('<summary>Looked up row 1.</summary>')] },
      { content: [text('Done.')] },
    ]);
    const runner = toolRunner(server.client(), {
      ...baseParams,
      tools: [lookup],
      compactionControl: { enabled: true, contextTokenThreshold: 20_000 },
    });
    await runner;
    // The summary request goes without a thread; the run then creates one from the summary.
    expect(kinds(server.requests)).toEqual(['create', 'none', 'create']);
    expect(wire(server.requests[2]!).body.messages).toHaveLength(1);
  });

  it('server-side compaction (compactBeforeNextTurn) replays the history with `compaction` under a new thread', async () => {
    const server = await mockServer([
      threeTurns()[0]!,
      { content: [{ type: 'compaction', content: 'Summary.', encrypted_content: null } as never] },
      { content: [text('Done.')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup] });
    for await (const _message of runner) if (runner.iteration === 1) runner.compactBeforeNextTurn();
    expect(kinds(server.requests)).toEqual(['create', 'create', 'create']);
    expect(wire(server.requests[1]!).body.compaction).toEqual({ type: 'summarize' });
    expect(wire(server.requests[1]!).body.messages).toHaveLength(3);
    expect(wire(server.requests[2]!).body.messages).toEqual([{ role: 'assistant', content: [expect.objectContaining({ type: 'compaction' })] }]);
  });

  it("an onRequest hook that gives a request messages of its own (params.messages = [...]): the thread goes on from what that request sent, and the next request sends the run's history (a tool's result was never sent)", async () => {
    const server = await mockServer([...threeTurns().slice(0, 2), { content: [text('Rows 1 and 2.')] }]);
    const note = { role: 'user' as const, content: 'Rows are 1-based.' };
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup] }, { hooks: { onRequest: (params) => void (runner.iteration === 1 && (params.messages = [...params.messages, note])) } });
    await runner;
    // The second request goes on from the first reply with the hook's messages: the result and the note.
    expect(kinds(server.requests)).toEqual(['create', 'continue', 'create']);
    expect(wire(server.requests[1]!).body.messages).toEqual([expect.objectContaining({ role: 'user' }), note]);
    // The server holds the note, the run's history does not: the third replays the run's history, the second call's result with it.
    expect(wire(server.requests[2]!).messages).toEqual(runner.params.messages.slice(0, -1));
    expect(wire(server.requests[2]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'row 2' }]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
});

describe('a thread with the caller’s own anthropic-beta header', () => {
  it('adds the threads beta to it (the header replaces the one the SDK builds from `betas`)', async () => {
    const server = await mockServer(threeTurns());
    const final = await toolRunner(server.client(), { ...baseParams, tools: [lookup] }, { requestOptions: { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } } });
    expect(final.content[0]).toMatchObject({ text: 'Rows 1 and 2.' });
    expect(kinds(server.requests)).toEqual(['create', 'continue', 'continue']);
    for (const request of server.requests) {
      expect(String(request.headers['anthropic-beta']).split(', ')).toEqual(['context-1m-2025-08-07', 'message-threads-2026-08-12']);
    }
  });
});

describe('a reply without an id, over a thread', () => {
  it('(a gateway that leaves `id` out) cannot be continued: the next request replays the history under a new thread, and the run snapshots and resumes', async () => {
    const { damagingServer } = await import('./fuzz/wire/server.js');
    const server = await damagingServer();
    try {
      const act = tool({ name: 'act', inputSchema: z.object({}), run: () => 'done' });
      // The first reply's body without its `id` (the fuzzer's `drop` of the last field it drops), then a whole one.
      server.queue.push({ content: [toolUse('act', {}, 'toolu_1')], stopReason: 'tool_use', fault: 'drop', at: 0.9 }, { content: [text('All done.')], stopReason: 'end_turn', fault: 'none', at: 0 });
      const client = new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 });
      const runner = toolRunner(client, { ...baseParams, tools: [act] });
      const final = await runner.runUntilDone();
      expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: 'All done.' })]);
      expect(server.served.map(({ body }) => (body['thread'] as { type: string }).type)).toEqual(['create', 'create']);
      expect(server.threadRefusals).toEqual([]);
      expect(historyProblems(runner.params.messages)).toEqual([]);
      // Its snapshot resumes (it records no thread to continue from the reply without an id).
      const resumed = resumeToolRunner(client, JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot, { tools: [act] });
      resumed.pushMessages({ role: 'user', content: 'Thanks!' });
      await resumed.runUntilDone();
      expect(server.threadRefusals).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
