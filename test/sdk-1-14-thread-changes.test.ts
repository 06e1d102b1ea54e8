/**
 * Drop-in for SDK 1.14.0's runner over an SDK thread (`toolRunner(thread, …)`): what the program changes on the thread
 * itself is the run's too, as in the SDK's runner, whose history and fields are the thread's. Messages it appends
 * (`thread.append()`, in the loop body or after the run, another runner over the thread) are kept and sent; fields it
 * sets (`thread.update()`) are sent. Each program runs side by side with the SDK's runner.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { historyProblems, tool, toolRunner } from 'tool-runner';
import { type Step, text, toolUse } from 'tool-runner/testing';
import { mockServer, wire } from './helpers.js';
import { ask, bodiesOf, comparable, model, overThreadBoth, weather } from './side-by-side.js';

const steps = (): Step[] => [
  { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_t1')] },
  { content: [text('21°C.')] },
  { content: [text('More.')] },
  { content: [text('Done.')] },
];
const note = { role: 'user' as const, content: 'A note from the app.' };

/** Each message as its role and its first block's type (or its text). */
const shape = (messages: ReadonlyArray<{ role: string; content?: unknown }>) =>
  messages.map((message) => `${message.role}: ${typeof message.content === 'string' ? message.content : (message.content as Array<{ type: string }>)[0]!.type}`);

describe('over an SDK thread, what the program appends to the thread itself is kept, as in the SDK\'s runner', () => {
  for (const stream of [false, true]) {
    it(`appended in the loop body after a reply with calls: sent after the calls' results (stream: ${stream})`, async () => {
      const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
        const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
        const runner = makeRunner(thread, { stream });
        let n = 0;
        for await (const item of runner) {
          if (stream) await item.finalMessage();
          if (++n === 1) thread.append(note);
        }
        return comparable({ thread: shape(thread.messages), params: shape(runner.params.messages) });
      });
      expect(ours).toEqual(sdk);
      expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
      expect((ours as { thread: string[] }).thread).toEqual(['user: Weather in Paris?', 'assistant: tool_use', 'user: tool_result', 'user: A note from the app.', 'assistant: text']);
    });
  }

  it('appended in the loop body after the final reply: the thread and the params keep it', async () => {
    const final = (): Step[] => [{ content: [text('Hi.')] }, { content: [text('More.')] }];
    const { sdk, ours } = await overThreadBoth(final, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, {});
      for await (const _ of runner) thread.append(note);
      return comparable({ thread: shape(thread.messages), params: shape(runner.params.messages) });
    });
    expect(ours).toEqual(sdk);
    expect((ours as { thread: string[] }).thread.at(-1)).toBe('user: A note from the app.');
  });

  it('appended after the run, then a question pushed to the runner: both are sent by the next runner', async () => {
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, {});
      await runner;
      thread.append(note);
      runner.pushMessages({ role: 'user', content: 'And Rome?' });
      const pushed = shape(thread.messages);
      await makeRunner(thread, {});
      return comparable({ pushed, thread: shape(thread.messages) });
    });
    expect(ours).toEqual(sdk);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    expect(bodiesOf(ourServer).at(-1)).toMatchObject({ messages: [note, { role: 'user', content: 'And Rome?' }] });
  });

  it('another runner went on over the thread, then the first one pushes a question: the second runner\'s turn stays', async () => {
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const first = makeRunner(thread, {});
      await first;
      thread.append({ role: 'user', content: 'And Rome?' });
      await makeRunner(thread, {});
      first.pushMessages({ role: 'user', content: 'And Oslo?' });
      const pushed = shape(thread.messages);
      await makeRunner(thread, {});
      return comparable({ pushed, thread: shape(thread.messages) });
    });
    expect(ours).toEqual(sdk);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    expect((ours as { pushed: string[] }).pushed.slice(-3)).toEqual(['user: And Rome?', 'assistant: text', 'user: And Oslo?']);
  });
});

