/** Intercepting tool errors: generateToolResponse() runs the tools once; inspect is_error and stop early. */
import { z } from 'zod';
import { tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const readFile = tool({
  name: 'read_file',
  description: 'Reads a file of the project',
  inputSchema: z.object({ path: z.string() }),
  run: async ({ path }) => {
    throw new Error(`ENOENT: no such file '${path}'`);
  },
});

const { client, model, close } = await exampleClient([
  { content: [toolUse('read_file', { path: 'config.yaml' })] },
  { content: [text('never reached')] },
]);

const runner = toolRunner(client, {
  model,
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Summarise config.yaml' }],
  tools: [readFile],
});

for await (const _message of runner) {
  const response = await runner.generateToolResponse();
  const failed = response?.content.filter((result) => result.is_error) ?? [];
  if (failed.length > 0) {
    console.log(`stopping: ${failed.length} tool call(s) failed: ${JSON.stringify(failed[0]?.content)}`);
    break;
  }
}
await close();
