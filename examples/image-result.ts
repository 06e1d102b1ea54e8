/**
 * A tool result of content blocks: text and an image (also documents and search results). The
 * `ToolResultContentBlock` type says what a block may be; a string is one text block.
 */
import { z } from 'zod';
import { type ToolResultContentBlock, textOf, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

// A 1×1 PNG, standing in for a chart a real tool would render.
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

const renderChart = tool({
  name: 'render_chart',
  description: 'Renders the values as a bar chart',
  inputSchema: z.object({ values: z.array(z.number()) }),
  run: async ({ values }): Promise<ToolResultContentBlock[]> => [
    { type: 'text', text: `A bar chart of ${values.length} values, highest ${Math.max(...values)}.` },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
  ],
});

const { client, model, close } = await exampleClient([
  { content: [toolUse('render_chart', { values: [3, 9, 4] })] },
  { content: [text('The second bar is the highest, at 9.')] },
]);
const runner = toolRunner(client, {
  model,
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Chart 3, 9 and 4 and tell me which is highest.' }],
  tools: [renderChart],
});
for await (const message of runner) {
  const results = (await runner.generateToolResponse())?.content ?? [];
  for (const result of results) {
    const blocks = Array.isArray(result.content) ? result.content : [];
    console.log(`result blocks: ${blocks.map((block) => block.type).join(', ')}`);
  }
  if (message.stop_reason === 'end_turn') console.log(`answer: ${textOf(message)}`);
}
await close();
