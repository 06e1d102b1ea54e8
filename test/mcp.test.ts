import { getEventListeners } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { CallToolRequestSchema, ListToolsRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { APIUserAbortError } from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ToolContext, resumeToolRunner, toolRunner } from 'tool-runner';
import { McpToolset, mcpToolset } from 'tool-runner/mcp';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { listingClientOf } from './fixtures/mcp-listing-server.js';
import { buildServer, connectedClient } from './fixtures/mcp-server.js';
import { inProcessClient as inProcess, statelessHttpClient } from './fixtures/mcp-clients.js';
import { baseParams, mockServer, sleep, warningsDuring, wire } from './helpers.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A client of a real MCP server in a child process (`fixture`, under test/fixtures), closed after the test. */
async function stdioClient(fixture = 'mcp-server.ts') {
  const client = new Client({ name: 'tool-runner-test', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', `test/fixtures/${fixture}`] }));
  cleanups.push(() => client.close());
  return client;
}

describe('MCP tools over stdio (a real MCP server in a child process)', () => {
  it('runs them: validated input, results as content blocks, isError as is_error, unsupported kinds as clear errors', async () => {
    const toolset = await mcpToolset(await stdioClient());
    const server = await mockServer([
      {
        content: [
          toolUse('add', { a: 2, b: 3 }, 'toolu_add'),
          toolUse('add', { a: 'two' }, 'toolu_bad'),
          toolUse('picture', {}, 'toolu_pic'),
          toolUse('readme', {}, 'toolu_readme'),
          toolUse('fails', {}, 'toolu_fails'),
          toolUse('fails_loudly', {}, 'toolu_loud'),
          toolUse('sound', {}, 'toolu_sound'),
          toolUse('svg', {}, 'toolu_svg'),
          toolUse('slug', { slug: 'a-b.c' }, 'toolu_slug'),
          toolUse('attachments', {}, 'toolu_att'),
          toolUse('archive', {}, 'toolu_zip'),
        ],
      },
      { content: [text('done')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [toolset] });
    await runner;
    const sentTools = wire(server.requests[0]!).body.tools;
    expect(sentTools.map((entry: { name: string }) => entry.name).sort()).toEqual(['add', 'archive', 'attachments', 'break_listing', 'fails', 'fails_loudly', 'grow', 'picture', 'readme', 'slug', 'sound', 'svg']);
    expect(sentTools.find((entry: { name: string }) => entry.name === 'add')).toMatchObject({
      description: 'Adds two numbers',
      input_schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
    });
    const results = Object.fromEntries(
      wire(server.requests[1]!).messages[2].content.map((result: { tool_use_id: string }) => [result.tool_use_id, result]),
    );
    expect(results.toolu_add).toEqual({ type: 'tool_result', tool_use_id: 'toolu_add', content: [{ type: 'text', text: '5' }] });
    expect(results.toolu_bad).toMatchObject({ is_error: true, content: expect.stringMatching(/Invalid input for tool 'add'/) });
    expect(results.toolu_pic.content).toEqual([
      { type: 'text', text: 'Here it is:' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    ]);
    expect(results.toolu_readme.content).toEqual([{ type: 'text', text: 'Resource file:///readme.md:\n# Hello' }]);
    // Resources sent as bytes: an image, text read as UTF-8; a kind a result cannot hold is a clear error.
    expect(results.toolu_att.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'text', text: 'Resource file:///note.txt:\nhéllo ✓' },
      { type: 'text', text: 'Resource file:///plain:\nplain bytes' },
    ]);
    expect(results.toolu_zip).toMatchObject({ is_error: true, content: expect.stringMatching(/an embedded resource of type application\/zip, which a tool result cannot hold/) });
    expect(results.toolu_fails).toMatchObject({ is_error: true, content: [{ type: 'text', text: 'disk full' }] });
    // A failure that holds a kind a result cannot: the server's words stay, the other is named beside them.
    expect(results.toolu_loud).toMatchObject({
      is_error: true,
      content: [
        { type: 'text', text: 'disk full' },
        { type: 'text', text: "MCP tool 'fails_loudly' returned audio content, which a tool result cannot hold (text, images, embedded text resources and PDF documents can)" },
      ],
    });
    expect(results.toolu_sound).toMatchObject({ is_error: true, content: expect.stringMatching(/returned audio content, which a tool result cannot hold/) });
    expect(results.toolu_svg).toMatchObject({ is_error: true, content: expect.stringMatching(/an image of type image\/svg\+xml, which a tool result cannot hold \(JPEG, PNG, GIF and WebP can\)/) });
    // A schema this runner cannot compile: the tool is sent with it as it is, its input unchecked here.
    expect(sentTools.find((entry: { name: string }) => entry.name === 'slug').input_schema.properties.slug.pattern).toBe('^[\\w-.]+$');
    expect(results.toolu_slug).toEqual({ type: 'tool_result', tool_use_id: 'toolu_slug', content: [{ type: 'text', text: 'slug a-b.c' }] });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('calls a run starts with (a history that ends with them, a resumed run waiting for approval) run: the toolset lists its tools first', async () => {
    const client = await stdioClient();
    const server = await mockServer([{ content: [text('five')] }, { content: [toolUse('add', { a: 1, b: 1 }, 'toolu_two')] }, { content: [text('two')] }]);
    const history = [...baseParams.messages, { role: 'assistant' as const, content: [toolUse('add', { a: 2, b: 3 }, 'toolu_add')] }];
    await toolRunner(server.client(), { ...baseParams, messages: history, tools: [await mcpToolset(client)] });
    expect(wire(server.requests[0]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_add', content: [{ type: 'text', text: '5' }] }]);

    const waiting = toolRunner(server.client(), { ...baseParams, tools: [await mcpToolset(client, { needsApproval: true })] });
    await waiting;
    expect(waiting.stoppedBy).toBe('approval');
    const snapshot = JSON.parse(JSON.stringify(waiting.toJSON()));
    const resumed = resumeToolRunner(server.client(), snapshot, { tools: [await mcpToolset(client, { needsApproval: true })] });
    resumed.approve('toolu_two');
    await resumed;
    expect(wire(server.requests[2]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_two', content: [{ type: 'text', text: '2' }] }]);
    server.assertComplete();
  });

  it("a needsApproval rule may answer a promise, and is given the call's context, as a tool's own rule is", async () => {
    const client = await stdioClient();
    const server = await mockServer([{ content: [toolUse('add', { a: 1, b: 1 }, 'toolu_small'), toolUse('add', { a: 50, b: 60 }, 'toolu_big')] }, { content: [text('done')] }]);
    const asked: Array<{ name: string; id: string }> = [];
    const needsApproval = async (name: string, input: unknown, context: ToolContext) => {
      asked.push({ name, id: context.toolUse.id });
      return (input as { a: number }).a > 10;
    };
    const runner = toolRunner(server.client(), { ...baseParams, tools: [await mcpToolset(client, { needsApproval })] });
    await runner;
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_big']);
    expect(asked).toEqual([{ name: 'add', id: 'toolu_small' }, { name: 'add', id: 'toolu_big' }]);
  });

  it('picks up tools/list_changed before the next request', async () => {
    const toolset = await mcpToolset(await stdioClient());
    const server = await mockServer([
      { content: [toolUse('grow', {}, 'toolu_grow')] },
      { content: [toolUse('later_tool', { word: 'hi' }, 'toolu_later')] },
      { content: [text('done')] },
    ]);
    await toolRunner(server.client(), { ...baseParams, tools: [toolset] });
    const names = (index: number) => wire(server.requests[index]!).body.tools.map((entry: { name: string }) => entry.name);
    expect(names(0)).not.toContain('later_tool');
    expect(names(1)).toContain('later_tool');
    expect(wire(server.requests[2]!).messages[4].content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_later',
      content: [{ type: 'text', text: 'later: hi' }],
    });
  });
});

describe('MCP tools: failures and the client they share', () => {
  it('a new list that cannot be had after tools/list_changed fails the next request clearly (no unhandled rejection); the last list stays', async () => {
    const toolset = await mcpToolset(await connectedClient());
    const server = await mockServer([{ content: [toolUse('break_listing', {}, 'toolu_break')] }, { content: [text('done')] }]);
    // The whole history each request (no thread), so that each request names its tools.
    const runner = toolRunner(server.client(), { ...baseParams, tools: [toolset], thread: false });
    await expect(runner.runUntilDone()).rejects.toThrow(/mcpToolset: listing the server's tools again after it announced a change failed: .*Custom types cannot be represented/);
    expect(server.requests).toHaveLength(1);
    // Iterating again goes on with the last list.
    await runner;
    expect(wire(server.requests[1]!).body.tools.map((entry: { name: string }) => entry.name)).toContain('add');
  });

  it("every toolset on a client and the client's own listChanged handler hear of a change; calls leave no abort listener behind; timeoutMs is the MCP request timeout", async () => {
    const changes: unknown[] = [];
    const client = await connectedClient({ listChanged: { tools: { onChanged: (error, tools) => changes.push(error ?? tools?.length) } } });
    const timeouts: unknown[] = [];
    const callTool = client.callTool.bind(client);
    client.callTool = (params, schema, options) => (timeouts.push(options?.timeout), callTool(params, schema, options));
    const toolset = await mcpToolset(client, { timeoutMs: 120_000 });
    const other = await mcpToolset(client, { prefix: 'other_' });
    // The signals the calls are given (a run without a signal of its own may share one among them all):
    // the MCP client adds an abort listener to the signal of each request and never removes it.
    const signals = new Set<AbortSignal>();
    const add = (await toolset.tools()).find((entry) => entry.name === 'add')!;
    const run = add.run.bind(add);
    add.run = (input, context) => (signals.add(context.signal), run(input, context));
    const calls = Array.from({ length: 12 }, (_, n) => toolUse('add', { a: n, b: 1 }, `toolu_${n}`));
    const server = await mockServer([{ content: calls }, { content: [toolUse('grow', {}, 'toolu_grow')] }, { content: [text('done')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [toolset] });
    expect([...signals].map((signal) => getEventListeners(signal, 'abort').length)).toEqual([...signals].map(() => 0));
    expect(timeouts).toEqual(Array.from({ length: 13 }, () => 120_000));
    await expect.poll(() => changes.length).toBe(1);
    // Both toolsets on the client hear of the change (each lists the tools again), the client's handler once.
    expect((await other.tools()).map((entry) => entry.name)).toContain('other_later_tool');
    expect(changes).toHaveLength(1);
    await client.close();
  });
});

describe('MCP toolsets: the client given', () => {
  it('a toolset made before client.connect() hears of changes though connect() sets the client\'s own listChanged handler; that one hears of them too', async () => {
    const changes: unknown[] = [];
    const client = new Client({ name: 'test', version: '1.0.0' }, { listChanged: { tools: { onChanged: (error, tools) => changes.push(error ?? tools?.length) } } });
    cleanups.push(() => client.close());
    const toolset = new McpToolset(client);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = buildServer();
    await server.connect(serverSide);
    await client.connect(clientSide);
    expect((await toolset.tools()).map((entry) => entry.name)).not.toContain('later_tool');
    await (await toolset.tools()).find((entry) => entry.name === 'grow')!.run({}, { signal: new AbortController().signal } as never);
    await expect.poll(() => changes.length).toBe(1);
    // Heard by the toolset: the next tools() waits for the new list.
    expect((await toolset.tools()).map((entry) => entry.name)).toContain('later_tool');
  });

  it("a handler of the caller's own set after the toolsets were made: they hear of changes again by the next request, and so does it", async () => {
    const client = await connectedClient();
    cleanups.push(() => client.close());
    const toolset = await mcpToolset(client);
    const other = await mcpToolset(client, { prefix: 'other_' });
    const heard: string[] = [];
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => void heard.push('mine'));
    const server = await mockServer([{ content: [toolUse('grow', {})] }, { content: [toolUse('later_tool', { word: 'hi' }, 'toolu_later')] }, { content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [toolset], thread: false });
    await runner;
    expect(heard).toEqual(['mine']);
    expect(wire(server.requests[1]!).body.tools.map((entry: { name: string }) => entry.name)).toContain('later_tool');
    expect(runner.params.messages.at(-2)).toMatchObject({ content: [{ tool_use_id: 'toolu_later', content: [{ type: 'text', text: 'later: hi' }] }] });
    // The other toolset of the client, not in the run, heard of the change too.
    expect((await other.tools()).map((entry) => entry.name)).toContain('other_later_tool');
  });

  it('anything but a connected MCP client, or a server without tools, is a clear error naming mcpToolset', async () => {
    for (const client of [undefined, null, 'http://localhost:3000/mcp', {}]) {
      expect(() => new McpToolset(client as never)).toThrow(/^mcpToolset: the first argument must be a Client of @modelcontextprotocol\/sdk/);
    }
    // The server's end, not a client: a clear error.
    expect(() => new McpToolset(buildServer().server as never)).toThrow(/^mcpToolset: the first argument must be a Client of @modelcontextprotocol\/sdk .*got an object that is none/);
    const unconnected = new Client({ name: 'test', version: '1.0.0' });
    await expect(mcpToolset(unconnected)).rejects.toThrow('mcpToolset: the client is not connected: await client.connect(transport) before its tools are listed');
    await expect(Promise.resolve(new McpToolset(unconnected).tools())).rejects.toThrow(/the client is not connected/);
    // A server that offers prompts only.
    const promptsOnly = new Server({ name: 'prompts', version: '1.0.0' }, { capabilities: { prompts: {} } });
    const client = new Client({ name: 'test', version: '1.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await promptsOnly.connect(serverSide);
    await client.connect(clientSide);
    cleanups.push(() => client.close());
    await expect(mcpToolset(client)).rejects.toThrow("mcpToolset: the server has no tools (it did not offer the 'tools' capability when the client connected)");
  });

  it("a listing the MCP client refuses (a tool's input schema without type: object) is said as mcpToolset's, with the client's error as its cause", async () => {
    const server = new Server({ name: 'odd', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'ok', inputSchema: { type: 'object' } }, { name: 'odd', inputSchema: { $ref: '#/$defs/A', $defs: { A: { type: 'object' } } } }] }) as never);
    const client = new Client({ name: 'test', version: '1.0.0' });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide);
    cleanups.push(() => client.close());
    const failed = (await mcpToolset(client).catch((error: unknown) => error)) as Error;
    expect(failed.message).toMatch(/^mcpToolset: listing the server's tools failed: .*"tools",\s*1,\s*"inputSchema"/s);
    expect(failed.cause).toBeInstanceOf(Error);
  });

  it('so is it when a toolset made with the class lists its tools when first asked (not a bare ZodError in the run)', async () => {
    const client = await serverClient([{ name: 'odd', inputSchema: { properties: {} } }]);
    const server = await mockServer([{ content: [text('done')] }]);
    const failed = (await toolRunner(server.client(), { ...baseParams, tools: [new McpToolset(client)] }).runUntilDone().catch((error: unknown) => error)) as Error;
    expect(failed.message).toMatch(/^mcpToolset: listing the server's tools failed: .*"inputSchema"/s);
    expect(failed.cause).toBeInstanceOf(Error);
  });
});

const listingClient = () => stdioClient('mcp-listing-server.ts');

describe('MCP tools: listing them again after tools/list_changed (a real MCP server in a child process)', () => {
  it("a run waiting for a listing that hangs: the run's signal ends it at once (results kept); the toolset's timeoutMs ends the listing", async () => {
    const toolset = await mcpToolset(await listingClient());
    const server = await mockServer([{ content: [toolUse('hang_listing', {}, 'toolu_hang')] }, { content: [text('never requested')] }]);
    const controller = new AbortController();
    const runner = toolRunner(server.client(), { ...baseParams, tools: [toolset] }, { signal: controller.signal });
    const run = runner.runUntilDone();
    await expect.poll(() => runner.params.messages.length).toBe(3);
    await sleep(100);
    const aborted = performance.now();
    controller.abort();
    await expect(run).rejects.toBeInstanceOf(APIUserAbortError);
    expect(performance.now() - aborted).toBeLessThan(500);
    expect(runner.stoppedBy).toBe('abort');
    expect(server.requests).toHaveLength(1);
    expect(historyProblems(runner.params.messages)).toEqual([]);
    expect(runner.params.messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_hang', content: [{ type: 'text', text: 'changed; listing will hang' }] }],
    });

    const timed = await mcpToolset(await listingClient(), { timeoutMs: 500 });
    const other = await mockServer([{ content: [toolUse('hang_listing', {}, 'toolu_hang')] }, { content: [text('never requested')] }]);
    const started = performance.now();
    await expect(toolRunner(other.client(), { ...baseParams, tools: [timed] }).runUntilDone()).rejects.toThrow(
      /mcpToolset: listing the server's tools again after it announced a change failed: .*timed out/i,
    );
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('two changes close together: the newer list stands, though the listing of the older answers last', async () => {
    const toolset = await mcpToolset(await listingClient());
    const server = await mockServer([
      { content: [toolUse('change_twice', {}, 'toolu_change')] },
      { content: [toolUse('wait', { ms: 200 }, 'toolu_wait')] },
      { content: [toolUse('v3', {}, 'toolu_v3')] },
      { content: [text('done')] },
    ]);
    // The whole history each request (no thread), so that each request names its tools.
    const runner = toolRunner(server.client(), { ...baseParams, tools: [toolset], thread: false });
    await runner;
    const names = (index: number) => wire(server.requests[index]!).body.tools.map((entry: { name: string }) => entry.name);
    expect(names(0)).not.toContain('v2');
    for (const index of [1, 2, 3]) expect(names(index)).toEqual(['hang_listing', 'change_twice', 'wait', 'v2', 'v3']);
    expect(runner.params.messages.at(-2)).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_v3', content: [{ type: 'text', text: 'v3 ran' }] }],
    });
    expect((await toolset.tools()).map((entry) => entry.name)).toContain('v3');
    // A listing begun before a later one (aborted) settles as the later one does: it does not fail.
    await expect(Promise.all([toolset.refresh(), toolset.refresh()])).resolves.toEqual([undefined, undefined]);
    expect((await toolset.tools()).map((entry) => entry.name)).toContain('v3');
  });
});

/** A client connected to `server` in this process (closed after the test). */
function inProcessClient(server: Server): Promise<Client> {
  return inProcess(server, cleanups);
}

/** A client of an MCP server in this process that lists `tools` and answers every call with `result`. */
async function serverClient(tools: unknown[], result: unknown = { content: [] }): Promise<Client> {
  const server = new Server({ name: 'schemas', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }) as never);
  server.setRequestHandler(CallToolRequestSchema, async () => result as never);
  return inProcessClient(server);
}

describe('MCP input schemas the Messages API refuses whole (composition at the top level, property names out of ^[a-zA-Z0-9_.-]{1,64}$)', () => {
  it('a clear error at creation naming each such tool and what the API refuses, not a 400 for every request', async () => {
    const client = await serverClient([
      { name: 'ok', inputSchema: { type: 'object', properties: { 'a.b': { anyOf: [{ type: 'string' }, { type: 'number' }] } } } },
      { name: 'update_issue', inputSchema: { type: 'object', properties: { title: { type: 'string' } }, anyOf: [{ required: ['title'] }] } },
      { name: 'list_apps', inputSchema: { type: 'object', properties: { 'filter[id]': { type: 'string' }, [`k${'x'.repeat(64)}`]: { type: 'string' }, limit: { type: 'number' } } } },
    ]);
    const failed = (await mcpToolset(client, { prefix: 'gh_' }).catch((error: unknown) => error)) as Error;
    expect(failed.message).toMatch(/^mcpToolset: the input schema of the server's tools 'gh_update_issue': anyOf at its top level .*'gh_list_apps': the properties "filter\[id\]", "kx+" .*the request would be refused whole \(the option 'tools' offers the model only the others\)$/);
    expect(failed.message).not.toMatch(/'gh_ok'/);
  });
});

describe("MCP input schemas' defaults (the server's to fill)", () => {
  it('the input goes to the server as the model wrote it: a default its type refuses (Python\'s limit: int = None) no longer fails a call that leaves it out', async () => {
    const server = new Server({ name: 'py', version: '1.0.0' }, { capabilities: { tools: {} } });
    const received: unknown[] = [];
    // As FastMCP lists `def search(q: str, limit: int = None, mode: str = "fast")`.
    const inputSchema = { type: 'object', properties: { q: { type: 'string' }, limit: { type: 'integer', default: null }, mode: { type: 'string', default: 'fast' } }, required: ['q'] };
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'search', inputSchema }] }) as never);
    server.setRequestHandler(CallToolRequestSchema, async (request) => (received.push(request.params.arguments), { content: [{ type: 'text', text: 'found' }] }) as never);
    // needsApproval's rule judges the input the server gets.
    const judged: unknown[] = [];
    const toolset = await mcpToolset(await inProcessClient(server), { needsApproval: (_name, input) => (judged.push(input), false) });
    const model = await mockServer([{ content: [toolUse('search', { q: 'otters' }, 'toolu_1'), toolUse('search', { q: 5 }, 'toolu_bad')] }, { content: [text('done')] }]);
    const runner = toolRunner(model.client(), { ...baseParams, tools: [toolset] }, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
    await runner;
    const [found, refused] = wire(model.requests[1]!).messages[2].content;
    expect(found).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'found' }] });
    // Still checked before the call: the server never got the input its schema refuses.
    expect(refused).toMatchObject({ is_error: true, content: expect.stringMatching(/Invalid input for tool 'search':\n- q: must be string/) });
    expect(received).toEqual([{ q: 'otters' }]);
    expect(judged).toEqual([{ q: 'otters' }]);
    // The defaults are still sent to the model, in the schema as the server lists it.
    expect(wire(model.requests[0]!).body.tools[0].input_schema).toEqual(inputSchema);
  });
});

describe('MCP tools of a server that is gone (its process ended, its connection closed)', () => {
  it("a call says which server is gone and that calling again will not help (the MCP client says only 'Not connected')", async () => {
    const server = new Server({ name: 'files', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'read', inputSchema: { type: 'object', properties: {} } }] }) as never);
    server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: 'contents' }] }) as never);
    const client = await inProcessClient(server);
    const toolset = await mcpToolset(client);
    await client.close();
    const model = await mockServer([{ content: [toolUse('read', {}, 'toolu_1')] }, { content: [text('the file server is down')] }]);
    await toolRunner(model.client(), { ...baseParams, tools: [toolset] });
    const [result] = wire(model.requests[1]!).messages[2].content;
    expect(result).toMatchObject({ tool_use_id: 'toolu_1', is_error: true });
    expect(result.content).toMatch(/the MCP server 'files' is no longer connected \(its process ended, or its connection closed\), so tool 'read' could not run; no call of its tools can run until the program connects it again \(Not connected\)/);
  });

  it('over streamable HTTP a server that is down leaves the client connected: a call fails with the transport\'s error, not as a server no longer connected (README)', async () => {
    const build = () => {
      const server = new Server({ name: 'files', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'read', inputSchema: { type: 'object', properties: {} } }] }) as never);
      server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: 'contents' }] }) as never);
      return server;
    };
    // The HTTP server's stop, then the client's close.
    const own: Array<() => Promise<unknown>> = [];
    const client = await statelessHttpClient(build, own);
    cleanups.push(own[1]!);
    const toolset = await mcpToolset(client);
    await own[0]!();
    const model = await mockServer([{ content: [toolUse('read', {}, 'toolu_1')] }, { content: [text('the file server is down')] }]);
    await toolRunner(model.client(), { ...baseParams, tools: [toolset] });
    const [result] = wire(model.requests[1]!).messages[2].content;
    expect(client.transport).toBeDefined();
    expect(result).toMatchObject({ tool_use_id: 'toolu_1', is_error: true, content: expect.stringMatching(/fetch failed/) });
    expect(result.content).not.toMatch(/no longer connected/);
  });
});