describe('over an SDK thread, a message appended in the loop body of a compaction\'s reply', () => {
  for (const stream of [false, true]) {
    it(`goes after the summary, as in the SDK's runner (stream: ${stream})`, async () => {
      const compacting = (): Step[] => [
        { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_k1')] },
        { content: [{ type: 'compaction', content: 'Summary.' } as never], stop_reason: 'compaction' as never },
        { content: [text('21°C.')] },
      ];
      const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(compacting, async (makeRunner, client, log) => {
        const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
        const runner = makeRunner(thread, { stream });
        let n = 0;
        for await (const item of runner) {
          if (stream) await item.finalMessage();
          if (++n === 1) runner.compactBeforeNextTurn();
          if (n === 2) thread.append(note);
        }
        return comparable({ thread: shape(thread.messages), params: shape(runner.params.messages) });
      });
      expect(ours).toEqual(sdk);
      expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
      expect(bodiesOf(ourServer).at(-1)).toMatchObject({ messages: [{ role: 'assistant', content: [{ type: 'compaction' }] }, note] });
    });
  }
});

describe('over an SDK thread, what the program appends past calls', () => {
  for (const stream of [false, true]) {
    it(`results it appends to the thread in the loop body answer the calls: no tool runs, as in the SDK's runner (stream: ${stream})`, async () => {
      const answer = { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_t1', content: 'answered by the app' }] };
      const { sdk, ours, sdkServer, ourServer, ourLog } = await overThreadBoth(steps, async (makeRunner, client, log) => {
        const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
        const runner = makeRunner(thread, { stream });
        let n = 0;
        for await (const item of runner) {
          if (stream) await item.finalMessage();
          if (++n === 1) thread.append(answer);
        }
        return comparable({ log, thread: shape(thread.messages) });
      });
      expect(ours).toEqual(sdk);
      expect(ourLog).toEqual([]);
      expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
      expect(bodiesOf(ourServer)[1]).toMatchObject({ messages: [answer] });
    });
  }

  it('a reply cut off by max_tokens, a note appended in the loop body: the params and the thread keep it, and a message pushed after the run goes after it', async () => {
    const cut = (): Step[] => [{ content: [text('Let me'), toolUse('get_weather', { location: 'Paris' }, 'toolu_c1')], stop_reason: 'max_tokens' }, { content: [text('21°C.')] }];
    const { sdk, ours } = await overThreadBoth(cut, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, {});
      for await (const _ of runner) thread.append(note);
      const after = { params: shape(runner.params.messages), thread: shape(thread.messages) };
      runner.pushMessages({ role: 'user', content: 'Go on.' });
      return comparable({ after, pushed: shape(thread.messages) });
    });
    expect(ours).toEqual(sdk);
    expect((ours as { pushed: string[] }).pushed.slice(-2)).toEqual(['user: A note from the app.', 'user: Go on.']);
  });

  it('another runner answered the calls of a reply the first one was cut off on: the first one, pushed to, keeps its turns (and answers nothing again)', async () => {
    const cut = (): Step[] => [{ content: [text('Let me'), toolUse('get_weather', { location: 'Paris' }, 'toolu_c1')], stop_reason: 'max_tokens' }, { content: [text('21°C.')] }, { content: [text('More.')] }];
    const server = await mockServer(cut());
    const thread = server.client().beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather([])] } as never);
    const first = toolRunner(thread, {});
    await first;
    thread.append(note);
    await toolRunner(thread, {});
    first.pushMessages({ role: 'user', content: 'Late.' });
    expect(shape(thread.messages)).toEqual(['user: Weather in Paris?', 'assistant: text', 'user: tool_result', 'user: A note from the app.', 'assistant: text', 'user: Late.']);
    expect(shape(first.params.messages)).toEqual(shape(thread.messages));
    expect(historyProblems(thread.messages)).toEqual([]);
  });
});

