/**
 * Drop-in for SDK 1.14.0's runner, the history the caller sets (`pushMessages`, `setMessagesParams`):
 * - it leaves out the messages that repeat the model's last reply, as the SDK's thread state does (with
 *   `thread: false` too: its runner keeps every history in one). A program that places each reply it
 *   gets back in the history (`runner.pushMessages(reply, question)`) sends it once, on both runners;
 * - over an SDK thread (`toolRunner(thread, …)`), set outside the loop body, it is the thread's at once.
 */
import { describe, expect, it } from 'vitest';
import { type Step, text, toolUse } from 'tool-runner/testing';
import { ask, bodiesOf, comparable, model, overThreadBoth, runBoth, weather } from './side-by-side.js';

const steps = (): Step[] => [
  { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_r1')] },
  { content: [text('21°C.')] },
  { content: [text('More.')] },
  { content: [text('Done.')] },
];
const more = { role: 'user' as const, content: 'More?' };

/** The roles of the messages of each request a server got, and their texts. */
function sentTexts(bodies: unknown[]): string[][] {
  return bodies.map((body) => (body as { messages: Array<{ role: string; content: unknown }> }).messages.map((message) => `${message.role}: ${JSON.stringify(message.content)}`));
}

for (const thread of [undefined, false] as const) {
  describe(thread === false ? 'with thread: false' : 'over a message thread', () => {
    const params = (log: string[], extra = {}) => ({ model, max_tokens: 256, messages: ask, tools: [weather(log)], ...extra });

    it('the final reply pushed back after the run, with a question: sent once by a run from those params', async () => {
      const { ourServer } = await runBoth(
        steps,
        async (start, log) => {
          const runner = start(params(log));
          const final = await runner;
          runner.pushMessages(final, more);
          const pushed = runner.params.messages;
          const next = await start({ ...runner.params, tools: [weather(log)] });
          return { pushed, next };
        },
        thread,
      );
      const last = sentTexts(bodiesOf(ourServer) as unknown[]).at(-1)!;
      expect(last.filter((message) => message.includes('21°C.'))).toHaveLength(1);
      expect(last.at(-1)).toBe('user: "More?"');
    });

    it('the reply pushed back wherever it stands (after a question), or added again by setMessagesParams: left out', async () => {
      await runBoth(
        steps,
        async (start, log) => {
          const runner = start(params(log));
          const final = await runner;
          runner.pushMessages(more, final);
          const afterPush = runner.params.messages;
          runner.setMessagesParams((previous: { messages: unknown[] }) => ({ ...previous, messages: [...previous.messages, final] }));
          return { afterPush, afterSet: runner.params.messages };
        },
        thread,
      );
    });

    it('a copy of the last reply (its role and content) right after it: left out; a history that starts over keeps its first copy', async () => {
      const { ours } = await runBoth(
        steps,
        async (start, log) => {
          const runner = start(params(log));
          const final = await runner;
          runner.pushMessages({ role: 'assistant', content: JSON.parse(JSON.stringify(final.content)) }, more);
          const copied = runner.params.messages;
          runner.setMessagesParams((previous: object) => ({ ...previous, messages: [{ role: 'user', content: 'Start over.' }, final, final, more] }));
          return { copied, startedOver: runner.params.messages };
        },
        thread,
      );
      const { copied, startedOver } = ours.saw as { copied: unknown[]; startedOver: unknown[] };
      expect(copied).toHaveLength(5);
      expect(startedOver).toHaveLength(3);
    });

    it('a history copied as JSON, then a copy of the last reply: the copy is left out (the history still holds the reply where it stood)', async () => {
      const { ours } = await runBoth(
        steps,
        async (start, log) => {
          const runner = start(params(log));
          const final = await runner;
          const copied = JSON.parse(JSON.stringify(runner.params.messages));
          runner.setMessagesParams((previous: object) => ({ ...previous, messages: [...copied, { role: 'assistant', content: JSON.parse(JSON.stringify(final.content)) }, more] }));
          return runner.params.messages;
        },
        thread,
      );
      expect(ours.saw).toHaveLength(5);
    });

    it('in the loop body: the reply pushed twice, and a streamed reply pushed with a question, each kept once', async () => {
      await runBoth(
        steps,
        async (start, log) => {
          const runner = start(params(log));
          const seen = [];
          for await (const message of runner) {
            seen.push(message);
            if (seen.length === 1) runner.pushMessages(message, message);
          }
          const streamed = start(params(log, { stream: true }));
          for await (const stream of streamed) {
            const message = await stream.finalMessage();
            if (message.content[0]?.type === 'text' && message.content[0].text === 'More.') streamed.pushMessages(message, message, more);
          }
          return { seen, messages: runner.params.messages, streamed: streamed.params.messages };
        },
        thread,
      );
    });
  });
}

describe('over an SDK thread (toolRunner(thread, …))', () => {
  it('the final reply pushed back after the run: the thread holds the question at once, the reply once', async () => {
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, {});
      const final = await runner;
      runner.pushMessages(final, more);
      const pushed = { params: runner.params.messages, thread: thread.messages };
      await thread.send();
      return JSON.parse(JSON.stringify({ pushed, thread: thread.messages }, (key, value) => (key === 'id' ? undefined : value)));
    });
    expect(ours).toEqual(sdk);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    expect((ours as { pushed: { thread: unknown[] } }).pushed.thread).toHaveLength(5);
  });
});

