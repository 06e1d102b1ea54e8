/**
 * Drop-in for SDK 1.14.0's runner, point by point (SPEC §9.1): each program runs on
 * `client.beta.messages.toolRunner(params, options)` and on `toolRunner(client, params, options)`,
 * over a message thread and with `thread: false`, against the testing kit's server over HTTP; the
 * request bodies and headers, the yielded messages, the tool calls run and the errors thrown must be
 * the same. (`x-stainless-helper` names this runner `tool-runner` where the SDK's says
 * `BetaToolRunner`: a row of the README's differences table.)
 */
import AnthropicClient from '@anthropic-ai/sdk';
import { AnthropicError } from '@anthropic-ai/sdk';
import { mcpTools } from '@anthropic-ai/sdk/helpers/beta/mcp';
import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory';
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { ToolError as SdkToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { toolRunner } from 'tool-runner';
import { type Step, text, toolUse } from 'tool-runner/testing';
import { connectedClient } from './fixtures/mcp-server.js';
import { captureLogger, mockServer, sleep, wire } from './helpers.js';
import { type Program, type Runner, ask, bodiesOf, callThenFailure, collect, comparable, headersOf, model, overThreadBoth, runBoth, seenWith, weather } from './side-by-side.js';

/** A `tool_use` block of a toolset member (the model names the family in `toolset_name`). */
function member(family: string, name: string, input: unknown, id: string) {
  return { type: 'tool_use', id, name, input, toolset_name: family } as never;
}

/** A runnable computer toolset that logs its calls; a call with `fail` throws. */
function computer(log: string[]) {
  return {
    type: 'computer_toolset_20260801' as const,
    display_width_px: 1024,
    display_height_px: 768,
    run: async (_context: unknown, toolUse: { name: string; input: any }) => {
      log.push(`computer ${toolUse.name}`);
      if (toolUse.input?.fail) throw new Error('the screen is off');
      return [{ type: 'text' as const, text: `did ${toolUse.name}` }];
    },
  };
}

/** A custom tool named like a browser toolset member. */
function navigateTool(log: string[]) {
  return betaZodTool({
    name: 'navigate',
    description: 'Opens a page',
    inputSchema: z.object({ url: z.string() }),
    run: async ({ url }) => {
      log.push(`navigate ${url}`);
      return `opened ${url}`;
    },
  });
}

for (const thread of [undefined, false] as const) {
  describe(thread === false ? 'with thread: false' : 'over a message thread', () => {
    const both = (steps: () => Step[], program: Program, options?: { concurrentLog?: boolean }) => runBoth(steps, program, thread, options);

    it('1. the SDK request options in the third argument go with every request', async () => {
      const { ourServer } = await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_01')] }, { content: [text('21°C')] }],
        async (start, log) =>
          collect(
            start(
              { model, max_tokens: 256, messages: ask, tools: [weather(log)] },
              { headers: { 'x-team': 'blue' }, timeout: 30_000, maxRetries: 1, query: { trace: 'on' }, openTelemetry: { conversationId: 'c-1' } },
            ),
          ),
      );
      expect(ourServer.requests.map((request) => request.headers['x-team'])).toEqual(['blue', 'blue']);
      expect(ourServer.requests.map((request) => request.query)).toEqual([{ trace: 'on' }, { trace: 'on' }]);
    });

    it("the SDK's betaMemoryTool (a built-in client tool: a type, no input_schema) runs, its definition sent as the SDK sends it", async () => {
      const { ourServer } = await both(
        () => [{ content: [toolUse('memory', { command: 'view', path: '/memories' }, 'toolu_m1')] }, { content: [text('Nothing remembered.')] }],
        async (start, log) => {
          const handlers = { view: () => (log.push('view'), 'no memories yet'), create: () => 'created', str_replace: () => 'ok', insert: () => 'ok', delete: () => 'ok', rename: () => 'ok' };
          return collect(start({ model, max_tokens: 256, messages: ask, tools: [betaMemoryTool(handlers as never)] }));
        },
      );
      expect((bodiesOf(ourServer)[0] as { tools: unknown }).tools).toEqual([expect.objectContaining({ type: 'memory_20250818', name: 'memory' })]);
      expect(JSON.stringify(bodiesOf(ourServer)[1])).toContain('"content":"no memories yet"');
    });

    it('a reply placed in the history as the SDK returned it (a BetaMessage: id, model, usage, ...) goes as its role and content', async () => {
      const { ourServer } = await both(
        () => [{ content: [text('one')] }, { content: [text('two')] }, { content: [text('three')] }],
        async (start) => {
          const runner = start({ model, max_tokens: 256, messages: ask });
          const seen = [];
          for await (const message of runner) {
            // The yielded message pushed back as it is, and a question after it (it type-checks on both runners).
            if (seen.length === 0) runner.pushMessages(message, { role: 'user', content: 'And then?' });
            seen.push(message);
          }
          return seen;
        },
      );
      const sent = bodiesOf(ourServer).flatMap((body) => (body as { messages: object[] }).messages);
      expect(sent.length).toBeGreaterThan(thread === false ? 2 : 1);
      for (const message of sent) expect(Object.keys(message).sort()).toEqual(['content', 'role']);
    });

    it("headers: { 'x-stainless-helper': null } removes the helper header, as in the SDK (a thread's mark comes after)", async () => {
      const { ourServer } = await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_h1')] }, { content: [text('21°C')] }],
        async (start, log) => collect(start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] }, { headers: { 'x-stainless-helper': null } })),
      );
      const marks = thread === false ? [undefined, undefined] : ['message-thread', 'message-thread'];
      expect(ourServer.requests.map((request) => request.headers['x-stainless-helper'])).toEqual(marks);
    });

    it('a tool that returns an empty string: its result is sent with content "" ', async () => {
      const { ourServer } = await both(
        () => [{ content: [toolUse('blank', {}, 'toolu_e1')] }, { content: [text('ok')] }],
        async (start, log) => {
          const blank = betaZodTool({ name: 'blank', description: 'Says nothing', inputSchema: z.object({}), run: async () => (log.push('blank'), '') });
          return collect(start({ model, max_tokens: 256, messages: ask, tools: [blank] }));
        },
      );
      expect(JSON.stringify(bodiesOf(ourServer)[1])).toContain('{"type":"tool_result","tool_use_id":"toolu_e1","content":""}');
    });

    it("an anthropic-beta header of the caller's: sent as the SDK sends it (with the threads beta over a thread)", async () => {
      const { ourServer } = await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_b1')] }, { content: [text('21°C')] }],
        async (start, log) => collect(start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] }, { headers: { 'anthropic-beta': 'foo-2025-01-01' } })),
      );
      expect(ourServer.requests[0]!.headers['anthropic-beta']).toMatch(/^foo-2025-01-01/);
    });

    it('a header given several values (an array, repeated rows, in any case): sent with them all, as the SDK sends it (an object\'s keys replace)', async () => {
      for (const headers of [{ 'anthropic-beta': ['foo-2025-01-01', 'bar-2025-02-02'] }, [['x-dup', '1'], ['X-Dup', '2'], ['x-gone', '1'], ['x-gone', null]], { 'X-Team': 'a', 'x-team': ['b', 'c'] }]) {
        const { ourServer } = await both(
          () => [{ content: [text('21°C')] }],
          async (start, log) => collect(start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] }, { headers })),
        );
        const sent = ourServer.requests[0]!.headers;
        if (Array.isArray(headers)) expect([sent['x-dup'], sent['x-gone']]).toEqual(['1, 2', undefined]);
        else if ('x-team' in headers) expect(sent['x-team']).toBe('b, c');
        else expect(sent['anthropic-beta']).toMatch(/^foo-2025-01-01, bar-2025-02-02/);
      }
    });

    it('await runner (and runUntilDone()) from another task while the loop runs: waits for its end', async () => {
      await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_w1')], delayMs: 100 }, { content: [text('21°C')], delayMs: 100 }],
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] });
          const seen = collect(runner);
          // While the first request is in flight, and while the loop body holds the first reply.
          await new Promise((resolve) => setTimeout(resolve, 50));
          const awaited = runner.runUntilDone();
          await new Promise((resolve) => setTimeout(resolve, 120));
          const later = Promise.resolve(runner);
          const [messages, first, second] = await Promise.all([seen, awaited, later]);
          return { count: messages.length, first: first.content, second: second.content };
        },
      );
    });

    it('1. a signal set with setRequestOptions reaches the tools', async () => {
      const { ours } = await both(
        () => [{ content: [toolUse('wait', {}, 'toolu_02')] }, { content: [text('done')] }],
        async (start, log) => {
          const controller = new AbortController();
          const wait = betaZodTool({
            name: 'wait',
            description: 'Waits until aborted',
            inputSchema: z.object({}),
            run: async (_input, context) => {
              log.push(`signal is the one set: ${context?.signal === controller.signal}`);
              return 'waited';
            },
          });
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [wait] });
          runner.setRequestOptions({ signal: controller.signal });
          return collect(runner);
        },
      );
      expect(ours.log).toEqual(['signal is the one set: true']);
    });

    it('5. compactBeforeNextTurn: the compaction request drops what only shapes a reply', async () => {
      await both(
        () => [{ content: [text('first')] }, { content: [{ type: 'compaction', content: 'summary' } as never], stop_reason: 'compaction' as never }],
        async (start) => {
          const runner = start({
            model,
            max_tokens: 256,
            messages: ask,
            tool_choice: { type: 'any' },
            stop_sequences: ['END'],
            output_config: { effort: 'low', format: { type: 'json_schema', schema: { type: 'object' } } },
            tools: [{ name: 'lookup', description: 'x', input_schema: { type: 'object' } }],
          });
          const seen = [];
          for await (const message of runner) {
            seen.push(message);
            if (seen.length === 1) runner.compactBeforeNextTurn();
          }
          return { seen, messages: runner.params.messages };
        },
      );
    });

    it('5. compactBeforeNextTurn with no summary, and a tool removed meanwhile: the run goes on as the SDK\'s does (on its thread)', async () => {
      await both(
        () => [
          { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_e1')] },
          { content: [{ type: 'compaction', content: null } as never], stop_reason: 'compaction' as never },
          { content: [text('done')] },
        ],
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] });
          return seenWith(runner, (n) => (n === 1 ? runner.compactBeforeNextTurn() : n === 2 && runner.removeTools('get_weather')));
        },
      );
    });

    it('5. compactBeforeNextTurn whose request fails: iterated again, the run goes on as the SDK\'s does (on its thread)', async () => {
      await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_c1')] }, { error: { status: 500 } }, { content: [text('done')] }, { content: [text('done again')] }],
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] }, { maxRetries: 0 });
          const seen: unknown[] = [];
          try {
            for await (const message of runner) {
              seen.push(message.content[0]);
              if (seen.length === 1) runner.compactBeforeNextTurn();
            }
          } catch (error) {
            seen.push((error as { status?: unknown }).status);
          }
          for await (const message of runner) seen.push(message.content[0]);
          return { seen, messages: runner.params.messages };
        },
      );
    });

    it('5. `compaction` in the params is refused, in the constructor and in setMessagesParams', async () => {
      const { ours } = await both(
        () => [],
        async (start) => start({ model, max_tokens: 256, messages: ask, compaction: { type: 'summarize' } }),
      );
      expect(ours.error).toMatch(/^AnthropicError: `compaction` cannot be set on a tool runner/);
      await both(
        () => [],
        async (start) => {
          const runner = start({ model, max_tokens: 256, messages: ask });
          runner.setMessagesParams((params: any) => ({ ...params, compaction: { type: 'summarize' } }));
        },
      );
    });

    it('6. a class-based tool sends only the API keys, not its own data fields', async () => {
      class Lookup {
        readonly name = 'lookup';
        readonly description = 'Looks things up';
        readonly input_schema = { type: 'object' as const, properties: { q: { type: 'string' } } };
        readonly cache = new Map<string, string>();
        readonly secretToken = 'not for the API';
        constructor(private readonly log: string[]) {}
        async run(input: { q: string }) {
          this.log.push(`lookup ${input.q}`);
          return `found ${input.q}`;
        }
      }
      const { ourServer } = await both(
        () => [{ content: [toolUse('lookup', { q: 'x' }, 'toolu_03')] }, { content: [text('done')] }],
        async (start, log) => collect(start({ model, max_tokens: 256, messages: ask, tools: [new Lookup(log)] })),
      );
      expect(Object.keys(wire(ourServer.requests[0]!).body.tools[0]).sort()).toEqual(['description', 'input_schema', 'name']);
    });

    it('7. a refusal ends the run; what the next request holds after it', async () => {
      await both(
        () => [{ content: [text('I cannot help with that.')], stop_reason: 'refusal' }, { content: [text('Sure.')] }],
        async (start) => {
          const runner = start({ model, max_tokens: 256, messages: ask });
          const seen = [];
          for await (const message of runner) {
            seen.push({ message, messages: runner.params.messages });
            if (message.stop_reason === 'refusal') runner.pushMessages({ role: 'user', content: 'Something else, then.' });
          }
          return { seen, messages: runner.params.messages };
        },
      );
    });

    it("7. a refused reply's container: adopted as the SDK's runner adopts it (not over a thread, which drops the turn)", async () => {
      const { ourServer } = await both(
        () => [{ content: [text('I cannot help with that.')], stop_reason: 'refusal', container: { id: 'container_refused' } }, { content: [text('Sure.')] }],
        async (start) => {
          const runner = start({ model, max_tokens: 256, messages: ask });
          for await (const message of runner) if (message.stop_reason === 'refusal') runner.pushMessages({ role: 'user', content: 'Something else, then.' });
          // Given no tools (which the SDK's types do not allow), ours reads `tools: []`, as `runner.params` is typed.
          const { tools: _none, ...params } = runner.params;
          return params;
        },
      );
      expect(wire(ourServer.requests[1]!).body.container).toBe(thread === false ? 'container_refused' : undefined);
    });

    it('8. max_iterations counts requests, a failed one too', async () => {
      const { ourServer } = await both(
        () =>
          callThenFailure(
            'toolu_04',
            'flaky',
            { content: [toolUse('get_weather', { location: 'Rome' }, 'toolu_05')] },
            { content: [toolUse('get_weather', { location: 'Oslo' }, 'toolu_06')] },
            { content: [text('never reached')] },
          ),
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)], max_iterations: 3 }, { maxRetries: 0 });
          const seen = [];
          try {
            for await (const message of runner) seen.push(message);
          } catch (error) {
            seen.push(`error: ${(error as Error).constructor.name}`);
          }
          for await (const message of runner) seen.push(message);
          return seen;
        },
      );
      expect(ourServer.requests).toHaveLength(3);
    });

    it('8. a request that failed at the max_iterations limit: iterating or awaiting again gives that failure, not the older reply', async () => {
      const { ourServer } = await both(
        () => callThenFailure('toolu_09', 'flaky at the limit', { content: [text('never reached')] }),
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)], max_iterations: 2 }, { maxRetries: 0 });
          const seen = [];
          for (const loop of ['first loop', 'second loop']) {
            try {
              for await (const message of runner) seen.push(message);
              seen.push(`${loop} ended`);
            } catch (error) {
              seen.push(`${loop} error: ${(error as Error).constructor.name} ${(error as { status?: number }).status}`);
            }
          }
          try {
            seen.push(await runner);
          } catch (error) {
            seen.push(`await error: ${(error as Error).constructor.name} ${(error as { status?: number }).status}`);
          }
          return seen;
        },
      );
      expect(ourServer.requests).toHaveLength(2);
    });

    it('8. generateToolResponse() after a request failed throws that failure, until the next request', async () => {
      const { ourServer } = await both(
        () => callThenFailure('toolu_0g', 'flaky', { content: [text('done')] }),
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] }, { maxRetries: 0 });
          const seen: unknown[] = [];
          const response = async () => {
            try {
              seen.push(await runner.generateToolResponse());
            } catch (error) {
              seen.push(`generateToolResponse: ${(error as Error).constructor.name} ${(error as { status?: number }).status}`);
            }
          };
          try {
            for await (const message of runner) seen.push(message);
          } catch (error) {
            seen.push(`error: ${(error as Error).constructor.name}`);
          }
          await response();
          for await (const message of runner) seen.push(message);
          await response();
          return seen;
        },
      );
      expect(ourServer.requests).toHaveLength(3);
    });

    it('12. a reply the loop body pushes back (a BetaMessage) is kept as a message param once the body is done: its role and content', async () => {
      await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_0p')] }, { content: [text('done')] }],
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)], max_iterations: 1 });
          const inBody = [];
          for await (const message of runner) {
            runner.pushMessages(message as never);
            // In the body the params hold it as it was given.
            inBody.push(Object.keys(runner.params.messages.at(-1)!).sort());
          }
          return { inBody, messages: runner.params.messages, last: await runner };
        },
      );
    });

    it('12. max_iterations: 0 is no limit, and messages: [] is taken (pushMessages before the run)', async () => {
      await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_07')] }, { content: [text('done')] }],
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, messages: [], tools: [weather(log)], max_iterations: 0 });
          runner.pushMessages({ role: 'user', content: 'Weather in Paris?' });
          return collect(runner);
        },
      );
    });

    it('12. the middleware request option runs for every request', async () => {
      const { ours } = await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_08')] }, { content: [text('done')] }],
        async (start, log) => {
          const middleware = [async (request: unknown, next: (request: unknown) => Promise<Response>) => {
            log.push('middleware');
            return next(request);
          }];
          return collect(start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] }, { middleware }));
        },
      );
      expect(ours.log.filter((line) => line === 'middleware')).toHaveLength(2);
    });

    it('2. toolset calls: dispatched on (toolset_name, name), one at a time in order, the rest not run after a failure', async () => {
      const { ours } = await both(
        () => [
          {
            content: [
              member('computer', 'left_click', { coordinate: [1, 2] }, 'toolu_c1'),
              toolUse('navigate', { url: 'https://example.com' }, 'toolu_n1'),
              member('computer', 'screenshot', { fail: true }, 'toolu_c2'),
              member('computer', 'key', { text: 'a' }, 'toolu_c3'),
              member('browser', 'navigate', { url: 'https://example.com' }, 'toolu_b1'),
            ],
          },
          { content: [member('computer', 'zoom', {}, 'toolu_c4'), toolUse('computer', { action: 'left_click' }, 'toolu_m1'), member('computer', 'wait', {}, 'toolu_c5')] },
          { content: [text('done')] },
        ],
        async (start, log) => collect(start({ model, max_tokens: 256, messages: ask, tools: [computer(log), navigateTool(log)] })),
        { concurrentLog: true },
      );
      expect(ours.log.filter((line) => line.startsWith('computer'))).toEqual(['computer left_click', 'computer screenshot', 'computer zoom']);
      expect(ours.log).toContain('navigate https://example.com');
    });

    it('2. a subclass of the SDK\'s ToolError that names itself sends its own content, from a tool and from a toolset member', async () => {
      class NotFound extends SdkToolError {
        constructor(content: ConstructorParameters<typeof SdkToolError>[0]) {
          super(content);
          this.name = 'NotFound';
        }
      }
      const { ourServer } = await both(
        () => [
          { content: [toolUse('lookup', { id: '7' }, 'toolu_t1'), member('computer', 'screenshot', {}, 'toolu_c1')] },
          { content: [text('done')] },
        ],
        async (start) => {
          const lookup = betaZodTool({ name: 'lookup', description: 'Finds an order', inputSchema: z.object({ id: z.string() }), run: async ({ id }) => Promise.reject(new NotFound(`no order ${id}`)) });
          const screen = {
            ...computer([]),
            run: async () => Promise.reject(new NotFound([{ type: 'text' as const, text: 'the screen' }, { type: 'text' as const, text: 'is off' }])),
          };
          return collect(start({ model, max_tokens: 256, messages: ask, tools: [lookup, screen] }));
        },
      );
      const results = wire(ourServer.requests[1]!).messages.at(-1).content;
      expect(results.map((result: { content: unknown }) => result.content)).toEqual([
        'no order 7',
        [
          { type: 'text', text: 'the screen' },
          { type: 'text', text: 'is off' },
        ],
      ]);
    });

    it("2. a ToolError thrown by a tool's parse is the parser's answer to the model, word for word", async () => {
      const { ourServer } = await both(
        () => [{ content: [toolUse('pick', { n: 12 }, 'toolu_p1')] }, { content: [text('done')] }],
        async (start, log) => {
          const pick = {
            name: 'pick',
            input_schema: { type: 'object' as const, properties: { n: { type: 'number' } } },
            parse: (input: unknown) => {
              if ((input as { n: number }).n > 9) throw new SdkToolError('Pick a number below 10.');
              return input as { n: number };
            },
            run: async ({ n }: { n: number }) => (log.push(`picked ${n}`), String(n)),
          };
          return collect(start({ model, max_tokens: 256, messages: ask, tools: [pick] }));
        },
      );
      expect(wire(ourServer.requests[1]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_p1', content: 'Pick a number below 10.', is_error: true }]);
    });

    it('2. a tool that returns nothing (run for its side effect) is answered with an empty result, not an error', async () => {
      const { ourServer } = await both(
        () => [{ content: [toolUse('save', { note: 'hi' }, 'toolu_s1')] }, { content: [text('saved')] }],
        async (start, log) => {
          // Typed to return a result, but a JavaScript tool may well return nothing.
          const save = betaZodTool({ name: 'save', description: 'Saves a note', inputSchema: z.object({ note: z.string() }), run: (async ({ note }: { note: string }) => void log.push(`saved ${note}`)) as never });
          return collect(start({ model, max_tokens: 256, messages: ask, tools: [save] }));
        },
      );
      expect(wire(ourServer.requests[1]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_s1' }]);
    });

    it('3. removeTools / addTools: a withdrawn tool is not run; the model is told in a system message', async () => {
      const { ourServer } = await both(
        () => [
          { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_w1')] },
          { content: [toolUse('get_weather', { location: 'Rome' }, 'toolu_w2'), toolUse('navigate', { url: 'https://a.example' }, 'toolu_n2')] },
          { content: [text('done')] },
        ],
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] });
          return seenWith(runner, (n) => {
            if (n !== 1) return;
            runner.removeTools('get_weather');
            runner.addTools(navigateTool(log), { name: 'lookup', description: 'plain', input_schema: { type: 'object' } });
          });
        },
      );
      expect(wire(ourServer.requests[1]!).messages.at(-1)).toMatchObject({ role: 'system' });
    });

    it('3 and 5. a tool added on the final reply that asks for a compaction: the compaction goes without the addition (it waits for a next turn)', async () => {
      const { ourServer } = await both(
        () => [
          { content: [text('done')] },
          { content: [{ type: 'compaction', content: 'Asked about Paris.' } as never], stop_reason: 'compaction' as never },
          { content: [text('done again')] },
        ],
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] });
          return seenWith(runner, (n) => {
            if (n !== 1) return;
            runner.addTools(navigateTool(log));
            runner.compactBeforeNextTurn();
          });
        },
      );
      expect(ourServer.requests).toHaveLength(2);
      expect(JSON.stringify(wire(ourServer.requests[1]!).messages)).not.toContain('tool_addition');
    });

    it('3. a tool_removal already in the history withdraws the tool', async () => {
      const { ours } = await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_w3')] }, { content: [text('done')] }],
        async (start, log) =>
          collect(
            start({
              model,
              max_tokens: 256,
              messages: [{ role: 'system', content: [{ type: 'tool_removal', tool: { type: 'tool_reference', name: 'get_weather' } }] }, ...ask],
              tools: [weather(log)],
            }),
          ),
      );
      expect(ours.log).toEqual([]);
    });

    it('3. a toolset can be neither added nor removed (ToolsetContractError)', async () => {
      const { ours } = await both(
        () => [],
        async (start, log) => start({ model, max_tokens: 256, messages: ask, tools: [computer(log)] }).removeTools('computer'),
      );
      expect(ours.error).toMatch(/^ToolsetContractError: removeTools\(\) can't remove the 'computer' toolset/);
      await both(
        () => [],
        async (start, log) => start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] }).addTools(computer(log)),
      );
    });

    it('4 and 12. runToolsEagerly: deferToolCall holds a call until the body is done; the stream lists toolCalls', async () => {
      const { ours } = await both(
        () => [
          { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_e1'), toolUse('delete_file', { path: '/tmp/x' }, 'toolu_e2'), text('Checking.')] },
          { content: [text('done')] },
        ],
        async (start, log) => {
          const deleteFile = betaZodTool({
            name: 'delete_file',
            description: 'Deletes a file',
            inputSchema: z.object({ path: z.string() }),
            run: async ({ path }) => {
              log.push(`delete_file ${path}`);
              return 'deleted';
            },
          });
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log), deleteFile], stream: true, runToolsEagerly: true });
          const seen = [];
          for await (const stream of runner) {
            stream.on('contentBlock', (block: any) => {
              if (block.type === 'tool_use' && block.name === 'delete_file') runner.deferToolCall(block);
            });
            const message = await stream.finalMessage();
            await new Promise((resolve) => setTimeout(resolve, 20));
            log.push(`held: ${runner.deferredToolCalls.map((call: any) => call.name).join(', ')}`);
            seen.push({ message, toolCalls: stream.toolCalls.map((call: any) => call.name) });
          }
          return seen;
        },
      );
      expect(ours.log).toEqual(['get_weather Paris', 'held: delete_file', 'delete_file /tmp/x', 'held: ']);
    });

    it('deferToolCall on a toolset call: the toolset\'s later calls of the reply wait for it, one at a time, in the model\'s order (as the SDK\'s runner)', async () => {
      const log: string[] = [];
      let running = 0;
      let most = 0;
      const member = (name: string) => ({ ...toolUse(name, {}), toolset_name: 'computer' }) as never;
      const computer = {
        type: 'computer_toolset_20260801' as const,
        display_width_px: 1024,
        display_height_px: 768,
        run: async (_call: unknown, use: { name: string }) => {
          most = Math.max(most, ++running);
          log.push(`start ${use.name}`);
          await sleep(30);
          running--;
          log.push(`end ${use.name}`);
          return [{ type: 'text' as const, text: `did ${use.name}` }];
        },
      };
      const server = await mockServer([{ content: [member('left_click'), member('type'), member('screenshot')], eventDelayMs: 20 }, { content: [text('done')] }]);
      const runner = toolRunner(server.client(), { model, max_tokens: 100, messages: ask, tools: [computer], stream: true, runToolsEagerly: true, ...(thread === false && { thread }) });
      for await (const stream of runner) {
        stream.on('contentBlock', (block) => {
          if (block.type === 'tool_use' && block.name === 'left_click') runner.deferToolCall(block);
        });
        await stream.finalMessage();
      }
      expect(log).toEqual(['start left_click', 'end left_click', 'start type', 'end type', 'start screenshot', 'end screenshot']);
      expect(most).toBe(1);
    });

    it('deferredToolCalls after a break out of the loop body that held a call: none, as from the SDK\'s runner (the call will never run)', async () => {
      const { sdk, ours } = await both(
        () => [{ content: [toolUse('delete_file', { path: '/tmp/x' }, 'toolu_d1')] }, { content: [text('done')] }],
        async (start, log) => {
          const deleteFile = betaZodTool({ name: 'delete_file', description: 'Deletes a file', inputSchema: z.object({ path: z.string() }), run: async () => 'deleted' });
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [deleteFile], stream: true, runToolsEagerly: true });
          for await (const stream of runner) {
            stream.on('contentBlock', (block: any) => {
              if (block.type === 'tool_use') runner.deferToolCall(block);
            });
            await stream.finalMessage();
            log.push(`in body: ${runner.deferredToolCalls.map((call: any) => call.id).join(', ')}`);
            break;
          }
          log.push(`after: ${runner.deferredToolCalls.map((call: any) => call.id).join(', ')}`);
          return null;
        },
      );
      expect(ours.log).toEqual(['in body: toolu_d1', 'after: ']);
      expect(ours.log).toEqual(sdk.log);
    });
  });
}