describe("over an SDK thread, the thread's own request options", () => {
  it("a run with no headers of its own sends the thread's headers, as they are at each turn (thread.update), as the SDK's runner", async () => {
    const headersOf = (server: Awaited<ReturnType<typeof mockServer>>) => server.requests.map((request) => [request.headers['x-tenant'], request.headers['x-step']]);
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never, { headers: { 'x-tenant': 'acme' } });
      let n = 0;
      for await (const _ of makeRunner(thread, {})) if (++n === 1) thread.update({}, { headers: { 'x-tenant': 'acme', 'x-step': 'after-1' } });
      return n;
    });
    expect(ours).toEqual(sdk);
    expect(headersOf(ourServer)).toEqual([['acme', undefined], ['acme', 'after-1']]);
    expect(headersOf(ourServer)).toEqual(headersOf(sdkServer));
    expect(ourServer.requests.map((request) => request.headers['x-stainless-helper'])).toEqual(ourServer.requests.map(() => expect.stringContaining('tool-runner')));
  });
});

describe('over an SDK thread, calls a run decided not to run (cut off by max_tokens) are not run by a later run over the thread', () => {
  const cutTwice = (): Step[] => [
    // The text after the first call streams slowly: runToolsEagerly starts that call before the reply is cut off.
    { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_m1'), text('and then Oslo, slowly'), toolUse('get_weather', { location: 'Oslo' }, 'toolu_m2')], stop_reason: 'max_tokens', chunkSize: 4, eventDelayMs: 10 },
    { content: [text('Sorry, cut off.')] },
    { content: [text('Done.')] },
  ];
  const answersOf = (message: { content?: unknown }) => (message.content as Array<{ content: string }>).map((block) => block.content);

  for (const note of [false, true]) {
    it(`a call runToolsEagerly started before the cut-off runs once, and the next runner answers both calls as the first one would (a note appended first: ${note})`, async () => {
      const server = await mockServer(cutTwice());
      const log: string[] = [];
      const thread = server.client().beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const first = toolRunner(thread, { stream: true, runToolsEagerly: true });
      await first;
      expect(first.stoppedBy).toBe('model');
      expect(log).toEqual(['get_weather Paris']);
      if (note) thread.append({ role: 'user', content: 'Go on.' });
      await toolRunner(thread, { stream: true, runToolsEagerly: true });
      expect(log).toEqual(['get_weather Paris']);
      const answers = answersOf(thread.messages[2]!);
      expect(answers[0]).toMatch(/^Error: the reply was cut off \(it reached max_tokens\) after the call to 'get_weather' had started/);
      expect(answers[1]).toMatch(/^Error: the call to 'get_weather' was cut off \(the reply reached max_tokens\), so it was not run/);
      for (const request of server.requests) expect(historyProblems(request.messages as never)).toEqual([]);
    });
  }

  it('a streamed reply that fails after its calls started (an error after message_stop): the thread keeps the reply; a new runner over it answers the call that ran as not kept, and does not run it again', async () => {
    const server = await mockServer([
      { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_f1')], error: { status: 500, afterEvents: 999 } },
      { content: [text('Done.')] },
    ]);
    const log: string[] = [];
    const thread = server.client({ maxRetries: 0 }).beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
    await expect(toolRunner(thread, { stream: true, runToolsEagerly: true })).rejects.toThrow(/api_error/);
    expect(log).toEqual(['get_weather Paris']);
    expect(shape(thread.messages)).toEqual(['user: Weather in Paris?', 'assistant: tool_use']);
    await toolRunner(thread, { stream: true, runToolsEagerly: true });
    expect(log).toEqual(['get_weather Paris']);
    expect(answersOf(thread.messages[2]!)[0]).toMatch(/^Error: the reply with the call to 'get_weather' broke off .*after the call had started; its result was not kept/);
    for (const request of server.requests) expect(historyProblems(request.messages as never)).toEqual([]);
  });

  it('a runner over a fork of the thread (thread.fork()) runs none of them either: the call that started runs once', async () => {
    const server = await mockServer(cutTwice());
    const log: string[] = [];
    const thread = server.client().beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
    await toolRunner(thread, { stream: true, runToolsEagerly: true });
    const fork = (thread as unknown as { fork(): typeof thread }).fork();
    await toolRunner(fork, { stream: true, runToolsEagerly: true });
    expect(log).toEqual(['get_weather Paris']);
    expect(answersOf(fork.messages[2]!).map((answer) => answer.slice(0, 24))).toEqual(['Error: the reply was cut', "Error: the call to 'get_"]);
  });

  it('a runner made before the cut-off run, taking it in afterwards (params read), runs none of its calls either', async () => {
    const server = await mockServer(cutTwice());
    const log: string[] = [];
    const thread = server.client().beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
    const early = toolRunner(thread, { stream: true, runToolsEagerly: true });
    await toolRunner(thread, { stream: true, runToolsEagerly: true });
    expect(shape(early.params.messages)).toEqual(['user: Weather in Paris?', 'assistant: tool_use']);
    await early;
    expect(log).toEqual(['get_weather Paris']);
    expect(answersOf(thread.messages[2]!).map((answer) => answer.slice(0, 24))).toEqual(['Error: the reply was cut', "Error: the call to 'get_"]);
  });

  it('without runToolsEagerly: the next runner runs none of the calls, as the SDK\'s runner runs none', async () => {
    const { sdkLog, ourLog } = await overThreadBoth(cutTwice, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      await makeRunner(thread, {});
      await makeRunner(thread, {});
    });
    expect(ourLog).toEqual(sdkLog);
    expect(ourLog).toEqual([]);
  });

  it('a stale runner, pushed to after another answered its cut-off call and got a reply: that reply stays, and every request is valid', async () => {
    const server = await mockServer([{ content: [text('Let me'), toolUse('get_weather', { location: 'Paris' }, 'toolu_c1')], stop_reason: 'max_tokens' }, { content: [text("B's reply.")] }, { content: [text('Done.')] }]);
    const thread = server.client().beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather([])] } as never);
    const first = toolRunner(thread, {});
    await first;
    thread.append(note);
    expect(shape(first.params.messages).at(-1)).toBe(`user: ${note.content}`);
    await toolRunner(thread, {});
    first.pushMessages({ role: 'user', content: 'Late.' });
    await toolRunner(thread, {});
    expect(shape(thread.messages)).toEqual(['user: Weather in Paris?', 'assistant: text', 'user: tool_result', `user: ${note.content}`, 'assistant: text', 'user: Late.', 'assistant: text']);
    expect(shape(first.params.messages)).toEqual(shape(thread.messages));
    for (const request of server.requests) expect(historyProblems(request.messages as never)).toEqual([]);
    expect(wire(server.requests.at(-1)!).body).toMatchObject({ thread: { type: 'continue' }, messages: [{ role: 'user', content: 'Late.' }] });
  });
});

