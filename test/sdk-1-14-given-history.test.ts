/**
 * Drop-in for SDK 1.14.0's runner, side by side (test/side-by-side.ts): a history as the program writes it,
 * with what no structured clone copies (a runnable tool in a `tool_addition` block, a function, a `Proxy`).
 */
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Step, text, toolUse } from 'tool-runner/testing';
import { wire } from './helpers.js';
import { type Program, ask, collect, model, runBoth, seenWith, weather } from './side-by-side.js';

/** A tool of a class, with state of its own besides its definition. */
class Lookup {
  name = 'lookup';
  description = 'Finds an order';
  input_schema = { type: 'object' as const, properties: { id: { type: 'string' } } };
  cache = new Map([['7', 'shipped']]);
  async run() {
    return 'found';
  }
}

/** A `system` message that adds `tool` as it is (a runnable tool, not its definition). */
const adding = (tool: object) => ({ role: 'system', content: [{ type: 'tool_addition', tool: { type: 'tool_definition', definition: tool } }] }) as never;

const sent = { type: 'tool_addition', tool: { type: 'tool_definition', definition: { name: 'lookup', description: 'Finds an order', input_schema: { type: 'object', properties: { id: { type: 'string' } } } } } };

for (const thread of [undefined, false] as const) {
  describe(`a runnable tool in a tool_addition block of the history (${thread === false ? 'thread: false' : 'over a message thread'})`, () => {
    const both = (steps: () => Step[], program: Program) => runBoth(steps, program, thread);
    const steps = () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_w1')] }, { content: [toolUse('lookup', { id: '7' }, 'toolu_l1')] }, { content: [text('done')] }];

    it('in the messages given: its definition is sent, as by the SDK (it threw DataCloneError: its run could not be copied), and a call to it is not found', async () => {
      const zodLookup = betaZodTool({ name: 'lookup', description: 'Finds an order', inputSchema: z.object({ id: z.string() }), run: async () => 'found' });
      for (const tool of [new Lookup(), zodLookup]) {
        const { ourServer } = await both(steps, async (start, log) => seenWith(start({ model, max_tokens: 256, tools: [weather(log)], messages: [...ask, adding(tool)] }), () => {}));
        expect(wire(ourServer.requests[0]!).messages[1].content[0].tool.definition).not.toHaveProperty('run');
        expect(wire(ourServer.requests[2]!).messages.at(-1).content[0]).toMatchObject({ tool_use_id: 'toolu_l1', is_error: true });
      }
    });

    it('pushed in the loop body: its definition is sent, as by the SDK (it sent the tool\'s own fields, which the API refuses)', async () => {
      const { ourServer } = await both(steps, async (start, log) => {
        const runner = start({ model, max_tokens: 256, messages: ask, tools: [weather(log)] });
        return seenWith(runner, (n) => {
          if (n === 1) runner.pushMessages(adding(new Lookup()));
        });
      });
      expect(wire(ourServer.requests[1]!).messages.find((message) => message.role === 'system').content).toEqual([sent]);
    });
  });
}

for (const thread of [undefined, false] as const) {
  describe(`a history holding what structuredClone cannot copy (${thread === false ? 'thread: false' : 'over a message thread'})`, () => {
    it("a block with a method, messages in Proxies (a UI framework's reactive list): sent as JSON sends them, as by the SDK (it threw DataCloneError)", async () => {
      const { ourServer } = await runBoth(
        () => [{ content: [toolUse('get_weather', { location: 'Paris' }, 'toolu_w1')] }, { content: [text('done')] }],
        async (start, log) => {
          const block = { type: 'text', text: 'Weather in Paris?', render: () => '<p>Weather in Paris?</p>' };
          const messages = new Proxy([new Proxy({ role: 'user', content: [block] }, {})], {});
          return collect(start({ model, max_tokens: 256, messages, tools: [weather(log)] }));
        },
        thread,
      );
      expect(wire(ourServer.requests[0]!).messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }]);
    });

    it('a message with a method of its own: sent without it, as by the SDK (the JSON copy threw a SyntaxError on the method itself)', async () => {
      const { ourServer } = await runBoth(
        () => [{ content: [text('done')] }],
        async (start) => {
          const message = { role: 'user', content: 'Weather in Paris?', onClick: () => 'clicked' };
          return collect(start({ model, max_tokens: 256, messages: [message] as never, tools: [] }));
        },
        thread,
      );
      expect(wire(ourServer.requests[0]!).messages).toEqual([{ role: 'user', content: 'Weather in Paris?' }]);
    });
  });
}
