/**
 * The Worker of `examples/worker.ts`, run offline: its `fetch` gets a Request as workerd would give
 * it, and the testing kit's server plays the model. (test/runtimes.test.ts runs such a program in
 * workerd itself, in Deno, Bun and headless Chromium.)
 */
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';
import worker from './worker.js';

const offline = await exampleClient([
  { content: [toolUse('get_weather', { city: 'Lisbon' })] },
  { content: [text('It is 21°C in Lisbon.')] },
]);
const env = offline.offline
  ? { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: offline.client.baseURL }
  : { ANTHROPIC_API_KEY: process.env['ANTHROPIC_API_KEY']!, ...(process.env['ANTHROPIC_BASE_URL'] && { ANTHROPIC_BASE_URL: process.env['ANTHROPIC_BASE_URL'] }) };
const response = await worker.fetch(new Request('https://weather.example/?city=Lisbon'), env);
console.log(`${response.status}: ${await response.text()}`);
await offline.close();