describe('over an SDK thread, the fields the program sets on the thread itself are sent, as in the SDK\'s runner', () => {
  it('thread.update() in the loop body: the next request and the params have the new fields', async () => {
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, {});
      const seen: unknown[] = [];
      for await (const _ of runner) {
        if (seen.length === 0) thread.update({ max_tokens: 500, temperature: 0.5 } as never);
        seen.push({ ...runner.params, messages: undefined, tools: undefined });
      }
      return comparable(seen);
    });
    expect(ours).toEqual(sdk);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    expect(bodiesOf(ourServer)[1]).toMatchObject({ max_tokens: 500, temperature: 0.5 });
  });
});

describe('over an SDK thread, fields the program sets or removes, then setMessagesParams', () => {
  it('a field set on the thread, then params read before it set anew: the field goes, as in the SDK\'s runner', async () => {
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, {});
      await runner;
      const before = runner.params;
      thread.update({ top_k: 5 } as never);
      runner.setMessagesParams({ ...before, max_tokens: 300, messages: [...before.messages, { role: 'user', content: 'More?' }] });
      const set = { params: { ...runner.params, messages: undefined, tools: undefined }, thread: { ...thread.params, messages: undefined, tools: undefined } };
      await makeRunner(thread, {});
      return comparable(set);
    });
    expect(ours).toEqual(sdk);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    expect(bodiesOf(ourServer).at(-1)).not.toHaveProperty('top_k');
  });

  it('a field another runner removed from the thread: the first one goes on without it, as the SDK\'s runner does', async () => {
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, temperature: 0.5, messages: ask, tools: [weather(log)] } as never);
      const first = makeRunner(thread, { max_iterations: 1 });
      await first;
      const other = makeRunner(thread, {});
      other.setMessagesParams(({ temperature: _removed, ...params }: Record<string, unknown>) => params);
      first.setMessagesParams((params: Record<string, unknown>) => ({ ...params, max_iterations: 3 }));
      const set = { ...first.params, messages: undefined, tools: undefined };
      // (The SDK's runner, iterated again after max_iterations, throws: the README's differences table.)
      await Promise.resolve(first).catch(() => undefined);
      return comparable(set);
    });
    expect(ours).toEqual(sdk);
    expect(ours).not.toHaveProperty('temperature');
    expect(bodiesOf(sdkServer)).toHaveLength(1);
    expect(bodiesOf(ourServer)[0]).toHaveProperty('temperature', 0.5);
    expect(bodiesOf(ourServer)).toHaveLength(2);
    expect(bodiesOf(ourServer)[1]).not.toHaveProperty('temperature');
  });

  it('a system changed on the thread in the loop body: the run fails with the thread\'s own error, not as a reply that could not be read', async () => {
    const server = await mockServer(steps());
    const thread = server.client().beta.messages.thread({ model, max_tokens: 256, system: 'A', messages: ask, tools: [weather([])] } as never);
    const runner = toolRunner(thread, {});
    const failure = async () => {
      try {
        for await (const _ of runner) thread.update({ system: 'B' } as never);
      } catch (error) {
        return error as Error;
      }
      return undefined;
    };
    for (const error of [await failure(), await failure()]) {
      expect(error?.constructor.name).toBe('AnthropicError');
      expect(error?.message).toMatch(/^Cannot change `system` on a thread/);
    }
    expect(server.requests).toHaveLength(1);
  });
});

