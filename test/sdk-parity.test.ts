/**
 * The same program on the SDK's `client.beta.messages.toolRunner(params)` and on
 * `toolRunner(client, params)`, over a message thread (both runners' default on an `Anthropic`
 * client) and with `thread: false`: the same requests and the same yielded messages.
 *
 * A thrown Error reads `${name}: ${message}` here (SPEC §5), which is the SDK's text for a plain
 * `Error`, so the programs below send byte-identical requests.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toolRunner } from 'tool-runner';
import { type Step, serverToolUse, text, toolUse, webSearchResult } from 'tool-runner/testing';
import { mockServer, wire } from './helpers.js';

type Runner = AsyncIterable<any> & {
  params: { messages: unknown[] };
  pushMessages(...messages: any[]): void;
  setMessagesParams(params: any): void;
  generateToolResponse(): Promise<any>;
  done(): Promise<any>;
};
type Program = (start: (params: any) => Runner) => Promise<unknown[]>;

const weather = betaZodTool({
  name: 'get_weather',
  description: 'Current weather',
  inputSchema: z.object({ location: z.string() }),
  run: async ({ location }) => {
    if (location === 'Atlantis') throw new Error('no such city');
    return `21°C in ${location}`;
  },
});
const params = {
  model: 'claude-sonnet-5-5',
  max_tokens: 1024,
  messages: [{ role: 'user' as const, content: 'Weather?' }],
  tools: [weather],
};

function comparable(message: any) {
  const { id: _id, ...rest } = message;
  return rest;
}

/** The request bodies, with the reply ids a thread continues from numbered in order (each server makes its own). */
function bodies(requests: Array<{ body: any }>) {
  const ids = new Map<string, string>();
  return requests.map(({ body }) => {
    const previous = body.thread?.previous_message_id;
    if (previous === undefined) return body;
    if (!ids.has(previous)) ids.set(previous, `reply ${ids.size + 1}`);
    return { ...body, thread: { ...body.thread, previous_message_id: ids.get(previous) } };
  });
}

/** `thread: false` for the runs of the `thread: false` block, nothing over threads. */
let mode: { thread?: false } = {};

async function runBoth(steps: () => Step[], program: Program) {
  const sdkServer = await mockServer(steps());
  const ourServer = await mockServer(steps());
  const sdkClient: Anthropic = sdkServer.client();
  const sdkYielded = await program((p) => sdkClient.beta.messages.toolRunner({ ...p, ...mode }) as unknown as Runner);
  const ourYielded = await program((p) => toolRunner(ourServer.client(), { ...p, ...mode }) as unknown as Runner);
  expect(bodies(ourServer.requests)).toEqual(bodies(sdkServer.requests));
  // Over a thread the requests continue one; the model sees the same whole conversation either way.
  const threaded = ourServer.requests.map((request) => wire(request).body.thread !== undefined);
  expect(threaded.every(Boolean)).toBe(mode.thread === undefined);
  expect(ourServer.requests.map((request) => wire(request).messages)).toEqual(sdkServer.requests.map((request) => wire(request).messages));
  expect(ourYielded.map(comparable)).toEqual(sdkYielded.map(comparable));
  return { sdkServer, ourServer };
}

const collect: Program = async (start) => {
  const seen = [];
  for await (const message of start(params)) seen.push(message);
  return seen;
};

describe.each([{ label: 'over a message thread', thread: undefined }, { label: 'thread: false', thread: false as const }])(
  'side by side with the SDK’s toolRunner ($label)',
  ({ thread }) => {
  beforeEach(() => {
    mode = thread === false ? { thread } : {};
  });

  it('basic loop with parallel calls, a failing call and an unknown tool', async () => {
    const { ourServer } = await runBoth(
      () => [
        {
          content: [
            text('Checking.'),
            toolUse('get_weather', { location: 'Paris' }, 'toolu_1'),
            toolUse('get_weather', { location: 'Atlantis' }, 'toolu_2'),
            toolUse('unknown_tool', {}, 'toolu_3'),
          ],
        },
        { content: [toolUse('get_weather', { location: 'Rome' }, 'toolu_4')] },
        { content: [text('Paris 21°C, Rome 21°C.')] },
      ],
      collect,
    );
    expect(ourServer.requests).toHaveLength(3);
  });

  it('pause_turn continuation with server tool blocks', async () => {
    await runBoth(
      () => [
        {
          content: [serverToolUse('web_search', { query: 'x' }, 'srvtoolu_1'), webSearchResult('srvtoolu_1', [{ url: 'https://a.example', title: 'A' }])],
          stop_reason: 'pause_turn',
        },
        { content: [text('Found it.')] },
      ],
      collect,
    );
  });

  it('max_iterations', async () => {
    await runBoth(
      () => [
        { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] },
        { content: [toolUse('get_weather', { location: 'Rome' }, 'toolu_2')] },
      ],
      async (start) => {
        const seen = [];
        for await (const message of start({ ...params, max_iterations: 2 })) seen.push(message);
        return seen;
      },
    );
  });

  it('pushMessages in the loop body (follow-up question)', async () => {
    await runBoth(
      () => [{ content: [text('Paris is sunny.')] }, { content: [text('Berlin is cloudy.')] }],
      async (start) => {
        const runner = start(params);
        const seen = [];
        for await (const message of runner) {
          seen.push(message);
          if (seen.length === 1) runner.pushMessages({ role: 'assistant', content: message.content }, { role: 'user', content: 'And Berlin?' });
        }
        return seen;
      },
    );
  });

  it('setMessagesParams to retry a turn', async () => {
    await runBoth(
      () => [{ content: [text('draft')] }, { content: [text('final')] }],
      async (start) => {
        const runner = start(params);
        const seen = [];
        for await (const message of runner) {
          seen.push(message);
          if (seen.length === 1) runner.setMessagesParams({ ...runner.params, max_tokens: 512 });
        }
        return seen;
      },
    );
  });

  it('generateToolResponse: modifying the results', async () => {
    await runBoth(
      () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] }, { content: [text('ok')] }],
      async (start) => {
        const runner = start(params);
        const seen = [];
        for await (const message of runner) {
          seen.push(message);
          const response = await runner.generateToolResponse();
          if (response) response.content[0].cache_control = { type: 'ephemeral' };
        }
        return seen;
      },
    );
  });

  it('stream: true, reading every event', async () => {
    await runBoth(
      () => [
        { content: [text('Let me look.'), toolUse('get_weather', { location: 'Paris' }, 'toolu_1')] },
        { content: [text('21°C.')] },
      ],
      async (start) => {
        const seen = [];
        for await (const stream of start({ ...params, stream: true })) {
          const events = [];
          for await (const event of stream) events.push(event.type);
          seen.push({ events, message: await stream.finalMessage() });
        }
        return seen.map(({ events, message }) => ({ events, ...message }));
      },
    );
  });

  it('max_tokens with a cut-off tool_use ends the run with it as the last message', async () => {
    const { ourServer } = await runBoth(
      () => [{ content: [text('…'), toolUse('get_weather', { location: 'Pa' }, 'toolu_1')], stop_reason: 'max_tokens' }],
      async (start) => {
        const runner = start(params);
        const seen = [];
        for await (const message of runner) seen.push(message);
        seen.push({ history: runner.params.messages });
        return seen;
      },
    );
    expect(ourServer.requests).toHaveLength(1);
  });
  },
);