describe('10. toolRunner(thread, settings) runs over an SDK BetaMessageThread', () => {
  const steps = (): Step[] => [
    { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_t1')] },
    { content: [text('It is 21°C.')], stop_reason: 'refusal' },
    { content: [toolUse('get_weather', { location: 'Atlantis' }, 'toolu_t2')] },
    { content: [text('No such city.')] },
  ];
  for (const stream of [false, true]) {
    it(stream ? 'streaming' : 'whole messages', async () => {
      const { sdk, ours, sdkServer, ourServer, sdkLog, ourLog } = await overThreadBoth(steps, async (makeRunner, client, log) => {
        const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
        const first = [];
        for await (const item of makeRunner(thread, { max_iterations: 5, stream })) first.push(stream ? await item.finalMessage() : item);
        // The thread holds the run; a second run goes on from it.
        thread.append({ role: 'user', content: 'And in Atlantis?' } as never);
        const second = await makeRunner(thread, { stream });
        return comparable({ first, second, messages: thread.messages });
      });
      expect(ours).toEqual(sdk);
      expect(ourLog).toEqual(sdkLog);
      expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
      expect(headersOf(ourServer)).toEqual(headersOf(sdkServer));
      expect(ourServer.requests.map((request) => wire(request).body.thread?.type)).toEqual(['create', 'continue', 'create', 'continue']);
    });
  }
});

describe('10. a message pushed on a run over an SDK thread after it ended', () => {
  it('goes to the thread, which a next run over it sends: no warning that it is lost', async () => {
    const server = await mockServer([{ content: [text('First.')] }, { content: [text('Second.')] }]);
    const { lines, logger } = captureLogger();
    const client = server.client({ logger, logLevel: 'warn' });
    const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask } as never);
    const runner = toolRunner(thread);
    await runner;
    runner.pushMessages({ role: 'user', content: 'And Berlin?' });
    expect(lines).toEqual([]);
    expect((await toolRunner(thread)).content[0]).toMatchObject({ text: 'Second.' });
    expect(wire(server.requests[1]!).messages.at(-1)).toEqual({ role: 'user', content: 'And Berlin?' });
  });
});

