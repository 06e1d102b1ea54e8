/** Hooks and usage: observe every request, message and tool call; skip or rewrite calls; count tokens. */
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const cache = new Map([['Paris', '{"temperature":18}']]);
const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  run: ({ city }) => JSON.stringify({ temperature: city.length }),
});

const { client, model, close } = await exampleClient([
  { content: [toolUse('get_weather', { city: 'Paris' }), toolUse('get_weather', { city: 'paris, france' })] },
  { content: [text('Paris: 18°C.')] },
]);

const runner = toolRunner(
  client,
  { model, max_tokens: 1024, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [getWeather] },
  {
    hooks: {
      onRequest: (params) => console.log(`→ request with ${params.messages.length} messages`),
      onMessage: (message) => console.log(`← ${message.stop_reason}, ${message.usage.output_tokens} output tokens`),
      onToolCall: (call) => {
        const { city } = call.input; // typed by the tool: { city: string }
        if (cache.has(city)) return { result: cache.get(city)! }; // skip the call: answer from the cache
        if (city.includes(',')) return { input: { city: city.split(',')[0]!.trim() } }; // rewrite the input
      },
      onToolResult: (result) => console.log(`  result for ${result.tool_use_id.slice(0, 12)}…: ${JSON.stringify(result.content)}`),
      onToolError: (error, call) => console.log(`  ${call.name} failed: ${String(error)}`),
    },
  },
);
await runner;
console.log(`usage: ${JSON.stringify(runner.usage)} over ${runner.iteration} requests`);
await close();
