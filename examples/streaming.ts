/** Streaming: each iteration yields the SDK's MessageStream; print text as it arrives. */
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: z.object({ location: z.string() }),
  run: async ({ location }) => JSON.stringify({ location, temperature: 21 }),
});

const { client, model, close } = await exampleClient([
  { content: [text('Let me check. '), toolUse('get_weather', { location: 'Paris' })], eventDelayMs: 5 },
  { content: [text('It is 21°C and pleasant in Paris.')], chunkSize: 4, eventDelayMs: 5 },
]);

const runner = toolRunner(client, {
  model,
  max_tokens: 1024,
  stream: true,
  runToolsEagerly: true, // start each tool as soon as its call is complete in the stream
  messages: [{ role: 'user', content: 'Weather in Paris?' }],
  tools: [getWeather],
});

for await (const stream of runner) {
  for await (const event of stream) {
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') process.stdout.write(event.delta.text);
    if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
      process.stdout.write(`\n[calling ${event.content_block.name}]\n`);
    }
  }
}
process.stdout.write('\n');
await close();
