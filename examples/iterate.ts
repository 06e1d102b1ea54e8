/** Iterating: each assistant message in order; `break` ends the loop; max_iterations bounds it. */
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: z.object({ location: z.string() }),
  run: async ({ location }) => JSON.stringify({ location, temperature: 21 }),
});

const { client, model, close } = await exampleClient([
  { content: [text('Checking Paris.'), toolUse('get_weather', { location: 'Paris' })] },
  { content: [text('Paris: 21°C.')] },
]);

const runner = toolRunner(client, {
  model,
  max_tokens: 1024,
  max_iterations: 5,
  messages: [{ role: 'user', content: 'Weather in Paris?' }],
  tools: [getWeather],
});

for await (const message of runner) {
  console.log(`turn ${runner.iteration}: [${message.stop_reason}] ${textOf(message)}`);
  if (message.stop_reason === 'refusal') break; // stop whenever you like
}
console.log(`done after ${runner.iteration} requests; ${runner.params.messages.length} messages in the history`);
await close();