/**
 * An MCP server whose tool 'slow_sum' runs only as a task (MCP experimental tasks): each task's result, `resultOf(a, b)`,
 * is stored `delayMs` after it is created (not at all once it is cancelled); `created` holds the tasks' ids.
 */
function taskSumServer(resultOf: (a: number, b: number) => { content: Array<{ type: 'text'; text: string }>; isError?: boolean }, delayMs = 20) {
  const taskStore = new InMemoryTaskStore();
  const server = new McpServer({ name: 'tasks', version: '1.0.0' }, { capabilities: { tools: {}, tasks: { requests: { tools: { call: {} } }, cancel: {} } }, taskStore });
  const created: string[] = [];
  server.experimental.tasks.registerToolTask(
    'slow_sum',
    { description: 'Adds, as a task', inputSchema: { a: z.number(), b: z.number() }, execution: { taskSupport: 'required' } },
    {
      async createTask({ a, b }, { taskStore: store, taskRequestedTtl }) {
        const task = await store.createTask({ ttl: taskRequestedTtl ?? null, pollInterval: 10 });
        created.push(task.taskId);
        setTimeout(() => void store.storeTaskResult(task.taskId, 'completed', resultOf(a, b)).catch(() => {}), delayMs);
        return { task };
      },
      getTask: (_args, { taskId, taskStore: store }) => store.getTask(taskId) as never,
      getTaskResult: (_args, { taskId, taskStore: store }) => store.getTaskResult(taskId) as never,
    },
  );
  return { server, taskStore, created };
}