describe('10. a run over a thread that stops after its tools ran (max_iterations) leaves their results in the thread', () => {
  it('a second run over the thread sends them, and does not run the tool again', async () => {
    const steps = (): Step[] => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_m1')] }, { content: [text('21°C.')] }];
    const { sdk, ours, sdkServer, ourServer, sdkLog, ourLog } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      await makeRunner(thread, { max_iterations: 1 });
      const after = thread.messages.map((message: { role: string }) => message.role);
      const second = await makeRunner(thread, {});
      return comparable({ after, second, messages: thread.messages });
    });
    expect(ours).toEqual(sdk);
    expect((ours as { after: string[] }).after).toEqual(['user', 'assistant', 'user']);
    expect(ourLog).toEqual(['get_weather Paris']);
    expect(ourLog).toEqual(sdkLog);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
  });
});

describe('10. a break over a thread keeps the reply the thread holds', () => {
  for (const when of ['the final reply', 'a reply that asks for tools']) it(when, async () => {
    const steps = (): Step[] => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_k1')] }, { content: [text('21°C.')] }];
    const { sdk, ours } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      for await (const message of makeRunner(thread, {})) if (when === 'a reply that asks for tools' || message.stop_reason === 'end_turn') break;
      return comparable(thread.messages);
    });
    expect(ours).toEqual(sdk);
    expect((ours as unknown[]).length).toBe(when === 'the final reply' ? 4 : 2);
  });
});

