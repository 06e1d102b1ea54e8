/**
 * tool-runner/inspect without a browser: what the page is fed, the recorded file, the token, the
 * approvals, and the CLI over a recorded file (test/inspect-browser.test.ts drives the page itself).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { type Socket, createConnection } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HookError, type RunnerEvent, agentTool, resumeToolRunner, textOf, tool, toolRunner } from 'tool-runner';
import { type Inspector, type InspectorRecord, type OtherRecord, inspectRecording, inspector } from 'tool-runner/inspect';
import { type RecordedRequest, type ScriptedReply, text, toolUse } from 'tool-runner/testing';
import { decide, inspectedSteps, inspectedTools, params, prompt, readFeed, sseMessages, withToken } from './fixtures/inspected.js';
import { baseParams, mockServer, sleep, wire } from './helpers.js';
import { RecordStore } from '../src/inspect/store.js';

type AnyRecord = InspectorRecord | OtherRecord;
const dir = mkdtempSync(join(tmpdir(), 'tool-runner-inspect-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const open: Inspector[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((inspect) => inspect.close()));
});
async function start(options: Parameters<typeof inspector>[0] = {}): Promise<Inspector> {
  const inspect = await inspector(options);
  open.push(inspect);
  return inspect;
}
const lines = (file: string): AnyRecord[] => readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as AnyRecord);
const toolResultsOf = (request: RecordedRequest) => (wire(request).messages.at(-1).content as Array<{ content: unknown }>).map((result) => result.content);
/** A tool whose every call needs approval. */
const sendTool = () => tool({ name: 'send', inputSchema: z.object({ to: z.string() }), needsApproval: true, run: ({ to }: { to: string }) => `sent ${to}` });
const ofType = <T extends AnyRecord['type']>(records: AnyRecord[], type: T) => records.filter((record) => record.type === type) as Array<Extract<AnyRecord, { type: T }>>;

