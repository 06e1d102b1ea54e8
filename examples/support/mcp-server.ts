/** A small MCP server for examples/mcp.ts, over stdio: one tool that counts words. */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'words', version: '1.0.0' });
server.registerTool('count_words', { description: 'Counts the words of a text', inputSchema: { text: z.string() } }, async ({ text }) => ({
  content: [{ type: 'text', text: String(text.split(/\s+/).filter(Boolean).length) }],
}));
await server.connect(new StdioServerTransport());