describe('10. a reply the loop body replaced over a thread (pushMessages) leaves the thread with the run\'s history, as the SDK\'s runner', () => {
  for (const first of ['a reply that asks for tools', 'a final reply']) it(first, async () => {
    const steps = (): Step[] => [first === 'a final reply' ? { content: [text('An answer.')] } : { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_p1')] }, { content: [text('Next.')] }];
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, { max_iterations: 1 });
      for await (const _message of runner) runner.pushMessages({ role: 'user', content: 'A follow-up.' });
      // The thread goes on from what the run left: the follow-up, not the reply it replaced.
      await thread.send({ role: 'user', content: 'And then?' } as never);
      return comparable(thread.messages);
    });
    expect(ours).toEqual(sdk);
    expect(ourServer.requests.at(-1)!.messages).toEqual(sdkServer.requests.at(-1)!.messages);
    expect(JSON.stringify(ourServer.requests.at(-1)!.messages)).toContain('A follow-up.');
  });
});

describe('10. what the loop body changed reaches the SDK thread only when the body is done, as in the SDK\'s runner', () => {
  it('a follow-up pushed, then a break: the thread keeps its reply, and the next turn continues from it', async () => {
    const steps = (): Step[] => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_b1')] }, { content: [text('Next.')] }];
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, {});
      for await (const _message of runner) {
        runner.pushMessages({ role: 'user', content: 'A follow-up.' });
        break;
      }
      const after = comparable(thread.messages);
      // The thread holds a call with no result before the new question: the API (and the kit's server) refuses it, for both runners.
      const sent = await thread.send({ role: 'user', content: 'And then?' } as never).then(
        () => 'answered',
        // (Without the request's id, which differs from one server to the other: in the body as 1.14 shows it, or, from SDK 1.17 on, after the API's message.)
        (error: Error) => error.message.replace(/"request_id":"[^"]*"/, '').replace(/request_id: req_\w+/, 'request_id'),
      );
      return { after, sent };
    });
    expect(ours).toEqual(sdk);
    const { after, sent } = ours as { after: unknown[]; sent: string };
    expect(after.length).toBe(2);
    expect(sent).toMatch(/^400 .*messages\.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b1\./);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
  });

  for (const exit of ['the limit', 'a break']) it(`params set in the body (the reply dropped), then ${exit}: the thread takes the params, and the history only once the body is done`, async () => {
    const steps = (): Step[] => [{ content: [text('An answer.')] }, { content: [text('Later.')] }];
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask } as never);
      const runner = makeRunner(thread, { max_iterations: 1 });
      for await (const _message of runner) {
        runner.setMessagesParams((params: Record<string, unknown>) => ({ ...params, max_tokens: 512 }));
        if (exit === 'a break') break;
      }
      const after = comparable(thread.messages);
      await thread.send({ role: 'user', content: 'And then?' } as never);
      return after;
    });
    expect(ours).toEqual(sdk);
    expect((ours as unknown[]).length).toBe(exit === 'a break' ? 2 : 1);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    expect(wire(ourServer.requests.at(-1)!).body.max_tokens).toBe(512);
  });
});

