/**
 * `npm run demo`: a real agentic loop. The model asks for the weather in two cities (two tool
 * calls that run in parallel), computes the difference with a calculator tool, and answers from
 * what the tools returned. Offline (no ANTHROPIC_API_KEY) a scripted model plays Claude's part,
 * reading the tool results from each request, over real HTTP with the real SDK client.
 */
import { z } from 'zod';
import { ToolError, textOf, tool, toolRunner } from 'tool-runner';
import { type RecordedRequest, text, toolResults, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const started = performance.now();
const elapsed = () => `${Math.round(performance.now() - started)} ms`.padStart(7);

// Demo data, so the demo gives the same answer everywhere.
const WEATHER: Record<string, { temperature: number; sky: string }> = {
  paris: { temperature: 18, sky: 'sunny' },
  tokyo: { temperature: 24, sky: 'humid, light rain' },
  oslo: { temperature: 7, sky: 'cloudy' },
};

const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather for a city (demo data: Paris, Tokyo, Oslo). Temperatures in °C.',
  inputSchema: z.object({ city: z.string().describe('City name, e.g. "Paris"') }),
  run: async ({ city }) => {
    await new Promise((resolve) => setTimeout(resolve, 150)); // a slow weather service
    const weather = WEATHER[city.toLowerCase()];
    if (!weather) throw new ToolError(`No weather data for '${city}'. Known cities: Paris, Tokyo, Oslo.`);
    return JSON.stringify({ city, ...weather, unit: 'celsius' });
  },
});

const calculate = tool({
  name: 'calculate',
  description: 'Evaluates an arithmetic expression with + - * / and parentheses.',
  inputSchema: z.object({ expression: z.string().regex(/^[\d\s.+\-*/()]+$/, 'only numbers and + - * / ( )') }),
  run: ({ expression }) => String(Function(`"use strict"; return (${expression});`)()),
});

/** The scripted model: what Claude would do, built from the tool results it receives. */
const offlineModel = [
  { content: [text('I will look up both cities at once.'), toolUse('get_weather', { city: 'Paris' }), toolUse('get_weather', { city: 'Tokyo' })] },
  (request: RecordedRequest) => {
    const [paris, tokyo] = resultTexts(request).map((result) => JSON.parse(result) as { temperature: number });
    return { content: [toolUse('calculate', { expression: `${tokyo!.temperature} - ${paris!.temperature}` })] };
  },
  (request: RecordedRequest) => {
    const difference = resultTexts(request)[0];
    const [paris, tokyo] = resultTexts(request, 3).map((result) => JSON.parse(result) as { temperature: number; sky: string });
    return {
      content: [
        text(
          `Paris is ${paris!.temperature}°C and ${paris!.sky}; Tokyo is ${tokyo!.temperature}°C and ${tokyo!.sky}. ` +
            `Tokyo is ${difference}°C warmer than Paris.`,
        ),
      ],
    };
  },
];

/** The text of the tool results in the request's user message `back` messages from the end. */
function resultTexts(request: RecordedRequest, back = 1): string[] {
  return toolResults(request.messages.slice(0, request.messages.length - back + 1)).map(textOf);
}

const { client, model, offline, close } = await exampleClient(offlineModel);
// With ANTHROPIC_BASE_URL the key's requests go there (a proxy, a gateway, a server of your own): said so.
const where = process.env['ANTHROPIC_BASE_URL'] ? ` at ${process.env['ANTHROPIC_BASE_URL']}` : '';
console.log(`tool-runner demo — ${offline ? 'offline scripted model' : `Claude (${model})${where}`}\n`);

const runner = toolRunner(client, {
  model,
  max_tokens: 1024,
  max_iterations: 8,
  messages: [{ role: 'user', content: 'What is the weather in Paris and in Tokyo, and how much warmer is Tokyo?' }],
  tools: [getWeather, calculate],
});

for await (const message of runner) {
  console.log(`${elapsed()}  ← reply ${runner.iteration} (${message.stop_reason})`);
  for (const block of message.content) {
    if (block.type === 'text') console.log(`           assistant: ${block.text}`);
    if (block.type === 'tool_use') console.log(`           calls ${block.name} ${JSON.stringify(block.input)}`);
  }
  const response = await runner.generateToolResponse();
  for (const result of response?.content ?? []) {
    const output = Array.isArray(result.content) ? result.content.map((b) => ('text' in b ? b.text : `[${b.type}]`)).join('') : result.content;
    console.log(`${elapsed()}  ⚙ ${result.is_error ? 'error' : 'result'}: ${output}`);
  }
}

const final = await runner;
const usage = runner.usage;
console.log(`\nfinal answer: ${textOf(final)}`);
console.log(
  `${runner.iteration} ${runner.iteration === 1 ? 'request' : 'requests'}, ${usage.input_tokens} input + ${usage.output_tokens} output tokens, ${elapsed().trim()}`,
);
await close();