describe('MCP tools that run only as tasks (execution.taskSupport: required, MCP experimental tasks)', () => {
  it('are called as tasks: the model gets the task\'s result, or the server\'s error (the MCP client refuses a plain call for them)', async () => {
    // A task that completes with an error result: the server's words reach the model as an is_error result.
    const { server } = taskSumServer((a, b) => (a < 0 ? { content: [{ type: 'text', text: 'negative numbers' }], isError: true } : { content: [{ type: 'text', text: String(a + b) }] }));
    const client = await inProcessClient(server.server);
    const model = await mockServer([{ content: [toolUse('slow_sum', { a: 20, b: 22 }, 'toolu_1'), toolUse('slow_sum', { a: -1, b: 2 }, 'toolu_2')] }, { content: [text('42')] }]);
    const runner = toolRunner(model.client(), { ...baseParams, tools: [await mcpToolset(client)] }, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
    await runner;
    const [sum, failed] = wire(model.requests[1]!).messages[2].content;
    expect(sum).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '42' }] });
    expect(failed).toMatchObject({ tool_use_id: 'toolu_2', is_error: true });
    expect(JSON.stringify(failed.content)).toContain('negative numbers');
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
  it('one listed on an earlier page of tools/list is called as a task too (the MCP client knows only the last page\'s task tools)', async () => {
    const { server } = taskSumServer((a, b) => ({ content: [{ type: 'text', text: String(a + b) }] }));
    server.registerTool('echo', { description: 'Echoes', inputSchema: { word: z.string() } }, async ({ word }) => ({ content: [{ type: 'text', text: word }] }));
    // Its tools in two pages, the task tool on the first (the MCP client's cache of task tools holds the last page's only).
    const client = await inProcessClient(server.server);
    const [first, second] = (await client.listTools()).tools;
    server.server.setRequestHandler(ListToolsRequestSchema, async (request) => (request.params?.cursor === 'page2' ? { tools: [second!] } : { tools: [first!], nextCursor: 'page2' }));
    const model = await mockServer([{ content: [toolUse('slow_sum', { a: 20, b: 22 }, 'toolu_1')] }, { content: [text('42')] }]);
    const runner = toolRunner(model.client(), { ...baseParams, tools: [await mcpToolset(client)] }, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
    await runner;
    expect(wire(model.requests[0]!).body.tools.map((entry: { name: string }) => entry.name)).toEqual(['slow_sum', 'echo']);
    expect(wire(model.requests[1]!).messages[2].content[0]).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '42' }] });
  });
  it('a task call the run stops (a timeout, an abort) cancels its task on the server (tasks/cancel), as a plain call is cancelled', async () => {
    const { server, taskStore, created } = taskSumServer((a, b) => ({ content: [{ type: 'text', text: String(a + b) }] }), 1_500);
    const client = await inProcessClient(server.server);
    const toolset = await mcpToolset(client);
    const quiet = { logger: { debug() {}, info() {}, warn() {}, error() {} } };
    const model = await mockServer([{ content: [toolUse('slow_sum', { a: 1, b: 2 }, 'toolu_1')] }, { content: [text('done')] }]);
    await toolRunner(model.client(), { ...baseParams, tools: [toolset] }, { toolTimeoutMs: 200, ...quiet });
    expect(wire(model.requests[1]!).messages[2].content[0]).toMatchObject({ tool_use_id: 'toolu_1', is_error: true, content: expect.stringMatching(/timed out after 200 ms/) });
    await expect.poll(async () => (await taskStore.getTask(created[0]!))?.status).toBe('cancelled');

    const aborted = await mockServer([{ content: [toolUse('slow_sum', { a: 1, b: 2 }, 'toolu_2')] }, { content: [text('never requested')] }]);
    const controller = new AbortController();
    const run = toolRunner(aborted.client(), { ...baseParams, tools: [toolset] }, { signal: controller.signal, ...quiet }).runUntilDone();
    await expect.poll(() => created.length).toBe(2);
    controller.abort();
    await expect(run).rejects.toBeInstanceOf(APIUserAbortError);
    await expect.poll(async () => (await taskStore.getTask(created[1]!))?.status).toBe('cancelled');
  });
});

