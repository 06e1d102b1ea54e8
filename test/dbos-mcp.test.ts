/**
 * Durable runs (tool-runner/dbos) whose tools are a real MCP server's, over stdio, given as plain tools (the README's way:
 * an MCP toolset itself is refused), and sub-agents two levels deep: workers killed with SIGKILL mid MCP call and while
 * an approval waits inside the inner sub-agent; a new worker, connected to a new server process, finishes the run.
 * The server counts each start and finish of its tools in a file.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { durableApprovals } from 'tool-runner/dbos';
import { type RecordedRequest, type ScriptedReply, text, toolUse } from 'tool-runner/testing';
import { createDatabase } from '../scripts/postgres.js';
import { mockServer, wire } from './helpers.js';
import { kill, printed, until } from './worker-processes.js';

const serverUrl = inject('databaseUrl');

describe.skipIf(!serverUrl)('durable runs with MCP tools and nested sub-agents (tool-runner/dbos, tool-runner/mcp)', () => {
  let databaseUrl = '';
  let dbos: DBOSClient;

  beforeAll(async () => {
    databaseUrl = (await createDatabase(serverUrl, 'tool_runner_dbos_mcp')).url;
    dbos = await DBOSClient.create({ systemDatabaseUrl: databaseUrl });
  });
  afterAll(async () => {
    await dbos?.destroy();
  });

  async function recorded(runId: string, name: string): Promise<boolean> {
    const steps = (await dbos.listWorkflowSteps(runId)) ?? [];
    return steps.some((step) => step.name === name && step.completedAtEpochMs != null);
  }

  /** What the MCP server's tools started and finished, by tool. */
  function counts(file: string): Record<string, { started: number; finished: number }> {
    const counted: Record<string, { started: number; finished: number }> = {};
    if (!existsSync(file)) return counted;
    for (const line of readFileSync(file, 'utf8').trim().split('\n')) {
      const [what, tool] = line.split(' ') as [string, string];
      counted[tool] ??= { started: 0, finished: 0 };
      counted[tool][what === 'start' ? 'started' : 'finished']++;
    }
    return counted;
  }

  /** The model of the nested runs, by what each request holds (sub-agents' requests come in any order): the clerk calls `calls`. */
  const nestedModel =
    (calls: ScriptedReply['content']) =>
    (request: RecordedRequest): ScriptedReply => {
      const first = request.messages[0]!.content;
      const agent = first === 'Handle order 42' ? 'parent' : first === 'Handle 42' ? 'manager' : 'clerk';
      if (typeof request.messages.at(-1)!.content !== 'string') return { content: [text(`${agent} done.`)] };
      if (agent === 'parent') return { content: [toolUse('manager', { task: 'Handle 42' }, 'toolu_mgr')] };
      if (agent === 'manager') return { content: [toolUse('clerk', { task: 'Order 42' }, 'toolu_clerk')] };
      return { content: calls };
    };
  const shipping = nestedModel([toolUse('lookup', { order: '42' }, 'toolu_look'), toolUse('ship', { order: '42' }, 'toolu_ship')]);
  const refunding = nestedModel([toolUse('lookup', { order: '42' }, 'toolu_look'), toolUse('refund', { order: '42' }, 'toolu_ref')]);

  /** A nested run without a crash (its approval, if any, given at once): its result and what each request sent. */
  async function uncrashed(model: (request: RecordedRequest) => ScriptedReply) {
    const server = await mockServer(Array.from({ length: 10 }, () => model));
    const id = `mcp-uncrashed-${randomUUID()}`;
    const file = join(tmpdir(), `${id}.counts`);
    const result = resultOf(worker('start', id, server.url, file, { AGENT: 'nested' }));
    if (model === refunding) {
      await until(async () => (await durableApprovals(dbos, id).pending()).length === 1);
      await durableApprovals(dbos, id).approve('toolu_ref');
    }
    const done = { result: await result, sent: server.requests.map((request) => request.messages), counted: counts(file) };
    rmSync(file, { force: true });
    return done;
  }

  it('a worker killed during an MCP call: another, connected to a new server process, finishes the run; the finished MCP call is not run again', async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { order: '42' }, 'toolu_look'), toolUse('ship', { order: '42' }, 'toolu_ship')] },
      { content: [text('Done.')] },
    ]);
    const id = `mcp-crash-${randomUUID()}`;
    const file = join(tmpdir(), `${id}.counts`);
    const first = worker('start', id, server.url, file, { HANG: '1' });
    await until(async () => counts(file).ship?.started === 1 && (await recorded(id, 'tool lookup')));
    await kill(first);
    const result = await resultOf(worker('recover', id, server.url, file, { HANG: '1' }));
    expect(result.message.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    expect(counts(file)).toEqual({ lookup: { started: 1, finished: 1 }, ship: { started: 2, finished: 1 } });
    expect(server.requests).toHaveLength(2);
    expect(wire(server.requests[1]!).messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_look', content: [{ type: 'text', text: 'lookup done for 42' }] },
      { type: 'tool_result', tool_use_id: 'toolu_ship', content: [{ type: 'text', text: 'ship done for 42' }] },
    ]);
    rmSync(file);
  });

  it("nested sub-agents: a worker killed during the inner sub-agent's MCP call; the recovery ends as a run without a crash", async () => {
    const plain = await uncrashed(shipping);
    const server = await mockServer(Array.from({ length: 10 }, () => shipping));
    const id = `mcp-nested-crash-${randomUUID()}`;
    const file = join(tmpdir(), `${id}.counts`);
    const first = worker('start', id, server.url, file, { AGENT: 'nested', HANG: '1' });
    await until(async () => counts(file).ship?.started === 1 && (await recorded(id, 'tool lookup')));
    await kill(first);
    const result = await resultOf(worker('recover', id, server.url, file, { AGENT: 'nested', HANG: '1' }));
    expect(counts(file)).toEqual({ lookup: { started: 1, finished: 1 }, ship: { started: 2, finished: 1 } });
    expect([result.messages, result.usage, result.iterations]).toEqual([plain.result.messages, plain.result.usage, plain.result.iterations]);
    expect(server.requests.map((request) => request.messages)).toEqual(plain.sent);
    rmSync(file);
  });

  it('nested sub-agents: the worker dies while a call of the inner one waits for approval; approved from another process, a new worker ends the run as a run without a crash', async () => {
    const plain = await uncrashed(refunding);
    const server = await mockServer(Array.from({ length: 10 }, () => refunding));
    const id = `mcp-nested-approval-${randomUUID()}`;
    const file = join(tmpdir(), `${id}.counts`);
    const first = worker('start', id, server.url, file, { AGENT: 'nested' });
    await until(async () => (await durableApprovals(dbos, id).pending()).length === 1);
    const [waiting] = await durableApprovals(dbos, id).pending();
    expect([waiting!.id, waiting!.name, waiting!.path, waiting!.callPath]).toEqual(['toolu_ref', 'refund', ['manager', 'clerk'], ['toolu_mgr', 'toolu_clerk']]);
    await kill(first);
    await durableApprovals(dbos, id).approve('toolu_ref');
    const result = await resultOf(worker('recover', id, server.url, file, { AGENT: 'nested' }));
    expect(counts(file)).toEqual({ lookup: { started: 1, finished: 1 }, refund: { started: 1, finished: 1 } });
    expect(plain.counted).toEqual(counts(file));
    expect([result.messages, result.usage, result.iterations]).toEqual([plain.result.messages, plain.result.usage, plain.result.iterations]);
    expect(server.requests.map((request) => request.messages)).toEqual(plain.sent);
    rmSync(file);
  });

  it("nested sub-agents: a recovery whose inner sub-agent's request finds another step recorded in its place fails the run with DBOS's error; the model never reads it as the agent's result", async () => {
    const server = await mockServer(Array.from({ length: 10 }, () => shipping));
    const id = `mcp-nested-mismatch-${randomUUID()}`;
    const file = join(tmpdir(), `${id}.counts`);
    const first = worker('start', id, server.url, file, { AGENT: 'nested', HANG: '1' });
    await until(async () => counts(file).ship?.started === 1 && (await recorded(id, 'tool lookup')));
    await kill(first);
    // A release whose clerk answers its calls from a hook (no steps): its next request comes to the step `tool lookup` took.
    await expect(printed(worker('recover', id, server.url, file, { AGENT: 'nested', HANG: '1', CACHED: '1' }))).rejects.toThrow(
      /step 3, function tool lookup was recorded when model request was expected/,
    );
    expect((await dbos.getWorkflow(id))?.status).toBe('ERROR');
    // Only the first worker's requests: the manager was not told that the clerk failed in DBOS's words, nor the parent that the manager was done.
    expect(server.requests).toHaveLength(3);
    expect(counts(file)).toEqual({ lookup: { started: 1, finished: 1 }, ship: { started: 1, finished: 0 } });
    rmSync(file);
  });

  it("a recovery on a worker whose MCP server no longer offers the tool of the call the crash cut off (renamed in a new release) fails the run naming it: the model is not told the tool was not found", async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { order: '42' }, 'toolu_look'), toolUse('ship', { order: '42' }, 'toolu_ship')] },
      { content: [text('Done.')] },
    ]);
    const id = `mcp-renamed-${randomUUID()}`;
    const file = join(tmpdir(), `${id}.counts`);
    const first = worker('start', id, server.url, file, { HANG: '1' });
    await until(async () => counts(file).ship?.started === 1 && (await recorded(id, 'tool lookup')));
    await kill(first);
    // The step of the call of `ship` was never recorded, so DBOS finds no other step in its place: the call was answered
    // "not found" (no step), and the run went on as if the order had not been shipping.
    await expect(printed(worker('recover', id, server.url, file, { NO_SHIP: '1' }))).rejects.toThrow(
      `durableToolRunner: run '${id}' recorded a reply that calls tool 'ship', which this worker's agent does not have (it has: lookup, refund): the agent's tools changed since the run started.`,
    );
    expect((await dbos.getWorkflow(id))?.status).toBe('ERROR');
    expect(server.requests).toHaveLength(1);
    expect(counts(file)).toEqual({ lookup: { started: 1, finished: 1 }, ship: { started: 1, finished: 0 } });
    rmSync(file);
  });

  function worker(mode: 'start' | 'recover', id: string, mockUrl: string, countFile: string, env: Record<string, string> = {}): ChildProcess {
    return spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/durable-mcp-worker.ts'], {
      env: { ...process.env, DATABASE_URL: databaseUrl, MODE: mode, WORKFLOW_ID: id, MOCK_URL: mockUrl, COUNT_FILE: countFile, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }
}, 120_000);


async function resultOf(child: ChildProcess) {
  const { stdout } = await printed(child);
  const line = stdout.split('\n').find((entry) => entry.startsWith('result '));
  if (!line) throw new Error(`the worker printed no result\n${stdout}`);
  return JSON.parse(line.slice('result '.length));
}
