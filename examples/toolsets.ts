/**
 * Runnable toolsets, as the SDK defines them: one `tools` entry (here a computer toolset whose
 * `run` prints each action instead of driving a screen) answers every call the model makes to one
 * of its members. The calls of a toolset run one at a time, in the model's order; after a failed
 * one, the rest of that reply's calls of the toolset are not run.
 */
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const screen = {
  type: 'computer_toolset_20260801' as const,
  display_width_px: 1280,
  display_height_px: 800,
  run: async (_context: unknown, call: { name: string; input: unknown }) => {
    console.log(`computer: ${call.name} ${JSON.stringify(call.input)}`);
    if (call.name === 'key') throw new Error('the keyboard is not connected');
    return [{ type: 'text' as const, text: `${call.name} done` }];
  },
};
// A tool of your own may share a member's name: calls are told apart by their `toolset_name`.
const zoom = tool({ name: 'zoom', description: 'Zooms the map', inputSchema: z.object({ level: z.number() }), run: ({ level }) => `map at zoom ${level}` });

const member = (name: string, input: unknown) => ({ ...toolUse(name, input), toolset_name: 'computer' }); // a call to one of its members
const { client, model, close } = await exampleClient([
  { content: [member('left_click', { coordinate: [640, 400] }), toolUse('zoom', { level: 3 }), member('key', { text: 'Return' }), member('screenshot', {})] },
  { content: [text('I clicked the button; the keyboard is not connected, so I could not press Return.')] },
]);

const runner = toolRunner(client, {
  model,
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Click the button, press Return, then take a screenshot.' }],
  tools: [screen, zoom],
});
for await (const message of runner) {
  const results = (await runner.generateToolResponse())?.content ?? [];
  for (const result of results) console.log(`result (${result.toolset_name ?? 'own tool'}): ${JSON.stringify(result.content)}`);
  if (message.stop_reason === 'end_turn') console.log(`answer: ${textOf(message)}`);
}
await close();