describe('MCP tool results: an isError result whose words are in structuredContent only', () => {
  const cases = [
    { name: 'quota', content: [], structured: { code: 'E_QUOTA', detail: 'quota exceeded' }, words: 'E_QUOTA', what: 'with no content' },
    // An error result holds text only: the image goes, and the model would learn nothing of why.
    { name: 'shot', content: [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }], structured: { code: 'E_TIMEOUT', detail: 'the page did not load' }, words: 'the page did not load', what: 'beside content of no text (a screenshot)' },
  ];
  for (const { name, content, structured, words, what } of cases) {
    it(`keeps the structured error for the model rather than a bare "failed", ${what}`, async () => {
      const client = await serverClient([{ name, inputSchema: { type: 'object' } }], { content, structuredContent: structured, isError: true });
      const server = await mockServer([{ content: [toolUse(name, {}, 'toolu_e')] }, { content: [text('done')] }]);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [await mcpToolset(client)] }, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
      await runner;
      const result = wire(server.requests[1]!).messages[2].content[0];
      expect(result.is_error).toBe(true);
      expect(JSON.stringify(result.content)).toContain(words);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    });
  }
});

describe('MCP tool results holding a lone surrogate (a server that cut a text inside an emoji)', () => {
  it('are sent with U+FFFD in its place: the API refuses a lone surrogate as invalid JSON, in every later request of the history', async () => {
    const cut = 'smile \ud83d';
    const client = await serverClient([{ name: 'cut', description: `Cuts text ${cut}`, inputSchema: { type: 'object' } }], {
      content: [
        { type: 'text', text: cut },
        { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: `\ude00 ${cut}` } },
      ],
    });
    const server = await mockServer([{ content: [toolUse('cut', {}, 'toolu_cut')] }, { content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [await mcpToolset(client)] }, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
    await runner;
    expect(wire(server.requests[0]!).body.tools[0].description).toBe('Cuts text smile \ufffd');
    expect(wire(server.requests[1]!).messages[2].content[0].content).toEqual([
      { type: 'text', text: 'smile \ufffd' },
      { type: 'text', text: 'Resource file:///a.txt:\n\ufffd smile \ufffd' },
    ]);
  });
});

describe("MCP tool names the Messages API refuses (it takes ^[a-zA-Z0-9_-]{1,128}$; MCP's names may hold '.', '/', ...)", () => {
  it('a clear error at creation naming each such tool (with its prefix, and its length when too long), not a 400 for every request', async () => {
    const client = await listingClientOf(['files.read', 'ok', 'files/write']);
    cleanups.push(() => client.close());
    await expect(mcpToolset(client)).rejects.toThrow(
      "mcpToolset: the server's tools 'files.read', 'files/write' cannot be sent to the model: the Messages API takes 1 to 128 letters, digits, '_' and '-' (^[a-zA-Z0-9_-]{1,128}$); the request would be refused whole (the option 'tools' offers the model only the others)",
    );
    const long = await listingClientOf(['ok', 'x'.repeat(120)]);
    cleanups.push(() => long.close());
    await expect(mcpToolset(long, { prefix: 'my_server_' })).rejects.toThrow(`the server's tool '${'x'.repeat(120)}' (as 'my_server_${'x'.repeat(120)}', 130 characters) cannot be sent`);
    // Without the prefix, 120 characters is a name the API takes.
    expect((await (await mcpToolset(long)).tools()).map((entry) => entry.name)).toEqual(['ok', 'x'.repeat(120)]);
    // A prefix no name could begin with: refused before anything is listed.
    expect(() => new McpToolset(long, { prefix: 'my.server.' })).toThrow(/mcpToolset: prefix "my\.server\." cannot begin a tool name/);
    // A timeout that is no number of milliseconds: refused before anything is listed, naming the option.
    for (const timeoutMs of [-5, 0, Number.NaN, 1e12]) expect(() => new McpToolset(long, { timeoutMs })).toThrow(/mcpToolset: timeoutMs must be a positive number of milliseconds/);
  });

  it('such a name after tools/list_changed fails the next request clearly; the last list stays', async () => {
    const client = await listingClientOf(['add_tool']);
    cleanups.push(() => client.close());
    const toolset = await mcpToolset(client);
    const server = await mockServer([{ content: [toolUse('add_tool', { name: 'files.read' }, 'toolu_add')] }, { content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [toolset], thread: false });
    await expect(runner.runUntilDone()).rejects.toThrow(/mcpToolset: listing the server's tools again after it announced a change failed: .*tool 'files\.read' cannot be sent to the model/);
    expect(server.requests).toHaveLength(1);
    await runner;
    expect(wire(server.requests[1]!).body.tools.map((entry: { name: string }) => entry.name)).toEqual(['add_tool']);
  });
});

describe('MCP tools over streamable HTTP on 127.0.0.1', () => {
  it('lists and runs them', async () => {
    // Stateless: a server and a transport per request.
    const client = await statelessHttpClient(buildServer, cleanups);
    const toolset = await mcpToolset(client, { prefix: 'calc_' });
    const server = await mockServer([{ content: [toolUse('calc_add', { a: 20, b: 22 }, 'toolu_1')] }, { content: [text('42')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [toolset] });
    expect(wire(server.requests[1]!).messages[2].content[0]).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '42' }] });
  });
});

/**
 * A client of an MCP server in this process whose tools come in `pages` pages of one tool each; with
 * `repeat`, its last page gives the cursor of the one before again; with `failFirst`, its first listing fails.
 */
async function pagedClient(pages: number, repeat = false, failFirst = false): Promise<Client> {
  const server = new Server({ name: 'paged', version: '1.0.0' }, { capabilities: { tools: {} } });
  let listings = 0;
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    if (failFirst && listings++ === 0) throw new Error('not ready yet');
    const page = Number(request.params?.cursor ?? 0);
    const next = page + 1 < pages ? String(page + 1) : repeat ? String(page) : undefined;
    return { tools: [{ name: `tool_${page}`, inputSchema: { type: 'object' as const } }], ...(next !== undefined && { nextCursor: next }) };
  });
  return inProcessClient(server);
}

