/**
 * The `tools` option of an MCP toolset: only some of a server's tools offered to the model, by MCP name or by a rule.
 * Against real MCP servers: in a child process over stdio, and over streamable HTTP on 127.0.0.1.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { toolRunner } from 'tool-runner';
import { McpToolset, mcpToolset } from 'tool-runner/mcp';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { buildMixedServer } from './fixtures/mcp-mixed-server.js';
import { baseParams, mockServer, wire } from './helpers.js';
import { inProcessClient as inProcess, statelessHttpClient } from './fixtures/mcp-clients.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A client of the mixed server (test/fixtures/mcp-mixed-server.ts) in a child process over stdio, closed after the test. */
async function stdioClient(): Promise<Client> {
  const client = new Client({ name: 'tool-runner-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', 'test/fixtures/mcp-mixed-server.ts'] }));
  cleanups.push(() => client.close());
  return client;
}

/** A client of the mixed server over streamable HTTP (stateless: a server and a transport a request). */
function httpClient(): Promise<Client> {
  return statelessHttpClient(buildMixedServer, cleanups);
}

/** A client of an MCP server in this process that lists `count` tools, `tool_0` ..., one a page. */
async function pagedClient(count: number): Promise<Client> {
  const server = new Server({ name: 'paged', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const page = Number(request.params?.cursor ?? 0);
    return { tools: [{ name: `tool_${page}`, inputSchema: { type: 'object' as const } }], ...(page + 1 < count && { nextCursor: String(page + 1) }) };
  });
  return inProcess(server, cleanups);
}

const names = (request: Parameters<typeof wire>[0]) => wire(request).body.tools.map((entry: { name: string }) => entry.name);