describe("a runnable tool's fields are read at each request, as the SDK's runner reads them", () => {
  const model = 'claude-sonnet-5-5';
  const ask = [{ role: 'user' as const, content: 'Hi' }];
  const lookupTool = () => betaZodTool({ name: 'lookup', description: 'v1', inputSchema: z.object({ q: z.string() }), run: async ({ q }) => q }) as ReturnType<typeof betaZodTool> & { description: string; cache_control?: unknown };
  type Start = (params: Record<string, unknown>) => AsyncIterable<unknown> & PromiseLike<unknown>;

  /** The tools each request sent (their description and cache_control), by the SDK's runner and by this one, each on a server of its own. */
  async function sideBySide(steps: () => Step[], program: (start: Start) => Promise<void>) {
    const sent: Record<string, unknown> = {};
    for (const which of ['sdk', 'ours'] as const) {
      const server = await mockServer(steps());
      const client: Anthropic = server.client();
      await program((params) => (which === 'sdk' ? client.beta.messages.toolRunner(params as never) : toolRunner(client, params as never)) as never);
      sent[which] = server.requests.map((request) => wire(request).body.tools.map((tool: { description: string; cache_control?: unknown }) => [tool.description, tool.cache_control ?? null]));
    }
    return sent;
  }

  it('changed after a run, for the next run given the same object; changed before the first request; changed in the loop body', async () => {
    const twice = await sideBySide(() => [{ content: [text('a')] }, { content: [text('b')] }], async (start) => {
      const lookup = lookupTool();
      await start({ model, max_tokens: 100, messages: ask, tools: [lookup], thread: false });
      lookup.description = 'v2';
      lookup.cache_control = { type: 'ephemeral' };
      await start({ model, max_tokens: 100, messages: ask, tools: [lookup], thread: false });
    });
    expect(twice).toEqual({ sdk: [[['v1', null]], [['v2', { type: 'ephemeral' }]]], ours: [[['v1', null]], [['v2', { type: 'ephemeral' }]]] });
    const early = await sideBySide(() => [{ content: [text('a')] }], async (start) => {
      const lookup = lookupTool();
      const runner = start({ model, max_tokens: 100, messages: ask, tools: [lookup], thread: false });
      lookup.description = 'v2';
      await runner;
    });
    expect(early).toEqual({ sdk: [[['v2', null]]], ours: [[['v2', null]]] });
    const inBody = await sideBySide(() => [{ content: [toolUse('lookup', { q: 'x' }, 'toolu_1')] }, { content: [text('b')] }], async (start) => {
      const lookup = lookupTool();
      for await (const _message of start({ model, max_tokens: 100, messages: ask, tools: [lookup], thread: false })) {
        lookup.cache_control = { type: 'ephemeral' };
        delete (lookup as { description?: string }).description;
      }
    });
    expect(inBody).toEqual({ sdk: [[['v1', null]], [[undefined, { type: 'ephemeral' }]]], ours: [[['v1', null]], [[undefined, { type: 'ephemeral' }]]] });
  });

  it('changed in the loop body over a message thread: a new thread with the whole history and the new definition (the SDK throws)', async () => {
    const server = await mockServer([{ content: [toolUse('lookup', { q: 'x' }, 'toolu_1')] }, { content: [text('b')] }]);
    const lookup = lookupTool();
    for await (const _message of toolRunner(server.client(), { model, max_tokens: 100, messages: ask, tools: [lookup] })) lookup.description = 'v2';
    const second = wire(server.requests[1]!).body;
    expect(second.thread).toEqual({ type: 'create' });
    expect(second.tools[0].description).toBe('v2');
    expect(second.messages).toHaveLength(3);
  });
});
