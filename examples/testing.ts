/**
 * Testing your agent offline: the testing kit's local server plays the model over real HTTP, so
 * the real SDK client (retries, SSE parser) runs exactly as in production.
 */
import assert from 'node:assert/strict';
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';
import { createMockServer, historyProblems, text, toolResults, toolUse } from 'tool-runner/testing';

// The agent under test.
const lookupOrder = tool({
  name: 'lookup_order',
  description: 'Finds an order by id',
  inputSchema: z.object({ id: z.string() }),
  run: async ({ id }) => JSON.stringify({ id, status: 'shipped' }),
});
const agent = (client: Parameters<typeof toolRunner>[0], question: string) =>
  toolRunner(client, {
    model: 'claude-sonnet-5-5',
    max_tokens: 1024,
    messages: [{ role: 'user', content: question }],
    tools: [lookupOrder],
  });

// The script: a rate limit first (the SDK retries it), then a tool call, then the answer.
const server = await createMockServer({
  steps: [
    { error: { status: 429, retryAfter: 0.01 } },
    { content: [toolUse('lookup_order', { id: 'A-17' })] },
    (request) => {
      const [result] = toolResults(request); // what the runner answered the model's call with
      return { content: [text(`Order A-17: ${JSON.parse(String(result?.content)).status}.`)] };
    },
  ],
});

const runner = agent(server.client(), 'Where is order A-17?');
const final = await runner;

assert.equal(final.content[0]?.type === 'text' && final.content[0].text, 'Order A-17: shipped.');
assert.equal(server.requests.length, 3); // the retried request included
assert.deepEqual(server.requests[1]!.body.tools?.[0]?.name, 'lookup_order');
assert.deepEqual(historyProblems(runner.params.messages), []);
server.assertComplete(); // every scripted step was used
await server.close();
console.log('agent test passed: 3 requests, 1 retry, history valid');
