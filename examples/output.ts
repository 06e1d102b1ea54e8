/** Typed final output: the answer as a validated object, with a repair turn when the model gets it wrong. */
import { z } from 'zod';
import { OutputError, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: z.object({ city: z.string() }),
  run: async ({ city }) => JSON.stringify({ city, temperature: city === 'Oslo' ? -3 : 21, sky: 'clear' }),
});

const { client, model, close } = await exampleClient([
  { content: [toolUse('get_weather', { city: 'Oslo' }), toolUse('get_weather', { city: 'Paris' })] },
  // The offline model forgets a field once: the runner sends a repair turn naming it.
  { content: [text('{"warmest":"Paris","cities":[{"city":"Oslo","temperature":-3},{"city":"Paris"}]}')] },
  (request) => {
    console.log(`repair turn: ${JSON.stringify(request.messages.at(-1)?.content)}`);
    return { content: [text('{"warmest":"Paris","cities":[{"city":"Oslo","temperature":-3},{"city":"Paris","temperature":21}]}')] };
  },
]);

const report = z.object({
  warmest: z.string(),
  cities: z.array(z.object({ city: z.string(), temperature: z.number() })),
});

const runner = toolRunner(
  client,
  { model, max_tokens: 1024, messages: [{ role: 'user', content: 'Compare the weather in Oslo and Paris.' }], tools: [getWeather] },
  { output: report }, // sent as output_config.format; `runner.output` is typed from it
);
try {
  await runner;
  // No answer yet when a limit (max_iterations, the budget) or an approval stopped the run first.
  if (runner.output === undefined) throw new Error(`no answer: the run stopped by ${runner.stoppedBy}`);
  const { warmest, cities } = runner.output; // { warmest: string; cities: { city: string; temperature: number }[] }
  console.log(`warmest: ${warmest}; ${cities.map((c) => `${c.city} ${c.temperature}°C`).join(', ')} (stopped by: ${runner.stoppedBy})`);
} catch (error) {
  if (!(error instanceof OutputError)) throw error;
  console.log(`no valid output (${error.stopReason}): ${error.issues.map((issue) => `${issue.path} ${issue.message}`).join('; ')}`);
}
await close();