describe('what the page is fed and the recorded file', () => {
  it('records every event as one JSON line (no runner; a run id and a time), flushed by close(); the feed has the same records', async () => {
    const file = join(dir, 'runs.jsonl');
    const server = await mockServer({ steps: inspectedSteps(), chunkSize: 8 });
    const inspect = await start({ record: file });
    const log: string[] = [];
    const feed = readFeed(inspect.url, (records) => records.some((record) => record.type === 'run.end'));
    await toolRunner(server.client(), params(inspectedTools(log)), { onEvent: inspect.onEvent, approve: () => ({ decision: 'allow' }) });
    const fed = await feed;
    await inspect.close();
    const recorded = lines(file);
    expect(recorded.map((record) => record.type)).toEqual(fed.map((record) => record.type));
    expect(new Set(recorded.map((record) => record.run)).size).toBe(1);
    for (const record of recorded) {
      expect(record).not.toHaveProperty('runner');
      expect(typeof record.time).toBe('number');
    }
    const types = recorded.map((record) => record.type);
    expect(types[0]).toBe('run.start');
    expect(types.at(-1)).toBe('run.end');
    expect(ofType(recorded, 'request.start').map((record) => [record.requestId, record.model, record.purpose])).toEqual([
      [1, 'claude-sonnet-5-5', 'turn'],
      [2, 'claude-sonnet-5-5', 'turn'],
      [3, 'claude-sonnet-5-5', 'turn'],
    ]);
    // The streamed text, in pieces that add up to the reply's text.
    const streamed = ofType(recorded, 'request.text').filter((record) => record.requestId === 1).map((record) => record.text).join('');
    expect(streamed).toBe('Let me look up the weather and your calendar.');
    const ends = ofType(recorded, 'request.end');
    expect(ends.map((record) => record.stopReason)).toEqual(['tool_use', 'tool_use', 'end_turn']);
    expect(ends[0]!.usage!.input_tokens).toBeGreaterThan(0);
    expect(ends[0]!.toolUses).toEqual([
      { id: 'toolu_weather', name: 'get_weather' },
      { id: 'toolu_calendar', name: 'read_calendar' },
    ]);
    const toolEnds = ofType(recorded, 'tool.end');
    expect(toolEnds.find((record) => record.id === 'toolu_calendar')).toMatchObject({ isError: true, result: 'Error: calendar service unavailable' });
    expect(toolEnds.find((record) => record.id === 'toolu_weather')).toMatchObject({ result: '21°C and sunny in Paris' });
    expect(ofType(recorded, 'tool.start').find((record) => record.id === 'toolu_email')).toMatchObject({ input: { to: 'ann@example.com', body: 'Sunny on Monday!' } });
    expect(ofType(recorded, 'run.start')[0]).toMatchObject({ model: 'claude-sonnet-5-5', prompt });
    expect(ofType(recorded, 'run.end')[0]).toMatchObject({ state: 'finished', usage: { input_tokens: expect.any(Number) } });
    expect(log).toEqual(['get_weather', 'read_calendar', 'send_email ann@example.com: Sunny on Monday!']);
  });

  it('without captureContent no input, result, text or prompt is kept, but timings, tokens and errors are', async () => {
    const file = join(dir, 'no-content.jsonl');
    const server = await mockServer({ steps: inspectedSteps() });
    const inspect = await start({ record: file, captureContent: false });
    await toolRunner(server.client(), params(inspectedTools()), { onEvent: inspect.onEvent, approve: () => ({ decision: 'allow' }) });
    await inspect.close();
    const raw = readFileSync(file, 'utf8');
    for (const content of ['Paris', 'calendar service', 'ann@example.com', 'Sunny', 'Let me', prompt]) expect(raw).not.toContain(content);
    const recorded = lines(file);
    expect(ofType(recorded, 'request.text')).toEqual([]);
    expect(ofType(recorded, 'tool.end').find((record) => record.id === 'toolu_calendar')).toEqual(expect.objectContaining({ isError: true }));
    expect(ofType(recorded, 'request.end')[0]!.usage!.output_tokens).toBeGreaterThan(0);
  });

  it("without captureContent a typed output's error names the fields at fault, not the model's answer", async () => {
    const file = join(dir, 'output-error.jsonl');
    const server = await mockServer([{ content: [text('Your SSN 078-05-1120')] }, { content: [text('{"ssn": 78051120}')] }]);
    const inspect = await start({ record: file, captureContent: false });
    const output = z.object({ ssn: z.string() });
    await expect(toolRunner(server.client(), baseParams, { onEvent: inspect.onEvent, output }).runUntilDone()).rejects.toThrow(/ssn/);
    await inspect.close();
    const raw = readFileSync(file, 'utf8');
    expect(raw).not.toContain('078-05');
    expect(raw).not.toContain('78051120');
    expect(ofType(lines(file), 'run.end')[0]!.error).toEqual({ name: 'OutputError', message: expect.stringMatching(/did not match options\.output \(at ssn\).*captureContent is off/) });
  });

  it("without captureContent an error about a callback's value of the wrong shape (a validator's, a needsApproval rule's) leaves the value out", async () => {
    const base = tool({ name: 'lookup', inputSchema: z.object({ ssn: z.string() }), run: () => 'found' });
    const tools = [
      { ...base, validateInput: (input: unknown) => ({ success: true, data: input }) as never },
      tool({ name: 'lookup', inputSchema: z.object({ ssn: z.string() }), needsApproval: ({ ssn }) => ssn as never, run: () => 'found' }),
    ];
    for (const [i, lookup] of tools.entries()) {
      const file = join(dir, `callback-value-${i}.jsonl`);
      const server = await mockServer([{ content: [toolUse('lookup', { ssn: '078-05-1120' })] }]);
      const inspect = await start({ record: file, captureContent: false });
      await expect(toolRunner(server.client(), { ...baseParams, tools: [lookup] }, { onEvent: inspect.onEvent }).runUntilDone()).rejects.toThrow(/078-05-1120/);
      await inspect.close();
      expect(readFileSync(file, 'utf8')).not.toContain('078-05');
      expect(ofType(lines(file), 'run.end')[0]!.error).toMatchObject({ message: expect.stringMatching(/returned a (value|string) \(not shown: captureContent is off\)/) });
    }
  });

  it('captures contents by default on loopback only', async () => {
    const server = await mockServer({ steps: [{ content: [text('a secret answer')] }, { content: [text('a secret answer')] }] });
    const loopback = await start();
    const everywhere = await start({ host: '0.0.0.0' });
    expect(new URL(loopback.url).hostname).toBe('127.0.0.1');
    for (const inspect of [loopback, everywhere]) await toolRunner(server.client(), { ...baseParams, stream: true }, { onEvent: inspect.onEvent });
    // Read over loopback in both cases: no traffic leaves the machine.
    const local = await readFeed(loopback.url, (records) => records.some((record) => record.type === 'run.end'));
    const wide = await readFeed(withToken(everywhere.url.replace('0.0.0.0', '127.0.0.1'), new URL(everywhere.url).searchParams.get('token')!), (records) => records.some((record) => record.type === 'run.end'));
    expect(JSON.stringify(local)).toContain('a secret answer');
    expect(JSON.stringify(wide)).not.toContain('a secret answer');
  });

  it('the API key appears nowhere: not in the feed, the page or the recorded file, a failed request included', async () => {
    const key = 'sk-ant-api03-never-show-me-0123456789';
    const file = join(dir, 'key.jsonl');
    const server = await mockServer([{ error: { status: 401, type: 'authentication_error', message: 'invalid x-api-key' } }]);
    const inspect = await start({ record: file });
    const client = server.client({ apiKey: key, maxRetries: 0 });
    await expect(toolRunner(client, { ...baseParams, stream: true }, { onEvent: inspect.onEvent })).rejects.toThrow(/invalid x-api-key/);
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'run.end'));
    const page = await (await fetch(inspect.url)).text();
    await inspect.close();
    const recorded = readFileSync(file, 'utf8');
    expect(ofType(fed, 'run.end')[0]).toMatchObject({ state: 'failed', error: { name: 'AuthenticationError', status: 401 } });
    for (const seen of [JSON.stringify(fed), page, recorded]) expect(seen).not.toContain(key);
  });

  it('the API key appears nowhere when it cannot be sent (a line break in it): the fetch error that quotes the header is recorded without it', async () => {
    // Two lines of a key file read whole, say: fetch refuses the header, and its error quotes the header's value, key and all.
    const key = 'sk-ant-api03-never-show-me-0123456789\nsk-ant-api03-nor-me';
    const file = join(dir, 'bad-key.jsonl');
    const server = await mockServer([{ content: [text('never sent')] }]);
    const inspect = await start({ record: file });
    const client = server.client({ apiKey: key, maxRetries: 0 });
    await expect(toolRunner(client, baseParams, { onEvent: inspect.onEvent })).rejects.toThrow(/invalid header value/);
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'run.end'));
    await inspect.close();
    const recorded = readFileSync(file, 'utf8');
    expect(ofType(fed, 'run.end')[0]!.error).toEqual({ name: 'TypeError', message: 'Headers.append: (the value, not shown) is an invalid header value.' });
    for (const seen of [JSON.stringify(fed), recorded]) expect(seen).not.toContain('never-show-me');
  });

  it("an error that quotes a refused header and then a long JSON body (many quotes) is recorded at once, the value left out", async () => {
    // A hook posting to an audit service of its own, with a header built from the call: fetch refuses it, and the hook's
    // error adds the call's result, 40,000 quoted fields. The quoted value was looked for from every quote to the end.
    const result = JSON.stringify(Object.fromEntries(Array.from({ length: 40_000 }, (_, i) => [`k${i}`, 'v'])));
    const lookup = tool({ name: 'lookup', inputSchema: z.object({}), run: () => result });
    const onToolResult = () => {
      throw new Error(`Headers.append: "tok\nen" is an invalid header value. Not audited: ${result}`);
    };
    const server = await mockServer([{ content: [toolUse('lookup', {}, 'toolu_1')] }]);
    const inspect = await start();
    const started = performance.now();
    await expect(toolRunner(server.client(), { ...baseParams, tools: [lookup] }, { onEvent: inspect.onEvent, hooks: { onToolResult } })).rejects.toThrow(/Not audited/);
    expect(performance.now() - started).toBeLessThan(2_000);
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'run.end'));
    const { message } = ofType(fed, 'run.end')[0]!.error!;
    expect(message).toContain('Headers.append: (the value, not shown) is an invalid header value. Not audited: {"k0":"v","k1":"v"');
    expect(message).not.toContain('tok');
  }, 60_000);

  it("a call's input past the inspector's limit is kept as its JSON, clipped, as a long result or text is", async () => {
    const server = await mockServer([{ content: [toolUse('echo', { s: 'z'.repeat(150_000) })] }, { content: [text('ok')] }]);
    const echo = tool({ name: 'echo', inputSchema: z.object({ s: z.string() }), run: ({ s }) => String(s.length) });
    const file = join(dir, 'long-input.jsonl');
    const inspect = await start({ record: file });
    await toolRunner(server.client(), { ...baseParams, tools: [echo] }, { onEvent: inspect.onEvent });
    await inspect.close();
    const input = ofType(lines(file), 'tool.start')[0]!.input;
    expect(typeof input).toBe('string');
    expect(input).toMatch(/^\{"s":"zzz.*\n\[… 50008 more characters not kept by the inspector\]$/s);
  });

  it('a wait that ends without a result (a reply the loop body left) is marked aborted, not left waiting', async () => {
    const gated = tool({ name: 'gated', inputSchema: z.object({}), needsApproval: true, run: () => 'ran' });
    const server = await mockServer([{ content: [toolUse('gated', {}, 'toolu_g'), text('and some more text after the call, streamed slowly')], eventDelayMs: 5 }]);
    const file = join(dir, 'left-wait.jsonl');
    const inspect = await start({ record: file });
    let waiting = false;
    const runner = toolRunner(server.client(), { ...baseParams, tools: [gated], stream: true, runToolsEagerly: true }, {
      onEvent: (event) => {
        inspect.onEvent(event);
        if (event.type === 'tool.end' && event.pending) waiting = true;
      },
    });
    for await (const stream of runner) {
      for await (const _event of stream) if (waiting) break;
      break;
    }
    await inspect.close();
    expect(ofType(lines(file), 'tool.end').map((record) => [record.pending, (record as { aborted?: boolean }).aborted])).toEqual([[true, undefined], [undefined, true]]);
  });

  it('marks timeouts, truncated results and denials, even without contents', async () => {
    const server = await mockServer([
      { content: [toolUse('slow', {}, 'toolu_slow'), toolUse('big', {}, 'toolu_big'), toolUse('guarded', {}, 'toolu_guarded')] },
      { content: [text('ok')] },
    ]);
    const slow = tool({ name: 'slow', inputSchema: z.object({}), timeoutMs: 30, run: () => sleep(1000).then(() => 'late') });
    const big = tool({ name: 'big', inputSchema: z.object({}), run: () => 'x'.repeat(500) });
    const guarded = tool({ name: 'guarded', inputSchema: z.object({}), needsApproval: true, run: () => 'ran' });
    const inspect = await start({ captureContent: false });
    await toolRunner(server.client(), { ...baseParams, tools: [slow, big, guarded] }, { onEvent: inspect.onEvent, maxToolResultChars: 100, approve: () => ({ decision: 'deny', reason: 'no' }) });
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'run.end'));
    const ends = ofType(fed, 'tool.end');
    expect(ends.find((record) => record.id === 'toolu_slow')).toMatchObject({ isError: true, timedOut: true });
    expect(ends.find((record) => record.id === 'toolu_big')).toMatchObject({ truncated: true });
    expect(ends.find((record) => record.id === 'toolu_big')).not.toHaveProperty('isError');
    expect(ends.find((record) => record.id === 'toolu_guarded')).toMatchObject({ isError: true, denied: true });
  });

  it('a run that stops with calls waiting (no approve) ends as waiting, with those calls; a resumed iteration is the same run', async () => {
    const server = await mockServer(inspectedSteps());
    const inspect = await start();
    const runner = toolRunner(server.client(), params(inspectedTools(), false), { onEvent: inspect.onEvent });
    await runner;
    runner.approve('toolu_email');
    await runner;
    const fed = await readFeed(inspect.url, (records) => ofType(records, 'run.end').length === 2);
    expect(new Set(fed.map((record) => record.run)).size).toBe(1);
    expect(ofType(fed, 'run.end').map((record) => [record.state, record.pending])).toEqual([
      ['waiting', [{ id: 'toolu_email', name: 'send_email' }]],
      ['finished', undefined],
    ]);
    expect(ofType(fed, 'tool.end').find((record) => record.id === 'toolu_email' && record.pending)).toBeTruthy();
  });

  it("a message pushed while the run is stopped (a chat's next message) is the prompt of the run's next start; a start on the same history has none", async () => {
    const [first, second] = inspectedSteps();
    const server = await mockServer([first!, second!, { error: { status: 500 } }, { content: [text('Not sent.')] }]);
    const inspect = await start();
    const runner = toolRunner(server.client({ maxRetries: 0 }), params(inspectedTools(), false), { onEvent: inspect.onEvent });
    await runner;
    expect(runner.stoppedBy).toBe('approval');
    runner.pushMessages({ role: 'user', content: 'Do not send it.' });
    // Its request fails; iterated again on the same history, the message is no new one.
    await expect(runner.runUntilDone()).rejects.toThrow();
    await runner;
    const fed = await readFeed(inspect.url, (records) => ofType(records, 'run.end').length === 3);
    expect(ofType(fed, 'run.start').map((record) => record.prompt)).toEqual([prompt, 'Do not send it.', undefined]);
    expect(new Set(fed.map((record) => record.run)).size).toBe(1);
  });

  it("a message the run added itself (its output's repair prompt) is no prompt of the start that goes on from it", async () => {
    const server = await mockServer([{ content: [text('not json')] }, { error: { status: 500 } }, { content: [text('{"city":"Paris"}')] }]);
    const inspect = await start();
    const runner = toolRunner(server.client({ maxRetries: 0 }), baseParams, { output: z.object({ city: z.string() }), onEvent: inspect.onEvent });
    // The repair turn's request fails; iterated again, the run goes on from the repair prompt it wrote.
    await expect(runner.runUntilDone()).rejects.toThrow();
    expect(textOf(runner.params.messages.at(-1))).toMatch(/^Your reply is not valid output/);
    await runner;
    const fed = await readFeed(inspect.url, (records) => ofType(records, 'run.end').length === 2);
    expect(ofType(fed, 'run.start').map((record) => record.prompt)).toEqual([textOf(baseParams.messages[0]!), undefined]);
  });

  it("a sub-agent's events (with path) join the run of the call that started them; fallback and unknown event fields show as they come", async () => {
    const server = await mockServer([
      { content: [toolUse('researcher', { task: 'find the capital' }, 'toolu_agent')] },
      { content: [text('The capital is Paris.')] },
      { content: [text('Paris.')] },
    ]);
    const inspect = await start();
    // An agent as a tool, by hand: its runner's events reach the parent's listener with a path.
    const researcher = tool({
      name: 'researcher',
      inputSchema: z.object({ task: z.string() }),
      run: async ({ task }, context) => {
        const forward = (event: RunnerEvent) => inspect.onEvent({ ...event, path: ['researcher'], ...(event.type === 'request.end' && { fallback: 0 }) } as unknown as RunnerEvent);
        const sub = toolRunner(server.client(), { ...baseParams, messages: [{ role: 'user', content: task }] }, { onEvent: forward });
        const reply = await sub;
        expect(context.runner).toBeDefined();
        return reply.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
      },
    });
    const parent = toolRunner(server.client(), { ...baseParams, tools: [researcher] }, { onEvent: inspect.onEvent });
    await parent;
    const someRunner = parent as unknown as RunnerEvent['runner'];
    inspect.onEvent({ type: 'compaction.notice', runner: someRunner, tokens: 1200, text: 'kept only when captured', nested: { dropped: true } } as unknown as RunnerEvent);
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'compaction.notice'));
    const runs = new Set(fed.map((record) => record.run));
    expect(runs.size).toBe(1);
    const nested = fed.filter((record) => record.path);
    expect(nested.map((record) => record.type)).toEqual(['run.start', 'request.start', 'request.end', 'run.end']);
    expect(nested.every((record) => record.path!.join('/') === 'researcher')).toBe(true);
    expect(ofType(nested, 'request.end')[0]).toMatchObject({ fallback: 0 });
    expect(fed.at(-1)).toEqual({ run: [...runs][0], time: expect.any(Number), type: 'compaction.notice', tokens: 1200, text: 'kept only when captured' });
  });

  it("sub-agents of one agent tool running at once (two runs, two calls of one reply) each join their own call: callPath names it", async () => {
    const researcher = agentTool({ name: 'researcher', description: 'Researches', params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }] }) });
    const replies: Record<string, ScriptedReply[]> = {
      'run A': [{ content: [toolUse('researcher', { task: 'cats' }, 'toolu_a1'), toolUse('researcher', { task: 'dogs' }, 'toolu_a2')] }, { content: [text('A done.')] }],
      'run B': [{ content: [toolUse('researcher', { task: 'owls' }, 'toolu_b1')] }, { content: [text('B done.')] }],
      cats: [{ content: [text('Cats purr and nap all day long.')] }],
      dogs: [{ content: [text('Dogs bark and fetch all day long.')] }],
      owls: [{ content: [text('Owls hoot and hunt all night long.')] }],
    };
    const step = (request: RecordedRequest) => replies[textOf(request.messages[0])]!.shift()!;
    const server = await mockServer({ steps: Array.from({ length: 7 }, () => step), chunkSize: 3 });
    const inspect = await start();
    const run = (prompt: string) => toolRunner(server.client(), { ...baseParams, stream: true, messages: [{ role: 'user', content: prompt }], tools: [researcher] }, { onEvent: inspect.onEvent }).runUntilDone();
    await Promise.all([run('run A'), run('run B')]);
    const fed = await readFeed(inspect.url, (records) => ofType(records, 'run.end').filter((record) => !record.path).length === 2);
    const runOf = (id: string) => ofType(fed, 'tool.start').find((record) => record.id === id)!.run;
    const texts = new Map<string, string>();
    for (const record of ofType(fed, 'agent.text' as never) as Array<AnyRecord & { text: string }>) {
      expect(record.run).toBe(runOf(record.callPath![0]!));
      texts.set(record.callPath![0]!, (texts.get(record.callPath![0]!) ?? '') + record.text);
    }
    expect(Object.fromEntries(texts)).toEqual({ toolu_a1: 'Cats purr and nap all day long.', toolu_a2: 'Dogs bark and fetch all day long.', toolu_b1: 'Owls hoot and hunt all night long.' });
    for (const record of fed.filter((record) => record.path)) {
      expect(record.path).toEqual(['researcher']);
      expect(record.run).toBe(runOf(record.callPath![0]!));
    }
    expect(runOf('toolu_a1')).not.toBe(runOf('toolu_b1'));
  });

  it('two runs resumed from one history, whose agent calls share their id: each sub-agent joins its own run', async () => {
    const researcher = agentTool({ name: 'researcher', description: 'Researches', params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }] }) });
    const messages = [...baseParams.messages, { role: 'assistant' as const, content: [toolUse('researcher', { task: 'otters' }, 'toolu_r')] }];
    const servers = await Promise.all(['A', 'B'].map((run) => mockServer([{ content: [text(`sub ${run}`)] }, { content: [text(`done ${run}`)] }])));
    const inspect = await start();
    try {
      await Promise.all(servers.map((server) => toolRunner(server.client(), { ...baseParams, messages, tools: [researcher] }, { onEvent: inspect.onEvent }).runUntilDone()));
      const fed = await readFeed(inspect.url, (records) => ofType(records, 'run.end').filter((record) => !record.path).length === 2);
      const runs = [...new Set(fed.map((record) => record.run))];
      expect(runs).toHaveLength(2);
      // Each run holds its own sub-agent's run, whose reply is its own server's.
      for (const run of runs) {
        const nested = fed.filter((record) => record.run === run && record.path);
        expect(nested.map((record) => record.type)).toEqual(['run.start', 'request.start', 'request.end', 'run.end']);
        const ownReply = ofType(fed.filter((record) => record.run === run && !record.path), 'request.end').at(-1)!.text;
        expect(ofType(nested, 'request.end')[0]!.text).toBe(ownReply!.replace('done', 'sub'));
      }
    } finally {
      await Promise.all(servers.map((server) => server.close()));
    }
  });

  it('keeps at most maxRuns runs: the oldest finished one is dropped first', async () => {
    const server = await mockServer([{ content: [text('one')] }, { content: [text('two')] }, { content: [text('three')] }]);
    const inspect = await start({ maxRuns: 2 });
    for (let i = 0; i < 3; i++) await toolRunner(server.client(), baseParams, { onEvent: inspect.onEvent });
    const fed = await readFeed(inspect.url, (records) => ofType(records, 'run.end').length === 2);
    expect(ofType(fed, 'request.end').map((record) => record.requestId)).toHaveLength(2);
    expect(JSON.stringify(fed)).not.toContain('"one"');
  });

  it('a run stopped for approval is not dropped past maxRuns: decided later, it shows whole, from its start', async () => {
    const waiting = await mockServer([{ content: [toolUse('send', { to: 'ann' }, 'toolu_1')] }, { content: [text('sent it')] }]);
    const other = await mockServer([{ content: [text('other')] }]);
    const inspect = await start({ maxRuns: 1 });
    const runner = toolRunner(waiting.client(), { ...baseParams, tools: [sendTool()] }, { onEvent: inspect.onEvent });
    await runner;
    await toolRunner(other.client(), baseParams, { onEvent: inspect.onEvent });
    runner.approve('toolu_1');
    await runner;
    const fed = await readFeed(inspect.url, (records) => ofType(records, 'run.end').some((record) => record.state === 'finished' && record.run === ofType(records, 'tool.end')[0]?.run));
    const run = ofType(fed, 'tool.end')[0]!.run;
    const ofRun = fed.filter((record) => record.run === run);
    expect(ofRun.filter((record) => record.type === 'request.start').map((record) => (record as { requestId: number }).requestId)).toEqual([1, 2]);
    expect(ofType(ofRun, 'run.start')[0]).toHaveProperty('prompt');
  });

  it('runs stopped for approval and resumed from their snapshots (each a run of its own): maxRuns of them are kept, beside maxRuns others', async () => {
    const inspect = await start({ maxRuns: 2 });
    for (let i = 0; i < 6; i++) {
      const server = await mockServer([{ content: [toolUse('send', { to: 'ann' }, `toolu_${i}`)] }, { content: [text(`done ${i}`)] }]);
      const stopped = toolRunner(server.client(), { ...baseParams, tools: [sendTool()] }, { onEvent: inspect.onEvent });
      await stopped;
      const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(stopped.toJSON())), { tools: [sendTool()], options: { onEvent: inspect.onEvent } });
      resumed.approve(`toolu_${i}`);
      await resumed;
    }
    const fed = await readFeed(inspect.url, (records) => ofType(records, 'run.end').some((record) => record.state === 'finished'));
    expect(new Set(fed.map((record) => record.run)).size).toBe(4);
    expect(JSON.stringify(fed)).toContain('done 5');
  });

  it('a run maxRuns drops has every record in the recorded file and on an open page: its last ones were not yet sent', async () => {
    const file = join(dir, 'evicted.jsonl');
    const server = await mockServer([{ content: [text('one')] }, { content: [text('two')] }, { content: [text('three')] }]);
    const inspect = await start({ record: file, maxRuns: 1 });
    const feed = readFeed(inspect.url, (records) => ofType(records, 'run.end').length === 3);
    for (let i = 0; i < 3; i++) await toolRunner(server.client(), baseParams, { onEvent: inspect.onEvent });
    const fed = await feed;
    await inspect.close();
    const expected = ['run.start', 'request.start', 'request.end', 'run.end'];
    expect(lines(file).map((record) => record.type)).toEqual([...expected, ...expected, ...expected]);
    expect(fed.map((record) => record.type)).toEqual([...expected, ...expected, ...expected]);
  });

  it('a record of a run dropped past maxRuns that comes later (a call that ended after its run failed) goes to the file but is not kept: the store stays at maxRuns runs', async () => {
    const file = join(dir, 'late.jsonl');
    const inspect = await start({ record: file, maxRuns: 2 });
    const slow = tool({ name: 'slow', inputSchema: z.object({}), run: () => sleep(150).then(() => 'slow done') });
    const fast = tool({ name: 'fast', inputSchema: z.object({}), run: () => 'fast done' });
    for (let cycle = 0; cycle < 3; cycle++) {
      const failing = await mockServer([{ content: [toolUse('slow', {}, `toolu_slow${cycle}`), toolUse('fast', {}, `toolu_fast${cycle}`)] }]);
      const hooks = { onToolResult: (_result: unknown, call: { name: string }) => void (call.name === 'fast' && fail()) };
      const fail = () => {
        throw new Error('the hook failed');
      };
      await expect(toolRunner(failing.client(), { ...baseParams, tools: [slow, fast] }, { onEvent: inspect.onEvent, hooks }).runUntilDone()).rejects.toThrow(HookError);
      const plain = await mockServer([{ content: [text('one')] }, { content: [text('two')] }, { content: [text('three')] }]);
      for (let i = 0; i < 3; i++) await toolRunner(plain.client(), baseParams, { onEvent: inspect.onEvent });
      // The failed run's slow call ends now, its run dropped.
      await sleep(250);
    }
    const fed = await readFeed(inspect.url, (records) => records.length > 0);
    expect(new Set(fed.map((record) => record.run)).size).toBe(2);
    expect(JSON.stringify(fed)).not.toContain('toolu_slow');
    await inspect.close();
    expect(lines(file).filter((record) => record.type === 'tool.end' && String((record as { id: string }).id).startsWith('toolu_slow'))).toHaveLength(3);
  });

  it('a late record of a dropped run is told apart as it comes: its run started again before the batch went, it still goes to the file only', () => {
    const store = new RecordStore(1);
    const page: AnyRecord[] = [];
    const file: AnyRecord[] = [];
    store.listen((batch) => void page.push(...batch.records));
    store.listen((batch) => void file.push(...batch.records), undefined, true);
    const add = (run: string, type: string, fields: object = {}) => store.add({ run, time: 0, type, ...fields } as AnyRecord);
    add('A', 'run.start');
    add('A', 'run.end', { state: 'failed' });
    add('B', 'run.start');
    add('B', 'run.end', { state: 'finished' });
    // Past maxRuns: A is dropped. Its call ends late, then A is iterated again, within one batch.
    add('A', 'tool.end', { id: 'toolu_late', name: 'slow' });
    add('A', 'run.start');
    store.flush();
    expect(page.map((record) => `${record.run} ${record.type}`)).toEqual(['A run.start', 'A run.end', 'B run.start', 'B run.end', 'A run.start']);
    expect(file.map((record) => `${record.run} ${record.type}`)).toEqual(['A run.start', 'A run.end', 'B run.start', 'B run.end', 'A tool.end', 'A run.start']);
    expect(store.since(0).messages.map((message) => message.json).join()).not.toContain('toolu_late');
  });

  it('a page reconnecting starts over (stale) only when a run it saw start and not end was dropped since', () => {
    const store = new RecordStore(1);
    const add = (run: string, type: string) => {
      store.add({ run, time: 0, type } as AnyRecord);
      store.flush();
    };
    add('A', 'run.start'); // 1
    add('A', 'run.end'); // 2
    add('B', 'run.start'); // 3: A is dropped
    expect([0, 1, 2, 3].map((seq) => store.since(seq).stale)).toEqual([false, true, false, false]);
    add('B', 'run.end'); // 4
    add('C', 'run.start'); // 5: B is dropped
    expect([2, 3, 4, 5].map((seq) => store.since(seq).stale)).toEqual([false, true, false, false]);
  });

  it('after more runs at once than maxRuns, the store shrinks back to maxRuns as they end', async () => {
    const server = await mockServer({ steps: Array.from({ length: 4 }, (_, i) => ({ content: [text(`answer ${i}`)], delayMs: 30 })) });
    const inspect = await start({ maxRuns: 2 });
    await Promise.all([0, 1, 2, 3].map(() => toolRunner(server.client(), baseParams, { onEvent: inspect.onEvent })));
    // A page opened now gets what the store keeps, in its first batch.
    const fed = await readFeed(inspect.url, (records) => records.length > 0);
    expect(new Set(fed.map((record) => record.run)).size).toBe(2);
    expect(ofType(fed, 'run.end')).toHaveLength(2);
  });

  it('runs at once whose batches went out (to the file) as one JSON each, then dropped past maxRuns: a page opened later gets the kept runs whole', async () => {
    const server = await mockServer({ steps: Array.from({ length: 4 }, (_, i) => ({ content: [text(`answer ${i}`)], delayMs: 30 })) });
    const inspect = await start({ maxRuns: 2, record: join(dir, 'at-once.jsonl') });
    await Promise.all([0, 1, 2, 3].map(() => toolRunner(server.client(), baseParams, { onEvent: inspect.onEvent })));
    const fed = await readFeed(inspect.url, (records) => records.length > 0);
    const runs = [...new Set(fed.map((record) => record.run))];
    expect(runs).toHaveLength(2);
    for (const run of runs) expect(fed.filter((record) => record.run === run).map((record) => record.type)).toEqual(['run.start', 'request.start', 'request.end', 'run.end']);
    // The file has every run, dropped or kept (its writes are done once the inspector is closed).
    await inspect.close();
    expect(new Set(lines(join(dir, 'at-once.jsonl')).map((record) => record.run)).size).toBe(4);
  });

  it('an input with no JSON form (a BigInt a hook put there) is written as words: the batch, the file and a page opened later are fine', async () => {
    const file = join(dir, 'bigint.jsonl');
    const inspect = await start({ record: file });
    const runner = { params: { messages: [] }, usage: {}, pendingApprovals: [] } as never;
    inspect.onEvent({ type: 'tool.start', runner, call: { id: 'toolu_big', name: 'count', input: { n: 10n }, toolUse: {} as never } });
    const fed = await readFeed(inspect.url, (records) => records.length > 0);
    expect(fed).toMatchObject([{ type: 'tool.start', id: 'toolu_big', input: expect.stringMatching(/^\[not JSON: .*BigInt/) }]);
    await inspect.close();
    expect(lines(file)).toMatchObject([{ type: 'tool.start', input: expect.stringMatching(/^\[not JSON: /) }]);
  });

  it('a page that reconnects (Last-Event-ID: the number of the last record it got) is fed only what came after', async () => {
    const server = await mockServer({ steps: [{ content: [text('one')] }, { content: [text('two')] }] });
    const inspect = await start();
    await toolRunner(server.client(), baseParams, { onEvent: inspect.onEvent });
    const first = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'run.end'));
    expect(first.map((record) => record.type)).toEqual(['run.start', 'request.start', 'request.end', 'run.end']);
    await toolRunner(server.client(), baseParams, { onEvent: inspect.onEvent });
    const again = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'run.end'), 10_000, { 'last-event-id': String(first.length) });
    expect(again.map((record) => record.type)).toEqual(['run.start', 'request.start', 'request.end', 'run.end']);
    expect(again[0]!.run).not.toBe(first[0]!.run);
  });

  it('a page that stops reading (asleep, behind a stale tunnel) is let go past 64 MB unsent, not held in memory; reconnecting, it gets what it missed', async () => {
    const inspect = await start();
    const runner = { params: { messages: [] }, usage: {}, pendingApprovals: [] } as never;
    const { socket, chunks, ended } = rawFeed(inspect.url);
    await new Promise((resolve) => socket.once('data', resolve));
    socket.pause();
    // 100 MB of results in batches of 5 MB: each held for the page, which reads none.
    const calls = 1_000;
    const result = 'r'.repeat(100_000);
    for (let i = 0; i < calls; i++) {
      inspect.onEvent({ type: 'tool.end', runner, call: { id: `toolu_${i}`, name: 'read', input: {}, toolUse: {} as never }, result: { type: 'tool_result', tool_use_id: `toolu_${i}`, content: result } });
      if (i % 50 === 49) await sleep(60);
    }
    // The page reads again: what it was sent before the feed ended comes, then the end (the feed stayed open, holding all).
    socket.resume();
    expect(await Promise.race([ended.then(() => 'let go'), sleep(10_000).then(() => 'still held')])).toBe('let go');
    // An HTTP/1.0 request: the body as it is, not in chunks. Its whole messages (the last may be cut off), after the headers.
    const body = Buffer.concat(chunks).toString('utf8');
    const messages = body.slice(body.indexOf('\r\n\r\n') + 4).split('\n\n').slice(0, -1).filter((message) => /^data: \[/m.test(message));
    const received = messages.flatMap((message) => JSON.parse(message.slice(message.indexOf('data: ') + 6)) as AnyRecord[]);
    // What the page had whole when the feed ended (none, when its machine took only the start of the first batch).
    const lastId = messages.length === 0 ? 0 : Number(/^id: (\d+)/m.exec(messages.at(-1)!)![1]);
    expect(received.length).toBe(lastId);
    expect(body.length).toBeLessThan(calls * result.length);
    const rest = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'tool.end' && record.id === `toolu_${calls - 1}`), 20_000, { 'last-event-id': String(lastId) });
    expect(received.length + rest.length).toBe(calls);
  }, 60_000);

  it('a page that opened on a long history and read it all, then stops reading, is let go past 64 MB of new records (not 64 MB past the history)', async () => {
    const inspect = await start();
    const runner = { params: { messages: [] }, usage: {}, pendingApprovals: [] } as never;
    const result = 'r'.repeat(100_000);
    const end = (i: number) => inspect.onEvent({ type: 'tool.end', runner, call: { id: `toolu_${i}`, name: 'read', input: {}, toolUse: {} as never }, result: { type: 'tool_result', tool_use_id: `toolu_${i}`, content: result } });
    // 70 MB kept before the page opens (a busy process watched late).
    for (let i = 0; i < 700; i++) end(i);
    await sleep(100);
    const { socket, chunks, ended } = rawFeed(inspect.url);
    // The page reads the history whole, then stops reading.
    while (chunks.reduce((sum, chunk) => sum + chunk.length, 0) < 700 * result.length) await sleep(20);
    socket.pause();
    // 100 MB of new records: the socket buffers of both ends take several MB of them (more on a loaded machine, whose
    // buffers had grown), which 80 MB did not leave past 64 MB unsent at every run. 70 MB + 64 MB (the bug) is not reached.
    for (let i = 700; i < 1_700; i++) {
      end(i);
      if (i % 50 === 49) await sleep(60);
    }
    socket.resume();
    expect(await Promise.race([ended.then(() => 'let go'), sleep(10_000).then(() => 'still held')])).toBe('let go');
    socket.destroy();
  }, 60_000);

  it('a page let go past 64 MB unsent, reconnecting, learns how a run it showed running ended, even once that run was dropped past maxRuns', async () => {
    const inspect = await start({ maxRuns: 2 });
    const runner = () => ({ params: { model: 'm', messages: [] }, usage: {}, pendingApprovals: [] }) as never;
    const { socket, chunks, ended } = rawFeed(inspect.url);
    await new Promise((resolve) => socket.once('data', resolve));
    // The page sees the run start, then stops reading.
    const first = runner();
    inspect.onEvent({ type: 'run.start', runner: first } as never);
    await sleep(200);
    socket.pause();
    const result = 'r'.repeat(100_000);
    for (let i = 0; i < 1_000; i++) {
      inspect.onEvent({ type: 'tool.end', runner: first, call: { id: `toolu_${i}`, name: 'read', input: {}, toolUse: {} as never }, result: { type: 'tool_result', tool_use_id: `toolu_${i}`, content: result } });
      if (i % 50 === 49) await sleep(60);
    }
    inspect.onEvent({ type: 'run.end', runner: first, message: undefined } as never);
    // Two more runs: the first, ended, is dropped (maxRuns 2).
    for (let i = 0; i < 2; i++) {
      const other = runner();
      inspect.onEvent({ type: 'run.start', runner: other } as never);
      inspect.onEvent({ type: 'run.end', runner: other, message: undefined } as never);
      await sleep(60);
    }
    socket.resume();
    await ended;
    const body = Buffer.concat(chunks).toString('utf8');
    const messages = body.slice(body.indexOf('\r\n\r\n') + 4).split('\n\n').slice(0, -1).filter((message) => /^data: \[/m.test(message));
    const received = messages.flatMap((message) => JSON.parse(message.slice(message.indexOf('data: ') + 6)) as AnyRecord[]);
    const lastId = Number(/^id: (\d+)/m.exec(messages.at(-1)!)![1]);
    const run = received.find((record) => record.type === 'run.start')!.run;
    expect(received.some((record) => record.run === run && record.type === 'run.end')).toBe(false);
    // Reconnecting: the run's end, or a reset (the page starts over); not the page left showing the run running for ever.
    const feed = new URL('api/events', inspect.url);
    feed.search = new URL(inspect.url).search;
    const again = await fetch(feed, { headers: { 'last-event-id': String(lastId) } });
    const text = await new Promise<string>((resolve) => {
      let seen = '';
      const reader = again.body!.getReader();
      const decoder = new TextDecoder();
      const read = (): void => void reader.read().then(({ done, value }) => {
        if (value) seen += decoder.decode(value);
        if (done || seen.includes('event: reset') || seen.split('\n\n').length > 3) return resolve(seen);
        read();
      });
      read();
      setTimeout(() => { void reader.cancel(); resolve(seen); }, 2_000);
    });
    const rest = text.split('\n\n').filter((message) => /^data: \[/m.test(message)).flatMap((message) => JSON.parse(message.slice(message.indexOf('data: ') + 6)) as AnyRecord[]);
    expect(text.includes('event: reset') || rest.some((record) => record.run === run && record.type === 'run.end')).toBe(true);
  }, 60_000);

  it("a streamed sub-agent's text is joined while unsent, its request.text and agent.text alike: a few records per reply, not two per piece", async () => {
    const file = join(dir, 'sub-text.jsonl');
    const long = 'word '.repeat(400);
    const server = await mockServer({ steps: [{ content: [toolUse('helper', { task: 't' }, 'toolu_helper')] }, { content: [text(long)] }, { content: [text('done')] }], chunkSize: 4 });
    const helper = agentTool({ name: 'helper', description: 'Helps', params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }] }) });
    const inspect = await start({ record: file });
    await toolRunner(server.client(), { ...baseParams, stream: true, tools: [helper] }, { onEvent: inspect.onEvent });
    await inspect.close();
    const recorded = lines(file);
    const own = ofType(recorded, 'request.text').filter((record) => record.path);
    const forwarded = ofType(recorded, 'agent.text');
    expect(own.map((record) => record.text).join('')).toBe(long);
    expect(forwarded.map((record) => record.text).join('')).toBe(long);
    // 500 pieces of 4 characters each: joined into one record per batch (a batch waits 50 ms).
    expect(own.length).toBeLessThan(10);
    expect(forwarded.length).toBeLessThan(10);
  });

  it("without captureContent a streamed sub-agent's text is not recorded at all (no record of text that is not there)", async () => {
    const file = join(dir, 'sub-text-hidden.jsonl');
    const server = await mockServer({ steps: [{ content: [toolUse('helper', { task: 't' }, 'toolu_helper')] }, { content: [text('The secret plan.')] }, { content: [text('done')] }] });
    const helper = agentTool({ name: 'helper', description: 'Helps', params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }] }) });
    const inspect = await start({ record: file, captureContent: false });
    await toolRunner(server.client(), { ...baseParams, stream: true, tools: [helper] }, { onEvent: inspect.onEvent });
    await inspect.close();
    const recorded = lines(file);
    expect(ofType(recorded, 'agent.text')).toEqual([]);
    expect(ofType(recorded, 'request.text')).toEqual([]);
    expect(readFileSync(file, 'utf8')).not.toMatch(/"text":null|secret/);
  });

  it('two runs streaming at once: each one\'s text is joined while unsent, though the other\'s pieces come between', async () => {
    const file = join(dir, 'two-runs-text.jsonl');
    const long = 'word '.repeat(300);
    const inspect = await start({ record: file });
    const servers = await Promise.all([1, 2].map(() => mockServer({ steps: [{ content: [text(long)], chunkSize: 4, eventDelayMs: 1 }] })));
    await Promise.all(servers.map((server) => toolRunner(server.client(), { ...baseParams, stream: true }, { onEvent: inspect.onEvent }).runUntilDone()));
    await inspect.close();
    const texts = ofType(lines(file), 'request.text');
    const runs = [...new Set(texts.map((record) => record.run))];
    expect(runs).toHaveLength(2);
    for (const run of runs) {
      const own = texts.filter((record) => record.run === run);
      expect(own.map((record) => record.text).join('')).toBe(long);
      // About one record per batch (a batch waits 50 ms), not one per piece (300 of them).
      expect(own.length).toBeLessThan(30);
    }
  });

  it('bad options fail clearly', async () => {
    await expect(inspector({ port: -1 })).rejects.toThrow(/port must be an integer from 0 to 65535/);
    await expect(inspector({ prot: 80 } as never)).rejects.toThrow(/unknown option 'prot'; the options are port, host, record.*Did you mean 'port'\?$/);
    await expect(inspector({ recrod: 'runs.jsonl' } as never)).rejects.toThrow(/unknown option 'recrod'.*Did you mean 'record'\?$/);
    await expect(inspector({ record: join(dir, 'missing-dir', 'runs.jsonl') })).rejects.toThrow(/cannot record to '.*missing-dir.*'/);
    await expect(inspector({ maxRuns: 0 })).rejects.toThrow(/maxRuns must be a positive integer/);
    await expect(inspector({ host: '0.0.0.0', captureContent: 'false' as never })).rejects.toThrow(/captureContent must be true or false, got "false"/);
    // A misspelt option is named with the one meant (it would have left contents shown, or the default number of runs kept).
    await expect(inspector({ capture_content: false } as never)).rejects.toThrow(/^inspector: unknown option 'capture_content'; the options are port, host, record, captureContent, maxRuns\. Did you mean 'captureContent'\?$/);
    await expect(inspector({ maxRun: 5 } as never)).rejects.toThrow(/unknown option 'maxRun'.*Did you mean 'maxRuns'\?$/);
  });

  it('inspectRecording: bad arguments fail clearly, before any server starts', async () => {
    const file = join(dir, 'options.jsonl');
    writeFileSync(file, '');
    await expect(inspectRecording('')).rejects.toThrow(/^inspectRecording: the first argument must be the path of a recorded file$/);
    await expect(inspectRecording(file, { interval: 100 } as never)).rejects.toThrow(/^inspectRecording: unknown option 'interval'; the options are port, host, pollMs$/);
    await expect(inspectRecording(file, { poll_ms: 100 } as never)).rejects.toThrow(/unknown option 'poll_ms'.*Did you mean 'pollMs'\?$/);
    await expect(inspectRecording(file, { poll: 100 } as never)).rejects.toThrow(/unknown option 'poll'.*Did you mean 'pollMs'\?$/);
    // A poll of 0 ms would read the file without pause.
    await expect(inspectRecording(file, { pollMs: 0 })).rejects.toThrow(RangeError);
    await expect(inspectRecording(file, { pollMs: 0 })).rejects.toThrow(/pollMs must be a number of ms from 1 to 2147483647, got 0/);
    await expect(inspectRecording(file, { pollMs: '100' as never })).rejects.toThrow(TypeError);
    await expect(inspectRecording(file, { port: 70_000 })).rejects.toThrow(/^inspectRecording: port must be an integer from 0 to 65535, got 70000$/);
    await expect(inspectRecording(file, { host: '' })).rejects.toThrow(/host must be a non-empty string/);
  });
});

