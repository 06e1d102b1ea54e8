/**
 * Fallbacks: when a request still fails after the client's own retries (overloaded, a 5xx, a rate
 * limit, a dropped connection), the same turn goes to each fallback in order — another client (a
 * second key or region, Bedrock, Vertex) and/or another model — with the whole history. Each turn
 * starts at the primary again.
 *
 * Offline, two local servers play the endpoints: the primary is overloaded for the first turn, the
 * backup's own copy of the model too, and its smaller model answers. With ANTHROPIC_API_KEY set the
 * same program runs on the API (ANTHROPIC_BACKUP_API_KEY, if set, is the backup's key).
 */
import Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { createMockServer, text, toolUse } from 'tool-runner/testing';

const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: z.object({ location: z.string() }),
  run: async ({ location }) => JSON.stringify({ location, temperature: 21 }),
});

const overloaded = { error: { status: 529, retryAfter: 0.01 } };
const offline = !process.env['ANTHROPIC_API_KEY'];
const primaryServer = await createMockServer({ steps: [overloaded, overloaded, { content: [text('It is 21°C in Paris.')] }] });
const backupServer = await createMockServer({ steps: [overloaded, { content: [toolUse('get_weather', { location: 'Paris' })] }] });
if (offline) console.log('[offline model] no ANTHROPIC_API_KEY: two local servers play the primary and the backup\n');

const primary = offline ? primaryServer.client({ maxRetries: 1 }) : new Anthropic();
const backup = offline
  ? backupServer.client({ maxRetries: 0 })
  : new Anthropic({ apiKey: process.env['ANTHROPIC_BACKUP_API_KEY'] ?? process.env['ANTHROPIC_API_KEY'] });

const runner = toolRunner(
  primary,
  {
    model: 'claude-sonnet-5-5',
    max_tokens: 1024,
    messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
    tools: [getWeather],
  },
  {
    fallback: [
      { client: backup }, // the same model, through another key
      { client: backup, model: 'claude-haiku-5-5', max_tokens: 512 }, // then a smaller model
    ],
    onEvent: (event) => {
      if (event.type !== 'request.end') return;
      const by = event.fallback === undefined ? 'the primary' : `fallback ${event.fallback}`;
      console.log(`request ${event.requestId}: ${event.error ? 'failed' : `answered by ${by} (${event.message?.model})`}`);
    },
  },
);
const final = await runner;
console.log(`answer: ${textOf(final)}`);
console.log(`${runner.iteration} turns, ${runner.usage.input_tokens + runner.usage.output_tokens} tokens in all`);
if (offline) console.log(`requests: primary ${primaryServer.requests.length}, backup ${backupServer.requests.length}`);
await Promise.all([primaryServer.close(), backupServer.close()]);
