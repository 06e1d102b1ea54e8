import { afterEach, describe, expect, it } from 'vitest';
import { toolRunner } from 'tool-runner';
import { sseServer } from './fixtures/sse-server.js';
import { baseParams, weatherTool } from './helpers.js';

const open: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
});

/** A client of an SSE server that streams `replies` in turn (fixtures/sse-server.ts), closed after the test. */
async function streaming(...args: Parameters<typeof sseServer>) {
  const { client, close } = await sseServer(...args);
  open.push(close);
  return client;
}

const start = (id: string) => ({ type: 'message_start', message: { id, type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } });
const end = (stop_reason: string) => [
  { type: 'message_delta', delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: 1 } },
  { type: 'message_stop' },
];

describe('runToolsEagerly on odd streams', () => {
  it('a repeated content_block_start: the call starts with the input its own block streamed (as the SDK runner does), not the repeat’s', async () => {
    const call = { type: 'tool_use', id: 'toolu_Q', name: 'get_weather', input: {} };
    const client = await streaming([
      [
        start('msg_1'),
        { type: 'content_block_start', index: 0, content_block: call },
        { type: 'content_block_start', index: 0, content_block: call },
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"location": "Paris"}' } },
        { type: 'content_block_stop', index: 0 },
        ...end('tool_use'),
      ],
      [
        start('msg_2'),
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Done.' } },
        { type: 'content_block_stop', index: 0 },
        ...end('end_turn'),
      ],
    ]);
    for (const stream of [true, false]) {
      const ran: string[] = [];
      const runner = toolRunner(client, { ...baseParams, thread: false, stream, runToolsEagerly: true, tools: [weatherTool(ran)] }, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
      await runner;
      expect(ran).toEqual(['Paris']);
      const results = runner.params.messages[2]!.content as Array<{ tool_use_id: string; content: unknown; is_error?: boolean }>;
      expect(results[0]).toMatchObject({ tool_use_id: 'toolu_Q', content: JSON.stringify({ location: 'Paris', unit: 'celsius', temperature: 21 }) });
      expect(results[0]!.is_error).toBeUndefined();
    }
  });

  it('after a fallback block (the API handed the reply to a fallback model) no call starts while the reply streams: the calls run once it is whole, as in the SDK runner', async () => {
    const sent: { lastEventAt?: number } = {};
    const call = (id: string, location: string, index: number) => [
      { type: 'content_block_start', index, content_block: { type: 'tool_use', id, name: 'get_weather', input: {} } },
      { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify({ location }) } },
      { type: 'content_block_stop', index },
    ];
    const fallback = { type: 'fallback', from: { model: 'm' }, to: { model: 'm-fallback' }, trigger: { type: 'refusal' } };
    const client = await streaming(
      [
        [
          start('msg_1'),
          ...call('toolu_A', 'Paris', 0),
          { type: 'content_block_start', index: 1, content_block: fallback },
          { type: 'content_block_stop', index: 1 },
          300,
          ...call('toolu_B', 'Oslo', 2),
          ...end('tool_use'),
        ],
        [start('msg_2'), { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Done.' } }, { type: 'content_block_stop', index: 0 }, ...end('end_turn')],
      ],
      sent,
    );
    const started: Array<{ location: string; at: number }> = [];
    const ran: string[] = [];
    const weather = weatherTool(ran);
    const timed = { ...weather, run: (input: Parameters<typeof weather.run>[0], context: Parameters<typeof weather.run>[1]) => (started.push({ location: input.location, at: Date.now() }), weather.run(input, context)) };
    const runner = toolRunner(client, { ...baseParams, thread: false, stream: true, runToolsEagerly: true, tools: [timed] });
    let firstReplyEnd: number | undefined;
    for await (const stream of runner) {
      for await (const _event of stream);
      firstReplyEnd ??= sent.lastEventAt!;
    }
    expect(ran.sort()).toEqual(['Oslo', 'Paris']);
    // Both started once the first reply was whole, none while it streamed (Paris's call was closed 300 ms before its end).
    expect(started.map((entry) => entry.at - firstReplyEnd!).every((after) => after >= 0)).toBe(true);
  });
});