describe('the token', () => {
  it('every request without it, or with a wrong one, gets 403: the page, the feed, the decide endpoint', async () => {
    const inspect = await start();
    const token = new URL(inspect.url).searchParams.get('token')!;
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect((await fetch(inspect.url)).status).toBe(200);
    // A token one character off (never the token itself, whatever its last character).
    const oneOff = `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`;
    for (const wrong of [undefined, '', 'x', oneOff, `${token}A`]) {
      for (const path of ['', 'api/events', 'favicon.ico', 'api/nothing']) expect((await fetch(withToken(inspect.url, wrong, path))).status).toBe(403);
      expect((await decide(withToken(inspect.url, wrong), { run: 'r', id: 'i', decision: 'allow' })).status).toBe(403);
    }
    // Another inspector's token opens nothing here.
    const other = await start();
    expect((await fetch(withToken(inspect.url, new URL(other.url).searchParams.get('token')!))).status).toBe(403);
  });

  it('a request line no URL can be read from gets 403, and the process that hosts the inspector goes on', async () => {
    const inspect = await start();
    const { port } = new URL(inspect.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = createConnection({ host: '127.0.0.1', port: Number(port) }, () => socket.end('GET http://[::1/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
      let got = '';
      socket.on('data', (chunk) => (got += chunk));
      socket.on('end', () => resolve(got));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 403 /);
    expect((await fetch(inspect.url)).status).toBe(200);
  });

  it('the page is served with a content security policy and no referrer; it loads nothing from elsewhere', async () => {
    const inspect = await start();
    const response = await fetch(inspect.url);
    expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'nonce-[^']+'/);
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await response.text();
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+stylesheet|https?:\/\//);
  });
});

describe('approvals decided from the page', () => {
  it('approve waits with no page open; the first decision counts; a cross-origin post is refused', async () => {
    const server = await mockServer(inspectedSteps());
    const inspect = await start();
    const log: string[] = [];
    const run = toolRunner(server.client(), params(inspectedTools(log), false), { onEvent: inspect.onEvent, approve: inspect.approve }).runUntilDone();
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.waiting'));
    await sleep(100);
    expect(log.filter((entry) => entry.startsWith('send_email'))).toEqual([]);
    const waiting = ofType(fed, 'approval.waiting')[0]!;
    expect(waiting).toMatchObject({ id: 'toolu_email', name: 'send_email', input: { to: 'ann@example.com', body: 'Sunny on Monday!' } });
    const body = { run: waiting.run, id: waiting.id, decision: 'allow', input: { to: 'ann@example.com', body: 'Edited on the page' } };
    expect((await decide(inspect.url, body, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await decide(inspect.url, body, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await decide(inspect.url, { ...body, id: 'toolu_other' })).status).toBe(404);
    expect((await decide(inspect.url, body, { origin: new URL(inspect.url).origin })).status).toBe(200);
    const second = await decide(inspect.url, { ...body, decision: 'deny' });
    expect(second.status).toBe(409);
    expect(await second.json()).toEqual({ decided: false, reason: 'someone decided it already (allowed)' });
    await run;
    expect(log).toContain('send_email ann@example.com: Edited on the page');
    const after = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'run.end'));
    // The edited input is recorded: a recorded file read later says what was sent.
    expect(ofType(after, 'approval.decided')).toEqual([expect.objectContaining({ id: 'toolu_email', decision: 'allow', edited: true, input: body.input })]);
  });

  it("the call is shown as the model sent it, not as the schema's transforms made it: an edit starts from it, and a value JSON cannot carry (a BigInt) stops nothing", async () => {
    const file = join(dir, 'transformed.jsonl');
    const paid: unknown[] = [];
    const pay = tool({
      name: 'pay',
      inputSchema: z.object({ to: z.string(), amount: z.string().transform((value) => BigInt(value)) }),
      needsApproval: true,
      run: ({ to, amount }) => (paid.push([to, amount]), 'paid'),
    });
    const server = await mockServer([{ content: [toolUse('pay', { to: 'ann', amount: '12' }, 'toolu_pay')] }, { content: [text('ok')] }]);
    const inspect = await start({ record: file });
    const run = toolRunner(server.client(), { ...baseParams, tools: [pay] }, { onEvent: inspect.onEvent, approve: inspect.approve }).runUntilDone();
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.waiting'));
    // Past a batch's 50 ms: the recorded file has been written (with the transformed input, this threw in a timer).
    await sleep(120);
    const waiting = ofType(fed, 'approval.waiting')[0]!;
    expect(waiting.input).toEqual({ to: 'ann', amount: '12' });
    expect(ofType(lines(file), 'approval.waiting')[0]!.input).toEqual({ to: 'ann', amount: '12' });
    // The editor's text, one field changed: valid as the model's input is.
    const edited = { ...(waiting.input as object), to: 'bob' };
    expect((await decide(inspect.url, { run: waiting.run, id: waiting.id, decision: 'allow', input: edited })).status).toBe(200);
    await run;
    expect(paid).toEqual([['bob', 12n]]);
    expect(toolResultsOf(server.requests[1]!)).toEqual(['paid']);
  });

  it("an input an onToolCall hook gave in place of the model's is the one shown, and the one an edit starts from", async () => {
    const paid: unknown[] = [];
    const pay = tool({ name: 'pay', inputSchema: z.object({ to: z.string(), cents: z.number() }), needsApproval: true, run: (input) => (paid.push(input), 'paid') });
    const server = await mockServer([{ content: [toolUse('pay', { to: 'ann', cents: 90_000 }, 'toolu_pay')] }, { content: [text('ok')] }]);
    const inspect = await start();
    const hooks = { onToolCall: () => ({ input: { to: 'ann', cents: 100 } }) };
    const run = toolRunner(server.client(), { ...baseParams, tools: [pay] }, { onEvent: inspect.onEvent, approve: inspect.approve, hooks }).runUntilDone();
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.waiting'));
    const waiting = ofType(fed, 'approval.waiting')[0]!;
    expect(waiting.input).toEqual({ to: 'ann', cents: 100 });
    expect((await decide(inspect.url, { run: waiting.run, id: waiting.id, decision: 'allow' })).status).toBe(200);
    await run;
    expect(paid).toEqual([{ to: 'ann', cents: 100 }]);
  });

  it("a run stopped by its own AbortSignal.timeout() while a call waits: recorded as aborted (timed out is the call's own time limit)", async () => {
    const server = await mockServer(inspectedSteps());
    const inspect = await start();
    const log: string[] = [];
    const runner = toolRunner(server.client(), params(inspectedTools(log), false), { onEvent: inspect.onEvent, approve: inspect.approve, signal: AbortSignal.timeout(300) });
    await runner.runUntilDone().catch(() => {});
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.decided'));
    expect(ofType(fed, 'approval.decided')).toEqual([expect.objectContaining({ id: 'toolu_email', decision: 'aborted' })]);
    expect(runner.stoppedBy).toBe('abort');
    expect(log.filter((entry) => entry.startsWith('send_email'))).toEqual([]);
  });

  it("the run's signal ends the wait: the call is answered as aborted and never runs", async () => {
    const server = await mockServer(inspectedSteps());
    const inspect = await start();
    const log: string[] = [];
    const controller = new AbortController();
    const runner = toolRunner(server.client(), params(inspectedTools(log), false), { onEvent: inspect.onEvent, approve: inspect.approve, signal: controller.signal });
    const results: unknown[] = [];
    const done = (async () => {
      for await (const _ of runner) results.push(await runner.generateToolResponse());
    })().catch((error: unknown) => error);
    await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.waiting'));
    controller.abort();
    await done;
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.decided'));
    expect(ofType(fed, 'approval.decided')[0]).toMatchObject({ id: 'toolu_email', decision: 'aborted' });
    expect(log.filter((entry) => entry.startsWith('send_email'))).toEqual([]);
    expect(JSON.stringify(results)).toContain("the call to 'send_email' was aborted");
  });

  it("the tool's timeout ends the wait: the decision is recorded as timed out, not as an abort", async () => {
    const server = await mockServer(inspectedSteps());
    const inspect = await start();
    const log: string[] = [];
    const runner = toolRunner(server.client(), params(inspectedTools(log), false), { onEvent: inspect.onEvent, approve: inspect.approve, toolTimeoutMs: 300 });
    await runner;
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'run.end'));
    expect(ofType(fed, 'approval.decided')).toEqual([expect.objectContaining({ id: 'toolu_email', decision: 'timedOut' })]);
    expect(log.filter((entry) => entry.startsWith('send_email'))).toEqual([]);
    expect(JSON.stringify(wire(server.requests.at(-1)!).messages)).toContain("the call to 'send_email' timed out after 300 ms waiting for approval");
  });

  it('close() denies the calls still waiting: the run goes on and ends', async () => {
    const server = await mockServer(inspectedSteps());
    const inspect = await inspector();
    const log: string[] = [];
    const run = toolRunner(server.client(), params(inspectedTools(log), false), { onEvent: inspect.onEvent, approve: inspect.approve }).runUntilDone();
    await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.waiting'));
    await inspect.close();
    await run;
    expect(server.requests[2]!.messages.at(-1)).toMatchObject({ content: [expect.objectContaining({ is_error: true, content: expect.stringContaining('inspector was closed') })] });
    expect(log.filter((entry) => entry.startsWith('send_email'))).toEqual([]);
  });

  it('after close() a call asked about is denied at once (no run hangs); the denied calls end in the recorded file', async () => {
    const file = join(dir, 'closed.jsonl');
    const steps = inspectedSteps();
    const server = await mockServer([steps[0]!, steps[1]!, { content: [toolUse('send_email', { to: 'bob@example.com', body: 'Again' }, 'toolu_again')] }, steps[2]!]);
    const inspect = await inspector({ record: file });
    const log: string[] = [];
    const run = toolRunner(server.client(), params(inspectedTools(log), false), { onEvent: inspect.onEvent, approve: inspect.approve }).runUntilDone();
    await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.waiting'));
    await inspect.close();
    await run;
    expect(server.requests[3]!.messages.at(-1)).toMatchObject({ content: [expect.objectContaining({ tool_use_id: 'toolu_again', is_error: true, content: expect.stringContaining('inspector was closed') })] });
    expect(log.filter((entry) => entry.startsWith('send_email'))).toEqual([]);
    const recorded = lines(file);
    expect(ofType(recorded, 'approval.decided').map((record) => record.decision)).toEqual(['closed']);
    expect(ofType(recorded, 'tool.end').find((record) => record.id === 'toolu_email')).toEqual(expect.objectContaining({ isError: true }));
  });

  it('approvals asked without onEvent, many of them: maxRuns bounds what is kept of them (a run of their own per hundred), and only the last 10,000 decided are told apart from unknown ones', async () => {
    const inspect = await start({ maxRuns: 2 });
    const aborted = AbortSignal.abort();
    const ask = (n: number) => {
      const toolUse = { type: 'tool_use' as const, id: `toolu_${n}`, name: 'pay', input: {} };
      return inspect.approve({ name: 'pay', input: {}, toolUse } as never, { signal: aborted } as never);
    };
    for (let n = 0; n < 10_050; n++) await ask(n);
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.decided' && record.id === 'toolu_10049'));
    const runs = new Set(fed.map((record) => record.run));
    expect(runs.size).toBeLessThanOrEqual(3);
    expect(ofType(fed, 'approval.waiting').length).toBeLessThanOrEqual(300);
    const runOf = (id: string) => ofType(fed, 'approval.waiting').find((record) => record.id === id)!.run;
    expect((await decide(inspect.url, { run: runOf('toolu_10049'), id: 'toolu_10049', decision: 'allow' })).status).toBe(409);
    // The first run of them is gone from the page, and its decisions from memory.
    expect((await decide(inspect.url, { run: `${runOf('toolu_10049').split('-')[0]}-1`, id: 'toolu_0', decision: 'allow' })).status).toBe(404);
  });

  it('approvals asked without onEvent: a run of them with a call still waiting is not ended (nor dropped past maxRuns), however many are asked after it', async () => {
    const inspect = await start({ maxRuns: 1 });
    const ask = (n: number, signal: AbortSignal) => {
      const toolUse = { type: 'tool_use' as const, id: `toolu_${n}`, name: 'pay', input: {} };
      return inspect.approve({ name: 'pay', input: {}, toolUse } as never, { signal } as never);
    };
    const waiting = ask(0, new AbortController().signal);
    for (let n = 1; n <= 250; n++) await ask(n, AbortSignal.abort());
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.decided' && record.id === 'toolu_250'));
    const first = ofType(fed, 'approval.waiting').find((record) => record.id === 'toolu_0');
    expect(first).toBeDefined();
    expect(ofType(fed, 'run.end').some((record) => record.run === first!.run)).toBe(false);
    expect((await decide(inspect.url, { run: first!.run, id: 'toolu_0', decision: 'allow' })).status).toBe(200);
    expect(await waiting).toEqual({ decision: 'allow' });
  });

  it("a sub-agent's call asked of the page without onEvent: its waiting record names the agent and the call that started it", async () => {
    const inspect = await start();
    const ask = (callPath: string[]) => {
      const toolUse = { type: 'tool_use' as const, id: 'toolu_pay', name: 'pay', input: {} };
      return inspect.approve({ name: 'pay', input: {}, toolUse, path: ['clerk'], callPath } as never, { signal: AbortSignal.abort() } as never);
    };
    await ask(['toolu_clerk']);
    // A callPath that does not match the path is not shown as one.
    await ask(['toolu_a', 'toolu_b']);
    const fed = await readFeed(inspect.url, (records) => ofType(records, 'approval.decided').length === 2);
    expect(ofType(fed, 'approval.waiting').map(({ path, callPath }) => ({ path, callPath }))).toEqual([
      { path: ['clerk'], callPath: ['toolu_clerk'] },
      { path: ['clerk'], callPath: undefined },
    ]);
  });

  it('a decision over 1 MB is refused, and the connection closes with the answer: the next request goes on a new one', async () => {
    const inspect = await start();
    const endpoint = new URL('api/decide', inspect.url);
    endpoint.search = new URL(inspect.url).search;
    const big = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ run: 'r', id: 'i', decision: 'allow', input: 'x'.repeat(2_000_000) }) });
    expect(big.status).toBe(400);
    expect(big.headers.get('connection')).toBe('close');
    expect(await big.text()).toBe('The decision is too large.');
    for (let i = 0; i < 3; i++) expect((await fetch(inspect.url)).status).toBe(200);
  });

  it('an edited input nested deeper than JSON can write back is refused (400), and the process that hosts the inspector goes on', async () => {
    const server = await mockServer([{ content: [toolUse('send', { to: 'ann' }, 'toolu_1')] }, { content: [text('done')] }]);
    const inspect = await start();
    const run = toolRunner(server.client(), { ...baseParams, tools: [sendTool()] }, { onEvent: inspect.onEvent, approve: inspect.approve }).runUntilDone();
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.waiting'));
    const waiting = { run: ofType(fed, 'approval.waiting')[0]!.run, id: 'toolu_1' };
    // 200 kB of brackets: JSON.parse reads it, JSON.stringify overflows the stack. It was taken as the call's edited input, and
    // the record of the decision threw in the batch timer: the process ended.
    const depth = 100_000;
    const endpoint = new URL('api/decide', inspect.url);
    endpoint.search = new URL(inspect.url).search;
    const body = `{"run":${JSON.stringify(waiting.run)},"id":"toolu_1","decision":"allow","input":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const deep = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    expect(deep.status).toBe(400);
    expect(await deep.text()).toMatch(/^The edited input cannot be recorded/);
    // The call still waits: a decision of an input that can be written is taken.
    expect((await decide(inspect.url, { ...waiting, decision: 'allow', input: { to: 'bob' } })).status).toBe(200);
    expect(textOf(await run)).toBe('done');
    const after = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'run.end'));
    expect(ofType(after, 'approval.decided')).toEqual([expect.objectContaining({ decision: 'allow', edited: true, input: { to: 'bob' } })]);
  });

  it('a decision posted once the wait ended without one is told how it ended (the run aborted), not that someone decided', async () => {
    const server = await mockServer([{ content: [toolUse('send', { to: 'ann' }, 'toolu_1')] }, { content: [text('done')] }]);
    const inspect = await start();
    const controller = new AbortController();
    const run = toolRunner(server.client(), { ...baseParams, tools: [sendTool()] }, { onEvent: inspect.onEvent, approve: inspect.approve, signal: controller.signal }).runUntilDone().catch(() => undefined);
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.waiting'));
    controller.abort();
    await run;
    const late = await decide(inspect.url, { run: ofType(fed, 'approval.waiting')[0]!.run, id: 'toolu_1', decision: 'allow' });
    expect(late.status).toBe(409);
    expect(await late.json()).toEqual({ decided: false, reason: 'its wait ended: the run was aborted' });
  });

  it.each([
    ['both watched (onEvent)', true],
    ['one watched and one not: the unwatched one waits in a run of approvals of its own', false],
  ])('two runs resumed from one snapshot, both waiting on one call id, %s: each waits in its own run, and each decision reaches its own', async (_label, bothWatched) => {
    const stopped = toolRunner((await mockServer([{ content: [toolUse('send', { to: 'ann' }, 'toolu_same')] }])).client(), { ...baseParams, tools: [sendTool()] });
    await stopped;
    const snapshot = JSON.parse(JSON.stringify(stopped.toJSON()));
    const inspect = await start();
    const servers = await Promise.all(['A', 'B'].map((name) => mockServer([{ content: [text(`done ${name}`)] }])));
    const watched = { onEvent: inspect.onEvent, approve: inspect.approve };
    const runs = servers.map((server, i) => resumeToolRunner(server.client(), snapshot, { tools: [sendTool()], options: i === 0 || bothWatched ? watched : { approve: inspect.approve } }).runUntilDone());
    const fed = await readFeed(inspect.url, (records) => ofType(records, 'approval.waiting').length === 2);
    const waits = ofType(fed, 'approval.waiting');
    expect(new Set(waits.map((waiting) => waiting.run)).size).toBe(2);
    for (const waiting of waits) expect((await decide(inspect.url, { run: waiting.run, id: 'toolu_same', decision: 'allow' })).status).toBe(200);
    expect((await Promise.all(runs)).map(textOf)).toEqual(['done A', 'done B']);
  });

  it('a call asked about after its run ended (generateToolResponse(), then break) waits in that run, not a run of its own', async () => {
    const server = await mockServer([{ content: [toolUse('send', { to: 'ann' }, 'toolu_1')] }]);
    const inspect = await start();
    const runner = toolRunner(server.client(), { ...baseParams, tools: [sendTool()] }, { onEvent: inspect.onEvent, approve: inspect.approve });
    for await (const _message of runner) {
      void runner.generateToolResponse();
      break;
    }
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.waiting'));
    expect(ofType(fed, 'run.start')).toHaveLength(1);
    expect(ofType(fed, 'approval.waiting')[0]!.run).toBe(ofType(fed, 'run.start')[0]!.run);
  });

  it('two runners without onEvent asking about calls of one id: each waits where a page can decide it, and both run', async () => {
    const inspect = await start();
    const servers = await Promise.all(['A', 'B'].map((name) => mockServer([{ content: [toolUse('send', { to: name }, 'toolu_same')] }, { content: [text(`done ${name}`)] }])));
    const runs = servers.map((server) => toolRunner(server.client(), { ...baseParams, tools: [sendTool()] }, { approve: inspect.approve }).runUntilDone());
    const fed = await readFeed(inspect.url, (records) => ofType(records, 'approval.waiting').length === 2);
    const waits = ofType(fed, 'approval.waiting');
    expect(new Set(waits.map((waiting) => waiting.run)).size).toBe(2);
    for (const waiting of waits) expect((await decide(inspect.url, { run: waiting.run, id: 'toolu_same', decision: 'allow' })).status).toBe(200);
    expect((await Promise.all(runs)).map(textOf)).toEqual(['done A', 'done B']);
  });

  it('an approve without onEvent still shows its calls (in a run of their own)', async () => {
    const server = await mockServer(inspectedSteps());
    const inspect = await start();
    const run = toolRunner(server.client(), params(inspectedTools(), false), { approve: inspect.approve }).runUntilDone();
    const fed = await readFeed(inspect.url, (records) => records.some((record) => record.type === 'approval.waiting'));
    const waiting = ofType(fed, 'approval.waiting')[0]!;
    expect(ofType(fed, 'run.start')[0]).toMatchObject({ run: waiting.run, model: 'approvals asked without onEvent' });
    expect((await decide(inspect.url, { run: waiting.run, id: waiting.id, decision: 'deny', reason: 'not today' })).status).toBe(200);
    await run;
    expect(JSON.stringify(server.requests[2]!.messages.at(-1))).toContain('denied by the user: not today');
  });
});

/** The page's feed as one text, to its end (the server ends it on a reset); `connected` once the server answered. */
/** A page's feed over a socket of its own, read only while the test lets it (`socket.pause()`): what came, and when the server let it go. */
function rawFeed(url: string): { socket: Socket; chunks: Buffer[]; ended: Promise<void> } {
  const { port, search } = new URL(url);
  const socket = createConnection({ host: '127.0.0.1', port: Number(port) }, () => socket.write(`GET /api/events${search} HTTP/1.0\r\nHost: 127.0.0.1:${port}\r\n\r\n`));
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, chunks, ended };
}

function feed(url: string, headers: Record<string, string> = {}): { connected: Promise<void>; text: Promise<string> } {
  const address = new URL('api/events', url);
  address.search = new URL(url).search;
  const response = fetch(address, { headers, signal: AbortSignal.timeout(10_000) });
  return { connected: response.then(() => undefined), text: response.then((answer) => answer.text()) };
}

describe('npx tool-runner inspect FILE', () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill();
  });
  /** The CLI as a user runs it; resolves to its first line of output (and what it wrote to stderr, as it grows). */
  function cli(args: string[]): Promise<{ line: string; child: ChildProcess; stderr: () => string }> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    return new Promise((resolve, reject) => {
      let out = '';
      let err = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve({ line: out.split('\n')[0]!, child, stderr: () => err });
      });
      child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
      child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}${err}`)));
    });
  }

  it('prints the page url on one line and serves the recorded runs, and the lines added since, until stopped', async () => {
    const file = join(dir, 'cli.jsonl');
    const server = await mockServer({ steps: [...inspectedSteps(), { content: [text('second run')] }] });
    const inspect = await inspector({ record: file });
    await toolRunner(server.client(), params(inspectedTools()), { onEvent: inspect.onEvent, approve: () => ({ decision: 'allow' }) });
    await inspect.close();
    const recorded = lines(file);
    writeFileSync(file, `${readFileSync(file, 'utf8')}not a record\n`);
    const { line, child } = await cli(['inspect', file]);
    expect(line).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{32,}$/);
    expect((await fetch(withToken(line, undefined))).status).toBe(403);
    expect((await fetch(line)).status).toBe(200);
    const fed = await readFeed(line, (records) => records.some((record) => record.type === 'run.end'));
    expect(fed).toEqual(recorded);
    // A run recorded while the page is served shows up.
    const more = await inspector({ record: file });
    await toolRunner(server.client(), baseParams, { onEvent: more.onEvent });
    await more.close();
    await readFeed(line, (records) => ofType(records, 'run.end').length === 2);
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
  });

  it('a file recorded again while served is read from its start; a record after a cut-off line starts a line of its own', async () => {
    const file = join(dir, 'again.jsonl');
    const server = await mockServer({ steps: [{ content: [text('first run')] }, { content: [text('second run')] }] });
    let inspect = await inspector({ record: file });
    await toolRunner(server.client(), baseParams, { onEvent: inspect.onEvent });
    await inspect.close();
    const { line, child } = await cli(['inspect', file]);
    const before = await readFeed(line, (records) => ofType(records, 'run.end').length === 1);
    // Recorded again, by a writer killed in the middle of a line before: a new file at the path.
    rmSync(file);
    writeFileSync(file, '{"run":"cut-off","ti');
    inspect = await inspector({ record: file });
    await toolRunner(server.client(), baseParams, { onEvent: inspect.onEvent });
    await inspect.close();
    expect(readFileSync(file, 'utf8').split('\n')[1]).toMatch(/^\{"run":"[^"]+","time":\d+,"type":"run.start"/);
    // The page shows the file as it is now: the run recorded again, not the one before it.
    let fed: AnyRecord[] = [];
    for (let tries = 0; tries < 100; tries++) {
      fed = await readFeed(line, (records) => ofType(records, 'run.end').length > 0);
      if (fed[0]!.run !== before[0]!.run) break;
      await sleep(50);
    }
    expect(ofType(fed, 'run.start')).toHaveLength(1);
    expect(ofType(fed, 'run.start')[0]!.run).not.toBe(before[0]!.run);
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
  });

  it('a file recorded again, or cut shorter, while served: the page shows the file as it is now (no run twice, none gone from it), and open pages start over', async () => {
    const file = join(dir, 'replaced.jsonl');
    const record = (run: string, time: number, type: string, extra: object = {}) => JSON.stringify({ run, time, type, ...extra });
    const first = [record('old-1', 1, 'run.start'), record('old-1', 2, 'run.end', { state: 'finished' }), 'not a record', record('old-2', 3, 'run.start')];
    writeFileSync(file, `${first.join('\n')}\n`);
    const page = await inspectRecording(file, { pollMs: 20 });
    try {
      const seen = await readFeed(page.url, (records) => records.length === 3);
      expect(page.skippedLines).toBe(1);
      // A page that keeps its feed open, and one that saw the old records and reconnects later.
      const openFeed = feed(page.url);
      await openFeed.connected;
      // Recorded again at the path: another run, no line skipped.
      writeFileSync(file, `${[record('new-1', 10, 'run.start'), record('new-1', 11, 'run.end', { state: 'finished' })].join('\n')}\n`);
      expect(await openFeed.text).toMatch(/event: reset\n/);
      const fed = await readFeed(page.url, (records) => records.length === 2);
      expect(fed.map((fedRecord) => `${fedRecord.run} ${fedRecord.type}`)).toEqual(['new-1 run.start', 'new-1 run.end']);
      expect(page.skippedLines).toBe(0);
      const reconnected = await feed(page.url, { 'last-event-id': String(seen.length) }).text;
      expect(reconnected).toMatch(/event: reset\n/);
      expect(reconnected).not.toMatch(/old-1/);

      // The same file cut shorter (its first line kept): read again from its start, nothing twice.
      writeFileSync(file, `${record('new-1', 10, 'run.start')}\n`);
      const served = () => readFeed(page.url, (records) => records.length > 0);
      for (let tries = 0; (await served()).length !== 1 && tries < 100; tries++) await sleep(20);
      expect((await served()).map((fedRecord) => `${fedRecord.run} ${fedRecord.type}`)).toEqual(['new-1 run.start']);
    } finally {
      await page.close();
    }
  });

  it('a missing file or bad arguments fail with a message', async () => {
    await expect(cli(['inspect', join(dir, 'nope.jsonl')])).rejects.toThrow(/^exited 1: tool-runner inspect: cannot read '.*nope.jsonl': ENOENT/);
    // A directory, or a pipe (`<(zcat runs.jsonl.gz)`: its size says 0, and opening it waits for a writer), is said so: not served empty.
    await expect(cli(['inspect', dir])).rejects.toThrow(/^exited 1: tool-runner inspect: cannot read '.*': not a regular file \(a directory, a pipe or a device\)/);
    const pipe = join(dir, 'piped.jsonl');
    execFileSync('mkfifo', [pipe]);
    await expect(inspectRecording(pipe)).rejects.toThrow(/cannot read '.*piped\.jsonl': not a regular file/);
    await expect(cli(['inspect'])).rejects.toThrow(/name the recorded file/);
    // The flag is named, not the function behind the command.
    await expect(cli(['inspect', 'a', '--host', ''])).rejects.toThrow(/^exited 1: tool-runner inspect: --host needs a value\nUsage:/);
    await expect(cli(['inspect', join(dir, 'nope.jsonl'), '--host', 'no-such-host.invalid'])).rejects.toThrow(/tool-runner inspect: cannot read/);
    const file = join(dir, 'host.jsonl');
    writeFileSync(file, `${JSON.stringify({ run: 'r-1', time: 1, type: 'run.start' })}\n`);
    await expect(cli(['inspect', file, '--host', 'no-such-host.invalid'])).rejects.toThrow(/^exited 1: tool-runner inspect: cannot listen on no-such-host\.invalid port 0: getaddrinfo/);
    // Nothing asked: the usage, as an error (stderr, exit 1).
    const bare = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    bare.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    bare.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    expect(await new Promise((resolve) => bare.once('exit', resolve))).toBe(1);
    expect(out).toBe('');
    expect(err).toMatch(/^Usage: tool-runner inspect FILE/);
    await expect(cli(['inspect', 'a', '--port', 'x'])).rejects.toThrow(/--port must be a number/);
    // `--flag=value` reads as `--flag value`.
    await expect(cli(['inspect', 'a', '--port=x'])).rejects.toThrow(/--port must be a number from 0 to 65535, got 'x'/);
    await expect(cli(['inspect', 'a', '--host='])).rejects.toThrow(/--host needs a value/);
    await expect(cli(['serve'])).rejects.toThrow(/unknown command 'serve'/);
    // --help after the command (and the file) prints the usage.
    expect((await cli(['inspect', 'runs.jsonl', '--help'])).line).toMatch(/^Usage: tool-runner inspect FILE/);
  });

  it('a misspelt option or command says what was meant, with the usage', async () => {
    const said = (args: string[]) => cli(args).then(() => 'served', (error: Error) => error.message);
    const cases: Array<[string[], RegExp]> = [
      // Each said only "unknown option '--prot'": the user was left to find the slip in the usage.
      [['inspect', 'runs.jsonl', '--prot', '8080'], /^exited 1: tool-runner inspect: unknown option '--prot'\. Did you mean '--port'\?\nUsage: tool-runner inspect FILE/],
      [['inspect', 'runs.jsonl', '--prot=8080'], /unknown option '--prot=8080'\. Did you mean '--port'\?\nUsage:/],
      [['inspect', 'runs.jsonl', '-p', '80'], /unknown option '-p'\. Did you mean '--port'\?/],
      [['inspct', 'runs.jsonl'], /^exited 1: tool-runner: unknown command 'inspct'\. Did you mean 'inspect'\?\nUsage:/],
      [['--verison'], /unknown option '--verison'\. Did you mean '--version'\?/],
      // The command left out: the file, or an option of inspect, first.
      [['runs.jsonl'], /unknown command 'runs\.jsonl'\. To serve a recorded file: tool-runner inspect runs\.jsonl\nUsage:/],
      // A file named after the command is still a file: "Did you mean 'inspect'?" sent the user to type the command alone.
      [['inspector.jsonl'], /unknown command 'inspector\.jsonl'\. To serve a recorded file: tool-runner inspect inspector\.jsonl\nUsage:/],
      [['logs/inspect.jsonl'], /unknown command 'logs\/inspect\.jsonl'\. To serve a recorded file: tool-runner inspect logs\/inspect\.jsonl\nUsage:/],
      [['--port', '8080'], /unknown option '--port'\. --port is an option of inspect, after the command: tool-runner inspect FILE --port/],
      // Nothing near: no guess.
      [['inspect', 'runs.jsonl', '--verbose'], /unknown option '--verbose'\nUsage:/],
    ];
    // (At once: each is a process of its own.)
    const answers = await Promise.all(cases.map(([args]) => said(args)));
    cases.forEach(([, expected], i) => expect(answers[i]).toMatch(expected));
  }, 60_000);

  it('says which lines are skipped as the file grows, and when its last line stays unfinished', async () => {
    const file = join(dir, 'grows.jsonl');
    writeFileSync(file, `${JSON.stringify({ run: 'r-1', time: 1, type: 'run.start' })}\nnot a record\n{"run":"r-1","ti`);
    const { child, stderr } = await cli(['inspect', file]);
    const waitFor = async (pattern: RegExp) => {
      for (let tries = 0; !pattern.test(stderr()) && tries < 100; tries++) await sleep(50);
      expect(stderr()).toMatch(pattern);
    };
    await waitFor(/1 line\(s\) of .*grows\.jsonl are not records and were skipped\n/);
    await waitFor(/the last line of .*grows\.jsonl is not finished/);
    // The cut-off line ended as no record, and another line that is none: three skipped now.
    writeFileSync(file, `${readFileSync(file, 'utf8')}\nnor this\n`);
    await waitFor(/3 line\(s\) of .*grows\.jsonl are not records and were skipped\n/);
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
  });

  it('blank space after the last newline is no unfinished line; the start of a record is', async () => {
    const record = JSON.stringify({ run: 'r-1', time: 1, type: 'run.start' });
    for (const [end, unfinished] of [['  \t\r', false], ['', false], [' {"run":"r-1"', true]] as const) {
      const file = join(dir, `blank-end-${unfinished}-${end.length}.jsonl`);
      writeFileSync(file, `${record}\n${end}`);
      const page = await inspectRecording(file);
      try {
        expect(page.unfinishedLine).toBe(unfinished);
      } finally {
        await page.close();
      }
    }
  });

  it('a page over a file recorded without contents says so (capture: false); over one with contents, capture: true', async () => {
    const settingsOf = async (url: string) => {
      const feed = new URL('api/events', url);
      feed.search = new URL(url).search;
      const controller = new AbortController();
      const response = await fetch(feed, { signal: controller.signal });
      const reader = response.body!.getReader();
      let buffer = '';
      while (!buffer.includes('\n\n')) buffer += new TextDecoder().decode((await reader.read()).value);
      controller.abort();
      return JSON.parse(/event: settings\ndata: (.*)/.exec(buffer)![1]!) as { capture: boolean };
    };
    for (const captureContent of [false, true]) {
      const file = join(dir, `capture-${captureContent}.jsonl`);
      const server = await mockServer([{ content: [text('hi')] }]);
      const inspect = await start({ record: file, captureContent });
      await toolRunner(server.client(), baseParams, { onEvent: inspect.onEvent });
      await inspect.close();
      const page = await inspectRecording(file);
      try {
        expect((await settingsOf(page.url)).capture).toBe(captureContent);
      } finally {
        await page.close();
      }
    }
  });

  it('several inspectors recording to one file at once: every line whole, batches past 512 KiB too', async () => {
    const file = join(dir, 'shared.jsonl');
    const server = await mockServer(Array.from({ length: 18 }, () => ({ content: [text('Done.')] })));
    const long = 'x'.repeat(90_000);
    // Six runs at once in each inspector: a batch of six long prompts (more than 512 KiB of lines) at a time.
    const inspectors = await Promise.all([1, 2, 3].map(() => inspector({ record: file })));
    await Promise.all(
      inspectors.flatMap((inspect, i) =>
        [1, 2, 3, 4, 5, 6].map((n) => toolRunner(server.client(), { ...baseParams, messages: [{ role: 'user', content: `${i}.${n} ${long}` }] }, { onEvent: inspect.onEvent })),
      ),
    );
    await Promise.all(inspectors.map((inspect) => inspect.close()));
    const recorded = lines(file);
    expect(ofType(recorded, 'run.start')).toHaveLength(18);
    expect(ofType(recorded, 'run.end')).toHaveLength(18);
  });

  it('a last line without its newline is read when it is a whole record; a recorded file of any size is read, a chunk at a time', async () => {
    const file = join(dir, 'joined.jsonl');
    const record = (time: number, type: string, extra: object = {}) => JSON.stringify({ run: 'r-1', time, type, ...extra });
    writeFileSync(file, [record(1, 'run.start', { model: 'm' }), record(2, 'run.end', { state: 'finished' })].join('\n'));
    let page = await inspectRecording(file);
    try {
      expect((await readFeed(page.url, (records) => records.length === 2)).map((fed) => fed.type)).toEqual(['run.start', 'run.end']);
      expect(page.skippedLines).toBe(0);
    } finally {
      await page.close();
    }
    // More than one read's chunk (16 MiB), records across the chunks' edges.
    const text = 'y'.repeat(99_000);
    const many = Array.from({ length: 180 }, (_, i) => record(i + 1, 'request.text', { requestId: i, text }));
    writeFileSync(file, `${[record(0, 'run.start'), ...many, record(999, 'run.end', { state: 'finished' })].join('\n')}\n`);
    page = await inspectRecording(file);
    try {
      const fed = await readFeed(page.url, (records) => records.some((fedRecord) => fedRecord.type === 'run.end'));
      expect(fed).toHaveLength(182);
      expect(page.skippedLines).toBe(0);
    } finally {
      await page.close();
    }
  });

  it("a page opened on a large recorded file gets its records in messages of bounded size (one of hundreds of MB could not be made: the process ended)", async () => {
    const file = join(dir, 'large.jsonl');
    const text = 'y'.repeat(99_000);
    const many = Array.from({ length: 400 }, (_, i) => JSON.stringify({ run: 'r-1', time: i + 1, type: 'request.text', requestId: i, text }));
    writeFileSync(file, `${many.join('\n')}\n`);
    const page = await inspectRecording(file);
    try {
      // The feed's messages as they come, read raw: their sizes and their records.
      const response = await fetch(new URL(`api/events${new URL(page.url).search}`, page.url));
      const sizes: number[] = [];
      let records = 0;
      for await (const message of sseMessages(response.body as unknown as AsyncIterable<Uint8Array>)) {
        const data = message.split('\n').find((line) => line.startsWith('data: ['));
        if (data === undefined) continue;
        sizes.push(data.length);
        records += (JSON.parse(data.slice(6)) as unknown[]).length;
        if (records >= many.length) break;
      }
      expect(records).toBe(many.length);
      expect(sizes.length).toBeGreaterThan(1);
      for (const size of sizes) expect(size).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await page.close();
    }
  }, 30_000);

  it('a byte order mark at the file\'s start (an editor\'s) leaves its first record whole', async () => {
    const file = join(dir, 'bom.jsonl');
    const records = [{ run: 'r-1', time: 1, type: 'run.start', model: 'm' }, { run: 'r-1', time: 2, type: 'run.end', state: 'finished' }];
    writeFileSync(file, `\uFEFF${records.map((record) => JSON.stringify(record)).join('\n')}\n`);
    const page = await inspectRecording(file);
    try {
      expect(await readFeed(page.url, (fed) => fed.length === 2)).toEqual(records);
      expect(page.skippedLines).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('inspectRecording serves the same page from code', async () => {
    const file = join(dir, 'api.jsonl');
    writeFileSync(file, `${JSON.stringify({ run: 'r-1', time: 1, type: 'run.start', model: 'm' })}\n{"half": `);
    const page = await inspectRecording(file, { pollMs: 20 });
    try {
      const fed = await readFeed(page.url, (records) => records.length === 1);
      expect(fed).toEqual([{ run: 'r-1', time: 1, type: 'run.start', model: 'm' }]);
      writeFileSync(file, `${readFileSync(file, 'utf8')}"line"}\n${JSON.stringify({ run: 'r-1', time: 2, type: 'run.end', state: 'finished' })}\n`);
      const later = await readFeed(page.url, (records) => records.length === 2);
      expect(later[1]).toMatchObject({ type: 'run.end' });
      expect(page.skippedLines).toBe(1);
      expect((await decide(page.url, { run: 'r-1', id: 'x', decision: 'allow' })).status).toBe(409);
    } finally {
      await page.close();
    }
  });

  it('a line nested deeper than JSON.stringify can write is served with that field in words, read at the start or as the file grows; the command goes on', async () => {
    const file = join(dir, 'deep.jsonl');
    const deep = (run: string, time: number, id: string) => `{"run":"${run}","time":${time},"type":"tool.start","id":"${id}","name":"n","input":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    writeFileSync(file, `${JSON.stringify({ run: 'r-1', time: 1, type: 'run.start', model: 'm' })}\n${deep('r-1', 2, 'toolu_1')}\n`);
    const page = await inspectRecording(file, { pollMs: 20 });
    try {
      // JSON.parse reads it; JSON.stringify of the records for the page overflowed the stack and ended the process.
      const fed = await readFeed(page.url, (records) => records.length === 2);
      expect(fed[1]).toEqual({ run: 'r-1', time: 2, type: 'tool.start', id: 'toolu_1', name: 'n', input: '[not JSON: Maximum call stack size exceeded]' });
      // A page open as such a line comes (its batch written to the page from the timer that reads the file).
      const more = readFeed(page.url, (records) => records.length === 4);
      await sleep(100);
      writeFileSync(file, `${deep('r-1', 3, 'toolu_2')}\n${JSON.stringify({ run: 'r-1', time: 4, type: 'run.end', state: 'finished' })}\n`, { flag: 'a' });
      expect((await more).map((record) => record.type)).toEqual(['run.start', 'tool.start', 'tool.start', 'run.end']);
      expect((await fetch(page.url)).status).toBe(200);
    } finally {
      await page.close();
    }
  });

  it('a line whose fields the page reads as lists or objects have another shape is skipped, as a line that is no record; the records after it are served', async () => {
    const file = join(dir, 'odd-shapes.jsonl');
    const lines = [
      { run: 'r-1', time: 1, type: 'run.start', model: 'm' },
      { run: 'r-2', time: 2, type: 'run.start', path: 'sub' },
      { run: 'r-1', time: 3, type: 'request.end', requestId: 1, toolUses: { id: 'toolu_1' } },
      { run: 'r-1', time: 4, type: 'run.end', state: 'finished', usage: 5 },
      { run: 'r-3', time: 5, type: 'run.start', model: 'm3', path: ['a'], callPath: ['toolu_a'] },
      // A call that waits for approval ends with `pending: true`; the run's end lists the calls waiting.
      { run: 'r-3', time: 6, type: 'tool.end', id: 'toolu_w', name: 'refund', pending: true },
      { run: 'r-3', time: 7, type: 'run.end', state: 'waiting', pending: [{ id: 'toolu_w', name: 'refund' }] },
      // The page words why a run stopped from `stoppedBy`: a text.
      { run: 'r-3', time: 8, type: 'run.end', state: 'finished', stoppedBy: 1 },
    ];
    writeFileSync(file, `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
    const page = await inspectRecording(file, { pollMs: 20 });
    try {
      const fed = await readFeed(page.url, (records) => records.length === 4);
      expect(fed.map((record) => `${record.run} ${record.type}`)).toEqual(['r-1 run.start', 'r-3 run.start', 'r-3 tool.end', 'r-3 run.end']);
      expect(page.skippedLines).toBe(4);
    } finally {
      await page.close();
    }
  });
});
