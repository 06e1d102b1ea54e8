/**
 * Message threads: on an `Anthropic` client a run goes over a thread by default — the server holds
 * the conversation, so each request sends only the new messages (the tool results), while the
 * runner still holds the whole history for you. `thread: false` sends the whole history every turn.
 */
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const getWeather = tool({
  name: 'get_weather',
  description: 'Current weather for a city',
  inputSchema: z.object({ location: z.string() }),
  run: async ({ location }) => JSON.stringify({ location, temperature: location === 'Oslo' ? 4 : 19 }),
});

const { client, model, close } = await exampleClient([
  { content: [toolUse('get_weather', { location: 'Oslo' })] },
  { content: [toolUse('get_weather', { location: 'Rome' })] },
  { content: [text('Oslo is 4°C, Rome 19°C.')] },
]);

// What goes on the wire, per request: the thread field and how many messages it carries.
const watched = client.withOptions({
  fetch: async (url, init) => {
    const body = JSON.parse(String(init?.body));
    const thread = body.thread ? `thread ${body.thread.type}` : 'no thread';
    console.log(`request: ${thread}, ${body.messages.length} message(s) sent`);
    return fetch(url, init);
  },
});

const runner = toolRunner(watched, {
  model,
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Weather in Oslo, then in Rome?' }],
  tools: [getWeather],
});
const final = await runner;
console.log(`answer: ${textOf(final)} (the runner holds all ${runner.params.messages.length} messages)`);
await close();
