/**
 * Rows of the README's "Differences from the SDK's runner" that are choices, not gaps: each program
 * runs on SDK 1.14.0's runner and on this one, against servers scripted alike, and each runner's own
 * behaviour is asserted as the row says it.
 */
import { ToolsetUsageError } from '@anthropic-ai/sdk/lib/tools/BetaRunnableToolset';
import { describe, expect, it } from 'vitest';
import { toolRunner } from 'tool-runner';
import { type Step, text, toolUse } from 'tool-runner/testing';
import { mockServer, sleep } from './helpers.js';
import { type Program, type Runner, ask, model, weather } from './side-by-side.js';

/** What `program` returns (or throws) on each runner, and its tool log. */
async function eachRunner(steps: () => Step[], program: Program) {
  const sdkServer = await mockServer(steps());
  const ourServer = await mockServer(steps());
  const outcome = async (start: (params: any, options?: any) => Runner) => {
    const log: string[] = [];
    try {
      return { saw: await program(start, log), log, error: undefined as string | undefined };
    } catch (error) {
      return { saw: undefined, log, error: String(error) };
    }
  };
  const sdkClient = sdkServer.client();
  const sdk = await outcome((params, options) => sdkClient.beta.messages.toolRunner(params, options) as unknown as Runner);
  const ours = await outcome((params, options) => toolRunner(ourServer.client(), params, options) as unknown as Runner);
  return { sdk, ours };
}

/** The weather tool, taking `ms` and ignoring its signal. */
function slowWeather(log: string[], ms: number) {
  const fast = weather(log);
  return { ...fast, run: async (input: { location: string }) => (await new Promise((resolve) => setTimeout(resolve, ms)), fast.run(input)) };
}

const callThenDone = () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_w')] }, { content: [text('done')] }];