describe('10. the SDK thread\'s own fields stay: only what setMessagesParams changed becomes the thread\'s', () => {
  it('thread.update() in the loop body is kept after the run, as in the SDK (the run itself goes on with its own params: README)', async () => {
    const steps = (): Step[] => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_u1')] }, { content: [text('Done.')] }, { content: [text('Later.')] }];
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, {});
      let first = true;
      for await (const _message of runner) {
        if (first) thread.update({ temperature: 0.1, max_tokens: 999 } as never);
        first = false;
      }
      const { messages: _messages, ...fields } = thread.params as Record<string, unknown>;
      await thread.send({ role: 'user', content: 'And then?' } as never);
      return comparable(fields);
    });
    expect(ours).toEqual(sdk);
    expect(ours).toMatchObject({ temperature: 0.1, max_tokens: 999 });
    expect(wire(ourServer.requests.at(-1)!).body).toMatchObject({ temperature: 0.1, max_tokens: 999 });
    expect(wire(sdkServer.requests.at(-1)!).body).toMatchObject({ temperature: 0.1, max_tokens: 999 });
  });

  it('a system an onRequest hook sent when the thread was created stays the thread\'s: the next turn goes on', async () => {
    const server = await mockServer([{ content: [text('Done.')] }, { content: [text('Later.')] }]);
    const thread = server.client().beta.messages.thread({ model, max_tokens: 256, system: 'base', messages: ask } as never);
    await toolRunner(thread, {}, { hooks: { onRequest: (body) => void (body['system'] = 'base, hooked') } });
    await thread.send({ role: 'user', content: 'And then?' } as never);
    expect(server.requests.map((request) => wire(request).body.thread?.type)).toEqual(['create', 'continue']);
  });
});

