/** Modifying tool results: mutate the message generateToolResponse() returns; it is what gets sent. */
import { z } from 'zod';
import { type ToolResultMessage, textOf, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const searchDocs = tool({
  name: 'search_docs',
  description: 'Searches the documentation',
  inputSchema: z.object({ query: z.string() }),
  run: async ({ query }) => `Long documentation page about ${query}…`,
});

const { client, model, close } = await exampleClient([
  ...['prompt caching', 'cache breakpoints', 'cache pricing', 'cache lifetime', 'cache hits'].map((query) => ({ content: [toolUse('search_docs', { query })] })),
  { content: [text('Prompt caching stores long prefixes.')] },
]);

const runner = toolRunner(client, {
  model,
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'What is prompt caching?' }],
  tools: [searchDocs],
});

// A mark stays on its block in the history, and the API takes at most four a request: move it to the newest result.
let marked: ToolResultMessage['content'][number] | undefined;
for await (const message of runner) {
  const response = await runner.generateToolResponse();
  const newest = response?.content.at(-1);
  if (newest) {
    if (marked) delete marked.cache_control;
    newest.cache_control = { type: 'ephemeral' }; // cache the conversation up to the newest result
    marked = newest;
    console.log(`tool result ${newest.tool_use_id} marked for prompt caching`);
  }
  if (!response) console.log(`answer: ${textOf(message)}`);
}
await close();