describe('differences from the SDK runner, each as its README row says', () => {
  it("the run's signal aborted in the loop body, before the reply's tools start: the SDK runs them, this runner runs none", async () => {
    const { sdk, ours } = await eachRunner(callThenDone, async (start, log) => {
      const controller = new AbortController();
      const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] }, { signal: controller.signal });
      for await (const _ of runner) controller.abort();
      return runner.params.messages;
    });
    expect(sdk.log).toEqual(['get_weather Paris']);
    expect(ours.log).toEqual([]);
    expect(sdk.error).toMatch(/abort/i);
    expect(ours.error).toMatch(/abort/i);
  });

  it('generateToolResponse(signal): the SDK keeps what the tool returns after the signal aborted; this runner answers the call as aborted, and the run goes on', async () => {
    const { sdk, ours } = await eachRunner(callThenDone, async (start, log) => {
      const runner = start({ model, max_tokens: 256, messages: ask, tools: [slowWeather(log, 150)] });
      const results: unknown[] = [];
      for await (const _ of runner) {
        const response = await runner.generateToolResponse(AbortSignal.timeout(30));
        if (response) results.push(response.content[0]);
      }
      return results;
    });
    expect(sdk.saw).toEqual([expect.objectContaining({ tool_use_id: 'toolu_w', content: '21°C in Paris' })]);
    expect(ours.saw).toEqual([expect.objectContaining({ tool_use_id: 'toolu_w', is_error: true, content: expect.stringMatching(/aborted/) })]);
    expect(ours.error).toBeUndefined();

    const aborted = await eachRunner(callThenDone, async (start, log) => {
      const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] });
      for await (const _ of runner) await runner.generateToolResponse(AbortSignal.abort());
      return runner.params.messages.length;
    });
    expect(aborted.sdk.log).toEqual(['get_weather Paris']);
    expect(aborted.ours.log).toEqual([]);
    expect(aborted.ours.saw).toBe(4);
  });

  it('a streamed reply changed in place in the loop body: the SDK keeps it as it streamed, this runner as the body left it', async () => {
    const steps = () => [{ content: [text('secret')] }];
    const { sdk, ours } = await eachRunner(steps, async (start) => {
      const runner = start({ model, max_tokens: 256, messages: ask, stream: true });
      for await (const stream of runner) (await stream.finalMessage()).content[0].text = 'REDACTED';
      return runner.params.messages.at(-1).content[0].text;
    });
    expect(sdk.saw).toBe('secret');
    expect(ours.saw).toBe('REDACTED');
  });
  it('a ToolsetUsageError ends the run, then the run iterated again: the SDK sends the calls unanswered (none runs), this runner answers them first (the toolset\'s call runs again, a result kept is sent)', async () => {
    const steps = () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_w'), { type: 'tool_use', id: 'toolu_c', name: 'zoom', input: {}, toolset_name: 'computer' } as never] }, { content: [text('done')] }];
    const { sdk, ours } = await eachRunner(steps, async (start, log) => {
      let calls = 0;
      const screen = { type: 'computer_toolset_20260801' as const, display_width_px: 1, display_height_px: 1, run: async () => (log.push('zoom'), calls++ === 0 ? Promise.reject(new ToolsetUsageError('misused')) : 'zoomed') };
      const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log), screen] });
      await expect(runner.runUntilDone()).rejects.toThrow('misused');
      const last = await runner.runUntilDone();
      return { last: last.content[0].text, sent: runner.params.messages.slice(1, -1).map((message: { role: string }) => message.role) };
    });
    expect(sdk.log).toEqual(['get_weather Paris', 'zoom']);
    expect(sdk.saw).toEqual({ last: 'done', sent: ['assistant'] });
    expect(ours.log).toEqual(['get_weather Paris', 'zoom', 'zoom']);
    expect(ours.saw).toEqual({ last: 'done', sent: ['assistant', 'user'] });
  });
  it('runToolsEagerly, a break out of the loop body while a call it started runs: the SDK lets the call run on, its signal untouched; this runner aborts its signal', async () => {
    const steps = () => [{ content: [toolUse('slow', {}, 'toolu_s'), text('Waiting.')] }, { content: [text('done')] }];
    const { sdk, ours } = await eachRunner(steps, async (start, log) => {
      let ended: () => void = () => {};
      const end = new Promise<void>((resolve) => (ended = resolve));
      const slow = { name: 'slow', input_schema: { type: 'object' as const }, run: async (_input: unknown, context?: { signal?: AbortSignal }) => (await new Promise((resolve) => setTimeout(resolve, 60)), log.push(`aborted: ${context?.signal?.aborted === true}`), ended(), 'ok') };
      const runner = start({ model, max_tokens: 256, messages: ask, tools: [slow], stream: true, runToolsEagerly: true });
      for await (const stream of runner) {
        await stream.finalMessage();
        break;
      }
      await end;
      return null;
    });
    expect(sdk.log).toEqual(['aborted: false']);
    expect(ours.log).toEqual(['aborted: true']);
  });

  it("runToolsEagerly, a break out of the stream's for await before it reached a call: the SDK never starts the call; this runner may have (it starts once the model moves on), and aborts its signal", async () => {
    const steps = () => [{ content: [text('Let me look.'), toolUse('slow', {}, 'toolu_b'), text('One moment.')] }, { content: [text('done')] }];
    const { sdk, ours } = await eachRunner(steps, async (start, log) => {
      const slow = { name: 'slow', input_schema: { type: 'object' as const }, run: async (_input: unknown, context?: { signal?: AbortSignal }) => (await sleep(30), log.push(`ran, aborted: ${context?.signal?.aborted === true}`), 'ok') };
      const runner = start({ model, max_tokens: 256, messages: ask, tools: [slow], stream: true, runToolsEagerly: true });
      const read: string[] = [];
      try {
        for await (const stream of runner) {
          for await (const event of stream) {
            read.push(event.type);
            // The reader lags: it handles its first event once the whole reply has come, then leaves.
            await new Promise((resolve) => stream.once('message', resolve));
            break;
          }
        }
      } catch (error) {
        read.push((error as Error).constructor.name);
      }
      await sleep(100);
      return { read, messages: runner.params.messages.length };
    });
    expect(sdk.log).toEqual([]);
    expect(ours.log).toEqual(['ran, aborted: true']);
    expect(sdk.saw).toEqual({ read: ['message_start', 'APIUserAbortError'], messages: 2 });
    expect(ours.saw).toEqual({ read: ['message_start', 'APIUserAbortError'], messages: 1 });
  });

  it("the history replaced from outside the loop body while the reply's calls run (a chat's new question): the SDK puts their results first and the API refuses the request; this runner drops the reply with them, and goes on from the history set", async () => {
    const steps = () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_w')] }, { content: [text('Rome: 25°C.')] }];
    for (const stream of [false, true]) {
      const { sdk, ours } = await eachRunner(steps, async (start, log) => {
        const runner = start({ model, max_tokens: 256, stream, messages: ask, tools: [slowWeather(log, 80)] });
        for await (const item of runner) {
          const reply = stream ? await item.finalMessage() : item;
          // Once the body is done and the call runs.
          if (reply.stop_reason === 'tool_use') setTimeout(() => runner.setMessagesParams((params: object) => ({ ...params, messages: [{ role: 'user', content: 'Weather in Rome?' }] })), 20);
        }
        return runner.params.messages;
      });
      expect(sdk.log).toEqual(['get_weather Paris']);
      expect(sdk.error).toMatch(/^BadRequestError: 400 .*messages\.0\.content\.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_w/);
      expect(ours.log).toEqual(['get_weather Paris']);
      expect(ours.error).toBeUndefined();
      expect(ours.saw).toEqual([{ role: 'user', content: 'Weather in Rome?' }, expect.objectContaining({ role: 'assistant', content: [expect.objectContaining({ text: 'Rome: 25°C.' })] })]);
    }
    // A history that still holds the reply, an exchange after it: the results go right after the reply, not after the last assistant message.
    const { ours } = await eachRunner(steps, async (start, log) => {
      const runner = start({ model, max_tokens: 256, messages: ask, tools: [slowWeather(log, 80)] });
      const exchange = [{ role: 'user', content: 'Also: hi.' }, { role: 'assistant', content: 'Hi.' }, { role: 'user', content: 'And Rome?' }];
      for await (const reply of runner) {
        if (reply.stop_reason === 'tool_use') setTimeout(() => runner.setMessagesParams((params: { messages: unknown[] }) => ({ ...params, messages: [...params.messages, ...exchange] })), 20);
      }
      return runner.params.messages.map((message: { role: string; content: unknown }) => (typeof message.content === 'string' ? message.content : message.role));
    });
    expect(ours.error).toBeUndefined();
    expect(ours.saw).toEqual(['Weather in Paris?', 'assistant', 'user', 'Also: hi.', 'Hi.', 'And Rome?', 'assistant']);
  });

  it("a tool result holding a lone surrogate ('😀'.slice(0, 1)): the SDK sends it and the API refuses the request; this runner sends U+FFFD, and the run goes on", async () => {
    const { sdk, ours } = await eachRunner(callThenDone, async (start, log) => {
      const cut = { ...weather(log), run: async () => `21°C ${'😀'.slice(0, 1)}` };
      const runner = start({ model, max_tokens: 256, messages: ask, tools: [cut] });
      await runner;
      return runner.params.messages.at(-2).content[0].content;
    });
    expect(sdk.error).toMatch(/^BadRequestError: 400 .*The request body is not valid JSON: no low surrogate in string: line 1 column \d+ \(char \d+\)/);
    expect(ours.error).toBeUndefined();
    expect(ours.saw).toBe('21°C \ufffd');
  });
});