describe('over an SDK thread, an empty reply (not kept), then a question appended in the loop body', () => {
  it('the question is kept, and the next runner sends it (the SDK\'s keeps the empty reply, which the API refuses)', async () => {
    const server = await mockServer([{ content: [] }, { content: [text('Here.')] }]);
    const thread = server.client().beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather([])] } as never);
    const runner = toolRunner(thread, {});
    for await (const message of runner) if (message.content.length === 0) thread.append({ role: 'user', content: 'Are you there?' });
    expect(shape(thread.messages)).toEqual(['user: Weather in Paris?', 'user: Are you there?']);
    expect(shape(runner.params.messages)).toEqual(shape(thread.messages));
    await toolRunner(thread, {});
    expect(shape(thread.messages).at(-1)).toBe('assistant: text');
    expect(historyProblems(wire(server.requests.at(-1)!).messages)).toEqual([]);
  });
});

describe('over an SDK thread, a message appended while calls wait for approval', () => {
  it('waits in the thread until the calls are decided, then goes after their results: the history stays valid', async () => {
    const server = await mockServer(steps());
    const client = server.client();
    const ran: string[] = [];
    const gated = tool({ name: 'get_weather', inputSchema: z.object({ location: z.string() }), needsApproval: true, run: ({ location }) => (ran.push(location), `21°C in ${location}`) });
    const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [gated] } as never);
    const runner = toolRunner(thread, {});
    for await (const _ of runner) thread.append(note);
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_t1']);
    expect(shape(thread.messages)).toEqual(['user: Weather in Paris?', 'assistant: tool_use', 'user: A note from the app.']);
    // Params set meanwhile leave the thread what was appended.
    runner.setMessagesParams((params) => ({ ...params, max_tokens: 300 }));
    expect(shape(thread.messages).at(-1)).toBe('user: A note from the app.');
    runner.approve('toolu_t1');
    await runner;
    expect(ran).toEqual(['Paris']);
    expect(bodiesOf(server)[1]).toMatchObject({ messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_t1', content: '21°C in Paris' }] }, note] });
    expect(shape(runner.params.messages)).toEqual(shape(thread.messages));
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
});

describe('over an SDK thread, a reply of the run\'s own that the run did not keep is not taken for the program\'s', () => {
  for (const runToolsEagerly of [false, true]) {
    it(`a stream broken after a whole tool_use block (the thread keeps the reply in part): iterating again sends the request again, the call runs once (runToolsEagerly: ${runToolsEagerly})`, async () => {
      // Text after the call, slowly: an eager call starts when the next block does, before the stream breaks.
      const broken: Step = { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_p1'), text('and more text here, quite a lot of it')], chunkSize: 4, eventDelayMs: 20, stop_reason: 'tool_use', disconnectAfterEvents: 14 };
      const server = await mockServer([broken, { content: [text('21°C.')] }]);
      const log: string[] = [];
      const thread = server.client({ maxRetries: 0 }).beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = toolRunner(thread, { stream: true, runToolsEagerly });
      await expect(collectStreams(runner)).rejects.toThrow(/terminated|Connection error/); // (the SDK's own words: 1.17 says "Connection error.")
      expect(shape(thread.messages)).toEqual(['user: Weather in Paris?', 'assistant: tool_use']);
      expect(shape(runner.params.messages)).toEqual(['user: Weather in Paris?']);
      await collectStreams(runner);
      expect(log).toEqual(runToolsEagerly ? ['get_weather Paris'] : []);
      expect(bodiesOf(server).map((body) => shape((body as { messages: never }).messages))).toEqual([['user: Weather in Paris?'], ['user: Weather in Paris?']]);
      expect(shape(thread.messages)).toEqual(['user: Weather in Paris?', 'assistant: text']);
      expect(shape(runner.params.messages)).toEqual(shape(thread.messages));
    });
  }

  it('a reply left with break, which the program answers on the thread: taken in with its results once, however often params are read', async () => {
    const server = await mockServer([{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_b1')] }, { content: [text('21°C.')] }]);
    const thread = server.client().beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather([])] } as never);
    const runner = toolRunner(thread, {});
    for await (const _ of runner) break;
    thread.append({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_b1', content: 'answered by the app' }] });
    const reads = [shape(runner.params.messages), shape(runner.params.messages), shape(runner.params.messages)];
    expect(reads).toEqual(Array(3).fill(['user: Weather in Paris?', 'assistant: tool_use', 'user: tool_result']));
    runner.pushMessages({ role: 'user', content: 'Late.' });
    expect(historyProblems(thread.messages)).toEqual([]);
    await toolRunner(thread, {});
    expect(wire(server.requests.at(-1)!).body).toMatchObject({ thread: { type: 'continue' }, messages: [{ role: 'user', content: [{ tool_use_id: 'toolu_b1' }] }, { role: 'user', content: 'Late.' }] });
  });
});

describe('over an SDK thread, what another run or the program put there is never taken for the run\'s own unkept reply', () => {
  it('another runner answered a question the first one pushed: the first one, pushed to again, keeps that answer', async () => {
    const chat = (): Step[] => [{ content: [text('Hi.')] }, { content: [text('Rome: sunny.')] }, { content: [text('Oslo: cold.')] }];
    const { sdk, ours } = await overThreadBoth(chat, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const first = makeRunner(thread, {});
      await first;
      first.pushMessages({ role: 'user', content: 'And Rome?' });
      await makeRunner(thread, {});
      first.pushMessages({ role: 'user', content: 'And Oslo?' });
      return comparable({ thread: shape(thread.messages), params: shape(first.params.messages) });
    });
    expect(ours).toEqual(sdk);
    expect((ours as { thread: string[] }).thread.slice(-3)).toEqual(['user: And Rome?', 'assistant: text', 'user: And Oslo?']);
  });

  it('an assistant message the program appends before the first turn (a prefill) is sent, as by the SDK\'s runner', async () => {
    const { sdkServer, ourServer } = await overThreadBoth(() => [{ content: [text(' there.')] }], async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, {});
      thread.append({ role: 'assistant', content: 'Hello' });
      await runner;
    });
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    expect(bodiesOf(ourServer)[0]).toMatchObject({ messages: [ask[0], { role: 'assistant', content: 'Hello' }] });
  });

  it('a history cut back, after the run, to a reply whose calls the thread holds answers for: the thread takes it, as in the SDK\'s runner', async () => {
    const { sdk, ours } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, {});
      await runner;
      const before = runner.params;
      runner.setMessagesParams({ ...before, messages: before.messages.slice(0, 2) });
      return comparable({ thread: shape(thread.messages), params: shape(runner.params.messages) });
    });
    expect(ours).toEqual(sdk);
    expect((ours as { thread: string[] }).thread).toEqual(['user: Weather in Paris?', 'assistant: tool_use']);
  });
});

