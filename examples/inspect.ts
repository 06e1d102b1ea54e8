/**
 * The run inspector: a local web page that shows each run live (requests, streamed text, tool
 * calls, approvals with Allow / Deny buttons, usage) and a recorded file to look at later with
 * `npx tool-runner inspect FILE`.
 */
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { inspector } from 'tool-runner/inspect';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const getWeather = tool({
  name: 'get_weather',
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
  run: ({ city }) => `21°C and sunny in ${city}`,
});
const sendEmail = tool({
  name: 'send_email',
  description: 'Sends an email',
  inputSchema: z.object({ to: z.string(), body: z.string() }),
  needsApproval: true, // decided on the page
  run: ({ to }) => `sent to ${to}`,
});

const { client, model, close } = await exampleClient([
  { content: [text('Let me check the weather first.'), toolUse('get_weather', { city: 'Paris' })] },
  { content: [toolUse('send_email', { to: 'ann@example.com', body: 'Sunny in Paris today!' })] },
  { content: [text('It is sunny in Paris, and Ann knows.')] },
]);
const file = join(tmpdir(), 'tool-runner-runs.jsonl');
rmSync(file, { force: true }); // `record` appends: start a new file
const someoneAtTheTerminal = process.stdin.isTTY === true;

const inspect = await inspector({ record: file });
console.log(`inspector: ${inspect.url}`);
const final = await toolRunner(
  client,
  { model, max_tokens: 1024, stream: true, messages: [{ role: 'user', content: 'Weather in Paris? Tell Ann.' }], tools: [getWeather, sendEmail] },
  // Allow or deny send_email on the page (here, with no one to click, it is allowed).
  { onEvent: inspect.onEvent, approve: someoneAtTheTerminal ? inspect.approve : () => ({ decision: 'allow' }) },
);
console.log(`answer: ${textOf(final)}`);

if (someoneAtTheTerminal) await createInterface({ input: process.stdin, output: process.stdout }).question('Press Enter to close the inspector. ');
await inspect.close(); // writes the rest of the record
console.log(`recorded ${readFileSync(file, 'utf8').trim().split('\n').length} events; look at them again with: npx tool-runner inspect ${file}`);
await close();
