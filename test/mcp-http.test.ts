import { type ChildProcess, spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { toolRunner } from 'tool-runner';
import { mcpToolset } from 'tool-runner/mcp';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer, wire } from './helpers.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A real MCP server over streamable HTTP with sessions in a child process (test/fixtures/mcp-http-server.ts), on `port` (0: any), taking `token`. */
async function httpServer(port = 0, token = 'secret', kind?: 'records'): Promise<{ port: number; stop(): Promise<void> }> {
  const args = ['--import', 'tsx', 'test/fixtures/mcp-http-server.ts', String(port), token, ...(kind ? [kind] : [])];
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill();
    await exited;
  };
  cleanups.push(stop);
  const listening = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the MCP server exited (${code}) before it listened`)));
    child.stdout!.on('data', (data) => {
      const match = /PORT (\d+)/.exec(String(data));
      if (match) resolve(Number(match[1]));
    });
  });
  return { port: listening, stop };
}

/** A client of the server on `port`, with its token; closed after the test. */
async function httpClient(port: number): Promise<Client> {
  const client = new Client({ name: 'tool-runner-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: 'Bearer secret' } } }));
  cleanups.push(() => client.close());
  return client;
}

// Each test starts a server process twice (tsx: a few seconds each on a busy machine).
describe('MCP over streamable HTTP with sessions (a real MCP server in a child process)', { timeout: 40_000 }, () => {
  it("a server started again no longer knows the client's session (404): a call says so, and that calling again will not help until the program connects again (then the toolset goes on)", async () => {
    let server = await httpServer();
    const client = await httpClient(server.port);
    const toolset = await mcpToolset(client);
    const model = await mockServer([
      { content: [toolUse('add', { a: 1, b: 2 }, 'toolu_1')] },
      async () => {
        // The server's process ends and starts again on the same port, between two calls.
        await server.stop();
        server = await httpServer(server.port);
        return { content: [toolUse('add', { a: 2, b: 3 }, 'toolu_2')] };
      },
      async () => {
        // What the README says to do: the program connects the client again, and the toolset goes on with it.
        await client.close();
        await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${server.port}/mcp`), { requestInit: { headers: { authorization: 'Bearer secret' } } }));
        return { content: [toolUse('add', { a: 3, b: 4 }, 'toolu_3')] };
      },
      { content: [text('done')] },
    ]);
    const runner = toolRunner(model.client(), { ...baseParams, tools: [toolset] });
    await runner;
    const messages = wire(model.requests[3]!).messages;
    expect(messages[2].content[0]).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '3' }] });
    const [result] = messages[4].content;
    expect(result).toMatchObject({ tool_use_id: 'toolu_2', is_error: true });
    expect(result.content).toMatch(/the MCP server 'test-server' no longer knows this client's session \(HTTP 404: it was started again, or ended the session\), so tool 'add' could not run; no call of its tools can run until the program connects it again/);
    expect(result.content).toMatch(/Session not found/);
    expect(messages[6].content[0]).toEqual({ type: 'tool_result', tool_use_id: 'toolu_3', content: [{ type: 'text', text: '7' }] });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("an HTTP error answer of no body (a 401 once the server takes another token) is said by its status: the MCP client's words were 'Error POSTing to endpoint: ' and nothing more", async () => {
    let server = await httpServer();
    const client = await httpClient(server.port);
    const toolset = await mcpToolset(client);
    const model = await mockServer([
      async () => {
        // The server's token rotated: the client's is refused.
        await server.stop();
        server = await httpServer(server.port, 'rotated');
        return { content: [toolUse('add', { a: 1, b: 2 }, 'toolu_1')] };
      },
      { content: [text('the server refuses our token')] },
    ]);
    const runner = toolRunner(model.client(), { ...baseParams, tools: [toolset] });
    await runner;
    const [result] = wire(model.requests[1]!).messages[2].content;
    expect(result).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'Error: Streamable HTTP error: Error POSTing to endpoint: HTTP 401, with no body' });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("a JSON-RPC error whose code looks like an HTTP status (a server's 404 for a record it lacks, a 503 of no message) is the server's answer: neither a session lost nor an HTTP answer of no body", async () => {
    const server = await httpServer(0, 'secret', 'records');
    const client = await httpClient(server.port);
    const toolset = await mcpToolset(client);
    const model = await mockServer([
      { content: [toolUse('record', {}, 'toolu_1'), toolUse('flaky', {}, 'toolu_2')] },
      { content: [toolUse('add', {}, 'toolu_3')] },
      { content: [text('done')] },
    ]);
    const runner = toolRunner(model.client(), { ...baseParams, tools: [toolset] });
    await runner;
    const [record, flaky] = wire(model.requests[1]!).messages[2].content;
    // The session is whole: the model is not told that no call of the server's tools can run, nor of an HTTP status.
    expect(record).toEqual({ type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, content: 'McpError: MCP error 404: No record 7' });
    expect(flaky).toEqual({ type: 'tool_result', tool_use_id: 'toolu_2', is_error: true, content: 'McpError: MCP error 503: ' });
    expect(wire(model.requests[2]!).messages[4].content[0]).toEqual({ type: 'tool_result', tool_use_id: 'toolu_3', content: [{ type: 'text', text: 'added' }] });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
});