describe('10. compactBeforeNextTurn over an SDK thread: the compaction request goes beside the thread (the whole history, a thread of its own)', () => {
  for (const summary of ['a summary', 'no summary']) it(`with ${summary}`, async () => {
    const steps = (): Step[] => [
      { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_cb')] },
      { content: [{ type: 'compaction', content: summary === 'a summary' ? 'Weather asked.' : null } as never], stop_reason: 'compaction' as never },
      { content: [text('Done.')] },
    ];
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, {});
      await seenWith(runner, (n) => n === 1 && runner.compactBeforeNextTurn());
      return comparable(thread.messages);
    });
    expect(ours).toEqual(sdk);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    expect(wire(ourServer.requests[1]!).body.thread?.type).toBe('create');
  });
});

describe('10. compactBeforeNextTurn over an SDK thread: the fork goes with the compaction request\'s fields, and its threading', () => {
  it('the fields a compaction request leaves out (stop_sequences, a forced tool_choice) are not sent on the fork', async () => {
    const steps = (): Step[] => [
      { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_cf')] },
      { content: [{ type: 'compaction', content: 'Weather asked.' } as never], stop_reason: 'compaction' as never },
      { content: [text('Done.')] },
    ];
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const fields = { stop_sequences: ['END'], tool_choice: { type: 'any' } };
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)], ...fields } as never);
      const runner = makeRunner(thread, {});
      await seenWith(runner, (n) => n === 1 && runner.compactBeforeNextTurn());
      return comparable(thread.messages);
    });
    expect(ours).toEqual(sdk);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    const compacting = wire(ourServer.requests[1]!).body;
    expect(compacting).toHaveProperty('compaction');
    expect(compacting).not.toHaveProperty('stop_sequences');
    expect(compacting).not.toHaveProperty('tool_choice');
    expect(wire(ourServer.requests[2]!).body).toMatchObject({ stop_sequences: ['END'], tool_choice: { type: 'any' } });
  });

  it('a fork the server cannot thread (continue_unthreaded) stops the thread\'s threading too', async () => {
    const unthreaded = { error: { status: 400, details: { error_code: 'thread_unsupported_request', unsupported: ['x'] } } };
    const steps = (): Step[] => [
      { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_cu')] },
      unthreaded as never,
      { content: [{ type: 'compaction', content: 'Weather asked.' } as never], stop_reason: 'compaction' as never },
      { content: [text('Done.')] },
    ];
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)], unsupportedRequestBehavior: 'continue_unthreaded' } as never);
      const runner = makeRunner(thread, {});
      await seenWith(runner, (n) => n === 1 && runner.compactBeforeNextTurn());
      return comparable({ messages: thread.messages, threading: (thread as any)._state.threading });
    });
    expect(ours).toEqual(sdk);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    expect(ourServer.requests.map((request) => wire(request).body.thread?.type ?? null)).toEqual(['create', 'create', null, null]);
  });
});

