import { APIUserAbortError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HookError, type Hooks, type RunnerEvent, type RunnerSnapshot, resumeToolRunner, tool, toolRunner } from 'tool-runner';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, captureLogger, mockServer, sleep, unhandledDuring, wire } from './helpers.js';

const echo = (log: string[]) =>
  tool({ name: 'echo', inputSchema: z.object({ say: z.string() }), run: ({ say }) => (log.push(say), `echo: ${say}`) });
const boom = tool({
  name: 'boom',
  inputSchema: z.object({}),
  run: () => {
    throw new Error('kaboom');
  },
});

describe('hooks', () => {
  it("onRequest's params are the run's own: a mark added in place stays in the history, a new list goes with its request only", async () => {
    const steps = () => [{ content: [toolUse('echo', { text: 'a' })] }, { content: [toolUse('echo', { text: 'b' })] }, { content: [text('done')] }];
    const marks = (body: unknown) => (JSON.stringify(body).match(/cache_control/g) ?? []).length;
    const inPlace = await mockServer(steps());
    await toolRunner(inPlace.client(), { ...baseParams, thread: false, tools: [echo([])] }, {
      hooks: { onRequest: (params) => void ((params.messages.at(-1)!.content as Array<{ cache_control?: object }>).at?.(-1) && Object.assign((params.messages.at(-1)!.content as object[]).at(-1)!, { cache_control: { type: 'ephemeral' } })) },
    });
    expect(inPlace.requests.map((request) => marks(wire(request).messages))).toEqual([0, 1, 2]);
    const note = { role: 'user' as const, content: 'Rows are 1-based.' };
    const oneRequest = await mockServer(steps());
    const runner = toolRunner(oneRequest.client(), { ...baseParams, thread: false, tools: [echo([])] }, { hooks: { onRequest: (params) => void (runner.iteration === 1 && (params.messages = [...params.messages, note])) } });
    await runner;
    expect(oneRequest.requests.map((request) => wire(request).messages.some((message: { content: unknown }) => message.content === note.content))).toEqual([false, true, false]);
    expect(runner.params.messages).not.toContainEqual(note);
  });

  for (const why of ['an unknown tool', 'a call past budget.maxToolCalls'] as const) {
    it(`an onToolResult hook that throws for ${why} (answered without running): its tool.start has a tool.end with the error`, async () => {
      const add = tool({ name: 'add', inputSchema: z.object({ a: z.number() }), run: ({ a }) => `sum ${a}` });
      const second = why === 'an unknown tool' ? toolUse('nope', { a: 2 }, 'toolu_b') : toolUse('add', { a: 2 }, 'toolu_b');
      const server = await mockServer([{ content: [toolUse('add', { a: 1 }, 'toolu_a'), second] }, { content: [text('done')] }]);
      const events: RunnerEvent[] = [];
      const runner = toolRunner(server.client(), { ...baseParams, tools: [add] }, {
        onEvent: (event) => void (event.type.startsWith('tool.') && events.push(event)),
        hooks: { onToolResult: (result) => { if (result.is_error) throw new Error('no error results here'); } },
        ...(why === 'a call past budget.maxToolCalls' && { budget: { maxToolCalls: 1 } }),
      });
      await expect(runner).rejects.toThrow(HookError);
      const of = (id: string) => events.filter((event) => (event as { call?: { id: string } }).call?.id === id).map((event) => event.type);
      expect(of('toolu_a')).toEqual(['tool.start', 'tool.end']);
      expect(of('toolu_b')).toEqual(['tool.start', 'tool.end']);
      expect(events.find((event) => event.type === 'tool.end' && event.call.id === 'toolu_b')).toMatchObject({ error: expect.any(HookError) });
    });
  }

  it('are called once per request, message, tool call, result and throwing tool, and awaited', async () => {
    const events: string[] = [];
    const hooks: Hooks = {
      onRequest: async (params) => {
        await sleep(5);
        events.push(`request ${(params.messages as unknown[]).length}`);
      },
      onMessage: (message) => void events.push(`message ${message.stop_reason}`),
      onToolCall: (call) => void events.push(`call ${call.name} ${JSON.stringify(call.input)}`),
      onToolResult: (result) => void events.push(`result ${result.tool_use_id} ${result.is_error ? 'error' : 'ok'}`),
      onToolError: (error, call) => void events.push(`error ${call.name} ${(error as Error).message}`),
    };
    const server = await mockServer([
      { content: [toolUse('echo', { say: 'hi' }, 'toolu_e'), toolUse('boom', {}, 'toolu_b')] },
      { content: [text('ok')] },
    ]);
    await toolRunner(server.client(), { ...baseParams, tools: [echo([]), boom] }, { hooks });
    expect(events.slice(0, 2)).toEqual(['request 1', 'message tool_use']);
    expect(events.slice(2, 7).sort()).toEqual(
      ['call echo {"say":"hi"}', 'call boom {}', 'result toolu_e ok', 'result toolu_b error', 'error boom kaboom'].sort(),
    );
    expect(events.slice(7)).toEqual(['request 3', 'message end_turn']);
  });

  it('onToolCall may skip a call with a given result, or replace its input (validated again)', async () => {
    const log: string[] = [];
    const server = await mockServer([
      {
        content: [
          toolUse('echo', { say: 'skip me' }, 'toolu_1'),
          toolUse('echo', { say: 'replace me' }, 'toolu_2'),
          toolUse('echo', { say: 'bad' }, 'toolu_3'),
        ],
      },
      { content: [text('ok')] },
    ]);
    await toolRunner(server.client(), { ...baseParams, tools: [echo(log)] }, {
      hooks: {
        onToolCall: (call) => {
          const { say } = call.input as { say: string };
          if (say === 'skip me') return { result: 'cached answer' };
          if (say === 'replace me') return { input: { say: 'replaced' } };
          return { input: { say: 42 } };
        },
      },
    });
    expect(log).toEqual(['replaced']);
    const [first, second, third] = wire(server.requests[1]!).messages[2].content;
    expect(first).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', content: 'cached answer' });
    expect(second).toEqual({ type: 'tool_result', tool_use_id: 'toolu_2', content: 'echo: replaced' });
    expect(third).toMatchObject({ is_error: true, content: expect.stringContaining("Invalid input for tool 'echo'") });
  });

  it('onToolCall giving { input: undefined } for a JSON Schema tool: the call is answered as invalid input, the run goes on (it stopped with a ValidatorError)', async () => {
    const said: unknown[] = [];
    const plain = tool({ name: 'plain', inputSchema: { type: 'object', properties: { say: { type: 'string' } } }, run: (input) => (said.push(input), 'said') });
    const server = await mockServer([{ content: [toolUse('plain', { say: 'hi' }, 'toolu_1')] }, { content: [text('ok')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [plain] }, { hooks: { onToolCall: () => ({ input: undefined }) } });
    await runner;
    expect(said).toEqual([]);
    expect(wire(server.requests[1]!).messages[2].content[0]).toMatchObject({ is_error: true, content: expect.stringContaining('(root): is missing (undefined): the input must be a JSON value') });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("a tool that failed before the run aborted, while its onToolResult or onToolError hook ran: its tool.end is a failure, not a cancellation", async () => {
    for (const hook of ['onToolResult', 'onToolError'] as const) {
      const server = await mockServer([{ content: [toolUse('boom', {}, 'toolu_b')] }, { content: [text('ok')] }]);
      const controller = new AbortController();
      const ends: RunnerEvent[] = [];
      const hooks: Hooks = { [hook]: async () => { controller.abort(); await sleep(20); } };
      const runner = toolRunner(server.client(), { ...baseParams, tools: [boom] }, { signal: controller.signal, hooks, onEvent: (event) => void (event.type === 'tool.end' && ends.push(event)) });
      await runner.runUntilDone().catch(() => {});
      expect(ends, hook).toHaveLength(1);
      expect(ends[0], hook).toMatchObject({ result: { is_error: true, content: expect.stringContaining('kaboom') } });
      expect((ends[0] as { cancelled?: true }).cancelled, hook).toBeUndefined();
    }
  });

  it('a hook that throws stops the run with a HookError naming the hook; the history stays valid', async () => {
    const server = await mockServer([{ content: [toolUse('echo', { say: 'x' })] }, { content: [text('ok')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [echo([])] }, {
      hooks: {
        onToolResult: () => {
          throw new TypeError('bad hook');
        },
      },
    });
    const error = await runner.runUntilDone().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HookError);
    expect(error).toMatchObject({ hook: 'onToolResult', message: 'hooks.onToolResult threw: TypeError: bad hook' });
    expect((error as Error).cause).toBeInstanceOf(TypeError);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  // An error quoting a whole response body (a log store's 2 MB HTML page) went whole into the HookError's message, and so
  // into every log line and report of it.
  it("a hook's error of a huge message: the HookError's message quotes its start and says how much is left out; the cause keeps it whole", async () => {
    const server = await mockServer([{ content: [toolUse('echo', { say: 'x' })] }, { content: [text('ok')] }]);
    const body = `<html>${'x'.repeat(2_000_000)}</html>`;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [echo([])] }, {
      hooks: {
        onToolResult: () => {
          throw new Error(`audit store answered 502: ${body}`);
        },
      },
    });
    const error = await runner.runUntilDone().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HookError);
    const { message } = error as HookError;
    expect(message.length).toBeLessThan(1200);
    expect(message).toMatch(/^hooks\.onToolResult threw: Error: audit store answered 502: <html>x+… \(\d+ more characters: see the cause\)$/);
    expect(((error as Error).cause as Error).message).toBe(`audit store answered 502: ${body}`);
  });

  it("a hook that throws about one call: the reply's other calls run on, and iterating again uses their results (never runs them twice)", async () => {
    const server = await mockServer([{ content: [toolUse('slow', {}, 'toolu_slow'), toolUse('echo', { say: 'x' }, 'toolu_echo')] }, { content: [text('ok')] }]);
    let runs = 0;
    let finished = false;
    const slow = tool({ name: 'slow', inputSchema: z.object({}), run: async () => (runs++, await sleep(50), (finished = true), 'slow done') });
    let failing = true;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [slow, echo([])] }, {
      hooks: {
        onToolCall: (call) => {
          if (call.name === 'echo' && failing) throw new TypeError('bad hook');
        },
      },
    });
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(HookError);
    // The run failed at once; its other call is still running.
    expect(finished).toBe(false);
    failing = false;
    expect(await runner.runUntilDone()).toMatchObject({ content: [{ text: 'ok' }] });
    expect(runs).toBe(1);
    expect(wire(server.requests[1]!).messages[2].content.map((block: { content: string }) => block.content)).toEqual(['slow done', 'echo: x']);
  });

  for (const hook of ['onRequest', 'onMessage', 'onToolCall', 'onToolResult'] as const) it(`${hook}, a hook that never settles: the run's signal still ends the run (an abort)`, async () => {
    const server = await mockServer([{ content: [toolUse('echo', { say: 'x' })] }, { content: [text('ok')] }]);
    const controller = new AbortController();
    const ran: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [echo(ran)] }, {
      signal: controller.signal,
      // The abort comes once the hook hangs (a timer from the start raced the first request on a busy machine).
      hooks: {
        [hook]: () => {
          setTimeout(() => controller.abort(), 10);
          return new Promise(() => {});
        },
      },
    });
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(APIUserAbortError);
    expect(runner.stoppedBy).toBe('abort');
    expect(historyProblems(runner.params.messages)).toEqual([]);
    // A hook about a call: the call is answered all the same (its result, or as aborted), as for an abort during the tool.
    if (hook === 'onToolCall' || hook === 'onToolResult') {
      expect(runner.params.messages.at(-1)!.content).toEqual([
        hook === 'onToolCall' ? expect.objectContaining({ tool_use_id: expect.any(String), is_error: true, content: "Error: the call to 'echo' was aborted before it started, so it was not run." }) : expect.objectContaining({ content: 'echo: x' }),
      ]);
      expect(ran).toEqual(hook === 'onToolCall' ? [] : ['x']);
    }
  });

  it('a reply whose onMessage hook threw was paid for: its usage is in runner.usage, and budget.maxTokens counts it', async () => {
    for (const stream of [false, true]) {
      const server = await mockServer([
        { content: [text('first')], usage: { input_tokens: 1000, output_tokens: 500 } },
        { content: [text('second')], usage: { input_tokens: 1000, output_tokens: 500 } },
      ]);
      let failures = 1;
      const runner = toolRunner(server.client(), { ...baseParams, stream }, {
        budget: { maxTokens: 1500 },
        hooks: {
          onMessage: () => {
            if (failures-- > 0) throw new Error('db down');
          },
        },
      });
      await expect(runner.runUntilDone()).rejects.toThrow(HookError);
      expect(runner.usage).toMatchObject({ input_tokens: 1000, output_tokens: 500 });
      // The budget is spent: no second request.
      await runner.runUntilDone().catch(() => undefined);
      expect(server.requests).toHaveLength(1);
      expect(runner.stoppedBy).toBe('budget');
    }
  });

  it('onToolCall returning something that is not { result } or { input } (or nothing) stops the run with a HookError saying what it must return', async () => {
    for (const odd of ['skip', 42, { result: 42 }, { result: null }, { result: { a: 1 } }, { result: 'cached', is_error: true }, { input: {}, note: 'x' }]) {
      const server = await mockServer([{ content: [toolUse('echo', { say: 'x' })] }, { content: [text('ok')] }]);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [echo([])] }, { hooks: { onToolCall: () => odd as never } });
      const error = await runner.runUntilDone().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HookError);
      expect((error as Error).message).toMatch(/hooks\.onToolCall threw: TypeError: onToolCall returned .* return nothing, \{ result \}/);
      // A field of no override (the API's is_error for isError) is named: its result went as no error.
      if (typeof odd === 'object' && 'is_error' in odd) expect((error as Error).message).toContain("the field 'is_error' (did you mean isError?)");
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it('onToolCall returning { result: undefined } (a cache miss) is a HookError that shows the field (it said `returned {}`)', async () => {
    const server = await mockServer([{ content: [toolUse('echo', { say: 'x' })] }, { content: [text('ok')] }]);
    const cache = new Map<string, string>();
    const runner = toolRunner(server.client(), { ...baseParams, tools: [echo([])] }, { hooks: { onToolCall: () => ({ result: cache.get('x')! }) } });
    const error = await runner.runUntilDone().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HookError);
    expect((error as Error).message).toMatch(/^hooks\.onToolCall threw: TypeError: onToolCall returned \{"result":undefined\}; return nothing, \{ result \}/);
  });

  it('onToolCall returning both { result } and { input } is a HookError naming both (the input was dropped in silence), and the tool does not run', async () => {
    const server = await mockServer([{ content: [toolUse('echo', { say: 'x' })] }, { content: [text('ok')] }]);
    const ran: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [echo(ran)] }, { hooks: { onToolCall: () => ({ result: 'cached', input: { say: 'y' } }) as never } });
    const error = await runner.runUntilDone().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HookError);
    expect((error as Error).message).toBe('hooks.onToolCall threw: TypeError: onToolCall returned both { result } and { input }; return one: { result } answers the call without running it, { input } runs it with that input');
    expect(ran).toEqual([]);
  });

  it('onToolCall returning { input } with isError is a HookError (isError goes with a result: it was dropped in silence, the tool run as no error)', async () => {
    const server = await mockServer([{ content: [toolUse('echo', { say: 'x' })] }, { content: [text('ok')] }]);
    const ran: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [echo(ran)] }, { hooks: { onToolCall: () => ({ input: { say: 'y' }, isError: true }) as never } });
    const error = await runner.runUntilDone().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HookError);
    expect((error as Error).message).toBe('hooks.onToolCall threw: TypeError: onToolCall returned { input } with isError, which goes with { result } only: { input } runs the tool, and its own outcome says whether it failed');
    expect(ran).toEqual([]);
  });

  it("onToolCall's { result } is checked as a tool's own result is: blocks the API refuses stop the run with a HookError, and never reach the history", async () => {
    for (const [result, kind] of [
      [[{ type: 'image' }], 'an array whose item 0 is an image block without a source'],
      [[null], 'an array whose item 0 is null'],
    ] as const) {
      const log: string[] = [];
      const server = await mockServer([{ content: [toolUse('echo', { say: 'x' })] }, { content: [text('ok')] }]);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [echo(log)] }, { hooks: { onToolCall: () => ({ result }) as never } });
      const error = await runner.runUntilDone().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HookError);
      expect((error as Error).message).toBe(`hooks.onToolCall threw: TypeError: onToolCall returned { result } whose content is ${kind}; a result is a string or content blocks a tool result holds`);
      expect(log).toEqual([]);
      expect(server.requests).toHaveLength(1);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it('a result hook that throws after the tool ran: iterating again runs the hook again, never the tool; started while the reply streamed too', async () => {
    for (const eager of [false, true]) {
      const log: string[] = [];
      let failures = 1;
      const hooks: Hooks = {
        onToolResult: () => {
          if (failures-- > 0) throw new Error('audit log down');
        },
      };
      const server = await mockServer([{ content: [toolUse('echo', { say: 'pay once' }, 'toolu_pay')] }, { content: [text('Paid.')] }]);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [echo(log)], stream: eager, runToolsEagerly: eager }, { hooks });
      const drive = async () => {
        for await (const item of runner) if (eager) await (item as { finalMessage(): Promise<unknown> }).finalMessage();
      };
      await expect(drive()).rejects.toThrow(/onToolResult threw: Error: audit log down/);
      expect(log).toEqual(['pay once']);
      await drive();
      expect(log).toEqual(['pay once']);
      expect(wire(server.requests[1]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_pay', content: 'echo: pay once' }]);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it("a result hook that changed the result's blocks in place, then threw: iterating again, or resuming a snapshot taken in it, gives the hook the result as the tool gave it (its changes were made twice)", async () => {
    for (const via of ['iterating again', 'a snapshot'] as const) {
      const blocks = tool({ name: 'blocks', inputSchema: z.object({}), run: () => [{ type: 'text' as const, text: 'row 1' }] });
      const given: string[] = [];
      let failures = 1;
      let snapshot: unknown;
      const hooks: Hooks = {
        onToolResult: (result) => {
          const content = result.content as Array<{ type: 'text'; text: string }>;
          given.push(JSON.stringify(content));
          content[0]!.text += ' (checked)';
          content.push({ type: 'text', text: 'Audited.' });
          if (via === 'a snapshot') snapshot ??= JSON.parse(JSON.stringify(runner.toJSON()));
          else if (failures-- > 0) throw new Error('audit log down');
        },
      };
      const server = await mockServer([{ content: [toolUse('blocks', {}, 'toolu_1')] }, { content: [text('Done.')] }, { content: [text('Done.')] }]);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [blocks] }, { hooks });
      if (via === 'iterating again') await expect(runner.runUntilDone()).rejects.toThrow(/audit log down/);
      await runner;
      if (via === 'a snapshot') await resumeToolRunner(server.client(), snapshot as RunnerSnapshot, { tools: [blocks], options: { hooks } });
      expect(given, via).toEqual([JSON.stringify([{ type: 'text', text: 'row 1' }]), JSON.stringify([{ type: 'text', text: 'row 1' }])]);
      const sent = [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'row 1 (checked)' }, { type: 'text', text: 'Audited.' }] }];
      expect(wire(server.requests.at(-1)!).messages.at(-1).content, via).toEqual(sent);
    }
  });

  it("a result hook with a tool whose blocks come in a list structuredClone cannot copy (a store's reactive Proxy): the result is sent, the run does not fail with DataCloneError", async () => {
    // The blocks themselves are plain (the run checks each can be copied); the list holding them is a Proxy, as a store's state is.
    const blocks = tool({ name: 'blocks', inputSchema: z.object({}), run: () => new Proxy([{ type: 'text' as const, text: 'row 1' }], {}) });
    const server = await mockServer([{ content: [toolUse('blocks', {}, 'toolu_1')] }, { content: [text('Done.')] }]);
    const given: unknown[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [blocks] }, { hooks: { onToolResult: (result) => void given.push(result.content) } });
    await runner;
    expect(given).toEqual([[{ type: 'text', text: 'row 1' }]]);
    expect(wire(server.requests.at(-1)!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'row 1' }] }]);
  });

  it('a result hook that threw, then a snapshot resumed: the hook gets the uncut result again, the tool does not run again', async () => {
    const log: string[] = [];
    const seen: string[] = [];
    let failures = 1;
    const long = tool({ name: 'long', inputSchema: z.object({}), run: () => (log.push('ran'), 'x'.repeat(500)) });
    const hooks: Hooks = {
      onToolResult: (result) => {
        seen.push(String(result.content).slice(-60));
        if (failures-- > 0) throw new Error('audit log down');
      },
    };
    const server = await mockServer([{ content: [toolUse('long', {}, 'toolu_long')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [long] }, { hooks, maxToolResultChars: 50 });
    await expect(runner.runUntilDone()).rejects.toThrow(/audit log down/);
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { tools: [long], options: { hooks, maxToolResultChars: 50 } });
    await resumed;
    expect(log).toEqual(['ran']);
    expect(seen).toHaveLength(2);
    expect(seen[1]).toMatch(/the result had 500 characters/);
  });

  it('a snapshot taken in onToolResult or a tool.end listener holds the finished call: resumed, its tool never runs again (a hook it was taken in runs again)', async () => {
    for (const where of ['onToolResult', 'tool.end'] as const) {
      const log: string[] = [];
      const seen: string[] = [];
      const worker = (name: string, ms: number) => tool({ name, inputSchema: z.object({}), run: async () => (await sleep(ms), log.push(name), `${name} done`) });
      const tools = () => [worker('fast', 1), worker('slow', 40)];
      let saved = '';
      const save = (runner: { toJSON(): unknown }, name: string) => {
        if (name === 'fast' && !saved) saved = JSON.stringify(runner.toJSON());
      };
      const hooks: Hooks = { onToolResult: (_result, call) => void seen.push(call.name) };
      let runner: ReturnType<typeof toolRunner> | undefined;
      const options =
        where === 'onToolResult'
          ? { hooks: { onToolResult: (_result: unknown, call: { name: string }) => save(runner!, call.name) } }
          : { onEvent: (event: RunnerEvent) => event.type === 'tool.end' && save(event.runner, event.call.name) };
      const server = await mockServer([{ content: [toolUse('fast', {}, 'toolu_f'), toolUse('slow', {}, 'toolu_s')] }, { content: [text('Done.')] }, { content: [text('Done again.')] }]);
      runner = toolRunner(server.client(), { ...baseParams, tools: tools() }, options);
      await runner;
      expect(log).toEqual(['fast', 'slow']);
      const resumed = resumeToolRunner(server.client(), JSON.parse(saved), { tools: tools(), options: { hooks } });
      await resumed;
      // Only the call that had not finished runs again.
      expect(log).toEqual(['fast', 'slow', 'slow']);
      // The hook the snapshot was taken in had not finished: it runs again; a call whose observers saw it end is done.
      expect(seen.sort()).toEqual(where === 'onToolResult' ? ['fast', 'slow'] : ['slow']);
      expect(wire(server.requests.at(-1)!).messages.at(-1).content).toEqual([
        { type: 'tool_result', tool_use_id: 'toolu_f', content: 'fast done' },
        { type: 'tool_result', tool_use_id: 'toolu_s', content: 'slow done' },
      ]);
      expect(historyProblems(resumed.params.messages)).toEqual([]);
    }
  });

  for (const stream of [false, true]) it(`a reply's other call whose hook throws after the run stopped with a first call's HookError: iterating again runs its hook again, not its tool (it failed at once with the stale error, stream: ${stream})`, async () => {
    const runs: string[] = [];
    const work = tool({ name: 'work', inputSchema: z.object({ ms: z.number() }), run: async ({ ms }) => (runs.push(`ran ${ms}`), await sleep(ms), `took ${ms}`) });
    const server = await mockServer([{ content: [toolUse('work', { ms: 0 }, 'toolu_fast'), toolUse('work', { ms: 40 }, 'toolu_slow')] }, { content: [text('ok')] }]);
    let failing = true;
    const seen: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [work], stream }, {
      hooks: { onToolResult: (result) => { seen.push(`${result.tool_use_id}${failing ? ' (audit down)' : ''}`); if (failing) throw new Error('audit down'); } },
    });
    await expect(runner.runUntilDone()).rejects.toThrow(HookError);
    // The slow call's hook throws too, once nothing awaits it.
    while (seen.length < 2) await sleep(5);
    failing = false;
    expect(await runner.runUntilDone()).toMatchObject({ content: [{ text: 'ok' }] });
    expect(runs.sort()).toEqual(['ran 0', 'ran 40']);
    expect(seen.sort()).toEqual(['toolu_fast', 'toolu_fast (audit down)', 'toolu_slow', 'toolu_slow (audit down)']);
    expect(wire(server.requests[1]!).messages.at(-1).content.map((block: { content: string }) => block.content)).toEqual(['took 0', 'took 40']);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("hooks given as a class's instance are called as its methods (`this` is the instance: each failed with a TypeError reading `this`)", async () => {
    class Audit implements Hooks {
      readonly #seen: string[] = [];
      get seen(): readonly string[] {
        return this.#seen;
      }
      onToolCall(call: { id: string }) {
        this.#seen.push(`call ${call.id}`);
      }
      onToolResult(result: { tool_use_id: string }) {
        this.#seen.push(`result ${result.tool_use_id}`);
      }
    }
    const audit = new Audit();
    const server = await mockServer([{ content: [toolUse('echo', { say: 'x' }, 'toolu_e')] }, { content: [text('ok')] }]);
    expect(await toolRunner(server.client(), { ...baseParams, tools: [echo([])] }, { hooks: audit })).toMatchObject({ content: [{ text: 'ok' }] });
    expect(audit.seen).toEqual(['call toolu_e', 'result toolu_e']);
    // Its own fields beside its methods (a TypeScript parameter property: `constructor(private db)`) are not taken for
    // misspelt hooks; a plain object's other keys still are.
    class Stored {
      constructor(private readonly db: string[]) {}
      onMessage() {
        this.db.push('message');
      }
    }
    const db: string[] = [];
    const again = await mockServer([{ content: [text('ok')] }]);
    await toolRunner(again.client(), baseParams, { hooks: new Stored(db) });
    expect(db).toEqual(['message']);
    expect(() => toolRunner(again.client(), baseParams, { hooks: { onMesage: () => {} } as never })).toThrow(/unknown hook 'onMesage'/);
  });

  it('onToolError that throws after the tool failed: iterating again does not run the tool again', async () => {
    let runs = 0;
    let failures = 1;
    const flaky = tool({
      name: 'flaky',
      inputSchema: z.object({}),
      run: () => {
        runs++;
        throw new Error('kaboom');
      },
    });
    const hooks: Hooks = {
      onToolError: () => {
        if (failures-- > 0) throw new Error('alerting down');
      },
    };
    const server = await mockServer([{ content: [toolUse('flaky', {}, 'toolu_f')] }, { content: [text('Sorry.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [flaky] }, { hooks });
    await expect(runner.runUntilDone()).rejects.toThrow(/onToolError threw/);
    await runner;
    expect(runs).toBe(1);
    expect(wire(server.requests[1]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_f', is_error: true, content: 'Error: kaboom' }]);
  });

  for (const thread of [true, false]) it(`pushMessages in onRequest: the request about to go carries the message, and the reply follows it (thread: ${thread})`, async () => {
    const server = await mockServer([{ content: [toolUse('lookup', { q: 'x' }, 'toolu_p')] }, { content: [text('Both done.')] }]);
    const lookup = tool({ name: 'lookup', inputSchema: z.object({ q: z.string() }), run: ({ q }) => `found ${q}` });
    let requests = 0;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], ...(thread ? {} : { thread: false }) }, {
      hooks: {
        onRequest: () => {
          if (++requests === 2) runner.pushMessages({ role: 'user', content: 'Also Berlin.' });
        },
      },
    });
    expect(await runner).toMatchObject({ content: [{ text: 'Both done.' }] });
    const shape = (message: { role: string; content?: unknown }) => `${message.role}: ${typeof message.content === 'string' ? message.content : (message.content as Array<{ type: string }>).map((block) => block.type).join('+')}`;
    expect(runner.params.messages.map(shape)).toEqual(['user: Weather in Paris?', 'assistant: tool_use', 'user: tool_result', 'user: Also Berlin.', 'assistant: text']);
    expect(wire(server.requests[1]!).messages.at(-1)).toEqual({ role: 'user', content: 'Also Berlin.' });
    expect(server.requests).toHaveLength(2);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  for (const thread of [true, false]) it(`an onRequest hook that pushes a message and gives the request messages of its own: the request carries both, its own first (thread: ${thread})`, async () => {
    const server = await mockServer([{ content: [toolUse('lookup', { q: 'x' }, 'toolu_p')] }, { content: [text('Both done.')] }, { content: [text('Noted.')] }]);
    const lookup = tool({ name: 'lookup', inputSchema: z.object({ q: z.string() }), run: ({ q }) => `found ${q}` });
    let requests = 0;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], ...(thread ? {} : { thread: false }) }, {
      hooks: {
        onRequest: (params) => {
          if (++requests === 2) runner.pushMessages({ role: 'user', content: 'Also Berlin.' }); // a message typed meanwhile
          params.messages = [...params.messages, { role: 'user', content: `(request ${requests})` }]; // this request only
        },
      },
    });
    for await (const message of runner) if (requests === 2) runner.pushMessages(message, { role: 'user', content: 'Thanks.' });
    const said = (message: { role: string; content?: unknown }) => `${message.role}: ${typeof message.content === 'string' ? message.content : (message.content as Array<{ type: string }>).map((block) => block.type).join('+')}`;
    // It had gone with the next request only, after the reply the history said had followed it.
    expect(server.requests[1]!.messages.map(said)).toEqual(['user: Weather in Paris?', 'assistant: tool_use', 'user: tool_result', 'user: (request 2)', 'user: Also Berlin.']);
    expect(runner.params.messages.map(said)).toEqual(['user: Weather in Paris?', 'assistant: tool_use', 'user: tool_result', 'user: Also Berlin.', 'assistant: text', 'user: Thanks.', 'assistant: text']);
    expect(server.requests[2]!.messages.map(said)).toEqual([...runner.params.messages.slice(0, -1).map(said), 'user: (request 3)']);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('an async onEvent listener whose promise rejects is logged, as one that throws; the run goes on and nothing is left unhandled', async () => {
    const server = await mockServer([{ content: [text('Sunny.')] }]);
    const { lines, logger } = captureLogger();
    const unhandled = await unhandledDuring(async () => {
      const runner = toolRunner(server.client({ logger, logLevel: 'warn' }), baseParams, {
        onEvent: async (event) => {
          if (event.type === 'request.start') throw new Error('the audit store is down');
        },
      });
      expect(await runner).toMatchObject({ content: [{ text: 'Sunny.' }] });
    });
    expect(unhandled).toEqual([]);
    expect(lines).toContainEqual({ level: 'warn', message: 'An onEvent listener threw on request.start: the audit store is down' });
  });

  it.each(['onRequest', 'onMessage', 'onToolCall', 'onToolResult', 'onToolError'] as const)('%s that aborts the run and then waits on: the run rejects with the abort at once, the history valid (it hung)', async (name) => {
    const controller = new AbortController();
    const failing = tool({ name: 'fail', inputSchema: z.object({}), run: () => { throw new Error('broken'); } });
    const server = await mockServer([{ content: [toolUse('fail', {}, 'toolu_1')] }, { content: [text('after')] }]);
    const hooks: Hooks = { [name]: async () => { controller.abort(); await new Promise(() => {}); } };
    const runner = toolRunner(server.client(), { ...baseParams, tools: [failing] }, { signal: controller.signal, hooks });
    const outcome = await Promise.race([runner.then(() => 'resolved', (error: unknown) => error), sleep(2_000).then(() => 'hung')]);
    expect(outcome).toBeInstanceOf(APIUserAbortError);
    expect(runner.stoppedBy).toBe('abort');
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('onToolResult called about a call the abort stopped, and never settling: waited for a second, then the aborted run rejects, its history valid (it never settled)', async () => {
    for (const when of ['while the tool ran', 'before it started'] as const) {
      const controller = new AbortController();
      const stoppable = tool({ name: 'stoppable', inputSchema: z.object({}), run: (_input, { signal }) => new Promise((resolve) => signal.addEventListener('abort', () => resolve('stopped'))) });
      const server = await mockServer([{ content: [toolUse('stoppable', {}, 'toolu_1')] }, { content: [text('after')] }]);
      const results: unknown[] = [];
      // Called once the run has aborted, about the call's aborted result: an audit store that never answers.
      const hooks: Hooks = { onToolCall: () => void setTimeout(() => controller.abort(), 20), onToolResult: (result) => (results.push(result.content), new Promise(() => {})) };
      const runner = toolRunner(server.client(), { ...baseParams, tools: [stoppable] }, { signal: controller.signal, hooks });
      const started = Date.now();
      const run = when === 'before it started' ? (async () => { for await (const _message of runner) controller.abort(); })() : runner;
      const outcome = await Promise.race([Promise.resolve(run).then(() => 'resolved', (error: unknown) => error), sleep(4_000).then(() => 'hung')]);
      expect(outcome, when).toBeInstanceOf(APIUserAbortError);
      expect(results, when).toEqual([expect.stringContaining('aborted')]);
      // The observer had its second.
      expect(Date.now() - started, when).toBeGreaterThanOrEqual(900);
      expect(runner.stoppedBy, when).toBe('abort');
      expect(historyProblems(runner.params.messages), when).toEqual([]);
      expect(runner.params.messages.at(-1), when).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true }] });
    }
  });

  it('onToolResult never settling about a call a break stopped (runToolsEagerly): the loop is left after a second, and the run resolves to the reply (the break hung)', async () => {
    const slow = tool({ name: 'slow', inputSchema: z.object({}), run: () => sleep(3_000).then(() => 'late') });
    const server = await mockServer({ eventDelayMs: 5, steps: [{ content: [toolUse('slow', {}, 'toolu_1'), text('Looking it up.')] }] });
    const results: unknown[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [slow], stream: true, runToolsEagerly: true }, { hooks: { onToolResult: (result) => (results.push(result.content), new Promise(() => {})) } });
    const left = (async () => {
      for await (const stream of runner) {
        await stream.finalMessage();
        break;
      }
      return 'left';
    })();
    expect(await Promise.race([left, sleep(2_500).then(() => 'hung')])).toBe('left');
    expect(results).toEqual([expect.stringContaining('aborted')]);
    expect(await Promise.race([runner.then((message) => message.content), sleep(1_000).then(() => 'hung')])).toEqual([expect.objectContaining({ type: 'tool_use' }), expect.objectContaining({ text: 'Looking it up.' })]);
    expect(runner.stoppedBy).toBe('break');
  });

  it("a hook returning a thenable that is no Promise (a query builder's, a promise library's) that never settles: the run's abort ends the wait, as for a Promise (it hung)", async () => {
    const controller = new AbortController();
    const server = await mockServer([{ content: [text('never')] }]);
    // A query object the driver runs when it is awaited: `then` and nothing else of a Promise.
    const query = { then: (_resolve: () => void) => void setTimeout(() => controller.abort(), 20) };
    const runner = toolRunner(server.client(), baseParams, { signal: controller.signal, hooks: { onRequest: () => query as unknown as Promise<void> } });
    const outcome = await Promise.race([runner.then(() => 'resolved', (error: unknown) => error), sleep(2_000).then(() => 'hung')]);
    expect(outcome).toBeInstanceOf(APIUserAbortError);
    expect(server.requests).toHaveLength(0);
  });

  it('a throwing onRequest stops the run before the request is sent', async () => {
    const server = await mockServer([{ content: [text('never')] }]);
    const runner = toolRunner(server.client(), baseParams, {
      hooks: {
        onRequest: () => {
          throw new Error('no network today');
        },
      },
    });
    await expect(runner.runUntilDone()).rejects.toThrow('hooks.onRequest threw: Error: no network today');
    expect(server.requests).toHaveLength(0);
  });
});
