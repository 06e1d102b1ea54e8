/** A budget and a loop guard: a ceiling on tokens and tool calls, a stop for a model that repeats itself, and an answer at the limit. */
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const searchDocs = tool({
  name: 'search_docs',
  description: 'Searches the documentation',
  inputSchema: z.object({ query: z.string() }),
  run: async ({ query }) => (query.includes('rate') ? 'Rate limits: 50 requests per minute per key.' : 'No results.'),
});

const usage = { input_tokens: 900, output_tokens: 100 }; // 1,000 tokens a request
const { client, model, close } = await exampleClient([
  { content: [toolUse('search_docs', { query: 'limits' })], usage },
  { content: [toolUse('search_docs', { query: 'limits' })], usage }, // the same call again
  { content: [toolUse('search_docs', { query: 'rate limits' }), toolUse('search_docs', { query: 'quota' })], usage },
  { content: [toolUse('search_docs', { query: 'pricing' })], usage }, // 4,000 tokens: the budget is spent
  (request) => {
    console.log(`last request: tool_choice ${JSON.stringify(request.body.tool_choice)}`);
    return { content: [text('You can send 50 requests per minute per key.')], usage };
  },
]);

const runner = toolRunner(
  client,
  { model, max_tokens: 1024, messages: [{ role: 'user', content: 'What are the API rate limits?' }], tools: [searchDocs] },
  {
    budget: { maxTokens: 4_000, maxToolCalls: 10, maxCallsPerTool: { search_docs: 2 } },
    loopGuard: { maxRepeats: 1 }, // the same call with the same input runs once
    onLimit: 'answer', // at a limit, ask for the answer instead of stopping mid-task
  },
);
for await (const _message of runner) {
  for (const result of (await runner.generateToolResponse())?.content ?? []) {
    const why = /repeats|limit of .*?\)/.exec(String(result.content))?.[0];
    console.log(result.is_error ? `not run: ${why}` : `result : ${String(result.content)}`);
  }
}
const tokens = runner.usage.input_tokens + runner.usage.output_tokens;
console.log(`answer: ${textOf(await runner)}`);
console.log(`stopped by: ${runner.stoppedBy} after ${runner.iteration} requests, ${tokens} tokens`);
await close();