describe('10. the loop body leaves over an SDK thread while the compaction request is the item: the thread keeps the results it was given', () => {
  for (const leave of ['break', 'throw']) it(`a ${leave} on the compaction's reply`, async () => {
    const steps = (): Step[] => [
      { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_cl')] },
      { content: [{ type: 'compaction', content: 'Weather asked.' } as never], stop_reason: 'compaction' as never },
      { content: [text('Done.')] },
    ];
    const { sdk, ours, sdkLog, ourLog } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, {});
      let n = 0;
      try {
        for await (const _message of runner) {
          if (++n === 1) runner.compactBeforeNextTurn();
          else if (leave === 'break') break;
          else throw new Error('left');
        }
      } catch (error) {
        log.push(`threw ${(error as Error).message}`);
      }
      return comparable(thread.messages);
    });
    expect(ours).toEqual(sdk);
    expect(ourLog).toEqual(sdkLog);
    expect((ours as Array<{ role: string }>).map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
  });
});

describe("10. a run over an SDK thread logs as the thread's client does", () => {
  for (const logLevel of ['info', 'off'] as const) it(`its logger, at logLevel '${logLevel}'`, async () => {
    const server = await mockServer([{ content: [toolUse('no_such_tool', {}, 'toolu_l1')] }, { content: [text('Done.')] }]);
    const { lines, logger } = captureLogger();
    // The client's level, not ANTHROPIC_LOG's (which the tests set to 'off').
    vi.stubEnv('ANTHROPIC_LOG', 'debug');
    try {
      const thread = server.client({ logger, logLevel }).beta.messages.thread({ model, max_tokens: 256, messages: ask } as never);
      await toolRunner(thread, {});
    } finally {
      vi.unstubAllEnvs();
    }
    expect(lines.filter((line) => /no_such_tool/.test(line.message))).toHaveLength(logLevel === 'off' ? 0 : 1);
  });
});

