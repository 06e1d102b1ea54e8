/**
 * Programs typed against SDK 1.14.0's runner compile unchanged when they call `toolRunner(client, …)`
 * instead of `client.beta.messages.toolRunner(…)` (SPEC §9.1).
 */
import type Anthropic from '@anthropic-ai/sdk';
import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import type { BetaRunnableToolset } from '@anthropic-ai/sdk/lib/tools/BetaRunnableToolset';
import type { BetaToolRunnerParams, BetaToolRunnerRequestOptions } from '@anthropic-ai/sdk/lib/tools/BetaToolRunner';
import type { BetaMessage, BetaToolUseBlock, BetaUserMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { describe, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { toolRunner } from 'tool-runner';

declare const client: Anthropic;
declare const computer: BetaRunnableToolset;

const weather = betaZodTool({
  name: 'get_weather',
  description: 'Current weather',
  inputSchema: z.object({ location: z.string() }),
  run: async ({ location }) => `21°C in ${location}`,
});
const lookup = betaTool({
  name: 'lookup',
  description: 'Looks things up',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
  run: async (input) => JSON.stringify(input),
});

describe('an SDK 1.14 program compiles on toolRunner(client, …)', () => {
  it('params and request options typed with the SDK types, the runner methods, what it yields', async () => {
    const params: BetaToolRunnerParams = {
      model: 'claude-sonnet-5-5',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [weather, lookup, computer, { type: 'web_search_20250305', name: 'web_search' }],
      max_iterations: 5,
    };
    const options: BetaToolRunnerRequestOptions = { headers: { 'x-team': 'blue' }, signal: null, openTelemetry: { conversationId: 'c' } };
    const runner = toolRunner(client, params, options);
    for await (const message of runner) {
      // As on the SDK's runner: params typed BetaToolRunnerParams leave `stream` open.
      expectTypeOf(message).toEqualTypeOf<BetaMessage | BetaMessageStream>();
      const response: BetaUserMessageParam | null = await runner.generateToolResponse();
      if (response) runner.pushMessages(response);
      // As the SDK types it (a BetaUserMessageParam): a text block goes after the results; the results still read as such.
      const ours = await runner.generateToolResponse();
      if (ours && Array.isArray(ours.content)) ours.content.push({ type: 'text', text: 'Be concise.' });
      expectTypeOf(ours?.content.filter((result) => result.is_error).map((result) => result.tool_use_id)).toEqualTypeOf<string[] | undefined>();
      runner.setMessagesParams({ ...runner.params, max_tokens: 2048 });
      runner.setMessagesParams((previous) => ({ ...previous, max_tokens: 512 }));
      runner.setRequestOptions((previous: BetaToolRunnerRequestOptions) => ({ ...previous, headers: { 'x-step': '2' } }));
      runner.setRequestOptions({ signal: new AbortController().signal });
      runner.compactBeforeNextTurn();
      runner.addTools(weather, { name: 'plain', input_schema: { type: 'object' } });
      runner.removeTools('lookup', weather);
    }
    const final: BetaMessage = await runner.runUntilDone();
    const done: BetaMessage = await runner.done();
    const awaited: BetaMessage = await runner;
    expectTypeOf([final, done, awaited]).toEqualTypeOf<BetaMessage[]>();
    await runner.generateToolResponse(null);
  });

  it('reading params as the SDK types them (tools always there), a mutator typed with the SDK type, a typed rejection handler', async () => {
    const extra = betaZodTool({ name: 'extra', description: 'More', inputSchema: z.object({ q: z.string() }), run: async ({ q }) => q });
    const params: BetaToolRunnerParams = { model: 'claude-sonnet-5-5', max_tokens: 10, messages: [{ role: 'user', content: 'x' }], tools: [weather] };
    const runner = toolRunner(client, params);
    for await (const _message of runner) {
      const count: number = runner.params.tools.length;
      // @ts-expect-error read-only, as the SDK types it: change params with setMessagesParams
      runner.params.max_tokens = 5;
      runner.setMessagesParams({ ...runner.params, tools: [...runner.params.tools, extra] });
      runner.setMessagesParams((previous: BetaToolRunnerParams) => ({ ...previous, max_tokens: 5 }));
      runner.setMessagesParams((previous) => ({ ...previous, tools: [...previous.tools, extra] }));
      // A tool's type reads as on the SDK's params (tool() made, SDK made, or a definition).
      runner.setMessagesParams((previous) => ({ ...previous, tools: previous.tools.filter((entry) => entry.type !== 'web_search_20250305') }));
      const types: Array<string | null | undefined> = runner.params.tools.map((entry) => entry.type);
      // A function typed with the SDK's params: passed as it is, or from an arrow whose parameter says the type.
      const withNote = (previous: BetaToolRunnerParams): BetaToolRunnerParams => ({ ...previous, messages: [...previous.messages, { role: 'user', content: 'note' }] });
      runner.setMessagesParams(withNote);
      runner.setMessagesParams((previous: BetaToolRunnerParams) => withNote(previous));
      void count;
      void types;
    }
    const text: string = await runner.then(
      (message) => message.id,
      (error: Error) => error.message,
    );
    void text;
  });

  it('stream: true with runToolsEagerly and deferred calls', async () => {
    const runner = toolRunner(client, {
      model: 'claude-sonnet-5-5',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'Weather?' }],
      tools: [weather],
      stream: true,
      runToolsEagerly: true,
    });
    for await (const stream of runner) {
      expectTypeOf(stream).toMatchTypeOf<BetaMessageStream>();
      stream.on('contentBlock', (block) => {
        if (block.type === 'tool_use' && block.name === 'delete_file') runner.deferToolCall(block);
      });
      await stream.finalMessage();
      const held: BetaToolUseBlock[] = runner.deferredToolCalls;
      runner.deferToolCall(held[0]?.id ?? 'toolu_1');
    }
  });

  it('a turn retried on a new runner made from the old one\'s params, kept in the same variable (as the SDK types it)', async () => {
    let runner = toolRunner(client, { model: 'claude-sonnet-5-5', max_tokens: 1024, messages: [{ role: 'user', content: 'Weather?' }], tools: [weather], stream: true });
    for (let attempt = 0; ; attempt++) {
      try {
        for await (const stream of runner) await stream.finalMessage();
        break;
      } catch (error) {
        if (attempt >= 2) throw error;
        // `{ ...runner.params }` leaves `stream` open (a ToolRunner<boolean>), which the SDK's BetaToolRunner<true> takes.
        runner = toolRunner(client, { ...runner.params });
      }
    }
    const typed: BetaToolRunnerParams = { model: 'claude-sonnet-5-5', max_tokens: 1024, messages: [], tools: [weather] };
    let whole = toolRunner(client, { ...typed, stream: false });
    whole = toolRunner(client, typed);
    expectTypeOf(whole).toEqualTypeOf<typeof whole>();
  });
});
