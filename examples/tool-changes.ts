/**
 * Changing the tools during a run without touching `params.tools` (a changed `tools` misses the
 * prompt cache): `addTools` and `removeTools` tell the model in a `system` message with the next
 * request (the `inline-tools-2026-09-15` beta), and a removed tool stops running at once.
 */
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const login = tool({ name: 'login', description: 'Logs in', inputSchema: z.object({ user: z.string() }), run: ({ user }) => `logged in as ${user}` });
const query = tool({ name: 'query_database', description: 'Runs a read-only query', inputSchema: z.object({ sql: z.string() }), run: () => '42 rows' });

const { client, model, close } = await exampleClient([
  { content: [toolUse('login', { user: 'ada' })] },
  { content: [toolUse('query_database', { sql: 'select count(*) from orders' }), toolUse('login', { user: 'eve' })] },
  { content: [text('There are 42 orders.')] },
]);

const runner = toolRunner(
  client,
  { model, max_tokens: 1024, messages: [{ role: 'user', content: 'Log in as ada and count the orders.' }], tools: [login] },
  { headers: { 'anthropic-beta': 'inline-tools-2026-09-15' } },
);
for await (const message of runner) {
  const results = (await runner.generateToolResponse())?.content ?? [];
  for (const result of results) console.log(`${result.is_error ? 'error ' : 'result'}: ${JSON.stringify(result.content)}`);
  if (results.some((result) => !result.is_error && String(result.content).startsWith('logged in'))) {
    runner.addTools(query); // logged in: the model may query now
    runner.removeTools('login'); // and may not log in again (a later call is answered "not found")
  }
  if (message.stop_reason === 'end_turn') console.log(`answer: ${textOf(message)}`);
}
const system = runner.params.messages.filter((message) => (message.role as string) === 'system');
console.log(`the model was told: ${JSON.stringify(system.map((message) => (message.content as Array<{ type: string }>).map((block) => block.type)))}`);
await close();