describe("9. x-stainless-helper: the SDK's tags of the tools its helpers made", () => {
  it('a run with mcpTools() sends them as the SDK does', async () => {
    const mcp = await connectedClient();
    try {
      const { tools } = await mcp.listTools();
      const add = mcpTools(tools.filter((tool) => tool.name === 'add'), mcp as never);
      const { ourServer } = await runBoth(
        () => [{ content: [toolUse('add', { a: 2, b: 3 }, 'toolu_mcp')] }, { content: [text('5')] }],
        async (start) => collect(start({ model, max_tokens: 256, messages: ask, tools: add })),
        undefined,
      );
      // The request that sends the tools is tagged by the SDK's own create first (the definitions keep the SDK's mark).
      expect(ourServer.requests.map((request) => request.headers['x-stainless-helper'])).toEqual([
        'mcpTool, tool-runner, message-thread',
        'tool-runner, mcpTool, message-thread',
      ]);
    } finally {
      await mcp.close();
    }
  });
});

describe('errors of the SDK', () => {
  it("a client with no API key: the SDK's own error, as its runner throws it, and nothing sent", async () => {
    const server = await mockServer([{ content: [text('never')] }]);
    const keyless = () => new AnthropicClient({ baseURL: server.url, apiKey: null, maxRetries: 0 });
    const sdkError = await keyless()
      .beta.messages.toolRunner({ model, max_tokens: 64, messages: ask, tools: [] })
      .runUntilDone()
      .catch((error: unknown) => error);
    const ourError = await toolRunner(keyless(), { model, max_tokens: 64, messages: ask })
      .runUntilDone()
      .catch((error: unknown) => error);
    expect(sdkError).toBeInstanceOf(Error);
    // (`Error`; from SDK 1.17 on a `CredentialsError`.)
    expect(ourError).toMatchObject({ name: (sdkError as Error).name, message: (sdkError as Error).message });
    expect((ourError as Error).constructor).toBe((sdkError as Error).constructor);
    expect((ourError as Error).message).toMatch(/^Could not resolve authentication method/);
    expect(server.requests).toHaveLength(0);
  });

  it("a `thread` in the params, or in a run's settings over a thread: a TypeError in the SDK runner's words", () => {
    const client = new AnthropicClient({ apiKey: 'k', baseURL: 'http://127.0.0.1:9' });
    const wordsOf = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        expect(error).toBeInstanceOf(TypeError);
        return (error as Error).message;
      }
      throw new Error('no error');
    };
    const params = { model, max_tokens: 1, messages: ask, thread: { type: 'create' } } as never;
    expect(wordsOf(() => toolRunner(client, params))).toContain(wordsOf(() => client.beta.messages.toolRunner(params)));
    const thread = () => client.beta.messages.thread({ model, max_tokens: 1, messages: ask } as never);
    expect(wordsOf(() => toolRunner(thread() as never, { thread: false } as never))).toContain(wordsOf(() => thread().toolRunner({ thread: false } as never)));
  });

  it('AnthropicError for `compaction` in the params', () => {
    expect(() => toolRunner({ messages: {} } as never, { model, max_tokens: 1, messages: ask, compaction: { type: 'summarize' } } as never)).toThrow(AnthropicError);
  });
});
