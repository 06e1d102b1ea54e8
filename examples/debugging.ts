/**
 * Debugging: a failing tool is logged with its name, tool_use id and stack (at warn), while the
 * model only reads `${name}: ${message}`. ANTHROPIC_LOG=debug also logs tool inputs and results.
 */
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const divide = tool({
  name: 'divide',
  description: 'Divides a by b',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  run: ({ a, b }) => {
    if (b === 0) throw new RangeError('division by zero');
    return String(a / b);
  },
});

const { client, model, close } = await exampleClient([
  { content: [toolUse('divide', { a: 1, b: 0 })] },
  { content: [text('Dividing by zero is undefined.')] },
]);

const runner = toolRunner(
  client,
  { model, max_tokens: 1024, messages: [{ role: 'user', content: 'What is 1/0?' }], tools: [divide] },
  // Any pino/console-like logger; by default the client's logger at ANTHROPIC_LOG's level.
  { logger: console },
);
for await (const message of runner) {
  const response = await runner.generateToolResponse();
  if (response) console.log(`the model reads: ${JSON.stringify(response.content[0]?.content)}`);
  else console.log(`answer: ${textOf(message)}`);
}
await close();
