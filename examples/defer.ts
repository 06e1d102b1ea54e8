/**
 * Eager tools with a hold: `runToolsEagerly` starts each call while the reply still streams, except
 * the calls `deferToolCall()` holds, which run once the loop body is done with the reply (or are
 * never run, if it breaks out). `deferredToolCalls` lists them, to ask someone first.
 */
import { z } from 'zod';
import { textOf, tool, toolRunner } from 'tool-runner';
import { text, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const search = tool({ name: 'search_files', description: 'Finds files', inputSchema: z.object({ pattern: z.string() }), run: ({ pattern }) => `found /tmp/${pattern}` });
const remove = tool({
  name: 'delete_file',
  description: 'Deletes a file',
  inputSchema: z.object({ path: z.string() }),
  run: ({ path }) => {
    console.log(`deleting ${path}`);
    return `deleted ${path}`;
  },
});

const { client, model, close } = await exampleClient([
  { content: [toolUse('search_files', { pattern: '*.log' }), toolUse('delete_file', { path: '/tmp/old.log' }), text('Cleaning up the logs.')] },
  { content: [text('Deleted /tmp/old.log.')] },
]);
const confirm = async (calls: Array<{ name: string; input: unknown }>) => {
  console.log(`asking before: ${calls.map((call) => `${call.name} ${JSON.stringify(call.input)}`).join(', ')}`);
  return true; // a person says yes
};

const runner = toolRunner(client, {
  model,
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'Delete the old logs.' }],
  tools: [search, remove],
  stream: true,
  runToolsEagerly: true,
});
for await (const stream of runner) {
  stream.on('contentBlock', (block) => {
    if (block.type === 'tool_use' && block.name === 'delete_file') runner.deferToolCall(block);
  });
  const message = await stream.finalMessage();
  const held = runner.deferredToolCalls;
  if (held.length > 0 && !(await confirm(held))) break;
  if (message.stop_reason === 'end_turn') console.log(`answer: ${textOf(message)}`);
}
await close();