describe('mcpToolset({ tools }): only the tools named, of a server with tools the API refuses (stdio)', () => {
  it('keeps the run working, sends only the tools kept, and answers a call of one left out "not found"', async () => {
    const client = await stdioClient();
    // Without it, the server's one bad schema and one bad name make the whole server unusable.
    await expect(mcpToolset(client)).rejects.toThrow(/mcpToolset: the server's tool 'files\.read' cannot be sent to the model: .*\(the option 'tools' offers the model only the others\)$/);
    const toolset = await mcpToolset(client, { tools: ['read_file', 'search'] });
    const server = await mockServer([
      { content: [toolUse('search', { query: 'mcp' }, 'toolu_search'), toolUse('read_file', { path: 'a.md' }, 'toolu_read'), toolUse('update_issue', { title: 't' }, 'toolu_update')] },
      { content: [text('done')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [toolset] }, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
    await runner;
    // In the server's order; their definitions whole.
    expect(names(server.requests[0]!)).toEqual(['search', 'read_file']);
    expect(wire(server.requests[0]!).body.tools[0]).toMatchObject({ name: 'search', description: 'Searches', input_schema: { type: 'object', properties: { query: { type: 'string' } } } });
    const [search, read, update] = wire(server.requests[1]!).messages[2].content;
    expect(search).toEqual({ type: 'tool_result', tool_use_id: 'toolu_search', content: [{ type: 'text', text: 'search ran with {"query":"mcp"}' }] });
    expect(read).toEqual({ type: 'tool_result', tool_use_id: 'toolu_read', content: [{ type: 'text', text: 'read_file ran with {"path":"a.md"}' }] });
    expect(update).toMatchObject({ tool_use_id: 'toolu_update', is_error: true, content: expect.stringMatching(/^Error: Tool 'update_issue' not found/) });
    expect(historyProblems(runner.params.messages)).toEqual([]);
    expect((await toolset.tools()).map((entry) => entry.name)).toEqual(['search', 'read_file']);
  });

  it('a name the server does not list is a clear error naming it and what the server lists (with mcpToolset() and with the class)', async () => {
    const client = await stdioClient();
    const listed = "it lists 'search', 'update_issue', 'read_file', 'files.read', 'change_tools'";
    await expect(mcpToolset(client, { tools: ['serach', 'read_file'] })).rejects.toThrow(`mcpToolset: tools names a tool the server does not list: 'serach' (did you mean 'search'?); ${listed}`);
    // Given with the prefix: the names are the server's.
    await expect(mcpToolset(client, { prefix: 'gh_', tools: ['gh_search', 'nothing', 'search'] })).rejects.toThrow(
      `mcpToolset: tools names tools the server does not list: 'gh_search' (the names are the server's, without the prefix 'gh_': 'search'), 'nothing'; ${listed}`,
    );
    // Made with the class: the first run's request fails with it, and none is sent.
    const server = await mockServer([{ content: [text('never requested')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [new McpToolset(client, { tools: ['search', 'reed_file'] })] });
    await expect(runner.runUntilDone()).rejects.toThrow(`mcpToolset: tools names a tool the server does not list: 'reed_file' (did you mean 'read_file'?); ${listed}`);
    expect(server.requests).toHaveLength(0);
  });

  it('after tools/list_changed the filter still applies: a new tool not named stays out, a named one gone is just gone; a rule decides again', async () => {
    const client = await stdioClient();
    const toolset = await mcpToolset(client, { tools: ['search', 'read_file', 'change_tools'] });
    const decided: string[] = [];
    const ruled = await mcpToolset(client, { prefix: 'p_', tools: (tool) => (decided.push(tool.name), tool.name === 'read_file' || tool.name === 'write_file') });
    expect((await ruled.tools()).map((entry) => entry.name)).toEqual(['p_read_file']);
    const server = await mockServer([
      { content: [toolUse('change_tools', {}, 'toolu_change')] },
      { content: [toolUse('read_file', { path: 'a.md' }, 'toolu_read')] },
      { content: [text('done')] },
    ]);
    // The whole history each request (no thread), so that each request names its tools.
    const runner = toolRunner(server.client(), { ...baseParams, tools: [toolset], thread: false }, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
    await runner;
    expect(names(server.requests[0]!)).toEqual(['search', 'read_file', 'change_tools']);
    expect(names(server.requests[1]!)).toEqual(['search', 'change_tools']);
    expect(wire(server.requests[2]!).messages[4].content[0]).toMatchObject({ tool_use_id: 'toolu_read', is_error: true, content: expect.stringMatching(/^Error: Tool 'read_file' not found/) });
    // The rule was given the new list too: the tool it keeps that came, not the one that went.
    expect((await ruled.tools()).map((entry) => entry.name)).toEqual(['p_write_file']);
    expect(decided.filter((name) => name === 'write_file')).toEqual(['write_file']);
    expect(decided.filter((name) => name === 'search')).toHaveLength(2);
  });
});

describe('mcpToolset({ tools }) over streamable HTTP', () => {
  it('a rule given each listed tool (its annotations too) keeps some; needsApproval by MCP name and the prefix apply to those kept', async () => {
    const client = await httpClient();
    const asked: string[] = [];
    const toolset = await mcpToolset(client, {
      prefix: 'gh_',
      tools: (tool) => tool.annotations?.readOnlyHint === true,
      needsApproval: (name) => (asked.push(name), name === 'read_file'),
    });
    const server = await mockServer([
      { content: [toolUse('gh_search', { query: 'mcp' }, 'toolu_search'), toolUse('gh_read_file', { path: 'a.md' }, 'toolu_read'), toolUse('gh_update_issue', {}, 'toolu_update')] },
      { content: [text('never requested')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [toolset] }, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
    await runner;
    expect(names(server.requests[0]!)).toEqual(['gh_search', 'gh_read_file']);
    expect(runner.stoppedBy).toBe('approval');
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_read']);
    expect(asked).toEqual(['search', 'read_file']);
  });
});

describe('mcpToolset({ tools }): a listing of many pages, bad values', () => {
  it('keeps the tools named on any page of tools/list; a name on none is an error listing every page\'s tools', async () => {
    const client = await pagedClient(5);
    expect((await (await mcpToolset(client, { tools: ['tool_3', 'tool_0'] })).tools()).map((entry) => entry.name)).toEqual(['tool_0', 'tool_3']);
    await expect(mcpToolset(client, { tools: ['tool_5'] })).rejects.toThrow("mcpToolset: tools names a tool the server does not list: 'tool_5'; it lists 'tool_0', 'tool_1', 'tool_2', 'tool_3', 'tool_4'");
  });

  it('a value that is neither a list of names nor a function, an empty list, or a rule that answers no boolean is a clear error', async () => {
    const client = await pagedClient(2);
    const made = (tools: unknown) => () => new McpToolset(client, { tools } as never);
    expect(made('tool_0')).toThrow('mcpToolset: tools must be the MCP names of the tools to keep or a function that decides for each tool, got "tool_0"');
    expect(made({ include: ['tool_0'] })).toThrow(/tools must be the MCP names .*, got an object$/);
    expect(made([])).toThrow("mcpToolset: tools is an empty list, which keeps none of the server's tools (leave the toolset out instead)");
    expect(made(['tool_0', 7])).toThrow('mcpToolset: tools must list the MCP names of the tools to keep, got 7 in it');
    expect(made(['tool_0', 'tool_0'])).toThrow("mcpToolset: tools names 'tool_0' twice");
    expect(() => new McpToolset(client, { tool: ['tool_0'] } as never)).toThrow("mcpToolset: unknown option 'tool'; the options are prefix, timeoutMs, needsApproval, tools. Did you mean 'tools'?");
    // A rule that forgets to answer, or answers a promise, would drop every tool (or keep all) silently.
    await expect(mcpToolset(client, { tools: (() => undefined) as never })).rejects.toThrow("mcpToolset: the tools rule must answer true or false for each tool, got undefined for 'tool_0'");
    await expect(mcpToolset(client, { tools: (async () => true) as never })).rejects.toThrow(/got an object \(a promise: the rule decides at once, as the tools are listed\) for 'tool_0'$/);
    const failing = (await mcpToolset(client, { tools: () => { throw new Error('no config'); } }).catch((error: unknown) => error)) as Error;
    expect(failing.message).toBe("mcpToolset: the tools rule failed for the server's tool 'tool_0': no config");
    expect(failing.cause).toBeInstanceOf(Error);
    // The list is the caller's: changed later, it does not change the tools kept.
    const wanted = ['tool_1'];
    const toolset = new McpToolset(client, { tools: wanted });
    wanted.push('tool_0');
    expect((await toolset.tools()).map((entry) => entry.name)).toEqual(['tool_1']);
  });
});
