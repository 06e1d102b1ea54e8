/** Modifying tool results: mutate the message generateToolResponse() returns; it is what gets sent. */
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const searchDocs = tool({
  name: 'search_docs',
  description: 'Searches the documentation',
  inputSchema: z.object({ query: z.string() }),
  run: async ({ query }) => `Long documentation page about ${query}…`,
});

const { client, model, close } = await exampleClient([
  { content: [toolUse('search_docs', { query: 'prompt caching' })] },
  { content: [text('Prompt caching stores long prefixes.')] },
]);

const runner = toolRunner(client, {
  model,
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'What is prompt caching?' }],
  tools: [searchDocs],
});

for await (const message of runner) {
  const response = await runner.generateToolResponse();
  for (const result of response?.content ?? []) {
    result.cache_control = { type: 'ephemeral' }; // cache the long result for later turns
    console.log(`tool result ${result.tool_use_id} marked for prompt caching`);
  }
  if (!response) console.log(`answer: ${textOf(message)}`);
}
await close();
