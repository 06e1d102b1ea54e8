/**
 * Programs written the way public code drives the SDK's runner (its own examples, docs snippets,
 * apps), each run on the SDK's `client.beta.messages.toolRunner` and on `toolRunner(client, …)`:
 * the same requests, yields, return values and errors (test/side-by-side.ts compares them).
 */
import Anthropic from '@anthropic-ai/sdk';
import { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import { betaStandardSchemaTool } from '@anthropic-ai/sdk/helpers/beta/standard-schema';
import { betaZodOutputFormat, betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import { ToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Step, serverToolUse, text, toolUse, webSearchResult } from 'tool-runner/testing';
import { ask, collect, model, type Program, runBoth, weather } from './side-by-side.js';

const trip = (log: string[]) => [
  betaZodTool({
    name: 'getWeather',
    description: 'Weather at a place',
    inputSchema: z.object({ location: z.string() }),
    run: ({ location }) => {
      log.push(`getWeather ${location}`);
      return `Sunny, 20°C in ${location}.`;
    },
  }),
  betaZodTool({
    name: 'getTime',
    description: 'Time in a timezone',
    inputSchema: z.object({ timezone: z.string() }),
    run: ({ timezone }) => {
      log.push(`getTime ${timezone}`);
      return `3:00 PM in ${timezone}.`;
    },
  }),
];

const tripCalls = (): Step[] => [
  { content: [text('Looking.'), toolUse('getWeather', { location: 'SF' }, 'toolu_w'), toolUse('getTime', { timezone: 'America/Los_Angeles' }, 'toolu_t')] },
  { content: [text('Sunny, 3 PM.')] },
];

for (const thread of [undefined, false] as const) {
  describe(thread === false ? 'with thread: false' : 'over a message thread', () => {
    const both = (steps: () => Step[], program: Program, options?: { concurrentLog?: boolean }) => runBoth(steps, program, thread, options);

    it('await the runner for its final message (a betaTool with a JSON schema, max_iterations)', async () => {
      await both(tripCalls, async (start, log) => {
        const lookup = betaTool({
          name: 'getWeather',
          description: 'Weather at a place',
          inputSchema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
          run: ({ location }) => {
            log.push(`getWeather ${location}`);
            return `Foggy in ${location}.`;
          },
        });
        const time = trip(log)[1]!;
        const message = await start({ model, max_tokens: 1024, max_iterations: 10, messages: ask, tools: [lookup, time] });
        return message.content;
      });
    });

    it('the loop body reads the results it will send (generateToolResponse) and pairs them with their calls', async () => {
      await both(tripCalls, async (start, log) => {
        const runner = start({ model, max_tokens: 1024, max_iterations: 10, messages: ask, tools: trip(log) });
        const lines = [];
        for await (const message of runner) {
          lines.push(`message ${message.stop_reason}`);
          const response = await runner.generateToolResponse();
          if (response && typeof response.content !== 'string') {
            for (const block of response.content) {
              if (block.type !== 'tool_result') continue;
              const call = message.content.find((b: any) => b.type === 'tool_use' && b.id === block.tool_use_id);
              lines.push(`${call.name}(): ${JSON.stringify(block.content)} ${block.is_error ?? ''}`);
            }
          }
        }
        return { lines, done: await runner.done(), history: runner.params.messages };
      }, { concurrentLog: true });
    });

    it('a note and the reply pushed back when the reply asks for tools, then generateToolResponse', async () => {
      await both(tripCalls, async (start, log) => {
        const runner = start({ model, max_tokens: 1024, max_iterations: 10, messages: ask, tools: trip(log) });
        const seen = [];
        for await (const message of runner) {
          if (message.content.some((b: any) => b.type === 'tool_use')) {
            runner.pushMessages({ role: 'user', content: 'Use Fahrenheit, please.' }, { role: message.role, content: message.content });
          }
          seen.push(await runner.generateToolResponse());
        }
        return { seen, history: runner.params.messages };
      }, { concurrentLog: true });
    });

    it('every iteration: generateToolResponse, setMessagesParams(fn) raising max_tokens, and a nudge pushed (the docs snippet), stopped by max_iterations', async () => {
      await both(
        () => [...tripCalls(), { content: [text('Short.')] }, { content: [text('Shorter.')] }],
        async (start, log) => {
          const runner = start({ model, max_tokens: 1024, max_iterations: 3, messages: ask, tools: trip(log) });
          const seen = [];
          for await (const message of runner) {
            seen.push({ message, results: await runner.generateToolResponse() });
            runner.setMessagesParams((params: any) => ({ ...params, max_tokens: 2048 }));
            runner.pushMessages({ role: 'user', content: 'Please be concise.' });
          }
          return { seen, done: await runner.done(), history: runner.params.messages };
        },
        { concurrentLog: true },
      );
    });

    it('stream: true, events read for a UI (tool starts and stops, text deltas), finalMessage, a paused turn pushed back', async () => {
      await both(
        () => [
          {
            content: [serverToolUse('web_search', { query: 'SF' }, 'srvtoolu_1'), webSearchResult('srvtoolu_1', [{ url: 'https://a.example', title: 'A' }])],
            stop_reason: 'pause_turn',
          },
          ...tripCalls(),
        ],
        async (start, log) => {
          const runner = start({ model, max_tokens: 1024, max_iterations: 8, messages: ask, tools: trip(log), stream: true });
          const ui: string[] = [];
          let last = null;
          for await (const stream of runner) {
            const open = new Map<number, string>();
            for await (const event of stream) {
              if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') open.set(event.index, event.content_block.name);
              else if (event.type === 'content_block_stop' && open.has(event.index)) ui.push(`done ${open.get(event.index)}`);
              else if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') ui.push(`text ${event.delta.text}`);
            }
            const message = await stream.finalMessage();
            last = message.stop_reason;
            if (message.stop_reason === 'pause_turn') runner.pushMessages({ role: 'assistant', content: message.content });
          }
          return { ui, last, history: runner.params.messages };
        },
        { concurrentLog: true },
      );
    });

    it('a tool spread with a field of its own (eager_input_streaming) runs, the field sent', async () => {
      const { ourServer } = await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] }, { content: [text('21°C')] }],
        async (start, log) => {
          const spread = { ...weather(log), eager_input_streaming: true };
          return collect(start({ model, max_tokens: 1024, messages: ask, tools: [spread], stream: false }));
        },
      );
      expect((ourServer.requests[0]!.body as any).tools[0].eager_input_streaming).toBe(true);
    });

    it("a betaStandardSchemaTool (zod's Standard JSON Schema): its definition and its run", async () => {
      await both(
        () => [{ content: [toolUse('getWeather', { location: 'SF', unit: 'c' }, 'toolu_1')] }, { content: [text('20°C')] }],
        async (start, log) => {
          const lookup = betaStandardSchemaTool({
            name: 'getWeather',
            description: 'Weather at a place',
            inputSchema: z.object({ location: z.string(), unit: z.enum(['c', 'f']).optional() }),
            run: ({ location, unit }) => {
              log.push(`getWeather ${location} ${unit}`);
              return `20°${unit} in ${location}`;
            },
          });
          return collect(start({ model, max_tokens: 1024, messages: ask, tools: [lookup] }));
        },
      );
    });

    it('a submit tool that throws a ToolError until its input is right, with top-level cache_control and thinking', async () => {
      await both(
        () => [
          { content: [toolUse('submit', { ids: [1] }, 'toolu_1')] },
          { content: [toolUse('submit', { ids: [1, 2] }, 'toolu_2')] },
          { content: [text('Saved.')] },
        ],
        async (start, log) => {
          let submitted = false;
          const submit = betaZodTool({
            name: 'submit',
            description: 'Submit the answer',
            inputSchema: z.object({ ids: z.array(z.number()) }),
            run: ({ ids }) => {
              log.push(`submit ${ids.join(',')}`);
              if (ids.length < 2) throw new ToolError('Every tab must be covered exactly once.');
              submitted = true;
              return 'Saved.';
            },
          });
          const runner = start({
            model,
            max_tokens: 2048,
            max_iterations: 15,
            cache_control: { type: 'ephemeral' },
            system: 'Sort the tabs.',
            tools: [submit],
            messages: ask,
          });
          const final = await runner.runUntilDone();
          return { final, submitted, history: runner.params.messages };
        },
      );
    });

    it('a run driven to its end by a helper that reports each message, then done() and runUntilDone() after the loop', async () => {
      await both(tripCalls, async (start, log) => {
        const runner = start({ model, max_tokens: 1024, messages: ask, tools: trip(log) });
        const reported: string[] = [];
        for await (const message of runner) reported.push(`${message.role} ${message.stop_reason} ${message.content.length}`);
        return { reported, done: await runner.done(), again: await runner.runUntilDone(), awaited: await runner };
      }, { concurrentLog: true });
    });

    it('turns counted against a budget: the last stop reason tells that max_iterations cut the run off', async () => {
      await both(
        () => [
          { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] },
          { content: [toolUse('get_weather', { location: 'Rome' }, 'toolu_2')] },
          { content: [text('never')] },
        ],
        async (start, log) => {
          const runner = start({ model, max_tokens: 1024, max_iterations: 2, messages: ask, tools: [weather(log)] });
          let turns = 0;
          let lastStop = null;
          for await (const message of runner) {
            turns++;
            lastStop = message.stop_reason;
          }
          return { turns, lastStop, history: runner.params.messages, done: await runner.done() };
        },
      );
    });

    it('a loop body that leaves a labelled loop on a tool it watches, after generateToolResponse in a try/catch', async () => {
      await both(
        () => [
          { content: [toolUse('get_weather', { location: 'Atlantis' }, 'toolu_1')] },
          { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_2')] },
          { content: [text('never')] },
        ],
        async (start, log) => {
          const runner = start({ model, max_tokens: 1024, messages: ask, tools: [weather(log)] });
          const sent = [];
          outer: for await (const message of runner) {
            const calls = message.content.filter((b: any) => b.type === 'tool_use');
            try {
              sent.push(await runner.generateToolResponse());
            } catch {
              sent.push('threw');
            }
            for (const call of calls) if (call.input.location === 'Paris') break outer;
          }
          return { sent, history: runner.params.messages };
        },
      );
    });

    it('runToolsEagerly with a destructive call held from contentBlock, then confirmed (the SDK example)', async () => {
      await both(
        () => [
          { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1'), toolUse('delete_file', { path: '/tmp/a.log' }, 'toolu_2')] },
          { content: [text('Deleted.')] },
        ],
        async (start, log) => {
          const deleteFile = betaZodTool({
            name: 'delete_file',
            description: 'Delete a file',
            inputSchema: z.object({ path: z.string() }),
            run: ({ path }) => {
              log.push(`delete ${path}`);
              return `Deleted ${path}.`;
            },
          });
          const runner = start({ model, max_tokens: 1024, max_iterations: 10, stream: true, runToolsEagerly: true, messages: ask, tools: [weather(log), deleteFile] });
          const held = [];
          for await (const stream of runner) {
            stream.on('contentBlock', (block: any) => {
              if (block.type === 'tool_use' && block.name === 'delete_file') runner.deferToolCall(block);
            });
            await stream.finalMessage();
            held.push(runner.deferredToolCalls.map((call: any) => call.input));
          }
          return { held, history: runner.params.messages };
        },
      );
    });

    it('a turn retried on a new runner built from runner.params after a stream error that is no APIError', async () => {
      await both(
        () => [
          { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] },
          { content: [text('It is 21°C in Paris, and more words to cut.')], disconnectAfterEvents: 4 },
          { content: [text('21°C.')] },
        ],
        async (start, log) => {
          let runner = start({ model, max_tokens: 1024, messages: ask, tools: [weather(log)], stream: true });
          const tries = [];
          for (let attempt = 0; ; attempt++) {
            try {
              for await (const stream of runner) await stream.finalMessage();
              break;
            } catch (error) {
              tries.push(error instanceof Anthropic.APIError);
              if (error instanceof Anthropic.APIError || attempt >= 2) throw error;
              runner = start({ ...runner.params });
            }
          }
          return { tries, history: runner.params.messages, done: await runner.done() };
        },
      );
    });

    it('the iterator driven by hand (next() until done, and after), then a second iterator', async () => {
      await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] }, { content: [text('21°C')] }],
        async (start, log) => {
          const runner = start({ model, max_tokens: 1024, messages: ask, tools: [weather(log)] });
          const iterator = runner[Symbol.asyncIterator]();
          const steps = [];
          for (let i = 0; i < 4; i++) {
            const step = await iterator.next();
            steps.push({ done: step.done, value: step.value?.stop_reason ?? step.value ?? null });
          }
          let again;
          try {
            again = await runner[Symbol.asyncIterator]().next();
          } catch (error) {
            again = `${(error as Error).constructor.name}: ${(error as Error).message}`;
          }
          return { steps, again, done: await runner.done() };
        },
      );
    });

    it('a second iterator taken while the first is still on its first reply', async () => {
      await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] }, { content: [text('21°C')] }],
        async (start, log) => {
          const runner = start({ model, max_tokens: 1024, messages: ask, tools: [weather(log)] });
          const first = runner[Symbol.asyncIterator]();
          const one = await first.next();
          let second;
          try {
            second = await runner[Symbol.asyncIterator]().next();
          } catch (error) {
            second = `${(error as Error).constructor.name}: ${(error as Error).message}`;
          }
          const rest = [];
          for (let step = await first.next(); !step.done; step = await first.next()) rest.push(step.value.content);
          return { one: one.value.content, second, rest };
        },
      );
    });

    for (const stream of [false, true]) {
      it(`an API error by hand (stream: ${stream}): next() rejects, then the iterator is done; a new iterator goes on`, async () => {
        await both(
          () => [{ error: { status: 400, message: 'bad things' } }, { content: [text('Fine.')] }],
          async (start, log) => {
            const runner = start({ model, max_tokens: 1024, messages: ask, tools: [weather(log)], stream });
            const saw: unknown[] = [];
            const say = (error: unknown) => `${(error as Error).constructor.name}: ${(error as Error).message}`.replace(/req_\w+/, "req");
            const first = runner[Symbol.asyncIterator]();
            for (let i = 0; i < 3; i++) {
              try {
                const step = await first.next();
                if (step.done) saw.push({ done: true, value: step.value ?? null });
                else if (stream) saw.push(await step.value.finalMessage().then((m: any) => m.content, say));
                else saw.push(step.value.content);
              } catch (error) {
                saw.push(say(error));
              }
            }
            const second = runner[Symbol.asyncIterator]();
            const next = await second.next();
            saw.push(stream ? (await next.value.finalMessage()).content : next.value.content);
            saw.push(await second.next());
            return { saw, done: await runner.done() };
          },
        );
      });
    }

    for (const withSignal of [false, true]) {
      it(`a tool that reads its context: the call it serves and the signal (${withSignal ? 'a signal given' : 'none given'})`, async () => {
        await both(
          () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] }, { content: [text('21°C')] }],
          async (start, log) => {
            const lookup = betaZodTool({
              name: 'get_weather',
              description: 'Current weather',
              inputSchema: z.object({ location: z.string() }),
              run: ({ location }, context) => {
                const call: any = context?.toolUse;
                const block: any = context?.toolUseBlock;
                // Only when a signal is given: this runner always gives one (README: `run(input, context)`).
                log.push(`${location} ${call?.id} ${call?.name} ${JSON.stringify(call?.input)} ${block === call} ${withSignal ? context?.signal?.aborted : ''}`);
                return 'ok';
              },
            });
            const options = withSignal ? { signal: new AbortController().signal } : undefined;
            return collect(start({ model, max_tokens: 1024, messages: ask, tools: [lookup] }, options));
          },
        );
      });
    }

    it('a tool that returns blocks (text with cache_control, an image, a document)', async () => {
      await both(
        () => [{ content: [toolUse('shot', {}, 'toolu_1')] }, { content: [text('I see it.')] }],
        async (start) => {
          const shot = betaTool({
            name: 'shot',
            description: 'Screenshot',
            inputSchema: { type: 'object', properties: {} },
            run: () => [
              { type: 'text' as const, text: 'Here:', cache_control: { type: 'ephemeral' as const } },
              { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'iVBORw0KGgo=' } },
              { type: 'document' as const, source: { type: 'text' as const, media_type: 'text/plain' as const, data: 'notes' }, title: 'Notes' },
            ],
          });
          const runner = start({ model, max_tokens: 1024, messages: ask, tools: [shot] });
          await runner.runUntilDone();
          return runner.params.messages;
        },
      );
    });

    it('a text answer cut off by max_tokens, continued by pushing the reply and a "continue"', async () => {
      await both(
        () => [
          { content: [text('The weather in Paris is')], stop_reason: 'max_tokens' },
          { content: [text(' 21°C.')] },
        ],
        async (start, log) => {
          const runner = start({ model, max_tokens: 5, messages: ask, tools: [weather(log)] });
          const parts = [];
          for await (const message of runner) {
            parts.push(message.content);
            if (message.stop_reason === 'max_tokens') runner.pushMessages({ role: 'assistant', content: message.content }, { role: 'user', content: 'continue' });
          }
          return { parts, history: runner.params.messages, done: await runner.done() };
        },
      );
    });

    it('a failed request retried on another model set with setMessagesParams after the error', async () => {
      await both(
        () => [{ error: { status: 529, message: 'overloaded' } }, { error: { status: 529, message: 'overloaded' } }, { error: { status: 529, message: 'overloaded' } }, { content: [text('Fine.')] }],
        async (start, log) => {
          const runner = start({ model, max_tokens: 1024, messages: ask, tools: [weather(log)] }, { maxRetries: 0 });
          const tries = [];
          for (let attempt = 0; attempt < 4; attempt++) {
            try {
              for await (const message of runner) tries.push(message.model);
              break;
            } catch (error) {
              tries.push((error as any).status);
              runner.setMessagesParams({ ...runner.params, model: `fallback-${attempt}`, thread: undefined });
            }
          }
          return { tries, done: await runner.done() };
        },
      );
    });

    it('stream: true, a loop body that reads nothing; then done()', async () => {
      await both(tripCalls, async (start, log) => {
        const runner = start({ model, max_tokens: 1024, messages: ask, tools: trip(log), stream: true });
        let turns = 0;
        for await (const _stream of runner) turns++;
        return { turns, done: await runner.done(), history: runner.params.messages };
      }, { concurrentLog: true });
    });

    it('stream: true, generateToolResponse before the stream is read, then finalMessage', async () => {
      await both(tripCalls, async (start, log) => {
        const runner = start({ model, max_tokens: 1024, messages: ask, tools: trip(log), stream: true });
        const seen = [];
        for await (const stream of runner) {
          const results = await runner.generateToolResponse();
          const message = await stream.finalMessage();
          seen.push({ results, stop: message.stop_reason });
        }
        return { seen, history: runner.params.messages };
      }, { concurrentLog: true });
    });

    it('stream: true, text listeners and stream.done(); done() asked for before the loop', async () => {
      await both(tripCalls, async (start, log) => {
        const runner = start({ model, max_tokens: 1024, messages: ask, tools: trip(log), stream: true });
        const early = runner.done();
        const texts: string[] = [];
        for await (const stream of runner) {
          stream.on('text', (delta: string) => texts.push(delta));
          await stream.done();
        }
        return { text: texts.join(''), early: await early };
      }, { concurrentLog: true });
    });

    it('stream: true, awaited with no loop, then runUntilDone() again', async () => {
      await both(tripCalls, async (start, log) => {
        const runner = start({ model, max_tokens: 1024, messages: ask, tools: trip(log), stream: true });
        const final = await runner;
        return { final, again: await runner.runUntilDone(), history: runner.params.messages };
      }, { concurrentLog: true });
    });

    for (const stopAt of ['content_block_stop', 'message_delta', 'message_stop']) {
      it(`stream: true, the reader leaves the events loop at the first ${stopAt}`, async () => {
        await both(tripCalls, async (start, log) => {
          const runner = start({ model, max_tokens: 1024, messages: ask, tools: trip(log), stream: true });
          const seen = [];
          const say = (error: unknown) => `${(error as Error).constructor.name}: ${(error as Error).message}`;
          for await (const stream of runner) {
            const types = [];
            for await (const event of stream) {
              types.push(event.type);
              if (event.type === stopAt) break;
            }
            seen.push({ types, final: await stream.finalMessage().then((m: any) => m.stop_reason, say) });
          }
          return { seen, history: runner.params.messages };
        }, { concurrentLog: true });
      });
    }

    it('a betaZodTool of a rich schema (defaults, unions, records, a shared sub-schema) with strict, cache_control, defer_loading and input_examples', async () => {
      await both(
        () => [
          { content: [toolUse('book', { from: { city: 'Paris' }, to: { city: 'Rome', code: null }, tags: { a: 1 }, mode: 'rail' }, 'toolu_1')] },
          { content: [text('Booked.')] },
        ],
        async (start, log) => {
          const place = z.object({ city: z.string().min(1).describe('City name'), code: z.string().length(3).nullable().optional() });
          const book = betaZodTool({
            name: 'book',
            description: 'Book a trip',
            inputSchema: z.object({
              from: place,
              to: place,
              seats: z.number().int().min(1).default(1),
              mode: z.union([z.literal('rail'), z.literal('air')]),
              tags: z.record(z.string(), z.number()).optional(),
            }),
            strict: true,
            cache_control: { type: 'ephemeral' },
            defer_loading: true,
            input_examples: [{ from: { city: 'Oslo' }, to: { city: 'Bergen' }, mode: 'rail' }],
            run: (input) => {
              log.push(JSON.stringify(input));
              return 'booked';
            },
          });
          const runner = start({ model, max_tokens: 1024, messages: ask, tools: [book] });
          await runner.runUntilDone();
          return runner.params.messages;
        },
      );
    });

    for (const cut of ['a text answer', 'a tool call']) {
      it(`a reply cut off by max_tokens (${cut}) retried with a doubled max_tokens (setMessagesParams drops the cut reply)`, async () => {
        await both(
          () => [
            cut === 'a tool call'
              ? { content: [text('Checking.'), toolUse('get_weather', { location: 'Par' }, 'toolu_cut')], stop_reason: 'max_tokens' }
              : { content: [text('The weather in')], stop_reason: 'max_tokens' },
            { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] },
            { content: [text('21°C.')] },
          ],
          async (start, log) => {
            const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] });
            const budgets = [];
            for await (const message of runner) {
              budgets.push(runner.params.max_tokens);
              if (message.stop_reason === 'max_tokens') runner.setMessagesParams((params: any) => ({ ...params, max_tokens: params.max_tokens * 2 }));
            }
            return { budgets, history: runner.params.messages, done: await runner.done() };
          },
        );
      });
    }

    it('stream: true, tool_choice none set once the model says it has enough (the reply asks for a tool), then done()', async () => {
      await both(
        () => [
          { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] },
          { content: [text('Enough evidence.'), toolUse('get_weather', { location: 'Rome' }, 'toolu_2')] },
          { content: [text('Paris 21°C.')] },
        ],
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)], stream: true });
          let writing = false;
          const rounds = [];
          for await (const round of runner) {
            const message = await round.finalMessage();
            rounds.push(message.content.length);
            if (!writing && message.content.some((b: any) => b.type === 'text' && b.text.startsWith('Enough'))) {
              writing = true;
              runner.setMessagesParams((params: any) => ({ ...params, tool_choice: { type: 'none' as const } }));
            }
          }
          return { rounds, done: await runner.done(), history: runner.params.messages };
        },
      );
    });

    it('setMessagesParams with a mutator that changes the params it is given in place and returns them', async () => {
      await both(
        () => [
          { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] },
          { content: [text('Paris 21°C.')] },
          { content: [toolUse('get_weather', { location: 'Rome' }, 'toolu_2')] },
          { content: [text('Rome 21°C.')] },
        ],
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] });
          runner.setMessagesParams((params: any) => {
            params.max_tokens = 300;
            params.messages.push({ role: 'user', content: 'Be brief.' });
            return params;
          });
          let asked = false;
          for await (const message of runner) {
            if (message.stop_reason === 'end_turn' && !asked) {
              asked = true;
              runner.setMessagesParams((params: any) => {
                params.messages.push({ role: 'assistant', content: message.content }, { role: 'user', content: 'And Rome?' });
                params.max_tokens = 400;
                return params;
              });
            }
          }
          return { history: runner.params.messages, max: runner.params.max_tokens };
        },
      );
    });

    it('output_config.format from betaZodOutputFormat in the params of a run (its parse left out of the request)', async () => {
      await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] }, { content: [text('{"answer":"21°C"}')] }],
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)], output_config: { format: betaZodOutputFormat(z.object({ answer: z.string() })) } });
          const final = await runner;
          return { final, parsed: JSON.parse(final.content[0].text) };
        },
      );
    });

    it("a betaTool (JSON Schema, not validated by the SDK) called with input its schema does not allow: run as given", async () => {
      await both(
        () => [
          { content: [toolUse('lookup', { location: 5, extra: true }, 'toolu_1'), toolUse('lookup', {}, 'toolu_2')] },
          { content: [text('Done.')] },
        ],
        async (start, log) => {
          const lookup = betaTool({
            name: 'lookup',
            description: 'Looks a place up',
            inputSchema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'], additionalProperties: false },
            run: (input) => {
              log.push(`lookup ${JSON.stringify(input)}`);
              return `found ${String(input.location)}`;
            },
          });
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [lookup] });
          await runner.runUntilDone();
          return runner.params.messages;
        },
        { concurrentLog: true },
      );
    });

    it('params and request options built from optional settings: undefined where a setting is not given', async () => {
      await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] }, { content: [text('21°C.')] }],
        async (start, log) => {
          const settings: Record<string, any> = {};
          const runner = start(
            {
              model,
              max_tokens: 256,
              messages: ask,
              tools: [weather(log)],
              system: settings.system,
              temperature: settings.temperature,
              tool_choice: settings.toolChoice,
              thinking: settings.thinking,
              metadata: settings.metadata,
              stop_sequences: settings.stop,
              betas: settings.betas,
              max_iterations: settings.maxIterations,
              stream: settings.stream,
            },
            settings.signal ? { signal: settings.signal } : { signal: undefined, headers: undefined, timeout: undefined, maxRetries: undefined },
          );
          return collect(runner);
        },
      );
    });

    for (const stream of [false, true]) {
      it(`the run's signal aborted while a request is in flight (stream: ${stream}): the error, a done() taken before, the history`, async () => {
        // The server aborts the run once it has the second request, then holds its reply.
        let abortRun = () => {};
        await both(
          () => [
            { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] },
            () => {
              abortRun();
              return { content: [text('21°C.')], delayMs: 2_000 };
            },
          ],
          async (start, log) => {
            const controller = new AbortController();
            abortRun = () => controller.abort();
            const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)], stream }, { signal: controller.signal });
            const early: Promise<unknown> = runner.done().then(
              (message: any) => message.content,
              (error: Error) => `${error.constructor.name}: ${error.message}`,
            );
            const seen = [];
            try {
              for await (const item of runner) seen.push((stream ? await item.finalMessage() : item).stop_reason);
            } catch (error) {
              seen.push(`${(error as Error).constructor.name}: ${(error as Error).message}`);
            }
            // Streamed, the SDK's done() never settles after a failure (README: a listed difference): not compared.
            return { seen, early: stream ? 'not compared' : await early, history: runner.params.messages };
          },
        );
      });
    }

    it('a tool that runs a runner of its own (a sub-agent on the same client)', async () => {
      await both(
        () => [
          { content: [toolUse('research', { topic: 'Paris' }, 'toolu_r')] },
          { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_s')] },
          { content: [text('Sub: 21°C.')] },
          { content: [text('Main: 21°C.')] },
        ],
        async (start, log) => {
          const research = betaZodTool({
            name: 'research',
            description: 'Researches a topic',
            inputSchema: z.object({ topic: z.string() }),
            run: async ({ topic }) => {
              const sub = await start({ model, max_tokens: 128, messages: [{ role: 'user', content: `Weather in ${topic}?` }], tools: [weather(log)] });
              return sub.content.map((block: any) => block.text).join('');
            },
          });
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [research] });
          return { final: await runner, history: runner.params.messages };
        },
      );
    });

    it('a model that stops without delivering is nudged (a user message pushed, the reply not), a paused turn pushed back, up to a limit', async () => {
      await both(
        () => [
          { content: [text('I think it is warm.')] },
          {
            content: [serverToolUse('web_search', { query: 'Paris' }, 'srvtoolu_1'), webSearchResult('srvtoolu_1', [{ url: 'https://a.example', title: 'A' }])],
            stop_reason: 'pause_turn',
          },
          { content: [toolUse('deliver', { answer: '21°C' }, 'toolu_d')] },
          { content: [text('Delivered.')] },
        ],
        async (start) => {
          let output: string | null = null;
          const deliver = betaZodTool({
            name: 'deliver',
            description: 'Deliver the result',
            inputSchema: z.object({ answer: z.string() }),
            run: ({ answer }) => {
              output = answer;
              return 'Thanks.';
            },
          });
          const runner = start({ model, max_tokens: 256, max_iterations: 6, messages: ask, tools: [deliver] });
          let iterations = 0;
          for await (const message of runner) {
            iterations++;
            if (output !== null) break;
            if (message.stop_reason === 'pause_turn') {
              runner.pushMessages({ role: 'assistant', content: message.content });
              continue;
            }
            if (message.stop_reason !== 'tool_use') runner.pushMessages({ role: 'user', content: 'Please deliver the result now via deliver.' });
          }
          return { output, iterations, history: runner.params.messages };
        },
      );
    });

    it('betas in the params, thinking, metadata and a stop sequence, sent with every request as the SDK sends them', async () => {
      const { ourServer } = await both(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] }, { content: [text('21°C.')] }],
        async (start, log) =>
          collect(
            start({
              model,
              max_tokens: 4096,
              messages: ask,
              tools: [weather(log)],
              betas: ['token-efficient-tools-2025-02-19', 'interleaved-thinking-2025-05-14'],
              thinking: { type: 'enabled', budget_tokens: 2048 },
              metadata: { user_id: 'u-1' },
              stop_sequences: ['###'],
            }),
          ),
      );
      expect(ourServer.requests.every((request) => String(request.headers['anthropic-beta']).includes('token-efficient-tools-2025-02-19'))).toBe(true);
    });

    it('awaited from several places at once (Promise.all of the runner, runUntilDone() and done())', async () => {
      await both(tripCalls, async (start, log) => {
        const runner = start({ model, max_tokens: 256, messages: ask, tools: trip(log) });
        const [a, b, c] = await Promise.all([runner, runner.runUntilDone(), runner.done()]);
        return { same: a.id === b.id && b.id === c.id, a };
      }, { concurrentLog: true });
    });

    it('stream: true, what each item is (instanceof BetaMessageStream, its constructor name), and a message told from a stream by its fields', async () => {
      await both(tripCalls, async (start, log) => {
        const runner = start({ model, max_tokens: 256, messages: ask, tools: trip(log), stream: true });
        const kinds = [];
        for await (const item of runner) {
          kinds.push({ instance: item instanceof BetaMessageStream, name: item.constructor.name, hasFinal: 'finalMessage' in item, isMessage: 'content' in item });
          await item.finalMessage();
        }
        return kinds;
      }, { concurrentLog: true });
    });


    it('tools that throw what code in the wild throws: an empty Error, a string, an object with a message, undefined, a subclass that keeps the name Error', async () => {
      class HttpError extends Error {
        constructor(readonly status: number) {
          super(`HTTP ${status}`);
        }
      }
      const throwing: Record<string, () => unknown> = {
        empty: () => new Error(''),
        text: () => 'plain failure',
        object: () => ({ message: 'an object', code: 42 }),
        nothing: () => undefined,
        http: () => new HttpError(503),
      };
      const names = Object.keys(throwing);
      await both(
        () => [{ content: names.map((name, i) => toolUse(name, {}, `toolu_${i}`)) }, { content: [text('Hmm.')] }],
        async (start) => {
          const tools = names.map((name) =>
            betaTool({
              name,
              description: name,
              inputSchema: { type: 'object', properties: {} },
              run: () => {
                throw throwing[name]!();
              },
            }),
          );
          const runner = start({ model, max_tokens: 256, messages: ask, tools });
          await runner.runUntilDone();
          return runner.params.messages;
        },
      );
    });

    it("a reply's container (code execution) carried to the next requests, as the SDK fixed it (anthropic-sdk-typescript#1114)", async () => {
      const { ourServer } = await both(
        () => [
          { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')], container: { id: 'container_abc' } },
          { content: [toolUse('get_weather', { location: 'Rome' }, 'toolu_2')], container: { id: 'container_abc' } },
          { content: [text('Done.')] },
        ],
        // The kit stamps each container's expires_at with the time: the ids are compared.
        async (start, log) => (await collect(start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] }))).map((message) => message.container?.id),
      );
      expect(ourServer.requests.map((request) => (request.body as any).container)).toEqual([undefined, 'container_abc', 'container_abc']);
    });

    for (const when of ['after the loop body', 'from generateToolResponse in the body']) {
      it(`a tool that reads the conversation through runner.params while it runs (${when})`, async () => {
        await both(tripCalls, async (start, log) => {
          let runner: any;
          const peek = (name: string) => {
            const messages = runner.params.messages;
            log.push(`${name} sees ${messages.length} messages, the last ${messages.at(-1).role} ${JSON.stringify(messages.at(-1).content).slice(0, 40)}`);
          };
          const [lookup, time] = trip([]);
          const tools = [
            { ...lookup!, run: (input: any, context: any) => (peek('getWeather'), lookup!.run(input, context)) },
            { ...time!, run: (input: any, context: any) => (peek('getTime'), time!.run(input, context)) },
          ];
          runner = start({ model, max_tokens: 256, messages: ask, tools });
          for await (const _message of runner) if (when !== 'after the loop body') await runner.generateToolResponse();
          return runner.params.messages.length;
        }, { concurrentLog: true });
      });
    }

    it('a tool that pushes a message of its own while it runs (a screenshot as a user message)', async () => {
      await both(
        () => [{ content: [toolUse('shot', {}, 'toolu_1')] }, { content: [text('I see it.')] }],
        async (start) => {
          let runner: any;
          const shot = betaTool({
            name: 'shot',
            description: 'Screenshot',
            inputSchema: { type: 'object', properties: {} },
            run: () => {
              runner.pushMessages({ role: 'user', content: [{ type: 'text', text: 'Here is the screen.' }] });
              return 'Taken.';
            },
          });
          runner = start({ model, max_tokens: 256, messages: ask, tools: [shot] });
          const seen = [];
          for await (const message of runner) seen.push(message.content);
          return { seen, history: runner.params.messages };
        },
      );
    });

    for (const keep of ['role and content', 'the message as returned', 'runner.params.messages']) {
      it(`a chat loop: one params object for every question, the history kept by the program (${keep})`, async () => {
        await both(
          () => [
            { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] },
            { content: [text('Paris: 21°C.')] },
            { content: [toolUse('get_weather', { location: 'Rome' }, 'toolu_2')] },
            { content: [text('Rome: 21°C.')] },
            { content: [text('Bye.')] },
          ],
          async (start, log) => {
            let history: any[] = [];
            const params = { model, max_tokens: 256, tools: [weather(log)], messages: history };
            const answers = [];
            for (const question of ['Paris?', 'Rome?', 'Thanks!']) {
              history.push({ role: 'user', content: question });
              const runner = start(params);
              const final = await runner;
              answers.push(final.content);
              if (keep === 'role and content') history.push({ role: final.role, content: final.content });
              else if (keep === 'the message as returned') history.push(final);
              else {
                history = [...runner.params.messages];
                params.messages = history;
              }
            }
            return { answers, history };
          },
        );
      });
    }

    it('calls of one tool in one reply: when each starts and ends (the slow first call ends last)', async () => {
      await both(
        () => [
          { content: [toolUse('fetch_page', { url: 'a', ms: 60 }, 'toolu_a'), toolUse('fetch_page', { url: 'b', ms: 5 }, 'toolu_b'), toolUse('fetch_page', { url: 'c', ms: 30 }, 'toolu_c')] },
          { content: [text('Read them.')] },
        ],
        async (start, log) => {
          const fetchPage = betaZodTool({
            name: 'fetch_page',
            description: 'Fetches a page',
            inputSchema: z.object({ url: z.string(), ms: z.number() }),
            run: async ({ url, ms }) => {
              log.push(`start ${url}`);
              await new Promise((resolve) => setTimeout(resolve, ms));
              log.push(`end ${url}`);
              return `page ${url}`;
            },
          });
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [fetchPage] });
          await runner.runUntilDone();
          return runner.params.messages;
        },
      );
    });

    it('a reply with a server tool (web search) and a client tool call, then one that ends on a stop sequence; a forced tool_choice lifted after the first turn', async () => {
      await both(
        () => [
          {
            content: [
              serverToolUse('web_search', { query: 'Paris weather' }, 'srvtoolu_1'),
              webSearchResult('srvtoolu_1', [{ url: 'https://a.example', title: 'A' }]),
              text('Checking the live value.'),
              toolUse('get_weather', { location: 'Paris' }, 'toolu_1'),
            ],
          },
          { content: [text('Paris 21°C. ###')], stop_reason: 'stop_sequence' },
        ],
        async (start, log) => {
          const runner = start({
            model,
            max_tokens: 256,
            messages: ask,
            stop_sequences: ['###'],
            tool_choice: { type: 'tool', name: 'get_weather' },
            tools: [weather(log), { type: 'web_search_20250305', name: 'web_search', max_uses: 2 }],
          });
          const stops = [];
          for await (const message of runner) {
            stops.push(message.stop_reason);
            if (runner.params.tool_choice?.type === 'tool') runner.setMessagesParams((params: any) => ({ ...params, tool_choice: { type: 'auto' } }));
          }
          return { stops, history: runner.params.messages };
        },
      );
    });

    it('a human in the loop: a destructive call denied by pushing the reply and an error result by hand', async () => {
      await both(
        () => [
          { content: [text('Deleting.'), toolUse('delete_file', { path: '/etc/passwd' }, 'toolu_1')] },
          { content: [text('Understood, I will not.')] },
        ],
        async (start, log) => {
          const deleteFile = betaZodTool({
            name: 'delete_file',
            description: 'Delete a file',
            inputSchema: z.object({ path: z.string() }),
            run: ({ path }) => {
              log.push(`delete ${path}`);
              return 'deleted';
            },
          });
          const runner = start({ model, max_tokens: 256, messages: ask, tools: [deleteFile] });
          for await (const message of runner) {
            const call = message.content.find((block: any) => block.type === 'tool_use' && block.name === 'delete_file');
            if (call) {
              runner.pushMessages(
                { role: 'assistant', content: message.content },
                { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'The user denied this.', is_error: true }] },
              );
            }
          }
          return runner.params.messages;
        },
      );
    });
  });
}
