/**
 * Durable runs (tool-runner/dbos) against a real PostgreSQL: workers are child processes killed
 * with SIGKILL mid-tool and mid-stream; a new worker finishes each run; counters kept in the
 * database show that no finished tool call ran twice. Approvals wait across processes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DBOSClient } from '@dbos-inc/dbos-sdk';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { agentTool } from 'tool-runner';
import { durableApprovals, durableToolRunner } from 'tool-runner/dbos';
import type { InspectorRecord } from 'tool-runner/inspect';
import { type RecordedRequest, type ScriptedReply, text, toolUse } from 'tool-runner/testing';
import { createDatabase } from '../scripts/postgres.js';
import { mockServer, wire } from './helpers.js';
import { kill, printed, until } from './worker-processes.js';

const serverUrl = inject('databaseUrl');
/** A tsconfig without the root's paths: tsx then resolves `tool-runner` through package.json's exports to the built dist/, as a user's program does. */
const PACKAGE_TSCONFIG = 'test/runtimes/tsconfig.json';
if (!serverUrl) console.warn('test/dbos.test.ts: skipped — no PostgreSQL binaries (initdb, pg_ctl) on this machine');

describe.skipIf(!serverUrl)('durable runs on PostgreSQL (tool-runner/dbos)', () => {
  let databaseUrl = '';
  let pool: pg.Pool;
  let dbos: DBOSClient;

  beforeAll(async () => {
    // A database of its own, so reruns and other files never see this file's workflows.
    databaseUrl = (await createDatabase(serverUrl, 'tool_runner_dbos')).url;
    pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
    dbos = await DBOSClient.create({ systemDatabaseUrl: databaseUrl });
    await pool.query('CREATE TABLE tool_counts (run_id text, tool text, started int DEFAULT 0, finished int DEFAULT 0, PRIMARY KEY (run_id, tool))');
  });
  afterAll(async () => {
    await pool?.end();
    await dbos?.destroy();
  });

  /** Whether the run has recorded the step `name` as finished (a crash before that runs it again). */
  async function recorded(runId: string, name: string): Promise<boolean> {
    const steps = (await dbos.listWorkflowSteps(runId)) ?? [];
    return steps.some((step) => step.name === name && step.completedAtEpochMs !== undefined && step.completedAtEpochMs !== null);
  }

  async function counts(runId: string): Promise<Record<string, { started: number; finished: number }>> {
    const { rows } = await pool.query('SELECT tool, started, finished FROM tool_counts WHERE run_id = $1', [runId]);
    return Object.fromEntries(rows.map((row) => [row.tool, { started: row.started, finished: row.finished }]));
  }

  it('a worker killed during a tool call: another finishes the run, the finished call is not run again', async () => {
    const server = await mockServer([
      { content: [toolUse('record', { order: '42' }, 'toolu_rec'), toolUse('charge', { cents: 500 }, 'toolu_chg')] },
      { content: [text('Done.')] },
    ]);
    const id = `tool-crash-${randomUUID()}`;
    const first = worker('start', id, server.url);
    await until(async () => (await counts(id)).charge?.started === 1 && (await recorded(id, 'tool record')));
    await kill(first);

    const second = worker('recover', id, server.url);
    const result = await resultOf(second);
    expect(result.message.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    expect(await counts(id)).toEqual({ record: { started: 1, finished: 1 }, charge: { started: 2, finished: 1 } });
    // The first model request was a finished step: not sent again.
    expect(server.requests).toHaveLength(2);
    expect(wire(server.requests[1]!).messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_rec', content: 'recorded 42' },
      { type: 'tool_result', tool_use_id: 'toolu_chg', content: `charged 500 with key ${id}:toolu_chg` },
    ]);
    expect(result.iterations).toBe(2);
    expect(result.messages).toHaveLength(4);
  });

  it('a machine gone for good: its executor\'s pending runs, listed and resumed on the queue (docs/scaling.md), finish on another executor', async () => {
    const server = await mockServer([
      { content: [toolUse('record', { order: '42' }, 'toolu_rec'), toolUse('charge', { cents: 500 }, 'toolu_chg')] },
      { content: [text('Done.')] },
    ]);
    const id = `executor-gone-${randomUUID()}`;
    const first = worker('start', id, server.url, { DBOS__VMID: 'machine-a', QUEUE: '1' });
    await until(async () => (await counts(id)).charge?.started === 1 && (await recorded(id, 'tool record')));
    await kill(first);

    // A worker of another executor recovers only its own runs when it launches: this one is resumed by hand, as the doc says.
    const second = worker('recover', id, server.url, { DBOS__VMID: 'machine-b', QUEUE: '1' });
    const pending = await dbos.listWorkflows({ status: 'PENDING', executorId: 'machine-a' });
    expect(pending.map((run) => run.workflowID)).toContain(id);
    await dbos.resumeWorkflows([id], { queueName: 'agents' });
    const result = await resultOf(second);
    expect(result.message.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    expect(await counts(id)).toEqual({ record: { started: 1, finished: 1 }, charge: { started: 2, finished: 1 } });
    expect(server.requests).toHaveLength(2);
    const status = await dbos.getWorkflow(id);
    expect([status?.executorId, status?.queueName]).toEqual(['machine-b', 'agents']);
  });

  it('a recovery on a worker whose tools changed fails the run naming the tool it lacks: the model never reads it as a tool result', async () => {
    const server = await mockServer([
      { content: [toolUse('record', { order: '42' }, 'toolu_rec'), toolUse('charge', { cents: 500 }, 'toolu_chg')] },
      { content: [text('Done.')] },
    ]);
    const id = `tools-changed-${randomUUID()}`;
    const first = worker('start', id, server.url);
    await until(async () => (await counts(id)).charge?.started === 1 && (await recorded(id, 'tool record')));
    await kill(first);

    // `record` is gone: the replayed reply calls it (without the check, its call was answered "not found", no step, and
    // `charge` came to the step `tool record` took: DBOS's error, 'tool record was recorded when tool charge was expected').
    await expect(output(worker('recover', id, server.url, { WITHOUT_RECORD: '1' }))).rejects.toThrow(
      `durableToolRunner: run '${id}' recorded a reply that calls tool 'record', which this worker's agent does not have (it has: charge, refund)`,
    );
    expect((await dbos.getWorkflow(id))?.status).toBe('ERROR');
    // No request carried DBOS's error to the model as the call's result.
    expect(server.requests).toHaveLength(1);
    expect(await counts(id)).toEqual({ record: { started: 1, finished: 1 }, charge: { started: 1, finished: 0 } });
  });

  it("a version set per release (DBOS__APPVERSION, as the README says): a worker of another release, its tools changed, leaves the run to the workers of the release that started it (DBOS's own version, computed from tool-runner's workflow code, is the same for both)", async () => {
    const server = await mockServer([
      { content: [toolUse('record', { order: '42' }, 'toolu_rec'), toolUse('charge', { cents: 500 }, 'toolu_chg')] },
      { content: [text('Done.')] },
    ]);
    const id = `release-${randomUUID()}`;
    const first = worker('start', id, server.url, { DBOS__APPVERSION: 'release-1' });
    await until(async () => (await counts(id)).charge?.started === 1 && (await recorded(id, 'tool record')));
    await kill(first);

    // The next release, whose code no longer has the record tool: it launches, and recovers nothing of release 1.
    const next = worker('recover', id, server.url, { DBOS__APPVERSION: 'release-2', WITHOUT_RECORD: '1' });
    let launched = '';
    next.stdout!.on('data', (chunk) => (launched += chunk));
    await until(async () => launched.includes('started'));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await dbos.getWorkflow(id))?.status).toBe('PENDING');
    expect(await counts(id)).toEqual({ record: { started: 1, finished: 1 }, charge: { started: 1, finished: 0 } });
    await kill(next);

    const result = await resultOf(worker('recover', id, server.url, { DBOS__APPVERSION: 'release-1' }));
    expect(result.message.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    expect(await counts(id)).toEqual({ record: { started: 1, finished: 1 }, charge: { started: 2, finished: 1 } });
    expect(server.requests).toHaveLength(2);
  });

  it("the calls of one reply start their steps in the model's order: a recovery whose hook takes its time on another call gives each call its own recorded result", async () => {
    const server = await mockServer([
      { content: [toolUse('look', { order: 'A' }, 'toolu_a'), toolUse('look', { order: 'B' }, 'toolu_b'), toolUse('charge', { cents: 5 }, 'toolu_chg')] },
      { content: [text('Done.')] },
    ]);
    const id = `order-${randomUUID()}`;
    // The first worker's hook holds A back (B would otherwise take the first step); the second's holds B back.
    const first = worker('start', id, server.url, { ORDER: '1', SLOW: 'A' });
    await until(async () => (await counts(id)).charge?.started === 1 && ((await dbos.listWorkflowSteps(id)) ?? []).filter((step) => step.name === 'tool look' && step.completedAtEpochMs != null).length === 2);
    await kill(first);

    const result = await resultOf(worker('recover', id, server.url, { ORDER: '1', SLOW: 'B' }));
    expect(result.message.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    expect(await counts(id)).toEqual({ look: { started: 2, finished: 2 }, charge: { started: 2, finished: 1 } });
    expect(wire(server.requests[1]!).messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_a', content: 'looked up A' },
      { type: 'tool_result', tool_use_id: 'toolu_b', content: 'looked up B' },
      { type: 'tool_result', tool_use_id: 'toolu_chg', content: `charged 5 with key ${id}:toolu_chg` },
    ]);
  });

  // Also with the built package (its `tool-runner` and `tool-runner/dbos` entries as a user imports them): they must share one copy of the runner.
  for (const from of ['src', 'package'] as const) it(`a sub-agent (agentTool) killed mid-sub-run: its requests and tool calls are steps of the parent workflow, none repeated once finished (${from})`, async () => {
    const steps = {
      parent: [{ content: [toolUse('clerk', { task: 'Handle order 42' }, 'toolu_clerk')] }, { content: [text('Done.')] }],
      clerk: [{ content: [toolUse('record', { order: '42' }, 'toolu_rec'), toolUse('charge', { cents: 500 }, 'toolu_chg')] }, { content: [text('Charged.')] }],
    } as Record<string, ScriptedReply[]>;
    const server = await mockServer(scriptedByAgent(steps));
    const id = `agent-crash-${randomUUID()}`;
    const package_ = from === 'package' ? { TSX_TSCONFIG_PATH: PACKAGE_TSCONFIG } : {};
    const first = worker('start', id, server.url, { AGENT: '1', ...package_ });
    await until(async () => (await counts(id)).charge?.started === 1 && (await recorded(id, 'tool record')));
    await kill(first);

    const second = worker('recover', id, server.url, { AGENT: '1', ...package_ });
    const result = await resultOf(second);
    expect(result.message.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    expect(await counts(id)).toEqual({ record: { started: 1, finished: 1 }, charge: { started: 2, finished: 1 } });
    // The parent's first request and the sub-agent's first were finished steps: not sent again.
    expect(server.requests).toHaveLength(4);
    expect(wire(server.requests[2]!).messages.at(-1).content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_rec', content: 'recorded 42' },
      { type: 'tool_result', tool_use_id: 'toolu_chg', content: `charged 500 with key ${id}:toolu_chg` },
    ]);
    expect(wire(server.requests[3]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_clerk', content: 'Charged.' }]);
  });

  it('two sub-agents called in one reply run one after the other in a durable run, so a recovery replays their steps in order', async () => {
    const steps = {
      parent: [{ content: [toolUse('clerk', { task: 'Handle order 42' }, 'toolu_clerk'), toolUse('auditor', { task: 'Audit order 42' }, 'toolu_aud')] }, { content: [text('Done.')] }],
      clerk: [{ content: [toolUse('record', { order: '42' }, 'toolu_rec'), toolUse('charge', { cents: 500 }, 'toolu_chg')] }, { content: [text('Charged.')] }],
      auditor: [{ content: [toolUse('audit', { order: '42' }, 'toolu_audit')] }, { content: [text('Audited.')] }],
    } as Record<string, ScriptedReply[]>;
    const server = await mockServer(scriptedByAgent(steps));
    const id = `agents-crash-${randomUUID()}`;
    const first = worker('start', id, server.url, { AGENT: '1' });
    await until(async () => (await counts(id)).charge?.started === 1 && (await recorded(id, 'tool record')));
    // The auditor waits for the clerk: nothing of it has run while the clerk's charge hangs.
    expect(server.requests.map(agentOf)).toEqual(['parent', 'clerk']);
    await kill(first);

    const second = worker('recover', id, server.url, { AGENT: '1' });
    const result = await resultOf(second);
    expect(result.message.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    expect(server.requests.map(agentOf)).toEqual(['parent', 'clerk', 'clerk', 'auditor', 'auditor', 'parent']);
    expect(await counts(id)).toEqual({ record: { started: 1, finished: 1 }, charge: { started: 2, finished: 1 }, audit: { started: 1, finished: 1 } });
    expect(wire(server.requests[5]!).messages.at(-1).content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_clerk', content: 'Charged.' },
      { type: 'tool_result', tool_use_id: 'toolu_aud', content: 'Audited.' },
    ]);
  });

  it('a worker killed during a streamed model request (a run from a queue): another sends it again and finishes the run', async () => {
    const reply = { content: [toolUse('record', { order: '7' }, 'toolu_rec')] };
    const server = await mockServer([{ ...reply, stallAfterEvents: 3 }, reply, { content: [text('All set.')] }]);
    const id = `stream-crash-${randomUUID()}`;
    const first = worker('start', id, server.url, { STREAM: '1', QUEUE: '1' });
    await until(async () => server.requests.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await kill(first);
    expect(await counts(id)).toEqual({});

    const { stdout, stderr } = await printed(worker('recover', id, server.url, { QUEUE: '1' }));
    const result = resultIn(stdout);
    expect(result.message.content).toEqual([{ type: 'text', text: 'All set.', citations: null }]);
    // The step records the reply as data: recording it read none of the SDK's deprecated getters.
    expect(stderr).not.toMatch(/The `parsed` property on `text` blocks is deprecated/);
    expect(server.requests).toHaveLength(3);
    expect(server.requests.every((request) => wire(request).body.stream === true)).toBe(true);
    expect(await counts(id)).toEqual({ record: { started: 1, finished: 1 } });
  });

  it("a streamed durable run sends its reply's text to the inspector live; a recovery sends none for the steps it replays", async () => {
    const server = await mockServer({
      steps: [{ content: [text('Recording and charging.'), toolUse('record', { order: '42' }, 'toolu_rec'), toolUse('charge', { cents: 500 }, 'toolu_chg')] }, { content: [text('Done.')] }],
      chunkSize: 5,
    });
    const id = `stream-text-${randomUUID()}`;
    const file = join(tmpdir(), `inspect-${id}.jsonl`);
    const first = worker('start', id, server.url, { STREAM: '1', INSPECT_RECORD: file });
    await until(async () => (await counts(id)).charge?.started === 1 && (await recorded(id, 'tool record')));
    await until(async () => existsSync(file) && readFileSync(file, 'utf8').includes('"tool.start"'));
    await kill(first);
    const result = await resultOf(worker('recover', id, server.url, { INSPECT_RECORD: file }));
    expect(result.message.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    const records = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as InspectorRecord);
    rmSync(file);
    const ids = [...new Set(records.map((record) => record.run))];
    expect(ids).toHaveLength(2);
    const texts = (run: string) => {
      const joined: Record<number, string> = {};
      for (const record of records) if (record.run === run && record.type === 'request.text') joined[record.requestId] = (joined[record.requestId] ?? '') + record.text;
      return joined;
    };
    // The first worker streamed its first reply; the second replayed that step (no text) and streamed the next.
    expect(texts(ids[0]!)).toEqual({ 1: 'Recording and charging.' });
    expect(texts(ids[1]!)).toEqual({ 2: 'Done.' });
    expect(server.requests).toHaveLength(2);
  });

  it('an approval waits durably: the worker dies while it waits, another process approves, a new worker completes the run', async () => {
    const server = await mockServer([
      { content: [toolUse('refund', { order: '42' }, 'toolu_ref'), toolUse('record', { order: '42' }, 'toolu_rec')] },
      { content: [text('Refunded.')] },
    ]);
    const id = `approval-${randomUUID()}`;
    // Both workers show the run to an inspector, recorded to one file (tool-runner/inspect).
    const file = join(tmpdir(), `inspect-${id}.jsonl`);
    const first = worker('start', id, server.url, { INSPECT_RECORD: file });
    // The neighbour that needs no approval has run; the refund waits.
    await until(async () => recorded(id, 'tool record'));
    await until(async () => (await approvalsOf(id)).length === 1);
    expect((await counts(id)).refund).toBeUndefined();
    await until(async () => existsSync(file) && readFileSync(file, 'utf8').includes('"state":"waiting"'));
    await kill(first);

    const approver = await output(spawnFixture('durable-approver.ts', { WORKFLOW_ID: id }));
    expect(approver).toContain('approved refund');
    const result = await resultOf(worker('recover', id, server.url, { INSPECT_RECORD: file }));
    const records = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as InspectorRecord);
    rmSync(file);
    // One run per worker process: the one that stopped for the approval, the one that finished.
    const ids = [...new Set(records.map((record) => record.run))];
    expect(ids).toHaveLength(2);
    const [before, after] = ids.map((run) => records.filter((record) => record.run === run));
    // The two calls run at once: their ends come in either order.
    const ends = before!.filter((record) => record.type === 'tool.end').map((record) => [record.name, record.pending ?? record.result]);
    expect(ends.sort(([a], [b]) => String(a).localeCompare(String(b)))).toEqual([
      ['record', 'recorded 42'],
      ['refund', true],
    ]);
    expect(after!.at(-1)).toMatchObject({ type: 'run.end', state: 'finished' });
    // The new worker replays the run: the refund waits for its (recorded) approval again, then runs.
    expect(after!.filter((record) => record.type === 'tool.end' && record.name === 'refund').at(-1)).toMatchObject({ result: 'refunded 42' });
    expect(result.message.content).toEqual([{ type: 'text', text: 'Refunded.', citations: null }]);
    expect(await counts(id)).toEqual({ record: { started: 1, finished: 1 }, refund: { started: 1, finished: 1 } });
    expect(server.requests).toHaveLength(2);
    expect(wire(server.requests[1]!).messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_ref', content: 'refunded 42' },
      { type: 'tool_result', tool_use_id: 'toolu_rec', content: 'recorded 42' },
    ]);
  });

  it('run control in a durable run: the budget and the loop guard hold, the result carries stoppedBy and the typed output', async () => {
    const server = await mockServer([
      { content: [toolUse('record', { order: '42' }, 'toolu_1'), toolUse('record', { order: '43' }, 'toolu_2')] },
      { content: [text('{"order":"42","status":"recorded"}')] },
    ]);
    const id = `control-${randomUUID()}`;
    const result = await resultOf(worker('start', id, server.url, { CONTROL: '1' }));
    expect(result.stoppedBy).toBe('model');
    expect(result.output).toEqual({ order: '42', status: 'recorded' });
    expect(await counts(id)).toEqual({ record: { started: 1, finished: 1 } });
    expect(wire(server.requests[1]!).messages[2].content[1]).toMatchObject({ tool_use_id: 'toolu_2', is_error: true, content: expect.stringMatching(/limit of 1 tool calls/) });
    expect(wire(server.requests[0]!).body.output_config.format.type).toBe('json_schema');
  });

  for (const streamed of [false, true]) it(`a fallback that answered is a recorded step: after a crash, neither the failed primary nor the fallback is asked again (${streamed ? 'streamed, the primary failing with an SSE error event' : 'a 529'})`, async () => {
    const failure = streamed ? { error: { status: 529, type: 'overloaded_error', afterEvents: 0 } } : { error: { status: 529 } };
    const primary = await mockServer([failure, { content: [text('Charged.')] }]);
    const fallback = await mockServer([{ content: [toolUse('record', { order: '9' }, 'toolu_rec'), toolUse('charge', { cents: 900 }, 'toolu_chg')] }]);
    const id = `fallback-${randomUUID()}`;
    const env = { FALLBACK_URL: fallback.url, ...(streamed && { STREAM: '1' }) };
    const first = worker('start', id, primary.url, env);
    await until(async () => (await counts(id)).charge?.started === 1 && (await recorded(id, 'tool record')));
    await kill(first);

    const result = await resultOf(worker('recover', id, primary.url, env));
    expect(result.message.content).toEqual([{ type: 'text', text: 'Charged.', citations: null }]);
    // The primary's 529 and the fallback's reply came back from their records; only turn 2 was sent.
    expect(primary.requests).toHaveLength(2);
    expect(fallback.requests).toHaveLength(1);
    expect(wire(fallback.requests[0]!).body.model).toBe('claude-fallback-1');
    const steps = ((await dbos.listWorkflowSteps(id)) ?? []).map((step) => step.name);
    expect(steps.filter((step) => step.startsWith('model request'))).toEqual(['model request', 'model request (fallback 0)', 'model request']);
    expect(await counts(id)).toEqual({ record: { started: 1, finished: 1 }, charge: { started: 2, finished: 1 } });
    expect(result.iterations).toBe(2);
    expect(result.usage.input_tokens).toBeGreaterThan(0);
  });

  for (const broken of ['an SSE error event', 'a dropped connection'] as const) it(`a streamed durable run whose stream fails after its first event does not fall back, as a run without durability does not (${broken})`, async () => {
    const partial = { content: [text('The primary began to answer')] };
    const failure: ScriptedReply = broken === 'an SSE error event' ? { ...partial, error: { status: 529, type: 'overloaded_error', afterEvents: 3 } } : { ...partial, disconnectAfterEvents: 3 };
    const primary = await mockServer([failure]);
    const fallback = await mockServer([{ content: [text('The fallback answered')] }]);
    const id = `stream-broken-${randomUUID()}`;
    const failed = printed(worker('start', id, primary.url, { FALLBACK_URL: fallback.url, STREAM: '1' }));
    await expect(failed).rejects.toThrow(broken === 'an SSE error event' ? /overloaded_error/ : /reply could not be read|stream broke|terminated|Connection error/);
    expect(primary.requests).toHaveLength(1);
    expect(fallback.requests).toHaveLength(0);
  });

  it('a streamed durable run whose stream breaks after its headers, before its first event, falls back, as a run without durability does', async () => {
    const primary = await mockServer([{ content: [text('Never sent')], disconnectAfterEvents: 0 }]);
    const fallback = await mockServer([{ content: [text('The fallback answered')] }]);
    const id = `stream-broken-early-${randomUUID()}`;
    const result = await resultOf(worker('start', id, primary.url, { FALLBACK_URL: fallback.url, STREAM: '1' }));
    expect(result.message.content).toEqual([{ type: 'text', text: 'The fallback answered', citations: null }]);
    expect(primary.requests).toHaveLength(1);
    expect(fallback.requests).toHaveLength(1);
    const steps = ((await dbos.listWorkflowSteps(id)) ?? []).map((step) => step.name);
    expect(steps).toEqual(['model request', 'model request (fallback 0)']);
  });

  it('a fallback entry without a client of its own is a step named for its entry: model request (fallback N)', async () => {
    const primary = await mockServer([{ error: { status: 529 } }, { content: [text('From the second fallback.')] }]);
    const fallback = await mockServer([{ error: { status: 503 } }]);
    const id = `fallback-model-${randomUUID()}`;
    const { stdout, stderr } = await printed(worker('start', id, primary.url, { FALLBACK_URL: fallback.url, FALLBACK_MODEL: 'claude-fallback-2', CLIENT_LOG_LEVEL: 'warn' }));
    const result = resultIn(stdout);
    // The run logs at its client's level; the logs name each entry as the user gave it, through its step.
    expect(stderr).toMatch(/sending it to fallback 0 \(Anthropic client, model 'claude-fallback-1'\)/);
    expect(stderr).toMatch(/failed on fallback 0 \(Anthropic client, model 'claude-fallback-1'\).*sending it to fallback 1 \(model 'claude-fallback-2'\)/);
    expect(result.message.content).toEqual([{ type: 'text', text: 'From the second fallback.', citations: null }]);
    expect(wire(primary.requests[1]!).body.model).toBe('claude-fallback-2');
    const steps = ((await dbos.listWorkflowSteps(id)) ?? []).map((step) => step.name);
    expect(steps.filter((step) => step.startsWith('model request'))).toEqual(['model request', 'model request (fallback 0)', 'model request (fallback 1)']);
  });

  // A durable run's entries all hold step clients: an entry without a client of its own was taken as one of another client,
  // and its reply's container was dropped (the next request started a new one), which a run without durability keeps.
  it("a fallback entry without a client of its own answers in the run's container: the next request names the container it chose", async () => {
    const primary = await mockServer([
      { error: { status: 529 } },
      { content: [toolUse('record', { order: '5' }, 'toolu_rec')], container: { id: 'container_shared' } },
      { content: [text('Done.')] },
    ]);
    const fallback = await mockServer([{ error: { status: 503 } }]);
    const id = `fallback-container-${randomUUID()}`;
    const result = await resultOf(worker('start', id, primary.url, { FALLBACK_URL: fallback.url, FALLBACK_MODEL: 'claude-fallback-2' }));
    expect(result.message.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    expect(wire(primary.requests[1]!).body.model).toBe('claude-fallback-2');
    expect(wire(primary.requests[2]!).body.container).toBe('container_shared');
  });

  // A step client named no provider: every event said 'anthropic', a Vertex fallback's reply too (and so the spans of tool-runner/otel).
  it("the events name the provider of the client that answered: a Vertex fallback's gcp.vertex_ai, as in a run without durability", async () => {
    const primary = await mockServer([{ error: { status: 529 } }]);
    const vertex = await mockServer([{ content: [text('From Vertex.')] }]);
    const id = `fallback-provider-${randomUUID()}`;
    const { stdout } = await printed(worker('start', id, primary.url, { FALLBACK_URL: vertex.url, FALLBACK_VERTEX: '1', PROVIDERS: '1' }));
    expect(resultIn(stdout).message.content).toEqual([{ type: 'text', text: 'From Vertex.', citations: null }]);
    expect(vertex.requests[0]!.path).toMatch(/:rawPredict$/);
    expect(stdout.split('\n').filter((line) => line.startsWith('provider '))).toEqual(['provider run.start anthropic', 'provider request.end gcp.vertex_ai']);
  });

  // A sub-agent with a client of its own is a step client in a durable run: an entry given that very client was taken for
  // another client's, and the container its reply chose was dropped (the sub-agent's next request started a new one).
  it("a sub-agent's fallback entry given the sub-agent's own client answers in its container: its next request names it", async () => {
    const server = await mockServer([
      { content: [toolUse('coder', { task: 'Record order 5' }, 'toolu_coder')] },
      { error: { status: 529 } },
      { content: [toolUse('record', { order: '5' }, 'toolu_rec')], container: { id: 'container_coder' } },
      { content: [text('Recorded.')] },
      { content: [text('Done.')] },
    ]);
    const id = `coder-container-${randomUUID()}`;
    const result = await resultOf(worker('start', id, server.url, { CODER: '1' }));
    expect(result.message.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    expect(wire(server.requests[2]!).body.model).toBe('claude-fallback-2');
    expect(wire(server.requests[3]!).body.container).toBe('container_coder');
  });

  it("a streamed durable run's compaction summary goes without streaming, as in a run without durability: an overload falls back", async () => {
    const primary = await mockServer([
      { content: [toolUse('record', { order: '7' }, 'toolu_rec')], usage: { input_tokens: 5_000 } },
      { error: { status: 529, type: 'overloaded_error', afterEvents: 3 } },
      { content: [text('Done.')] },
    ]);
    const fallback = await mockServer([{ content: [text('<summary>Order 7 recorded.</summary>')] }]);
    const id = `summary-fallback-${randomUUID()}`;
    const result = await resultOf(worker('start', id, primary.url, { FALLBACK_URL: fallback.url, STREAM: '1', COMPACT: '1' }));
    expect(result.message.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    expect(wire(primary.requests[1]!).body.stream).toBe(false);
    expect(wire(fallback.requests[0]!).body).toMatchObject({ model: 'claude-fallback-1', stream: false });
    expect(wire(primary.requests[2]!).messages[0].content[0].text).toContain('Order 7 recorded.');
  });

  it("a sub-agent's own options in a durable run: its fallback is a step, its tools' timeouts are in their steps, a class-made tool parses, a date object stays refused after a recovery", async () => {
    const steps = {
      parent: [{ content: [toolUse('courier', { task: 'Deliver order 42' }, 'toolu_cou')] }, { content: [text('Done.')] }],
      courier: [{ error: { status: 529 } }, { content: [toolUse('charge', { cents: 500 }, 'toolu_chg')] }, { content: [text('Delivered.')] }],
    } as Record<string, ScriptedReply[]>;
    const server = await mockServer(scriptedByAgent(steps));
    const fallback = await mockServer([
      { content: [toolUse('weigh', {}, 'toolu_wei'), toolUse('schedule', {}, 'toolu_sch'), toolUse('find_order', { code: 'ab42' }, 'toolu_fin'), toolUse('find_order', { code: 42 }, 'toolu_bad')] },
    ]);
    const id = `courier-${randomUUID()}`;
    const first = worker('start', id, server.url, { COURIER: '1', FALLBACK_URL: fallback.url });
    await until(async () => (await counts(id)).charge?.started === 1);
    await kill(first);

    const result = await resultOf(worker('recover', id, server.url, { COURIER: '1', FALLBACK_URL: fallback.url }));
    expect(result.message.content).toEqual([{ type: 'text', text: 'Done.', citations: null }]);
    // The fallback's reply was recorded: the recovery did not ask for it again.
    expect(fallback.requests).toHaveLength(1);
    expect(server.requests.map(agentOf)).toEqual(['parent', 'courier', 'courier', 'courier', 'parent']);
    const expected = [
      // Its own timeout (2 s), not the sub-agent's toolTimeoutMs (100 ms), as in a run that is not durable.
      { type: 'tool_result', tool_use_id: 'toolu_wei', content: 'weighed 2 kg' },
      { type: 'tool_result', tool_use_id: 'toolu_sch', is_error: true, content: "Error: tool 'schedule' returned object; a tool must return a string (JSON.stringify structured data) or an array of content blocks" },
      { type: 'tool_result', tool_use_id: 'toolu_fin', content: 'found AB42' },
      { type: 'tool_result', tool_use_id: 'toolu_bad', is_error: true, content: expect.stringContaining('code must be a string') },
    ];
    // Before the crash and after the recovery, the courier's history holds the same results.
    expect(wire(server.requests[2]!).messages[2].content).toEqual(expected);
    expect(wire(server.requests[3]!).messages[2].content).toEqual(expected);
    const names = ((await dbos.listWorkflowSteps(id)) ?? []).map((step) => step.name);
    expect(names.filter((name) => name.startsWith('model request'))).toEqual(['model request', 'model request', 'model request (fallback 0)', 'model request', 'model request', 'model request']);
  });

  it('a tool that throws: onToolError sees what it threw, and after a recovery an Error of the same name and message, never a ToolError', async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { order: '42' }, 'toolu_look')] },
      { content: [text('Sorry.')], delayMs: 60_000 },
      { content: [text('Sorry.')] },
    ]);
    const id = `failing-${randomUUID()}`;
    const first = worker('start', id, server.url, { FAILING: '1' });
    let before = '';
    first.stdout!.on('data', (chunk) => (before += chunk));
    await until(async () => server.requests.length === 2);
    await kill(first);

    const after = await output(worker('recover', id, server.url, { FAILING: '1' }));
    const result = resultIn(after);
    const seen = (stdout: string) => stdout.split('\n').filter((line) => line.startsWith('onToolError ')).map((line) => JSON.parse(line.slice('onToolError '.length)));
    expect(seen(before)).toEqual([{ name: 'RangeError', message: 'no order 42', toolError: false }]);
    expect(seen(after)).toEqual([{ name: 'RangeError', message: 'no order 42', toolError: false }]);
    expect(result.message.content).toEqual([{ type: 'text', text: 'Sorry.', citations: null }]);
    // The tool ran once; the recovered run read its failure from the record, as the model did.
    expect(await counts(id)).toEqual({ lookup: { started: 1, finished: 0 } });
    for (const request of [server.requests[1]!, server.requests[2]!]) {
      expect(wire(request).messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_look', is_error: true, content: 'RangeError: no order 42' }]);
    }
  });

  it("DBOS.cancelWorkflow(id) is the run's abort: a running tool's signal aborts (it stopped there; it had held on to the end, run again on a resume)", async () => {
    const server = await mockServer([{ content: [toolUse('hold', { order: '42' }, 'toolu_hold')] }, { content: [text('Held.')] }]);
    const id = `cancelled-${randomUUID()}`;
    const child = worker('start', id, server.url, { CANCEL: '1' });
    const exited = printed(child).then(
      () => 'finished',
      (error: Error) => error.message,
    );
    await until(async () => (await counts(id))['hold']?.started === 1);
    await dbos.cancelWorkflow(id);
    // DBOS polls for a cancel: the tool's signal aborts within about a second.
    await until(async () => (await counts(id))['hold']?.finished === 1);
    expect(await exited).toMatch(/cancel/i);
    expect(server.requests).toHaveLength(1);
  });

  it('durableApprovals refuses a call for its id and a reason that is no string; a denial an untyped sender sends with one denies the call, the reason as text: the workflow does not fail on it', async () => {
    const server = await mockServer([
      { content: [toolUse('refund', { order: '42' }, 'toolu_ref'), toolUse('cancel', { order: '42' }, 'toolu_can')] },
      { content: [text('Refunded; not cancelled.')] },
    ]);
    const id = `approval-object-reason-${randomUUID()}`;
    const done = resultOf(worker('start', id, server.url, { APPROVALS: '1', APPROVAL_SECONDS: '30' }));
    await until(async () => (await approvalsOf(id)).length === 2);
    // As runner.approve / runner.deny refuse them: a decision no call waits for, a reason the model would read as JSON.
    await expect(durableApprovals(dbos, id).approve({ id: 'toolu_ref' } as never)).rejects.toThrow(/^approve: the first argument is the id of a waiting call/);
    await expect(durableApprovals(dbos, id).deny('toolu_can', { reason: 'too risky' } as never)).rejects.toThrow(/^deny: the reason is a string/);
    // A call the run does not wait for (a typo): a rejection, not a decision no call reads while the run waits it out.
    await expect(durableApprovals(dbos, id).approve('toolu_rfe')).rejects.toThrow(/^approve: tool call 'toolu_rfe' is not waiting for approval in run '.*'\. Calls waiting for approval: toolu_ref \(refund\), toolu_can \(cancel\)$/);
    expect(() => durableApprovals(dbos, 42 as never)).toThrow(/^durableApprovals: the workflow id must be a non-empty string$/);
    await durableApprovals(dbos, id).approve('toolu_ref');
    // Another language, or DBOS directly: sent as it is.
    await dbos.send(id, { decision: 'deny', reason: { rule: 7 }, sentAt: Date.now() }, 'tool-runner.decision.toolu_can', `${id}:toolu_can:decision`);
    const result = await done;
    expect(result.message.content).toEqual([{ type: 'text', text: 'Refunded; not cancelled.', citations: null }]);
    expect(wire(server.requests[1]!).messages[2].content[1]).toEqual({ type: 'tool_result', tool_use_id: 'toolu_can', is_error: true, content: 'Error: the call to \'cancel\' was denied by the user: {"rule":7}. It was not run.' });
  });

  it('approvals: the calls of one stop share approvalTimeoutSeconds, pending() drops a decided call, an undecided one is answered as timed out', async () => {
    const server = await mockServer([
      { content: [toolUse('refund', { order: '42' }, 'toolu_ref'), toolUse('cancel', { order: '42' }, 'toolu_can')] },
      { content: [text('Refunded; the cancellation waited too long.')] },
    ]);
    const id = `approval-timeout-${randomUUID()}`;
    const done = resultOf(worker('start', id, server.url, { APPROVALS: '1', APPROVAL_SECONDS: '5' }));
    await until(async () => (await approvalsOf(id)).length === 2);
    const stopped = Date.now();
    // Decided late: a wait of its own for the cancel would end 5 s after this.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    await durableApprovals(dbos, id).approve('toolu_ref');
    await until(async () => (await approvalsOf(id)).map((call) => call.id).join() === 'toolu_can');
    const result = await done;
    expect(Date.now() - stopped).toBeLessThan(7_500);
    expect(result.message.content).toEqual([{ type: 'text', text: 'Refunded; the cancellation waited too long.', citations: null }]);
    expect(wire(server.requests[1]!).messages[2].content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_ref', content: 'refunded 42' },
      { type: 'tool_result', tool_use_id: 'toolu_can', is_error: true, content: "Error: the call to 'cancel' timed out after 5000 ms waiting for approval and was not run." },
    ]);
    expect(await counts(id)).toEqual({ refund: { started: 1, finished: 1 } });
    expect(await approvalsOf(id)).toEqual([]);
  });

  it('a decision sent after approvalTimeoutSeconds, while no worker was alive to time the call out, comes too late: answered as timed out, not run; one sent in time is taken by a recovery after the deadline', async () => {
    const settings = { APPROVALS: '1', APPROVAL_SECONDS: '2' };
    const run = async (when: 'late' | 'in-time') => {
      const server = await mockServer([{ content: [toolUse('refund', { order: '42' }, 'toolu_ref')] }, { content: [text('Done.')] }]);
      const id = `approval-${when}-${randomUUID()}`;
      const first = worker('start', id, server.url, settings);
      // (Run alone, this test may ask before the first worker has made DBOS's tables.)
      await until(async () => (await approvalsOf(id).catch(() => [])).length === 1);
      await kill(first);
      // With no worker alive: approved in time, or past the deadline; either is stored, and found first by the recovery.
      if (when === 'late') await new Promise((resolve) => setTimeout(resolve, 2_500));
      await durableApprovals(dbos, id).approve('toolu_ref');
      if (when === 'in-time') await new Promise((resolve) => setTimeout(resolve, 2_500));
      await resultOf(worker('recover', id, server.url, settings));
      return { results: wire(server.requests[1]!).messages[2].content, counts: await counts(id) };
    };
    // One after the other: two first workers at once in a new database would both make DBOS's tables.
    const late = await run('late');
    const inTime = await run('in-time');
    expect(late!.results).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_ref', is_error: true, content: "Error: the call to 'refund' timed out after 2000 ms waiting for approval and was not run." },
    ]);
    expect(late!.counts).toEqual({});
    expect(inTime!.results).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_ref', content: 'refunded 42' }]);
    expect(Object.values(inTime!.counts)).toEqual([{ started: 1, finished: 1 }]);
  });

  it('a history that ends with a call that needs approval: the run waits for the decision before any request, then goes on', async () => {
    const server = await mockServer([{ content: [text('Cancelled.')] }]);
    const id = `approval-first-${randomUUID()}`;
    const done = resultOf(worker('start', id, server.url, { APPROVALS: '1', ENDS_WITH_CALL: '1' }));
    await until(async () => (await approvalsOf(id)).map((call) => call.id).join() === 'toolu_first');
    expect(server.requests).toHaveLength(0);
    await durableApprovals(dbos, id).approve('toolu_first');
    const result = await done;
    expect(result.message.content).toEqual([{ type: 'text', text: 'Cancelled.', citations: null }]);
    expect(wire(server.requests[0]!).messages[2].content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_first', content: 'cancelled 42' }]);
  });

  const approvalsOf = (runId: string) => durableApprovals(dbos, runId).pending();

  function spawnFixture(file: string, env: Record<string, string>): ChildProcess {
    return spawn(process.execPath, ['--import', 'tsx', `test/fixtures/${file}`], {
      env: { ...process.env, DATABASE_URL: databaseUrl, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  function worker(mode: 'start' | 'recover', id: string, mockUrl: string, env: Record<string, string> = {}): ChildProcess {
    return spawnFixture('durable-worker.ts', { MODE: mode, WORKFLOW_ID: id, MOCK_URL: mockUrl, ...env });
  }
}, 60_000);

describe('durableToolRunner: bad config', () => {
  it('says what is wrong before anything runs', () => {
    const client = { beta: { messages: { create: async () => ({}), stream: () => ({}) as never } } };
    expect(() => durableToolRunner({ name: '', client })).toThrow(/`name` must be a non-empty string/);
    expect(() => durableToolRunner({ name: 'x', client: null as never })).toThrow(/`client` must be an Anthropic client/);
    expect(() => durableToolRunner({ name: 'x', client, options: { approve: async () => ({ decision: 'allow' }) } as never })).toThrow(
      /options.approve is not available in a durable run/,
    );
    // Said how to pass their tools (test/dbos-mcp.test.ts runs an MCP server's tools passed so).
    expect(() => durableToolRunner({ name: 'x', client, tools: [{ kind: 'tool-source', tools: () => [] }] })).toThrow(
      /^durableToolRunner: tool sources \(MCP\) are not supported in durable runs yet; pass their tools as plain tools, listed once when the worker starts: tools: await source\.tools\(\)/,
    );
    expect(() => durableToolRunner({ name: 'x', client, approvalTimeoutSeconds: 0 })).toThrow(/approvalTimeoutSeconds/);
    // A slip in the config's keys: the run would have no tools.
    expect(() => durableToolRunner({ name: 'x', client, tool: [] } as never)).toThrow(/^durableToolRunner: unknown option 'tool'; the options are name, client, tools, options, approvalTimeoutSeconds. Did you mean 'tools'\?$/);
    // Timeouts a timer cannot keep (30 days fires at once) are refused as toolRunner refuses them: the step holds them, not the runner.
    expect(() => durableToolRunner({ name: 'x', client, options: { toolTimeoutMs: 30 * 24 * 3600 * 1000 } })).toThrow(/^durableToolRunner: options.toolTimeoutMs must be a positive number of milliseconds, at most 2147483647/);
    expect(() => durableToolRunner({ name: 'x', client, options: { toolTimeoutMs: Number.NaN } })).toThrow(/options.toolTimeoutMs must be a positive number/);
    const slow = { name: 'slow', input_schema: { type: 'object' as const }, run: async () => 'ok', timeoutMs: -5 };
    expect(() => durableToolRunner({ name: 'x', client, tools: [slow] })).toThrow(/^durableToolRunner: tool 'slow': timeoutMs must be a positive number of milliseconds/);
    const timed = agentTool({ name: 'clerk', description: 'Files', timeoutMs: 1_000, params: ({ task }) => ({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: task }] }) });
    expect(() => durableToolRunner({ name: 'timed-agent', client, tools: [timed] })).toThrow(/agent tool 'clerk': timeoutMs is not available in a durable run/);
    const clerk = agentTool({ name: 'clerk', description: 'Files', params: ({ task }) => ({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: task }] }) });
    expect(() => durableToolRunner({ name: 'parallel-agents', client, tools: [clerk], options: { concurrency: 2 } })).toThrow(
      /options.concurrency with agent tools is not available in a durable run/,
    );
    // A toolset's calls would not be steps: refused, not run again on every recovery.
    const browser = { type: 'browser_toolset_20260801', name: 'browser', run: async () => 'ok' };
    expect(() => durableToolRunner({ name: 'browsing', client, tools: [browser as never] })).toThrow(/toolsets \(BetaRunnableToolset\) are not supported in durable runs yet/);
    // A sub-agent's own approver or signal: refused as the run's own are (a decision or an abort would be no step).
    const params = ({ task }: { task: string }) => ({ model: 'm', max_tokens: 64, messages: [{ role: 'user' as const, content: task }] });
    const deciding = agentTool({ name: 'decider', description: 'Decides', params, options: { approve: () => ({ decision: 'allow' }) } });
    expect(() => durableToolRunner({ name: 'sub-approve', client, tools: [deciding] })).toThrow(/agentTool 'decider': options.approve is not available in a durable run; decide calls with durableApprovals\(\)/);
    const stoppable = agentTool({ name: 'stoppable', description: 'Stops', params, options: { signal: new AbortController().signal } });
    expect(() => durableToolRunner({ name: 'sub-signal', client, tools: [stoppable] })).toThrow(/agentTool 'stoppable': options.signal is not available in a durable run; cancel the run with DBOS.cancelWorkflow\(id\)/);
    expect(() => durableToolRunner({ name: 'own-signal', client, options: { signal: new AbortController().signal } as never })).toThrow(/cancel the run with DBOS.cancelWorkflow/);
    // A request's own signal would abort a model request's step: the workflow would fail for good, never recovered.
    const requestSignal = { requestOptions: { signal: new AbortController().signal } };
    expect(() => durableToolRunner({ name: 'request-signal', client, options: requestSignal })).toThrow(
      /^durableToolRunner: options.requestOptions.signal is not available in a durable run; cancel the run with DBOS.cancelWorkflow\(id\)$/,
    );
    const requestStoppable = agentTool({ name: 'stoppable', description: 'Stops', params, options: requestSignal });
    expect(() => durableToolRunner({ name: 'sub-request-signal', client, tools: [requestStoppable] })).toThrow(/agentTool 'stoppable': options.requestOptions.signal is not available/);
    // Options of the wrong kind are refused when the agent is registered, not at its first run (or never).
    expect(() => durableToolRunner({ name: 'x', client, options: 'x' as never })).toThrow(/^durableToolRunner: options must be an object, got "x"$/);
    expect(() => durableToolRunner({ name: 'x', client, options: [] as never })).toThrow(/^durableToolRunner: options must be an object, got an array$/);
    expect(() => durableToolRunner({ name: 'x', client, approvalTimeoutSeconds: true as never })).toThrow(/^durableToolRunner: approvalTimeoutSeconds must be a positive number, got true$/);
    expect(() => durableToolRunner({ name: 'x', client, approvalTimeoutSeconds: '5' as never })).toThrow(/approvalTimeoutSeconds must be a positive number, got "5"/);
    expect(() => durableToolRunner({ name: 'x', client, options: { concurrency: 'x' as never } })).toThrow(/^durableToolRunner: options.concurrency must be/);
    expect(() => durableToolRunner({ name: 'x', client, options: { budget: { maxTokens: -1 } } })).toThrow(/options.budget.maxTokens/);
    expect(() => durableToolRunner({ name: 'x', client, options: { loopGuard: 'on' as never } })).toThrow(/options.loopGuard/);
    // What the runner checks when it is made, too: an output that is no object schema, tools it refuses (not at each start(), nor in a recovering worker).
    expect(() => durableToolRunner({ name: 'output-string', client, options: { output: 'x' as never } })).toThrow(/^durableToolRunner: options.output must be a zod schema/);
    expect(() => durableToolRunner({ name: 'output-list', client, options: { output: { type: 'array', items: { type: 'string' } } as never } })).toThrow(/^durableToolRunner: options.output must describe an object/);
    const twin = { name: 'twin', input_schema: { type: 'object' as const }, run: async () => 'ok' };
    expect(() => durableToolRunner({ name: 'twins', client, tools: [twin, { ...twin }] })).toThrow(/^durableToolRunner: two tools are named 'twin'/);
    expect(() => durableToolRunner({ name: 'asking', client, tools: [{ ...twin, needsApproval: 'yes' as never }] })).toThrow(/^durableToolRunner: tool 'twin': needsApproval must be/);
  });

  it("a sub-agent whose params give an MCP tool source, in a durable run: its call fails saying why, before any request (the source's calls would be no steps)", async () => {
    const client = { beta: { messages: { create: async () => ({}), stream: () => ({}) as never } } };
    const source = { kind: 'tool-source' as const, tools: () => [] };
    const researcher = agentTool({ name: 'researcher', description: 'Researches', client, params: ({ task }) => ({ model: 'm', max_tokens: 64, messages: [{ role: 'user', content: task }], tools: [source] }) });
    // Its durable form, as tool-runner/dbos makes it (the steps here stand in for DBOS's).
    const durable = (researcher as unknown as Record<symbol, (steps: object) => { run: (input: unknown, context: object) => Promise<unknown> }>)[Symbol.for('tool-runner.agentDurable.v1')]!({
      client: (c: unknown) => c,
      tool: (t: unknown) => t,
    });
    const context = { runner: {}, toolUse: { type: 'tool_use', id: 'toolu_r', name: 'researcher', input: {} } };
    await expect(durable.run({ task: 'otters' }, context)).rejects.toThrow(/agentTool 'researcher': tool sources \(MCP\) are not supported in durable runs yet/);
  });

  it('start() rejects bad params (a rejected promise, as run() gives, not a throw)', async () => {
    const client = { beta: { messages: { create: async () => ({}), stream: () => ({}) as never } } };
    const eager = durableToolRunner({ name: 'eager-run', client });
    const started = eager.start('eager-1', { model: 'm', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }], runToolsEagerly: true } as never);
    await expect(started).rejects.toThrow(/runToolsEagerly is not available in a durable run/);
    await expect(eager.start('', { model: 'm', max_tokens: 64, messages: [] })).rejects.toThrow(/workflow id must be a non-empty string/);
    // Params that are no object, or carry tools (the agent's are the run's: they were dropped), and start options with a slip (the run went outside its queue).
    const params = { model: 'm', max_tokens: 64, messages: [{ role: 'user' as const, content: 'hi' }] };
    await expect(eager.start('bad-1', null as never)).rejects.toThrow(/^durableToolRunner: params must be an object, got null$/);
    await expect(eager.start('bad-2', 'hi' as never)).rejects.toThrow(/^durableToolRunner: params must be an object, got "hi"$/);
    await expect(eager.run('bad-3', { ...params, tools: [{ name: 'mine', input_schema: { type: 'object' } }] } as never)).rejects.toThrow(/^durableToolRunner: params.tools is not taken: a durable run's tools are the agent's/);
    await expect(eager.start('bad-4', params, { queue: 'serial' } as never)).rejects.toThrow(/^durableToolRunner: start: unknown option 'queue'; the options are queueName/);
    await expect(eager.start('bad-5', params, 'serial' as never)).rejects.toThrow(/^durableToolRunner: the start options must be an object \({ queueName }\), got "serial"$/);
    await expect(eager.start('bad-6', params, { queueName: '' })).rejects.toThrow(/^durableToolRunner: queueName must be a non-empty string/);
  });
});

/** The agent that sent a request: its `system` prompt; the outermost run sends none. */
function agentOf(request: RecordedRequest): string {
  return String((request.body as { system?: string }).system ?? 'parent');
}

/** Steps that answer each request from the script of the agent that sent it (sub-agents may run in any order). */
function scriptedByAgent(scripts: Record<string, ScriptedReply[]>): Array<(request: RecordedRequest) => ScriptedReply> {
  const total = Object.values(scripts).reduce((sum, script) => sum + script.length, 0);
  return Array.from({ length: total }, () => (request: RecordedRequest) => scripts[agentOf(request)]!.shift()!);
}


async function output(child: ChildProcess): Promise<string> {
  return (await printed(child)).stdout;
}

function resultIn(stdout: string) {
  const line = stdout.split('\n').find((entry) => entry.startsWith('result '));
  if (!line) throw new Error('the worker printed no result');
  return JSON.parse(line.slice('result '.length));
}

async function resultOf(child: ChildProcess) {
  return resultIn(await output(child));
}
