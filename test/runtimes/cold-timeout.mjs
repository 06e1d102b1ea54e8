/**
 * In a cold process: one message calls a tool that sleeps 5 ms under `timeoutMs: 50`, then the first
 * call ever of a plain JSON Schema tool. Preparing that tool's validator must not run on the other
 * call's clock. Prints the tool results as one JSON line.
 */
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';
import { createMockServer, text, toolResults, toolUse } from 'tool-runner/testing';

const server = await createMockServer({
  steps: [{ content: [toolUse('nap', { ms: 5 }, 'toolu_nap'), toolUse('add', { a: 1, b: 2 }, 'toolu_add')] }, { content: [text('done')] }],
});
const nap = tool({
  name: 'nap',
  inputSchema: z.object({ ms: z.number() }),
  timeoutMs: 50,
  run: ({ ms }) => new Promise((resolve) => setTimeout(() => resolve(`slept ${ms} ms`), ms)),
});
const add = tool({
  name: 'add',
  inputSchema: {
    type: 'object',
    properties: { a: { type: 'number', description: 'first' }, b: { type: 'number', description: 'second' }, note: { type: 'string', maxLength: 100 } },
    required: ['a', 'b'],
    additionalProperties: false,
  },
  run: ({ a, b }) => String(a + b),
});
await toolRunner(server.client(), { model: 'claude-sonnet-5-5', max_tokens: 100, messages: [{ role: 'user', content: 'go' }], tools: [nap, add] });
console.log(JSON.stringify(toolResults(server.requests[1]).map((result) => ({ id: result.tool_use_id, content: result.content, is_error: result.is_error === true }))));
await server.close();
