/** Basic use: define a tool, run the loop, get the final message. */
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: z.object({ location: z.string(), unit: z.enum(['celsius', 'fahrenheit']).default('celsius') }),
  run: async ({ location, unit }) => JSON.stringify({ location, unit, temperature: 21 }),
});

const { client, model, close } = await exampleClient([
  { content: [toolUse('get_weather', { location: 'Paris' })] },
  { content: [text('It is 21°C in Paris.')] },
]);

const finalMessage = await toolRunner(client, {
  model,
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
  tools: [getWeather],
});
console.log(textOf(finalMessage));
await close();