describe('over an SDK thread, a new runner after a stream that broke (the thread keeps the reply in part)', () => {
  // The reply's text, then an error event: the run fails, and the SDK's thread keeps the text as a partial reply.
  const broken = (): Step[] => [
    { content: [text('Half a rep')], error: { status: 500, afterEvents: 4 } } as Step,
    { content: [text('21°C.')] },
    { content: [text('Sunny tomorrow.')] },
  ];
  const failedFirst = async (makeRunner: (thread: any, settings: any) => any, thread: any) => {
    await expect(collectStreams(makeRunner(thread, { stream: true }))).rejects.toThrow();
    expect(shape(thread.messages)).toEqual(['user: Weather in Paris?', 'assistant: text']);
  };

  it('the new run starts without the partial reply, which the thread sends its turn again without, as in the SDK\'s runner', async () => {
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(broken, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      await failedFirst(makeRunner, thread);
      const retry = makeRunner(thread, { stream: true });
      await collectStreams(retry);
      return comparable({ thread: thread.messages, params: retry.params.messages });
    });
    expect(ours).toEqual(sdk);
    expect(shape((ours as { params: never }).params)).toEqual(['user: Weather in Paris?', 'assistant: text']);
    expect(historyProblems((ours as { thread: never }).thread)).toEqual([]);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
  });

  it('a runner made before another one went on: pushed to afterwards, it keeps the other\'s reply and sends the question after it', async () => {
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(broken, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      await failedFirst(makeRunner, thread);
      const early = makeRunner(thread, { stream: true });
      await collectStreams(makeRunner(thread, { stream: true }));
      thread.append(note);
      early.pushMessages({ role: 'user', content: 'And tomorrow?' });
      await collectStreams(makeRunner(thread, { stream: true }));
      return comparable(thread.messages);
    });
    expect(ours).toEqual(sdk);
    expect(shape(ours as never)).toEqual(['user: Weather in Paris?', 'assistant: text', `user: ${note.content}`, 'user: And tomorrow?', 'assistant: text']);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
  });

  for (const how of ['pushMessages', 'setMessagesParams', 'thread.append'] as const) {
    it(`a question added before the new run's first turn (${how}) goes after the partial reply, which the thread then sends, as in the SDK's runner`, async () => {
      const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(broken, async (makeRunner, client, log) => {
        const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
        await failedFirst(makeRunner, thread);
        const retry = makeRunner(thread, { stream: true });
        const question = { role: 'user' as const, content: 'And tomorrow?' };
        if (how === 'pushMessages') retry.pushMessages(question);
        else if (how === 'setMessagesParams') retry.setMessagesParams((params: { messages: unknown[] }) => ({ ...params, messages: [...params.messages, question] }));
        else thread.append(question);
        await collectStreams(retry);
        return comparable({ thread: shape(thread.messages), params: shape(retry.params.messages) });
      });
      expect(ours).toEqual(sdk);
      expect((ours as { thread: string[] }).thread).toEqual(['user: Weather in Paris?', 'assistant: text', 'user: And tomorrow?', 'assistant: text']);
      expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    });
  }

  for (const question of [false, true]) {
    it(`the failed runner, iterated again, gets the whole reply before the new one runs: the new one goes on from it, as in the SDK's runner (a question appended: ${question})`, async () => {
      const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(broken, async (makeRunner, client, log) => {
        const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
        const first = makeRunner(thread, { stream: true });
        await expect(Promise.resolve(first)).rejects.toThrow();
        const later = makeRunner(thread, { stream: true });
        await collectStreams(first);
        if (question) thread.append({ role: 'user', content: 'And tomorrow?' });
        await collectStreams(later);
        return comparable({ thread: thread.messages, params: later.params.messages });
      });
      expect(ours).toEqual(sdk);
      expect(shape((ours as { thread: never }).thread).slice(0, 2)).toEqual(['user: Weather in Paris?', 'assistant: text']);
      expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    });
  }

  it('after a turn with calls, the turn sent again without the partial reply is the thread\'s own: answered messages lose their cache_control, as in the SDK\'s runner', async () => {
    const marked = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Weather in Paris?', cache_control: { type: 'ephemeral' as const } }] }];
    const steps = (): Step[] => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_cc')] }, { content: [text('Half a rep')], error: { status: 500, afterEvents: 4 } } as Step, { content: [text('21°C.')] }];
    const { sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: marked, tools: [weather(log)] } as never);
      await expect(collectStreams(makeRunner(thread, { stream: true }))).rejects.toThrow();
      await collectStreams(makeRunner(thread, { stream: true }));
    });
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    expect(JSON.stringify(bodiesOf(ourServer).at(-1))).not.toContain('cache_control');
  });

  for (const how of ['pushMessages', 'thread.append'] as const) {
    it(`a partial reply with a whole call, a question added before the new run's turn (${how}): the call is answered as broken off, never run, and the request is valid`, async () => {
      const steps = (): Step[] => [
        { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_pb'), text('and more text here, quite a lot of it')], chunkSize: 4, eventDelayMs: 20, stop_reason: 'tool_use', disconnectAfterEvents: 14 },
        { content: [text('Tomorrow: sunny.')] },
      ];
      const server = await mockServer(steps());
      const log: string[] = [];
      const thread = server.client({ maxRetries: 0 }).beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      await expect(collectStreams(toolRunner(thread, { stream: true }))).rejects.toThrow();
      const retry = toolRunner(thread, { stream: true });
      const question = { role: 'user' as const, content: 'And tomorrow?' };
      if (how === 'pushMessages') retry.pushMessages(question);
      else thread.append(question);
      await collectStreams(retry);
      expect(log).toEqual([]);
      const sent = server.requests.at(-1)!.messages as never;
      expect(historyProblems(sent)).toEqual([]);
      expect(shape(sent)).toEqual(['user: Weather in Paris?', 'assistant: tool_use', 'user: tool_result', 'user: And tomorrow?']);
      expect(JSON.stringify(sent)).toContain('broke off before it ended');
    });
  }

  it('an assistant message the program appended before the runner was made (a prefill) is no partial reply: it is sent', async () => {
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(() => [{ content: [text(' there.')] }], async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      thread.append({ role: 'assistant', content: 'Hello' });
      const runner = makeRunner(thread, { stream: true });
      const before = shape(runner.params.messages);
      await collectStreams(runner);
      return comparable({ before, thread: shape(thread.messages) });
    });
    expect(ours).toEqual(sdk);
    expect((ours as { before: string[] }).before).toEqual(['user: Weather in Paris?', 'assistant: Hello']);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
  });
});

async function collectStreams(runner: AsyncIterable<{ finalMessage(): Promise<unknown> }>) {
  for await (const stream of runner) await stream.finalMessage();
}