describe('MCP toolsets: bad options, misbehaving servers, tool changes', () => {
  it('an unknown option or a needsApproval that is neither a boolean nor a function is a clear error (an approval never fails open); a toolset made with the class lists its tools when first asked', async () => {
    const client = await listingClientOf(['ok']);
    cleanups.push(() => client.close());
    expect(() => new McpToolset(client, { timeout: 5_000 } as never)).toThrow("mcpToolset: unknown option 'timeout'; the options are prefix, timeoutMs, needsApproval, tools. Did you mean 'timeoutMs'?");
    expect(() => new McpToolset(client, { needApproval: true } as never)).toThrow(/unknown option 'needApproval'.*Did you mean 'needsApproval'\?$/);
    expect(() => new McpToolset(client, { only: ['a'] } as never)).toThrow(/^mcpToolset: unknown option 'only'; the options are prefix, timeoutMs, needsApproval, tools$/);
    expect(() => new McpToolset(client, { needsApproval: ['ok'] } as never)).toThrow('mcpToolset: needsApproval must be true, false or a function that decides each call, got an array');
    expect(() => new McpToolset(client, { needsApproval: 'yes' } as never)).toThrow(/needsApproval must be true, false or a function .*got "yes"/);
    // Made with the class (not mcpToolset()): listed the first time it is asked (once for the askers
    // meanwhile, and again after a listing that failed), not empty until a change.
    const made = new McpToolset(client);
    const [first, second] = await Promise.all([made.tools(), made.tools()]);
    expect([first.map((entry) => entry.name), second.map((entry) => entry.name)]).toEqual([['ok'], ['ok']]);
    const late = new McpToolset(await pagedClient(2, false, true));
    await expect(late.tools()).rejects.toThrow(/not ready yet/);
    expect((await late.tools()).map((entry) => entry.name)).toEqual(['tool_0', 'tool_1']);
    // A tool of one's own, as the runner is built: a rule it would read as "no approval" is refused.
    const server = await mockServer([{ content: [text('never requested')] }]);
    const risky = { name: 'risky', input_schema: { type: 'object' as const }, run: () => 'ran', needsApproval: 'always' };
    expect(() => toolRunner(server.client(), { ...baseParams, tools: [risky as never] })).toThrow("toolRunner: tool 'risky': needsApproval must be true, false or a function that decides each call, got \"always\"");
    expect(server.requests).toHaveLength(0);
  });

  it('lists every page of a long list without warning of a listener leak; a server that gives a cursor twice is a clear error, not a listing without end', async () => {
    const warnings = await warningsDuring(async () => {
      const toolset = await mcpToolset(await pagedClient(12));
      expect((await toolset.tools()).map((entry) => entry.name)).toEqual(Array.from({ length: 12 }, (_, n) => `tool_${n}`));
      await toolset.refresh();
    });
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    await expect(mcpToolset(await pagedClient(3, true))).rejects.toThrow("tool-runner/mcp: the server gave the tools/list cursor '2' twice; its listing would never end");
  });

  it('addTools() and removeTools() refuse a tool source (its tools are listed as it says), adding nothing to the history', async () => {
    const client = await listingClientOf(['ok']);
    cleanups.push(() => client.close());
    const toolset = await mcpToolset(client);
    const server = await mockServer([{ content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [] });
    expect(() => runner.addTools(toolset as never)).toThrow(/addTools\(\) takes tools, not a tool source \(an MCP toolset, say\)/);
    expect(() => runner.removeTools(toolset as never)).toThrow(/removeTools\(\) takes tools, not a tool source/);
    expect(() => runner.removeTools({} as never)).toThrow('removeTools() takes tools with a name, or tool names');
    // A tool added during the run is checked as the runner's own are: a rule read as "no approval" is refused.
    const risky = { name: 'risky', input_schema: { type: 'object' as const }, run: () => 'ran', needsApproval: 'always' };
    expect(() => runner.addTools(risky as never)).toThrow("addTools(): tool 'risky': needsApproval must be true, false or a function that decides each call, got \"always\"");
    const circular: Record<string, unknown> = {};
    circular['self'] = circular;
    expect(() => runner.addTools({ ...risky, needsApproval: circular } as never)).toThrow(/needsApproval must be .*, got an object/);
    await runner;
    expect(wire(server.requests[0]!).messages).toEqual([{ role: 'user', content: 'Weather in Paris?' }]);
  });

  it("a tool list change that makes two tools of one name fails the run, and fails again when it is iterated again (it never goes on with the old list)", async () => {
    const client = await listingClientOf(['add_tool']);
    cleanups.push(() => client.close());
    const local = { name: 'added', input_schema: { type: 'object' as const }, run: () => 'the local tool ran' };
    const server = await mockServer([{ content: [toolUse('add_tool', { name: 'added' }, 'toolu_add')] }, { content: [toolUse('added', {}, 'toolu_added')] }, { content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [local, await mcpToolset(client)], thread: false });
    await expect(runner.runUntilDone()).rejects.toThrow("toolRunner: two tools are named 'added'; tool names must be unique");
    await expect(runner.runUntilDone()).rejects.toThrow("toolRunner: two tools are named 'added'; tool names must be unique");
    expect(server.requests).toHaveLength(1);
    expect(historyProblems(runner.params.messages)).toEqual([]);
    // A run that starts by answering a call of that name (its history ends with it): neither tool runs, now or on retry.
    const both = await listingClientOf(['added']);
    cleanups.push(() => both.close());
    const ran: string[] = [];
    const own = { ...local, run: () => (ran.push('local'), 'the local tool ran') };
    const calling = [...baseParams.messages, { role: 'assistant' as const, content: [toolUse('added', {}, 'toolu_added')] }];
    const resumed = toolRunner(server.client(), { ...baseParams, messages: calling, tools: [own, await mcpToolset(both)], thread: false });
    await expect(resumed.runUntilDone()).rejects.toThrow("toolRunner: two tools are named 'added'");
    await expect(resumed.runUntilDone()).rejects.toThrow("toolRunner: two tools are named 'added'");
    expect(ran).toEqual([]);
    expect(resumed.params.messages).toHaveLength(2);
  });
});
