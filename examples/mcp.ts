/** MCP: the tools of any MCP server (here one started over stdio) as runnable tools. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { textOf, toolRunner } from 'tool-runner';
import { mcpToolset } from 'tool-runner/mcp';
import { text, toolResults, toolUse } from 'tool-runner/testing';
import { exampleClient } from './support/client.js';

const mcp = new Client({ name: 'example-agent', version: '1.0.0' });
await mcp.connect(
  new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', new URL('./support/mcp-server.ts', import.meta.url).pathname] }),
);
const words = await mcpToolset(mcp); // listed again when the server announces tools/list_changed

const { client, model, close } = await exampleClient([
  { content: [toolUse('count_words', { text: 'the quick brown fox jumps' })] },
  (request) => ({ content: [text(`That sentence has ${textOf(toolResults(request)[0])} words.`)] }),
]);
const final = await toolRunner(client, {
  model,
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'How many words in "the quick brown fox jumps"?' }],
  tools: [words],
});
console.log(`tools from the MCP server: ${(await words.tools()).map((t) => t.name).join(', ')}`);
console.log(`answer: ${textOf(final)}`);
await mcp.close();
await close();