describe('over an SDK thread, a history set outside the loop body is the thread\'s at once, as in the SDK\'s runner', () => {
  it('set before the run (another question, another max_tokens): the thread holds it, and the run sends it', async () => {
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      const runner = makeRunner(thread, {});
      runner.setMessagesParams((previous: object) => ({ ...previous, max_tokens: 300, messages: [{ role: 'user', content: 'Weather in Rome?' }] }));
      const before = comparable({ messages: thread.messages, params: { ...thread.params, messages: undefined } });
      const last = await runner;
      return comparable({ before, last, messages: thread.messages });
    });
    expect(ours).toEqual(sdk);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
  });

  it('a question pushed after the run: the thread holds it, and the next runner over the thread sends it', async () => {
    const { sdk, ours, sdkServer, ourServer } = await overThreadBoth(steps, async (makeRunner, client, log) => {
      const thread = client.beta.messages.thread({ model, max_tokens: 256, messages: ask, tools: [weather(log)] } as never);
      await makeRunner(thread, {});
      // (A runner that ended on its answer does not go on: the next run over the thread does.)
      const runner = makeRunner(thread, { max_iterations: 1 });
      await runner;
      runner.pushMessages(more);
      const pushed = comparable(thread.messages);
      const second = await makeRunner(thread, {});
      return comparable({ pushed, second, messages: thread.messages });
    });
    expect(ours).toEqual(sdk);
    expect(bodiesOf(ourServer)).toEqual(bodiesOf(sdkServer));
    expect(JSON.stringify(ourServer.requests.at(-1)!.messages)).toContain('More?');
  });
});

/**
 * Changed after the loop body, while a streamed reply still comes (a chat's follow-up typed as the answer streams):
 * appended messages go after the reply and its results; a history that no longer begins with the one sent drops the
 * reply (and the run ends when the reply did), as in the SDK's runner.
 */
for (const thread of [undefined, false] as const) {
  describe(`changed while a streamed reply still comes, after the loop body (${thread === false ? 'thread: false' : 'over a message thread'})`, () => {
    const replies = (first: 'call' | 'text') => (): Step[] => [
      { content: [first === 'call' ? toolUse('get_weather', { location: 'Paris' }, 'toolu_r1') : text('Sunny.')], eventDelayMs: 10 },
      { content: [text('21°C.')] },
      { content: [text('More.')] },
    ];
    const changes = {
      pushed: (runner: Record<string, any>) => runner.pushMessages(more),
      replaced: (runner: Record<string, any>) => runner.setMessagesParams((previous: object) => ({ ...previous, messages: [{ role: 'user', content: 'Weather in Rome?' }] })),
      'max_tokens only': (runner: Record<string, any>) => runner.setMessagesParams((previous: object) => ({ ...previous, max_tokens: 300 })),
    };
    for (const first of ['call', 'text'] as const) {
      for (const [how, change] of Object.entries(changes)) {
        it(`${how}, the reply ${first === 'call' ? 'asking for a tool' : 'of text'}`, async () => {
          const { ourServer } = await runBoth(
            replies(first),
            async (start, log) => {
              const runner = start({ model, max_tokens: 256, stream: true, messages: ask, tools: [weather(log)] });
              let changed = false;
              for await (const stream of runner) {
                // On the reply's first block, after the body is done with the stream.
                stream.on('streamEvent', (event: { type: string }) => {
                  if (changed || event.type !== 'content_block_start') return;
                  changed = true;
                  change(runner);
                });
              }
              return { changed, messages: runner.params.messages };
            },
            thread,
          );
          const history = (ourServer.requests.at(-1)!.messages as Array<{ role: string; content: unknown }>).map((message) => message.role);
          if (how === 'pushed' && first === 'call') expect(history).toEqual(['user', 'assistant', 'user', 'user']);
        });
      }
    }
  });
}

describe('messages appended late, told by their place, not by what they are', () => {
  it('a message object pushed earlier and pushed again late (a nudge a chat reuses) goes after the reply and its results, as in the SDK', async () => {
    const nudge = { role: 'user' as const, content: 'Keep going.' };
    for (const thread of [undefined, false] as const) {
      await runBoth(
        () => [{ content: [text('Thinking.')] }, { content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_r1')], eventDelayMs: 10 }, { content: [text('21°C.')] }, { content: [text('More.')] }],
        async (start, log) => {
          const runner = start({ model, max_tokens: 256, stream: true, messages: ask, tools: [weather(log)] });
          let replies = 0;
          for await (const stream of runner) {
            replies++;
            if (replies === 1) runner.pushMessages(await stream.finalMessage(), nudge);
            let pushed = false;
            if (replies === 2) stream.on('streamEvent', (event: { type: string }) => void (!pushed && event.type === 'content_block_start' && ((pushed = true), runner.pushMessages(nudge))));
          }
          return runner.params.messages;
        },
        thread,
      );
    }
  });
});

describe('a history set after a reply, with cache markers before an assistant message the caller wrote', () => {
  it('keeps them on the new thread: only the markers up to the last reply received are left out, as the SDK thread does', async () => {
    const doc = { role: 'user' as const, content: [{ type: 'text' as const, text: 'A long document.', cache_control: { type: 'ephemeral' as const } }] };
    const { ourServer } = await runBoth(
      () => [{ content: [text('Hello.')] }, { content: [text('About the document.')] }],
      async (start) => {
        const runner = start({ model, max_tokens: 256, messages: ask });
        let replies = 0;
        for await (const _ of runner) {
          if (++replies === 1) runner.setMessagesParams((previous: object) => ({ ...previous, messages: [doc, { role: 'assistant', content: 'Understood.' }, { role: 'user', content: 'Summarise it.' }] }));
        }
        return runner.params.messages;
      },
      undefined,
    );
    expect((ourServer.requests[1]!.body as { messages: unknown[] }).messages[0]).toEqual(doc);
  });
});
