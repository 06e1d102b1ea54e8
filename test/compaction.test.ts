import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { BetaMessage, BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { HookError, type RunnerSnapshot, type ToolRunner, resumeToolRunner, textOf, tool, toolRunner } from 'tool-runner';
import { type RecordedRequest, type ScriptedReply, historyProblems, serverToolUse, text, thinking, toolUse, webSearchResult } from 'tool-runner/testing';
import { baseParams, captureLogger, mockServer, wire } from './helpers.js';

const lookup = tool({ name: 'lookup', inputSchema: z.object({ n: z.number() }), run: ({ n }) => `row ${n}: ${'data '.repeat(20)}` });
const PROMPT = 'Summarise the work so far in <summary> tags.';
const isSummaryRequest = (request: RecordedRequest) => wire(request).messages.at(-1)?.content === PROMPT;
const big = { input_tokens: 30_000, output_tokens: 50 };

/** A reply past the threshold that asks for one lookup, the summary (checked to be one), then the answer. */
const lookupPastTheThreshold = () => [
  { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big },
  (request: RecordedRequest) => {
    expect(isSummaryRequest(request)).toBe(true);
    return { content: [text('<summary>Looked up row 1.</summary>')] };
  },
  { content: [text('All done.')] },
];

describe('client-side compaction (compactionControl)', () => {
  it("a snapshot taken in the summary's onMessage holds the summary's usage (it was paid for); the run counts it once", async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big },
      { content: [text('<summary>Looked up row 1.</summary>')], usage: { input_tokens: 500, output_tokens: 20 } },
      { content: [text('All done.')], usage: { input_tokens: 300, output_tokens: 5 } },
    ]);
    let snapshot: RunnerSnapshot | undefined;
    const onMessage = (message: Parameters<typeof textOf>[0]) => {
      if (textOf(message).includes('<summary>')) snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
    };
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } }, { hooks: { onMessage } });
    await runner;
    expect(snapshot!.usage).toMatchObject({ input_tokens: 30_000 + 500, output_tokens: 50 + 20 });
    expect(runner.usage).toMatchObject({ input_tokens: 30_000 + 500 + 300, output_tokens: 50 + 20 + 5 });
  });

  // A checkpoint after each reply (`onMessage: () => save(runner.toJSON())`) taken at the summary's reply held the history
  // before it, still owed its check: the resumed run asked for the summary again, paid twice.
  it("a snapshot taken in the summary's onMessage holds the summarised history: resumed, it goes on from the summary, asking for none again", async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big },
      { content: [text('<summary>Looked up row 1.</summary>')] },
      { content: [text('All done.')] },
    ]);
    let snapshot: RunnerSnapshot | undefined;
    let seen: BetaMessageParam[] | undefined;
    const onMessage = (message: Parameters<typeof textOf>[0]) => {
      if (!textOf(message).includes('<summary>')) return;
      snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
      seen = runner.params.messages;
    };
    const control = { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT };
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], compactionControl: control }, { hooks: { onMessage } });
    await runner;
    expect(seen).toHaveLength(1);
    expect(textOf(seen![0]!)).toContain('Looked up row 1.');
    expect(snapshot!.params.messages).toEqual(seen);
    const again = await mockServer([(request) => (expect(isSummaryRequest(request)).toBe(false), { content: [text('All done.')] })]);
    const resumed = resumeToolRunner(again.client(), snapshot!, { tools: [lookup] });
    expect(textOf(await resumed)).toBe('All done.');
    expect(wire(again.requests[0]!).messages).toEqual(seen);
    again.assertComplete();
  });

  // README (hooks): a turn's reply whose onMessage throws is not kept; a summary's is, the history summarised already.
  it("a summary whose onMessage throws stops the run with a HookError, the history summarised: iterating again goes on from the summary, asking for none again", async () => {
    const server = await mockServer(lookupPastTheThreshold());
    let throws = true;
    const onMessage = (message: Parameters<typeof textOf>[0]) => {
      if (throws && textOf(message).includes('<summary>')) throw new Error('checkpoint store down');
    };
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } }, { hooks: { onMessage } });
    expect(await runner.runUntilDone().catch((e: unknown) => e)).toBeInstanceOf(HookError);
    expect(runner.params.messages).toHaveLength(1);
    expect(textOf(runner.params.messages[0]!)).toContain('Looked up row 1.');
    throws = false;
    expect(textOf(await runner.runUntilDone())).toBe('All done.');
    expect(server.requests.map(isSummaryRequest)).toEqual([false, true, false]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
    server.assertComplete();
  });

  it('a call whose result a summary took the place of counts no more for loopGuard: called again to read it again, it runs (the budget still counts it)', async () => {
    let runs = 0;
    const counted = tool({ name: 'lookup', inputSchema: z.object({ n: z.number() }), run: ({ n }) => (runs++, `row ${n}`) });
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big },
      { content: [text('<summary>Looked up row 1 (its text is lost).</summary>')] },
      { content: [toolUse('lookup', { n: 1 }, 'toolu_2')] },
      { content: [text('Row 1 again.')] },
    ]);
    const runner = toolRunner(
      server.client(),
      { ...baseParams, tools: [counted], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } },
      { loopGuard: { maxRepeats: 1 }, budget: { maxToolCalls: 5 } },
    );
    await runner;
    expect(runs).toBe(2);
    expect(wire(server.requests[3]!).messages.at(-1).content).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'row 1' }]);
    expect(runner.stoppedBy).toBe('model');
    // A repeat made while its first result is still in the history is refused as before.
    const guarded = await mockServer([{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')] }, { content: [toolUse('lookup', { n: 1 }, 'toolu_2')] }, { content: [text('done')] }]);
    await toolRunner(guarded.client(), { ...baseParams, tools: [counted] }, { loopGuard: { maxRepeats: 1 } });
    expect(wire(guarded.requests[2]!).messages.at(-1).content[0]).toMatchObject({ is_error: true, content: expect.stringMatching(/repeats an earlier call/) });
  });

  it('a call kept verbatim (keepTurns) stays an earlier call for loopGuard when a call of the same input is summarised away (one the run never counted: the caller\'s, or cut off by max_tokens)', async () => {
    let runs = 0;
    const counted = tool({ name: 'lookup', inputSchema: z.object({ n: z.number() }), run: ({ n }) => (runs++, `row ${n}`) });
    const control = { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT, keepTurns: 1 };
    // The caller's history holds a call from before the run (no call of the run for the guard).
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_2')], usage: big },
      { content: [text('<summary>Looked up row 1 before.</summary>')] },
      { content: [toolUse('lookup', { n: 1 }, 'toolu_3')] },
      { content: [text('done')] },
    ]);
    const messages = [
      { role: 'user' as const, content: 'Look up row 1.' },
      { role: 'assistant' as const, content: [toolUse('lookup', { n: 1 }, 'toolu_1')] },
      { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_1', content: 'row 1' }] },
      { role: 'assistant' as const, content: [text('Row 1.')] },
      { role: 'user' as const, content: 'Again, please.' },
    ];
    await toolRunner(server.client(), { ...baseParams, messages, tools: [counted], compactionControl: control }, { loopGuard: { maxRepeats: 1 } });
    // toolu_2's result is still in the history (its turn kept verbatim): toolu_3 repeats it.
    expect(wire(server.requests[1]!).messages.some((m: { content: unknown }) => JSON.stringify(m.content).includes('toolu_1'))).toBe(true);
    expect(JSON.stringify(wire(server.requests[2]!).messages)).toContain('toolu_2');
    expect(JSON.stringify(wire(server.requests[2]!).messages)).not.toContain('toolu_1');
    expect(runs).toBe(1);
    expect(wire(server.requests[3]!).messages.at(-1).content[0]).toMatchObject({ tool_use_id: 'toolu_3', is_error: true, content: expect.stringMatching(/repeats an earlier call/) });
    // A call of the run cut off by max_tokens (never run, never counted), summarised away, the same.
    const cut = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], stop_reason: 'max_tokens' },
      { content: [toolUse('lookup', { n: 1 }, 'toolu_2')], usage: big },
      { content: [text('<summary>Looked up row 1.</summary>')] },
      { content: [toolUse('lookup', { n: 1 }, 'toolu_3')] },
      { content: [text('done')] },
    ]);
    runs = 0;
    const options = { loopGuard: { maxRepeats: 1 } };
    const ended = toolRunner(cut.client(), { ...baseParams, tools: [counted], compactionControl: control }, options);
    await ended;
    // (An ended run goes on resumed.)
    const goesOn = resumeToolRunner(cut.client(), JSON.parse(JSON.stringify(ended.toJSON())) as RunnerSnapshot, { tools: [counted], options });
    goesOn.pushMessages({ role: 'user', content: 'Go on.' });
    await goesOn;
    expect(JSON.stringify(wire(cut.requests[3]!).messages)).not.toContain('toolu_1');
    expect(runs).toBe(1);
    expect(wire(cut.requests[4]!).messages.at(-1).content[0]).toMatchObject({ tool_use_id: 'toolu_3', is_error: true, content: expect.stringMatching(/repeats an earlier call/) });
  });

  it('summarises after a reply over the threshold and goes on from the summary', async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: { input_tokens: 1_000, output_tokens: 10 } },
      { content: [toolUse('lookup', { n: 2 }, 'toolu_2')], usage: big },
      { content: [text('<summary>Looked up rows 1 and 2.</summary>')], usage: { input_tokens: 500, output_tokens: 20 } },
      { content: [text('All done.')], usage: { input_tokens: 300, output_tokens: 5 } },
    ]);
    const messages = [{ role: 'user' as const, content: 'Look up rows.' }];
    const seen: string[] = [];
    const { lines, logger } = captureLogger();
    const runner = toolRunner(
      server.client({ logger, logLevel: 'info' }),
      { ...baseParams, messages, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } },
      { requestOptions: { headers: { 'x-team': 'blue' } }, hooks: { onRequest: (body) => void seen.push(String((body.messages as Array<{ content: unknown }>).at(-1)?.content)) } },
    );
    const final = await runner;
    expect(final.content[0]).toMatchObject({ text: 'All done.' });
    const summary = server.requests[2]!;
    expect(isSummaryRequest(summary)).toBe(true);
    expect(summary.headers['x-team']).toBe('blue');
    expect(summary.body.tool_choice).toEqual({ type: 'none' });
    expect(summary.messages).toHaveLength(6);
    expect(summary.body).not.toHaveProperty('compactionControl');
    const after = wire(server.requests[3]!).messages;
    expect(after).toHaveLength(1);
    expect(after[0].content[0].text).toMatch(/continues from an earlier conversation.*\n\nLooked up rows 1 and 2\.\n\nContinue the work from here\./s);
    expect(seen).toContain(PROMPT);
    expect(lines).toContainEqual({ level: 'info', message: expect.stringMatching(/^Compaction: 30050 tokens > 20000; summarising 5 messages$/) });
    expect(runner.usage.input_tokens).toBe(1_000 + 30_000 + 500 + 300);
    expect(runner.iteration).toBe(3);
    expect(messages).toEqual([{ role: 'user', content: 'Look up rows.' }]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("the summary request goes without the run's stop_sequences, which would cut the summary where it wrote one (and the part before it be adopted); the turns keep them", async () => {
    const server = await mockServer(lookupPastTheThreshold());
    const runner = toolRunner(server.client(), { ...baseParams, stop_sequences: ['Observation:'], tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } });
    await runner;
    expect(wire(server.requests[1]!).body).not.toHaveProperty('stop_sequences');
    expect(wire(server.requests[2]!).body.stop_sequences).toEqual(['Observation:']);
    expect(runner.params.stop_sequences).toEqual(['Observation:']);
  });

  it('a streamed run with a large max_tokens: the summary (sent without streaming) goes with the client\'s timeout, so the SDK does not refuse it', async () => {
    const server = await mockServer(lookupPastTheThreshold());
    const runner = toolRunner(server.client(), {
      ...baseParams,
      max_tokens: 32_000,
      stream: true,
      tools: [lookup],
      compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT },
    });
    for await (const stream of runner) await stream.finalMessage();
    expect(server.requests).toHaveLength(3);
    expect(isSummaryRequest(server.requests[1]!)).toBe(true);
    expect(wire(server.requests[1]!).body).toMatchObject({ stream: false, max_tokens: 32_000 });
    expect(runner.params.messages.at(-1)!.content).toEqual([expect.objectContaining({ text: 'All done.' })]);
  });

  it('keepTurns keeps the last turns verbatim; a server-tool turn in the compacted range leaves no orphan', async () => {
    const search = serverToolUse('web_search', { query: 'x' }, 'srvtoolu_1');
    const server = await mockServer([
      { content: [search, webSearchResult('srvtoolu_1', [{ url: 'https://a.example', title: 'A' }]), toolUse('lookup', { n: 1 }, 'toolu_1')], usage: { input_tokens: 100, output_tokens: 10 } },
      { content: [toolUse('lookup', { n: 2 }, 'toolu_2')], usage: { input_tokens: 100, output_tokens: 10 } },
      { content: [toolUse('lookup', { n: 3 }, 'toolu_3')], usage: big },
      (request) => {
        expect(isSummaryRequest(request)).toBe(true);
        return { content: [text('<summary>S</summary>')] };
      },
      { content: [text('done')] },
    ]);
    const runner = toolRunner(server.client(), {
      ...baseParams,
      tools: [lookup, { type: 'web_search_20250305', name: 'web_search' }],
      compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT, keepTurns: 2 },
    });
    await runner;
    const after = wire(server.requests[4]!).messages;
    // The summary, then the last two turns: (assistant toolu_2, results), (assistant toolu_3, results).
    expect(after.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(after[1].content[0].id).toBe('toolu_2');
    expect(after[0].content[0].text).toMatch(/The most recent turns follow verbatim\./);
    expect(historyProblems(after)).toEqual([]);
    expect(JSON.stringify(after)).not.toContain('srvtoolu_1');
  });

  it('with thinking on, the turns kept begin with a thinking block (the API refuses a last assistant turn that does not): fewer turns kept, or none', async () => {
    const loop = () => [
      { content: [thinking('Plan: look up rows.'), toolUse('lookup', { n: 1 }, 'toolu_1')], usage: { input_tokens: 100, output_tokens: 10 } },
      // Without interleaved thinking, the later replies of the tool loop have none.
      { content: [toolUse('lookup', { n: 2 }, 'toolu_2')], usage: { input_tokens: 100, output_tokens: 10 } },
      { content: [toolUse('lookup', { n: 3 }, 'toolu_3')], usage: big },
      (request: RecordedRequest) => {
        expect(isSummaryRequest(request)).toBe(true);
        return { content: [text('<summary>S</summary>')] };
      },
      { content: [text('done')] },
    ];
    const after = async (keepTurns: number, thinkingOn: boolean | 'adaptive') => {
      const server = await mockServer(loop());
      await toolRunner(server.client(), {
        ...baseParams,
        ...(thinkingOn === true && { thinking: { type: 'enabled' as const, budget_tokens: 1024 } }),
        ...(thinkingOn === 'adaptive' && { thinking: { type: 'adaptive' as const } }),
        tools: [lookup],
        compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT, keepTurns },
      });
      return wire(server.requests[4]!).messages as Array<{ role: string; content: Array<{ type: string; id?: string }> }>;
    };
    // Without thinking, keepTurns 1 keeps the last turn (toolu_3 and its result); so with adaptive thinking (the model may think or not).
    expect((await after(1, false))[1]!.content[0]!.id).toBe('toolu_3');
    expect((await after(1, 'adaptive'))[1]!.content[0]!.id).toBe('toolu_3');
    // With it, that turn begins with tool_use: none is kept (the summary alone), rather than a request the API refuses.
    expect((await after(1, true)).map((message) => message.role)).toEqual(['user']);
    // Three turns asked, the first of them begins with thinking: all three kept.
    const three = await after(3, true);
    expect(three[1]!.content.map((block) => block.type)).toEqual(['thinking', 'tool_use']);
    expect(three).toHaveLength(7);
    expect(historyProblems(three as never)).toEqual([]);
  });

  it('tool changes survive a compaction: the model is still told of them, and a request they end can be compacted on overflow', async () => {
    const query = tool({ name: 'query', inputSchema: z.object({ sql: z.string() }), run: ({ sql }) => `ran ${sql}` });
    const toolChanges = (request: RecordedRequest) =>
      wire(request).messages.filter((message: { role: string }) => message.role === 'system').flatMap((message: { content: Array<{ type: string }> }) => message.content.map((block) => block.type));
    const compactionControl = { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT };
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: { input_tokens: 1_000, output_tokens: 10 } },
      { content: [toolUse('query', { sql: 'select 1' }, 'toolu_q')], usage: big },
      { content: [text('<summary>Looked up row 1, ran a query.</summary>')] },
      { content: [text('Done.')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], compactionControl });
    let turn = 0;
    for await (const _ of runner) {
      if (++turn === 1) runner.addTools(query);
      if (turn === 2) runner.removeTools('lookup');
    }
    expect(isSummaryRequest(server.requests[2]!)).toBe(true);
    expect(toolChanges(server.requests[3]!)).toEqual(['tool_addition', 'tool_removal']);

    // The request that carries the tool changes is rejected as too long: compacted at once, sent again.
    const overflowing = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')] },
      { error: { status: 400, message: 'prompt is too long: 250000 tokens > 200000 maximum' } },
      { content: [text('<summary>Looked up row 1.</summary>')] },
      { content: [text('Done.')] },
    ]);
    const again = toolRunner(overflowing.client(), { ...baseParams, tools: [lookup], compactionControl });
    let first = true;
    for await (const _ of again) {
      if (first) again.addTools(query);
      first = false;
    }
    expect(isSummaryRequest(overflowing.requests[2]!)).toBe(true);
    expect(toolChanges(overflowing.requests[3]!)).toEqual(['tool_addition']);
    expect(again.stoppedBy).toBe('model');
  });

  it("tool changes a server-side compaction carried (its block's tool_changes) survive a client-side one: a tool it withdrew stays withdrawn, and the model is told", async () => {
    const log: string[] = [];
    const login = tool({ name: 'login', inputSchema: z.object({}), run: () => (log.push('login'), 'logged in') });
    const removal = { type: 'tool_removal', tool: { type: 'tool_reference', name: 'login' } };
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big },
      { content: [text('<summary>Looked up row 1.</summary>')] },
      { content: [toolUse('login', {}, 'toolu_login')] },
      { content: [text('Done.')] },
    ]);
    const messages = [
      { role: 'assistant', content: [{ type: 'compaction', content: 'Earlier work, login withdrawn.', encrypted_content: null, tool_changes: [removal] }] } as never,
      { role: 'user' as const, content: 'Go on.' },
    ];
    const runner = toolRunner(server.client(), { ...baseParams, thread: false, messages, tools: [lookup, login], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } });
    await runner;
    expect(isSummaryRequest(server.requests[1]!)).toBe(true);
    expect(wire(server.requests[2]!).messages[1]).toEqual({ role: 'system', content: [removal] });
    expect(log).toEqual([]);
    expect(wire(server.requests[3]!).messages.at(-1).content[0]).toMatchObject({ tool_use_id: 'toolu_login', is_error: true });
  });

  it('a summary that leaves the context over the threshold: one warning, no compaction loop', async () => {
    const { lines, logger } = captureLogger();
    const summaryCalls: number[] = [];
    const step = (n: number) => (request: RecordedRequest) => {
      if (isSummaryRequest(request)) {
        summaryCalls.push(n);
        return { content: [text('<summary>still huge</summary>')] };
      }
      return { content: [toolUse('lookup', { n })], usage: big };
    };
    const server = await mockServer([step(1), step(2), step(3), step(4), step(5), { content: [text('done')], usage: big }]);
    const runner = toolRunner(
      server.client({ logger, logLevel: 'warn' }),
      { ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } },
    );
    await runner;
    expect(summaryCalls).toHaveLength(1);
    const warnings = lines.filter((line) => line.level === 'warn' && line.message.includes('Compaction'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/still \d+ tokens after compacting.*compaction is off/);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  for (const via of ['in process', 'a snapshot'] as const) it(`a reply past the threshold whose calls waited for approval is compacted once they are answered (${via})`, async () => {
    const risky = tool({ name: 'risky', inputSchema: z.object({}), needsApproval: true, run: () => 'done' });
    const server = await mockServer([
      { content: [toolUse('risky', {}, 'toolu_risky'), toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big },
      (request) => {
        expect(isSummaryRequest(request)).toBe(true);
        return { content: [text('<summary>Ran risky, looked up row 1.</summary>')] };
      },
      { content: [text('All done.')] },
    ]);
    const params = { ...baseParams, tools: [lookup, risky], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } };
    const runner = toolRunner(server.client(), params);
    await runner;
    expect(runner.stoppedBy).toBe('approval');
    const next = via === 'in process' ? runner : resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { tools: [lookup, risky] });
    next.approve('toolu_risky');
    expect(await next).toMatchObject({ content: [{ text: 'All done.' }] });
    // The summary holds both results; the next turn goes on from it alone.
    expect(wire(server.requests[1]!).messages[2].content.map((block: { tool_use_id: string }) => block.tool_use_id)).toEqual(['toolu_risky', 'toolu_1']);
    expect(wire(server.requests[2]!).messages).toHaveLength(1);
    expect(wire(server.requests[2]!).messages[0].content[0].text).toContain('Ran risky, looked up row 1.');
    expect(historyProblems(next.params.messages)).toEqual([]);
  });

  it('a reply past the threshold whose answer failed (a hook threw): iterating again answers its calls, then compacts', async () => {
    const server = await mockServer(lookupPastTheThreshold());
    let failing = true;
    const hooks = {
      onToolResult: () => {
        if (failing) throw new Error('log store down');
      },
    };
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } }, { hooks });
    await expect(runner.runUntilDone()).rejects.toThrow(/log store down/);
    failing = false;
    expect(await runner.runUntilDone()).toMatchObject({ content: [{ text: 'All done.' }] });
    expect(wire(server.requests[2]!).messages).toHaveLength(1);
  });

  it('a snapshot taken in the loop body after a reply past the threshold: the resumed run answers its calls, then compacts, as the run would have', async () => {
    const server = await mockServer(lookupPastTheThreshold());
    const params = { ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } };
    const runner = toolRunner(server.client(), params);
    let saved = '';
    for await (const _message of runner) {
      saved = JSON.stringify(runner.toJSON());
      break;
    }
    expect(JSON.parse(saved).compaction).toEqual({ owed: true });
    const resumed = resumeToolRunner(server.client(), JSON.parse(saved), { tools: [lookup] });
    expect(await resumed).toMatchObject({ content: [{ text: 'All done.' }] });
    expect(wire(server.requests[2]!).messages).toHaveLength(1);
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });

  it('a reply past the threshold stopped for approval, and the caller went on without deciding: the summary request answers the call as not run (a valid history)', async () => {
    const risky = tool({ name: 'risky', inputSchema: z.object({}), needsApproval: true, run: () => 'done' });
    const server = await mockServer([
      { content: [toolUse('risky', {}, 'toolu_risky')], usage: big },
      (request) => {
        expect(isSummaryRequest(request)).toBe(true);
        expect(historyProblems(wire(request).messages)).toEqual([]);
        return { content: [text('<summary>Asked for risky; the user moved on.</summary>')] };
      },
      { content: [text('Something else, then.')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [risky], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } });
    await runner;
    expect(runner.stoppedBy).toBe('approval');
    runner.pushMessages({ role: 'user', content: 'Never mind that.' });
    expect(await runner).toMatchObject({ content: [{ text: 'Something else, then.' }] });
    server.assertComplete();
  });

  it('a snapshot taken in the loop body after generateToolResponse() keeps the compaction check its reply is owed', async () => {
    const server = await mockServer(lookupPastTheThreshold());
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } });
    let saved = '';
    for await (const _message of runner) {
      await runner.generateToolResponse();
      saved = JSON.stringify(runner.toJSON());
      break;
    }
    expect(JSON.parse(saved).compaction).toEqual({ owed: true });
    const resumed = resumeToolRunner(server.client(), JSON.parse(saved), { tools: [lookup] });
    expect(await resumed).toMatchObject({ content: [{ text: 'All done.' }] });
    server.assertComplete();
  });

  it('compaction turned off for the run stays off in a snapshot: resumed, it does not summarise again', async () => {
    const { lines, logger } = captureLogger();
    const risky = tool({ name: 'risky', inputSchema: z.object({}), needsApproval: true, run: () => 'done' });
    const summaries: RecordedRequest[] = [];
    const summary = (request: RecordedRequest) => (summaries.push(request), { content: [text('<summary>still huge</summary>')] });
    const reply = (content: NonNullable<ScriptedReply['content']>[number]) => (request: RecordedRequest) => (isSummaryRequest(request) ? summary(request) : { content: [content], usage: big });
    const server = await mockServer([
      reply(toolUse('lookup', { n: 1 })),
      summary,
      reply(toolUse('lookup', { n: 2 })), // still over the threshold after compacting: compaction is off
      reply(toolUse('risky', {}, 'toolu_risky')), // stops for approval
      reply(toolUse('lookup', { n: 3 })), // after resume: over the threshold again
      reply(text('done')),
    ]);
    const params = { ...baseParams, tools: [lookup, risky], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } };
    const runner = toolRunner(server.client({ logger, logLevel: 'warn' }), params);
    await runner;
    expect(runner.stoppedBy).toBe('approval');
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
    expect(snapshot.compaction).toEqual({ trigger: 'off' });
    const resumed = resumeToolRunner(server.client({ logger, logLevel: 'warn' }), snapshot, { tools: [lookup, risky] });
    resumed.approve('toolu_risky');
    expect(await resumed).toMatchObject({ content: [{ text: 'done' }] });
    expect(summaries).toHaveLength(1);
    expect(lines.filter((line) => line.message.includes('compaction is off'))).toHaveLength(1);
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });

  it("a reply after a summary that asks for no tool, under the threshold, says the summary helped: the loop body goes on, a later reply past it is compacted again", async () => {
    const { lines, logger } = captureLogger();
    const summary = (request: RecordedRequest) => (expect(isSummaryRequest(request)).toBe(true), { content: [text('<summary>so far</summary>')], usage: { input_tokens: 50 } });
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 })], usage: big },
      summary,
      { content: [text('answer 1')], usage: { input_tokens: 300 } },
      { content: [toolUse('lookup', { n: 2 })], usage: big },
      summary,
      { content: [text('answer 2')], usage: { input_tokens: 300 } },
    ]);
    const runner = toolRunner(server.client({ logger, logLevel: 'warn' }), { ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } });
    for await (const message of runner) {
      if (message.content[0]?.type === 'text' && message.content[0].text === 'answer 1') runner.pushMessages(message, { role: 'user', content: 'Now row 2.' });
    }
    expect(server.requests.filter(isSummaryRequest)).toHaveLength(2);
    expect(lines.filter((line) => line.message.includes('compaction is off'))).toEqual([]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('compaction turned off (a summary cut off) stays off after an overflow compacts: a later reply past the threshold is not summarised', async () => {
    const summaries: RecordedRequest[] = [];
    const summary = (reply: ScriptedReply) => (request: RecordedRequest) => (expect(isSummaryRequest(request)).toBe(true), summaries.push(request), reply);
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 })], usage: big },
      summary({ content: [text('<summary>cut')], stop_reason: 'max_tokens' }), // off for the rest of the run
      { error: { status: 400, message: 'prompt is too long: 210000 tokens > 200000 maximum' } },
      summary({ content: [text('<summary>short</summary>')] }), // the overflow's
      { content: [toolUse('lookup', { n: 2 })], usage: { input_tokens: 300 } },
      { content: [toolUse('lookup', { n: 3 })], usage: big }, // past the threshold: off, no summary
      { content: [text('done')] },
    ]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } });
    await runner;
    expect(summaries).toHaveLength(2);
    expect(server.requests).toHaveLength(7);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('a reply past the threshold at a budget stop keeps its compaction check: the run resumed with a larger budget summarises first', async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big },
      (request: RecordedRequest) => (expect(isSummaryRequest(request)).toBe(true), { content: [text('<summary>row 1</summary>')] }),
      { content: [text('done')] },
    ]);
    const params = { ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } };
    const runner = toolRunner(server.client(), params, { budget: { maxTokens: 10_000 } });
    await runner;
    expect(runner.stoppedBy).toBe('budget');
    expect(server.requests).toHaveLength(1);
    const snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
    expect(snapshot.compaction).toMatchObject({ owed: true });
    const resumed = resumeToolRunner(server.client(), snapshot, { tools: [lookup], options: { budget: { maxTokens: 1_000_000 } } });
    expect(await resumed).toMatchObject({ content: [{ text: 'done' }] });
    expect(isSummaryRequest(server.requests[1]!)).toBe(true);
    expect(wire(server.requests[2]!).messages).toHaveLength(1);
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });

  it.each([false, true])("a message pushed in the summary request's onRequest goes after the summary, with the next request (stream: %s)", async (stream) => {
    const server = await mockServer(lookupPastTheThreshold());
    const note = { role: 'user' as const, content: 'Answer in five words.' };
    const runner: ToolRunner<boolean> = toolRunner(server.client(), { ...baseParams, stream, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 10_000, summaryPrompt: PROMPT } }, {
      hooks: { onRequest: (body) => void ((body.messages as Array<{ content: unknown }>).at(-1)?.content === PROMPT && runner.pushMessages(note)) },
    });
    expect((await runner.runUntilDone()).content[0]).toMatchObject({ text: 'All done.' });
    // The note is not in the summary request; it follows the summary in the next one.
    expect(wire(server.requests[1]!).messages.at(-1).content).toBe(PROMPT);
    expect(wire(server.requests[2]!).messages.at(-1)).toEqual(note);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("a history set in the summary request's onRequest is kept: the summary of the one before is not adopted", async () => {
    const server = await mockServer([{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big }, { content: [text('<summary>Looked up row 1.</summary>')] }, { content: [text('Hello again.')] }]);
    const fresh = [{ role: 'user' as const, content: 'Start over: say hello.' }];
    const runner: ToolRunner<false> = toolRunner(server.client(), { ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 10_000, summaryPrompt: PROMPT } }, {
      hooks: { onRequest: (body) => void ((body.messages as Array<{ content: unknown }>).at(-1)?.content === PROMPT && runner.setMessagesParams((params) => ({ ...params, messages: fresh }))) },
    });
    expect((await runner).content[0]).toMatchObject({ text: 'Hello again.' });
    expect(wire(server.requests[2]!).messages).toEqual(fresh);
  });

  it('is checked at construction', async () => {
    const server = await mockServer([]);
    expect(() => toolRunner(server.client(), { ...baseParams, compactionControl: { enabled: 'yes' } as never })).toThrow(/enabled: boolean/);
    expect(() => toolRunner(server.client(), { ...baseParams, compactionControl: { enabled: true, contextTokenThreshold: 0 } })).toThrow(/positive number/);
    // A misspelt key had been left unused in silence: the default threshold applied, no compaction came.
    expect(() => toolRunner(server.client(), { ...baseParams, compactionControl: { enabled: true, contextTokensThreshold: 1000 } as never })).toThrow(
      "toolRunner: compactionControl: unknown option 'contextTokensThreshold'; the options are enabled, contextTokenThreshold, model, summaryPrompt, keepTurns. Did you mean 'contextTokenThreshold'?",
    );
    expect(() => toolRunner(server.client(), { ...baseParams, compactionControl: { enabled: true, keepTurn: 1 } as never })).toThrow(/unknown option 'keepTurn'.*Did you mean 'keepTurns'\?/);
    // A key set to undefined is a key all the same (a config object's optional field): only known ones.
    expect(() => toolRunner(server.client(), { ...baseParams, compactionControl: { enabled: true, keepTurns: undefined } })).not.toThrow();
  });

  it('a check left owed (its summary request failed) is dropped when the caller sets a history without its reply: the next request goes with the history set', async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big },
      { error: { status: 500 } },
      (request: RecordedRequest) => {
        expect(isSummaryRequest(request)).toBe(false);
        return { content: [text('4')] };
      },
    ]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 10_000, summaryPrompt: PROMPT } });
    await expect(runner.runUntilDone()).rejects.toThrow();
    const fresh = [
      { role: 'user' as const, content: 'hi' },
      { role: 'assistant' as const, content: 'hello' },
      { role: 'user' as const, content: 'what is 2+2?' },
    ];
    runner.setMessagesParams((params) => ({ ...params, messages: fresh }));
    await runner;
    expect(wire(server.requests[2]!).messages).toEqual(fresh);
    expect(runner.params.messages).toHaveLength(4);
  });

  it('a check left owed is made when the history still holds its reply (a message pushed after it), and after a resume', async () => {
    for (const resume of [false, true]) {
      const server = await mockServer([{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big }, { error: { status: 500 } }, ...lookupPastTheThreshold().slice(1)]);
      const params = { ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 10_000, summaryPrompt: PROMPT } };
      let runner = toolRunner(server.client({ maxRetries: 0 }), params);
      await expect(runner.runUntilDone()).rejects.toThrow();
      runner.pushMessages({ role: 'user', content: 'Go on.' });
      if (resume) runner = resumeToolRunner(server.client({ maxRetries: 0 }), JSON.parse(JSON.stringify(runner.toJSON())), { tools: [lookup] });
      await runner;
      expect(server.requests.filter(isSummaryRequest)).toHaveLength(2);
      expect(runner.params.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ text: 'All done.' }] });
    }
  });

  it('a run stopped by max_iterations sends no summary after its last reply (as a budget stop): the check stays owed for a run that goes on', async () => {
    const server = await mockServer([{ content: [toolUse('lookup', { n: 0 }, 'toolu_0')], usage: { input_tokens: 100, output_tokens: 5 } }, ...lookupPastTheThreshold()]);
    const runner = toolRunner(server.client(), { ...baseParams, max_iterations: 2, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 10_000, summaryPrompt: PROMPT } });
    await runner;
    expect(runner.stoppedBy).toBe('max_iterations');
    expect(server.requests).toHaveLength(2);
    expect(runner.params.messages).toHaveLength(5);
    // Raised, the run goes on: the owed summary first, then the answer.
    runner.setMessagesParams((params) => ({ ...params, max_iterations: 10 }));
    await runner;
    expect(isSummaryRequest(server.requests[2]!)).toBe(true);
    expect(runner.stoppedBy).toBe('model');
  });
});

describe('client-side compaction of a turn whose history the loop body set', () => {
  const compacting = { compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } };
  /** A chat's answer past the threshold, the summary (checked to be one), the next answer. */
  const summarisedChat = () =>
    mockServer([
      { content: [text('Row 1 is looked up.')], usage: big },
      (request) => (expect(isSummaryRequest(request)).toBe(true), { content: [text('<summary>Looked up row 1.</summary>')] }),
      { content: [text('Row 2 is row 1 plus one.')] },
    ]);
  /** A chat that asks its next question after the first answer, whose summary request then fails: the run rejects. */
  const chatWhoseSummaryFails = async (runner: ToolRunner<false>) => {
    const chat = async () => {
      for await (const message of runner) runner.pushMessages(message, { role: 'user', content: 'And row 2?' });
    };
    await expect(chat()).rejects.toThrow();
  };
  /** A hook that logs the reply somewhere slow: the run counts the reply once it is done. */
  const slowOnMessage = () => new Promise<void>((resolve) => setTimeout(resolve, 50));
  const interruption = { role: 'user' as const, content: 'Stop, and tell me row 2.' };
  /**
   * A streamed chat whose user interrupts an answer past the threshold once it has begun (a reply that stalls mid-way:
   * waited for, the run hangs until the request's timeout): the body pushes `pushed` in its place. `ended`: 'done', or
   * 'hung' after 3 s.
   */
  const interruptedChat = async (pushed: BetaMessageParam[]) => {
    const server = await mockServer([
      { content: [text('A long answer the user no longer wants.')], usage: big, chunkSize: 5, stallAfterEvents: 4 },
      { content: [text('Row 2 is row 1 plus one.')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, stream: true as const, tools: [lookup], ...compacting });
    let asked = false;
    const chat = async () => {
      for await (const stream of runner) {
        if (asked) continue;
        asked = true;
        await new Promise((resolve) => stream.once('text', resolve));
        runner.pushMessages(...pushed);
      }
      return 'done';
    };
    const ended = await Promise.race([chat(), new Promise((resolve) => setTimeout(() => resolve('hung'), 3000))]);
    return { ended, server, runner };
  };
  for (const stream of [false, true]) it(`a reply past the threshold that the body answered itself, or followed with a question (a chat), is summarised, the question kept word for word (stream: ${stream})`, async () => {
    const summary = (request: RecordedRequest) => (expect(isSummaryRequest(request)).toBe(true), { content: [text('<summary>Looked up row 1.</summary>')] });
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big },
      summary,
      { content: [text('Row 1 is looked up.')] },
      { content: [text('Row 2 is row 1 plus one.')], usage: big },
      summary,
      { content: [text('Row 3 is row 2 plus one.')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, stream, tools: [lookup], ...compacting });
    const questions = [{ role: 'user' as const, content: 'And row 2?' }, { role: 'user' as const, content: 'And row 3?' }];
    let asked = 0;
    for await (const item of runner) {
      const message = stream ? await (item as { finalMessage(): Promise<BetaMessage> }).finalMessage() : (item as BetaMessage);
      const call = message.content.find((block) => block.type === 'tool_use');
      // The body builds the result itself, then asks the next questions of a chat after the answers.
      if (call) runner.pushMessages(message, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'row 1 (cached)' }] });
      else if (asked < questions.length) runner.pushMessages(message, questions[asked++]!);
    }
    expect(server.requests.map(isSummaryRequest)).toEqual([false, true, false, false, true, false]);
    // The history had grown past the threshold: the next turn goes from the summary, with the question after it word for word.
    expect(wire(server.requests[2]!).messages).toHaveLength(1);
    expect(wire(server.requests[5]!).messages).toEqual([expect.objectContaining({ role: 'user' }), questions[1]]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
    server.assertComplete();
  });
  // A chat that stores its answers as text (`content: textOf(message)`, as a chat's store keeps them) was never checked:
  // the history grew past the threshold turn after turn until the API refused it as too long.
  for (const kept of ['text', 'a text block'] as const) it(`a chat that keeps the answer as ${kept}, then asks its next question: the answer past the threshold is summarised, the question kept word for word`, async () => {
    const server = await summarisedChat();
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], ...compacting });
    const question = { role: 'user' as const, content: 'And row 2?' };
    let asked = false;
    for await (const message of runner) {
      if (asked) continue;
      asked = true;
      const answer = kept === 'text' ? textOf(message) : [{ type: 'text' as const, text: textOf(message) }];
      runner.pushMessages({ role: 'assistant', content: answer }, question);
    }
    expect(server.requests.map(isSummaryRequest)).toEqual([false, true, false]);
    expect(wire(server.requests[2]!).messages).toEqual([expect.objectContaining({ role: 'user' }), question]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
    server.assertComplete();
  });

  it('a chat that keeps an answer of its own (not the reply\'s text) then asks: not checked, as a history without the reply', async () => {
    const server = await mockServer([
      { content: [text('Row 1 is looked up.')], usage: big },
      (request) => (expect(isSummaryRequest(request)).toBe(false), { content: [text('Row 2 is row 1 plus one.')] }),
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], ...compacting });
    let asked = false;
    for await (const _message of runner) {
      if (!asked) runner.pushMessages({ role: 'assistant', content: 'Row 1' }, { role: 'user', content: 'And row 2?' });
      asked = true;
    }
    expect(server.requests.map(isSummaryRequest)).toEqual([false, false]);
    server.assertComplete();
  });

  it('a streamed reply the body drops mid-stream (a question in its place) is not waited for: its stream is aborted and the question goes at once', async () => {
    // The user interrupts once the answer has begun: the history without the reply, as in the SDK's runner.
    const { ended, server, runner } = await interruptedChat([interruption]);
    expect(ended).toBe('done');
    expect(server.requests.map(isSummaryRequest)).toEqual([false, false]);
    expect(runner.params.messages.slice(-2)).toEqual([interruption, expect.objectContaining({ role: 'assistant' })]);
  });

  it('a streamed reply the body drops mid-stream keeping the part read so far (an answer of its own, the question after it) is not waited for either', async () => {
    // The user interrupts: the chat keeps what was shown of the answer, as chats do, and the user's words after it (waited
    // for, as the body added an assistant message, the stalled reply hung the run).
    const partial = { role: 'assistant' as const, content: 'A long' };
    const { ended, server } = await interruptedChat([partial, interruption]);
    expect(ended).toBe('done');
    expect(server.requests.map(isSummaryRequest)).toEqual([false, false]);
    expect(wire(server.requests[1]!).messages.slice(-2)).toEqual([partial, interruption]);
    server.assertComplete();
  });

  it("a streamed reply the body pushed from the stream's message event (before the stream's end) is checked: it is waited for", async () => {
    const server = await summarisedChat();
    const params = { ...baseParams, stream: true as const, tools: [lookup], ...compacting };
    const runner = toolRunner(server.client(), params, { hooks: { onMessage: slowOnMessage } });
    let asked = false;
    for await (const stream of runner) {
      if (asked) continue;
      asked = true;
      const message = await new Promise<BetaMessage>((resolve) => stream.once('message', resolve));
      runner.pushMessages(message, { role: 'user', content: 'And row 2?' });
    }
    expect(server.requests.map(isSummaryRequest)).toEqual([false, true, false]);
  });

  // The reply was paid for, and the body pushed it with a question: a snapshot taken there (a checkpoint) lacked its usage,
  // and owed it no check, so the resumed run sent the question over the whole history past the threshold.
  it("a snapshot taken at a streamed reply's message event, after the body pushed it and a question: it counts the reply, and the resumed run summarises first", async () => {
    const server = await mockServer([{ content: [text('Row 1 is looked up.')], usage: big }]);
    const params = { ...baseParams, stream: true as const, tools: [lookup], ...compacting };
    const runner = toolRunner(server.client(), params);
    let snapshot: RunnerSnapshot | undefined;
    for await (const stream of runner) {
      const message = await new Promise<BetaMessage>((resolve) => stream.once('message', resolve));
      runner.pushMessages(message, { role: 'user', content: 'And row 2?' });
      snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
      break;
    }
    expect(snapshot!.usage).toMatchObject({ input_tokens: big.input_tokens, output_tokens: big.output_tokens });
    const again = await mockServer([{ content: [text('<summary>Looked up row 1.</summary>')] }, { content: [text('Row 2 is row 1 plus one.')] }]);
    const resumed = resumeToolRunner(again.client(), snapshot!, { tools: [lookup] });
    await resumed;
    expect(again.requests.map(isSummaryRequest)).toEqual([true, false]);
    expect(resumed.usage.input_tokens).toBeGreaterThan(big.input_tokens);
  });

  it("a snapshot taken at a streamed reply's message event that asks for a tool holds the reply, counted: the resumed run answers its call, not asking the model again", async () => {
    const server = await mockServer([{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: { input_tokens: 100, output_tokens: 10 } }]);
    const runner = toolRunner(server.client(), { ...baseParams, stream: true as const, tools: [lookup] });
    let snapshot: RunnerSnapshot | undefined;
    for await (const stream of runner) {
      await new Promise<BetaMessage>((resolve) => stream.once('message', resolve));
      snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
      break;
    }
    expect(snapshot!.usage).toMatchObject({ input_tokens: 100, output_tokens: 10 });
    const again = await mockServer([{ content: [text('Row 1 is looked up.')] }]);
    const resumed = resumeToolRunner(again.client(), snapshot!, { tools: [lookup] });
    expect(textOf(await resumed)).toBe('Row 1 is looked up.');
    expect(wire(again.requests[0]!).messages.at(-1).content).toEqual([expect.objectContaining({ type: 'tool_result', tool_use_id: 'toolu_1' })]);
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });

  it('a reply the body dropped (a question in its place) is not checked, though an earlier answer has the same words', async () => {
    const server = await mockServer([
      { content: [text('Done.')], usage: big },
      (request) => (expect(isSummaryRequest(request)).toBe(false), { content: [text('Row 2 is row 1 plus one.')] }),
    ]);
    // A chat whose earlier answer (a reply kept as it came) reads as this one.
    const messages = [
      { role: 'user' as const, content: 'Look up row 0.' },
      { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Done.', citations: null }] },
      { role: 'user' as const, content: 'Look up row 1.' },
    ];
    const runner = toolRunner(server.client(), { ...baseParams, messages, tools: [lookup], ...compacting });
    let asked = false;
    for await (const _message of runner) {
      if (!asked) runner.pushMessages({ role: 'user', content: 'No, row 2.' });
      asked = true;
    }
    expect(server.requests.map(isSummaryRequest)).toEqual([false, false]);
    server.assertComplete();
  });

  it('a check left owed for a chat\'s answer (its summary request failed) is dropped when the caller sets a history without it, though an earlier answer has the same words', async () => {
    const server = await mockServer([
      { content: [text('Done.')], usage: big },
      { error: { status: 500 } },
      (request: RecordedRequest) => (expect(isSummaryRequest(request)).toBe(false), { content: [text('Row 2 is looked up.')] }),
    ]);
    // A chat whose earlier answer (a reply kept as it came) reads as this one.
    const messages = [
      { role: 'user' as const, content: 'Look up row 0.' },
      { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Done.', citations: null }] },
      { role: 'user' as const, content: 'Look up row 1.' },
    ];
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, messages, tools: [lookup], ...compacting });
    await chatWhoseSummaryFails(runner);
    // The user takes the last exchange back: the history before it, another question in place of row 1's.
    const set = [...messages.slice(0, 2), { role: 'user' as const, content: 'Look up row 2 instead.' }];
    runner.setMessagesParams((params) => ({ ...params, messages: set }));
    await runner;
    expect(server.requests.map(isSummaryRequest)).toEqual([false, true, false]);
    expect(wire(server.requests[2]!).messages).toEqual(set);
  });

  it('a check left owed for a chat\'s answer (its summary request failed) holds for a copy of the history set in its place (saved as JSON, read back)', async () => {
    const server = await mockServer([
      { content: [text('Row 1 is looked up.')], usage: big },
      { error: { status: 500 } },
      (request: RecordedRequest) => (expect(isSummaryRequest(request)).toBe(true), { content: [text('<summary>Looked up row 1.</summary>')] }),
      { content: [text('Row 2 is row 1 plus one.')] },
    ]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [lookup], ...compacting });
    await chatWhoseSummaryFails(runner);
    runner.setMessagesParams((params) => ({ ...params, messages: JSON.parse(JSON.stringify(params.messages)) as typeof params.messages }));
    await runner;
    expect(server.requests.map(isSummaryRequest)).toEqual([false, true, true, false]);
    server.assertComplete();
  });

  it('a check left owed for a chat\'s answer (its summary request failed) is dropped when the caller sets a history without it: the next request goes with the history set', async () => {
    const server = await mockServer([
      { content: [text('Row 1 is looked up.')], usage: big },
      { error: { status: 500 } },
      (request: RecordedRequest) => (expect(isSummaryRequest(request)).toBe(false), { content: [text('4')] }),
    ]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [lookup], ...compacting });
    await chatWhoseSummaryFails(runner);
    // An answer has no call id to tell it by: the history set in its place was summarised all the same.
    const fresh = [
      { role: 'user' as const, content: 'hi' },
      { role: 'assistant' as const, content: 'hello' },
      { role: 'user' as const, content: 'what is 2+2?' },
    ];
    runner.setMessagesParams((params) => ({ ...params, messages: fresh }));
    await runner;
    expect(server.requests.map(isSummaryRequest)).toEqual([false, true, false]);
    expect(wire(server.requests[2]!).messages).toEqual(fresh);
  });

  it("a streamed reply the body pushed with a question while an onMessage hook still ran (finalMessage() has it first) is checked too", async () => {
    const server = await summarisedChat();
    const params = { ...baseParams, stream: true as const, tools: [lookup], ...compacting };
    const runner = toolRunner(server.client(), params, { hooks: { onMessage: slowOnMessage } });
    const question = { role: 'user' as const, content: 'And row 2?' };
    let asked = false;
    for await (const stream of runner) {
      const message = await stream.finalMessage();
      if (!asked) runner.pushMessages(message, question);
      asked = true;
    }
    expect(server.requests.map(isSummaryRequest)).toEqual([false, true, false]);
    expect(wire(server.requests[2]!).messages).toEqual([expect.objectContaining({ role: 'user' }), question]);
    server.assertComplete();
  });

  it('a snapshot taken in the body after it pushed the reply and a question (a chat) is owed the check: the resumed run asks for the summary the run would have', async () => {
    const server = await summarisedChat();
    const params = { ...baseParams, tools: [lookup], ...compacting };
    const runner = toolRunner(server.client(), params);
    const question = { role: 'user' as const, content: 'And row 2?' };
    let snapshot: RunnerSnapshot | undefined;
    for await (const message of runner) {
      runner.pushMessages(message, question);
      // Saved before the next request (a chat that goes on in another process).
      snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
      break;
    }
    await resumeToolRunner(server.client(), snapshot!, { tools: [lookup] });
    expect(server.requests.map(isSummaryRequest)).toEqual([false, true, false]);
    expect(wire(server.requests[2]!).messages).toEqual([expect.objectContaining({ role: 'user' }), question]);
    server.assertComplete();
  });

  it('a history the body cut itself (a window of the last messages, the reply and a question) is not summarised: the reply\'s tokens counted the history it replaced', async () => {
    const server = await mockServer([
      { content: [text('Row 1 is looked up.')], usage: big },
      { content: [text('Row 2 is row 1 plus one.')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], ...compacting });
    const window = [{ role: 'user' as const, content: 'We looked up row 1 before.' }];
    const question = { role: 'user' as const, content: 'And row 2?' };
    let asked = false;
    for await (const message of runner) {
      // The program keeps its own window: the 30,000 tokens the reply counted are no longer in the history.
      if (!asked) runner.setMessagesParams((params) => ({ ...params, messages: [...window, message, question] }));
      asked = true;
    }
    expect(server.requests.map(isSummaryRequest)).toEqual([false, false]);
    expect(wire(server.requests[1]!).messages).toEqual([window[0], expect.objectContaining({ role: 'assistant' }), question]);
    server.assertComplete();
  });
});

describe('client-side compaction after a message appended late (after the loop body, the reply still streaming)', () => {
  it('the follow-up goes after the results before the summary is asked for, and is kept word for word after it', async () => {
    for (const keepTurns of [0, 1]) {
      const server = await mockServer([
        { content: [toolUse('work', {}, 'toolu_1')], eventDelayMs: 10, usage: { input_tokens: 50_000 } },
        { content: [text('<summary>The user asked for some work; it was done.</summary>')] },
        { content: [text('Done.')] },
      ]);
      const work = tool({ name: 'work', inputSchema: z.object({}), run: () => 'worked' });
      const runner = toolRunner(server.client(), { ...baseParams, stream: true, tools: [work], compactionControl: { enabled: true, contextTokenThreshold: 10_000, keepTurns } });
      let pushed = false;
      for await (const stream of runner) {
        stream.on('streamEvent', (event) => void (!pushed && event.type === 'content_block_start' && ((pushed = true), runner.pushMessages({ role: 'user', content: 'Also, cc Bob.' }))));
      }
      // The summary request sees the call, its result, then the follow-up.
      expect(wire(server.requests[1]!).messages.slice(-3).map((message: { role: string }) => message.role)).toEqual(['user', 'user', 'user']);
      expect(JSON.stringify(wire(server.requests[1]!).messages.at(-2))).toContain('Also, cc Bob.');
      // Kept word for word after the summary with keepTurns 0 too (the default): the model had not read it yet, and the
      // summary put its paraphrase in its place (or left it out).
      expect(wire(server.requests[2]!).messages.at(-1)).toEqual({ role: 'user', content: 'Also, cc Bob.' });
      if (keepTurns === 0) expect(wire(server.requests[2]!).messages).toHaveLength(2);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });
});

describe('client-side compaction: a question the model has not answered yet', () => {
  it("a question pushed after an answer at a limit, whose summary was owed, goes word for word after the summary (keepTurns 0)", async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big },
      { content: [text('The answer at the limit.')], usage: big },
      (request: RecordedRequest) => {
        expect(isSummaryRequest(request)).toBe(true);
        return { content: [text('<summary>Looked up nothing yet.</summary>')] };
      },
      { content: [text('More.')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, max_iterations: 1, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } }, { onLimit: 'answer' });
    await runner;
    expect(runner.stoppedBy).toBe('max_iterations');
    runner.setMessagesParams((params) => ({ ...params, max_iterations: 10 }));
    runner.pushMessages({ role: 'user', content: 'And in Celsius?' });
    await runner;
    const after = wire(server.requests[3]!).messages;
    expect(after).toHaveLength(2);
    expect(after[0].content[0].text).toMatch(/Looked up nothing yet\.\n\nContinue the work from here\.$/);
    expect(after[1]).toEqual({ role: 'user', content: 'And in Celsius?' });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
  it('a message pushed to go on after a reply cut off by max_tokens (its calls answered as not run by the summary request) stays after the summary too', async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], stop_reason: 'max_tokens', usage: big },
      (request: RecordedRequest) => {
        expect(isSummaryRequest(request)).toBe(true);
        return { content: [text('<summary>The lookup was cut off.</summary>')] };
      },
      { content: [text('Going on.')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } });
    await runner;
    // The ended run sends nothing more: it goes on resumed from its snapshot.
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot, { tools: [lookup] });
    resumed.pushMessages({ role: 'user', content: 'Go on, with a shorter reply.' });
    await resumed;
    const after = wire(server.requests[2]!).messages;
    expect(after.map((message: { role: string }) => message.role)).toEqual(['user', 'user']);
    expect(after[1]).toEqual({ role: 'user', content: 'Go on, with a shorter reply.' });
    expect(historyProblems(resumed.params.messages)).toEqual([]);
  });
});

describe('client-side compaction after a stop for approval, a message pushed instead of a decision', () => {
  it('the summary is asked of the history with the result of the call that ran beside the waiting one (not "not run"), and the message stays after it', async () => {
    const gated = tool({ name: 'gated', inputSchema: z.object({}), needsApproval: true, run: () => 'sent' });
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1'), toolUse('gated', {}, 'toolu_g')], usage: big },
      (request: RecordedRequest) => {
        expect(isSummaryRequest(request)).toBe(true);
        return { content: [text('<summary>Row 1 looked up; nothing sent.</summary>')] };
      },
      { content: [text('Fine.')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup, gated], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } });
    await runner;
    runner.pushMessages({ role: 'user', content: 'Do not send it.' });
    await runner;
    const results = wire(server.requests[1]!).messages[2].content;
    expect(results[0]).toMatchObject({ tool_use_id: 'toolu_1', content: expect.stringMatching(/^row 1: /) });
    expect(results[0]).not.toHaveProperty('is_error');
    expect(results[1]).toMatchObject({ tool_use_id: 'toolu_g', is_error: true });
    expect(wire(server.requests[2]!).messages[1]).toEqual({ role: 'user', content: 'Do not send it.' });
  });
});

describe('client-side compaction over an SDK thread (toolRunner(thread, …))', () => {
  it('a note the program appended to the thread in the loop body of a reply past the threshold goes after the summary: it was lost', async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big },
      (request: RecordedRequest) => {
        expect(isSummaryRequest(request)).toBe(true);
        return { content: [text('<summary>Looked up row 1.</summary>')] };
      },
      { content: [text('All done.')] },
    ]);
    const note = { role: 'user' as const, content: 'A note from the app.' };
    const thread = server.client().beta.messages.thread({ ...baseParams, tools: [lookup], compactionControl: { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT } } as never);
    const runner = toolRunner(thread, {});
    let appended = false;
    for await (const _message of runner) if (!appended && (appended = true)) thread.append(note);
    // The summary is asked of the history with the note after the results; the note stays, word for word, after it.
    expect(wire(server.requests[1]!).messages.at(-2)).toEqual(note);
    expect(wire(server.requests[2]!).messages.map((message: { role: string }) => message.role)).toEqual(['user', 'user']);
    expect(wire(server.requests[2]!).messages[1]).toEqual(note);
    expect(thread.messages.slice(1, 2)).toEqual([note]);
    expect(historyProblems(thread.messages)).toEqual([]);
  });
});

describe('compactBeforeNextTurn() on the final answer, a message appended late while it streamed', () => {
  const compaction = { content: [{ type: 'compaction', content: 'Summary of the work.', encrypted_content: null } as never] };
  async function ended(steps: object[]) {
    const server = await mockServer([{ content: [text('The final answer, streamed slowly')], eventDelayMs: 10 }, ...steps] as never);
    const { lines, logger } = captureLogger();
    const runner = toolRunner(server.client({ maxRetries: 0, logger, logLevel: 'warn' }), { ...baseParams, stream: true, thread: false });
    let pushed = false;
    const snapshots: RunnerSnapshot[] = [];
    const iterate = async () => {
      for await (const stream of runner) {
        // The compaction's item: a snapshot taken in its body holds the message too.
        if (pushed) snapshots.push(JSON.parse(JSON.stringify(runner.toJSON())));
        if (pushed) continue;
        runner.compactBeforeNextTurn();
        stream.on('streamEvent', (event) => void (!pushed && event.type === 'content_block_delta' && ((pushed = true), runner.pushMessages({ role: 'user', content: 'Also, cc Bob.' }))));
      }
    };
    return { server, lines, runner, iterate, snapshots };
  }
  const follow = { role: 'user', content: 'Also, cc Bob.' };

  it('is not summarised: it goes after the summary, the ended run says it sends it not, and a resumed run sends it', async () => {
    const { server, lines, runner, iterate, snapshots } = await ended([compaction, { content: [text('Bob is cc-ed.')] }]);
    await iterate();
    expect(snapshots.map((snapshot) => snapshot.params.messages.at(-1))).toEqual([follow]);
    expect(JSON.stringify(wire(server.requests[1]!).messages)).not.toContain('Also, cc Bob.');
    expect(runner.params.messages).toEqual([{ role: 'assistant', content: compaction.content }, follow]);
    expect(lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([expect.stringMatching(/^The run has ended \(stoppedBy 'model'\): the messages and params set now are not sent/)]);
    const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), {});
    expect(textOf(await resumed)).toBe('Bob is cc-ed.');
    expect(wire(server.requests[2]!).messages).toEqual([{ role: 'assistant', content: compaction.content }, follow]);
  });

  it("the compaction's onRequest throwing (nothing sent): the message is back after the answer, not lost; iterated again, the compaction goes as the run's last request, without it, and the run ends", async () => {
    const server = await mockServer([{ content: [text('The final answer, streamed slowly')], eventDelayMs: 10 }, compaction]);
    let refuse = true;
    const onRequest = (body: Record<string, unknown>) => {
      if (body['compaction'] && refuse) throw new Error('not now');
    };
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, stream: true, thread: false }, { hooks: { onRequest } });
    let pushed = false;
    const iterate = async () => {
      for await (const stream of runner) {
        if (pushed) continue;
        runner.compactBeforeNextTurn();
        stream.on('streamEvent', (event) => void (!pushed && event.type === 'content_block_delta' && ((pushed = true), runner.pushMessages({ role: 'user', content: 'Also, cc Bob.' }))));
      }
    };
    await expect(iterate()).rejects.toThrow(/not now/);
    expect(runner.params.messages.slice(-2)).toEqual([{ role: 'assistant', content: [expect.objectContaining({ text: 'The final answer, streamed slowly' })] }, follow]);
    expect(server.requests).toHaveLength(1);
    const snapshot: RunnerSnapshot = JSON.parse(JSON.stringify(runner.toJSON()));
    expect(snapshot.compaction).toEqual({ scheduled: { type: 'summarize' }, ending: 'model' });
    refuse = false;
    await iterate();
    expect(server.requests).toHaveLength(2);
    expect(wire(server.requests[1]!).body.compaction).toEqual({ type: 'summarize' });
    expect(JSON.stringify(wire(server.requests[1]!).messages)).not.toContain('Also, cc Bob.');
    expect(runner.stoppedBy).toBe('model');
    expect(runner.params.messages).toEqual([{ role: 'assistant', content: compaction.content }, follow]);
  });

  it('the summary failing: it is back after the answer, and the compaction asked again (iterating) goes without it too', async () => {
    const { server, runner, iterate } = await ended([{ error: { status: 500 } }, compaction]);
    await expect(iterate()).rejects.toThrow(/500/);
    expect(runner.params.messages.at(-1)).toEqual(follow);
    await iterate();
    expect(JSON.stringify(wire(server.requests[2]!).messages)).not.toContain('Also, cc Bob.');
    expect(runner.params.messages).toEqual([{ role: 'assistant', content: compaction.content }, follow]);
  });
});

describe("compactBeforeNextTurn() before a new turn, its onRequest throwing (nothing sent)", () => {
  it('is forgotten as a failed compaction is: the history can be set, a compaction asked again goes, the run goes on', async () => {
    const compaction = { content: [{ type: 'compaction', content: 'Summary.', encrypted_content: null } as never] };
    const server = await mockServer([{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')] }, compaction, { content: [text('Done.')] }]);
    let refuse = true;
    const onRequest = (body: Record<string, unknown>) => {
      if (body['compaction'] && refuse) throw new Error('not now');
    };
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [lookup], thread: false }, { hooks: { onRequest } });
    const iterate = async () => {
      for await (const _message of runner) if (server.requests.length === 1) runner.compactBeforeNextTurn();
    };
    await expect(iterate()).rejects.toThrow(/not now/);
    expect(server.requests).toHaveLength(1);
    // Not stuck as if in flight: the history may change, and the compaction asked again is sent.
    runner.setMessagesParams((params) => ({ ...params, messages: [...params.messages] }));
    runner.compactBeforeNextTurn();
    refuse = false;
    await iterate();
    expect(wire(server.requests[1]!).body.compaction).toEqual({ type: 'summarize' });
    expect(runner.stoppedBy).toBe('model');
    expect(server.requests).toHaveLength(3);
  });
});

describe('compactBeforeNextTurn() on the final answer, its request failing', () => {
  it('a snapshot taken then resumes by sending the compaction and ending on it, as iterating again does (it asked the model again)', async () => {
    const compaction = { content: [{ type: 'compaction', content: 'Summary.', encrypted_content: null } as never] };
    const server = await mockServer([{ content: [text('Final answer.')] }, { error: { status: 500 } }, compaction]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, thread: false });
    const iterate = async () => {
      for await (const _message of runner) if (server.requests.length === 1) runner.compactBeforeNextTurn();
    };
    await expect(iterate()).rejects.toThrow(/500/);
    const snapshot: RunnerSnapshot = JSON.parse(JSON.stringify(runner.toJSON()));
    expect(snapshot.compaction).toEqual({ scheduled: { type: 'summarize' }, ending: 'model' });
    expect(() => resumeToolRunner(server.client(), { ...snapshot, compaction: { ...snapshot.compaction, ending: 'done' as never } })).toThrow(/compaction\.ending/);
    const resumed = resumeToolRunner(server.client(), snapshot);
    await resumed.runUntilDone();
    expect(server.requests).toHaveLength(3);
    expect(wire(server.requests[2]!).body.compaction).toEqual({ type: 'summarize' });
    expect(resumed.stoppedBy).toBe('model');
    expect(resumed.params.messages).toEqual([{ role: 'assistant', content: compaction.content }]);
  });
});

describe('server-side context management', () => {
  it('context_management and its beta pass through untouched (without a thread, which cannot carry it); stop_reason compaction continues the loop', async () => {
    const contextManagement = { edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 30_000 } }] };
    const server = await mockServer([
      { content: [text('compacting')], stop_reason: 'compaction' as never },
      { content: [text('done')] },
    ]);
    const runner = toolRunner(server.client(), {
      ...baseParams,
      betas: ['context-management-2025-06-27'],
      context_management: contextManagement as never,
    });
    await runner;
    // The thread is rejected as thread_unsupported_request; the run goes on with the whole history.
    expect(server.requests).toHaveLength(3);
    expect(wire(server.requests[0]!).body.thread).toEqual({ type: 'create' });
    expect(server.requests.slice(1).map((request) => wire(request).body.thread)).toEqual([undefined, undefined]);
    expect(wire(server.requests[1]!).body.context_management).toEqual(contextManagement);
    expect(server.requests[1]!.headers['anthropic-beta']).toContain('context-management-2025-06-27');
    expect(wire(server.requests[2]!).body.messages).toHaveLength(2);
  });

  // A snapshot at the compaction stream's message event counted the compaction (paid for) but held the history before it,
  // the compaction still to send: the resumed run asked for it again, paid twice, as it does not in the body of a whole reply.
  it("a snapshot taken at a streamed compaction's message event holds the compaction: the resumed run goes on from it, asking for none again", async () => {
    const summary = { content: [{ type: 'compaction', content: 'Summary of the work.', encrypted_content: null } as never], usage: { input_tokens: 5_000, output_tokens: 300 } };
    const server = await mockServer([{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: { input_tokens: 100, output_tokens: 10 } }, summary]);
    const runner = toolRunner(server.client(), { ...baseParams, stream: true as const, thread: false, tools: [lookup] });
    let snapshot: RunnerSnapshot | undefined;
    let first = true;
    for await (const stream of runner) {
      if (first) {
        first = false;
        runner.compactBeforeNextTurn();
        continue;
      }
      await new Promise((resolve) => stream.once('message', resolve));
      snapshot = JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot;
      break;
    }
    const again = await mockServer([(request) => (expect(wire(request).body.compaction).toBeUndefined(), { content: [text('All done.')], usage: { input_tokens: 400, output_tokens: 5 } })]);
    const resumed = resumeToolRunner(again.client(), snapshot!, { tools: [lookup] });
    expect(textOf(await resumed)).toBe('All done.');
    expect(wire(again.requests[0]!).messages).toEqual([{ role: 'assistant', content: summary.content }]);
    expect(resumed.usage).toMatchObject({ input_tokens: 100 + 5_000 + 400, output_tokens: 10 + 300 + 5 });
    again.assertComplete();
  });

  // Asked for in the loop body of a reply past the threshold: the run summarised the history on the client, then sent the
  // server's compaction of that summary (two compactions paid for, the second of a summary).
  for (const stream of [false, true]) it(`compactBeforeNextTurn on a reply past compactionControl's threshold: the server's compaction alone is sent, no client summary before it (stream: ${stream})`, async () => {
    const summary = { content: [{ type: 'compaction', content: 'Summary of the work.', encrypted_content: null } as never] };
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')], usage: big },
      (request: RecordedRequest) => (expect(isSummaryRequest(request)).toBe(false), expect(wire(request).body.compaction).toEqual({ type: 'summarize' }), summary),
      { content: [text('All done.')] },
    ]);
    const compactionControl = { enabled: true, contextTokenThreshold: 20_000, summaryPrompt: PROMPT };
    const runner = toolRunner(server.client(), { ...baseParams, stream, thread: false, tools: [lookup], compactionControl });
    let first = true;
    for await (const _ of runner) {
      if (first) runner.compactBeforeNextTurn();
      first = false;
    }
    expect(server.requests.map(isSummaryRequest)).toEqual([false, false, false]);
    expect(wire(server.requests[1]!).messages.map((message: BetaMessageParam) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(runner.params.messages[0]).toEqual({ role: 'assistant', content: summary.content });
    expect(historyProblems(runner.params.messages)).toEqual([]);
    server.assertComplete();
  });

  it("compactBeforeNextTurn: a tool the history's tool_removal withdrew stays withdrawn once the compaction block replaces the history", async () => {
    const log: string[] = [];
    const login = tool({ name: 'login', inputSchema: z.object({}), run: () => (log.push('login'), 'logged in') });
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')] },
      { content: [{ type: 'compaction', content: 'Summary of the work.', encrypted_content: null } as never] },
      { content: [toolUse('login', {}, 'toolu_login')] },
      { content: [text('done')] },
    ]);
    const messages = [
      { role: 'user' as const, content: 'hi' },
      { role: 'system', content: [{ type: 'tool_removal', tool: { type: 'tool_reference', name: 'login' } }] } as never,
      { role: 'user' as const, content: 'go' },
    ];
    const runner = toolRunner(server.client(), { ...baseParams, thread: false, messages, tools: [lookup, login] });
    let first = true;
    for await (const _ of runner) {
      if (first) runner.compactBeforeNextTurn();
      first = false;
    }
    expect(log).toEqual([]);
    expect(wire(server.requests[3]!).messages.at(-1).content[0]).toMatchObject({ tool_use_id: 'toolu_login', is_error: true, content: expect.stringMatching(/not found/) });
  });

  it('compactBeforeNextTurn on a paused turn whose resume request fails: iterated again, the turn is resumed first, then compacted, as in the SDK', async () => {
    const script: ScriptedReply[] = [
      { content: [text('Searching.'), serverToolUse('web_search', { query: 'weather' }, 'srvtoolu_1')], stop_reason: 'pause_turn' },
      { error: { status: 500 } } as never,
      { content: [text('It is sunny.')] },
    ];
    const step = (request: RecordedRequest) => (wire(request).body.compaction ? { content: [{ type: 'compaction', content: 'Summary: searched.', encrypted_content: null } as never] } : script.shift()!);
    const server = await mockServer([step, step, step, step]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, thread: false, tools: [{ type: 'web_search_20250305', name: 'web_search' } as never] });
    let turn = 0;
    await expect(async () => {
      for await (const _message of runner) if (++turn === 1) runner.compactBeforeNextTurn();
    }).rejects.toMatchObject({ status: 500 });
    await runner;
    expect(server.requests.map((request) => (wire(request).body.compaction ? 'compaction' : 'turn'))).toEqual(['turn', 'turn', 'turn', 'compaction']);
    expect(runner.params.messages.map((message) => (typeof message.content === 'string' ? 'text' : (message.content ?? []).map((block) => block.type).join('+')))).toEqual(['compaction']);
  });

  for (const change of ['removeTools', 'addTools'] as const) it(`compactBeforeNextTurn with no summary, then ${change}() in its loop body: the next request continues the thread held before, with the results and the change, as the SDK's runner (it continued the compaction's thread with nothing)`, async () => {
    const script: ScriptedReply[] = [{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')] }, { content: [text('Done.')] }];
    const step = (request: RecordedRequest) => (wire(request).body.compaction ? { content: [{ type: 'compaction', content: null } as never] } : script.shift()!);
    const server = await mockServer([step, step, step]);
    const { logger } = captureLogger();
    const calc = tool({ name: 'calc', inputSchema: z.object({}), run: () => '0' });
    const runner = toolRunner(server.client({ logger }), { ...baseParams, tools: [lookup] });
    let turn = 0;
    for await (const _message of runner) {
      turn++;
      if (turn === 1) runner.compactBeforeNextTurn();
      if (turn === 2) change === 'removeTools' ? runner.removeTools('lookup') : runner.addTools(calc);
    }
    const last = wire(server.requests[2]!).body;
    expect(last.thread).toEqual({ type: 'continue', previous_message_id: expect.any(String) });
    expect(last.messages.map((message: { role: string }) => message.role)).toEqual(['user', 'system']);
    expect(JSON.stringify(last.messages.at(-1))).toContain(change === 'removeTools' ? 'tool_removal' : 'tool_addition');
    expect(JSON.stringify(server.requests[2]!.messages)).not.toContain('compaction');
  });

  it('compactBeforeNextTurn answered by a fallback with no summary: the next request still continues the thread held before (the fallback\'s reply anchors nothing either way)', async () => {
    const script: ScriptedReply[] = [{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')] }, { content: [text('Done.')] }];
    const step = (request: RecordedRequest) => {
      const body = wire(request).body;
      if (!body.compaction) return script.shift()!;
      return body.model === 'claude-fallback' ? { content: [{ type: 'compaction', content: null } as never] } : { error: { status: 529 } };
    };
    const server = await mockServer([step, step, step, step]);
    const { logger } = captureLogger();
    const runner = toolRunner(server.client({ logger, maxRetries: 0 }), { ...baseParams, tools: [lookup] }, { fallback: [{ model: 'claude-fallback' }] });
    let turn = 0;
    for await (const _message of runner) if (++turn === 1) runner.compactBeforeNextTurn();
    expect(server.requests.map((request) => [wire(request).body.model, Boolean(wire(request).body.compaction)])).toEqual([
      [baseParams.model, false],
      [baseParams.model, true],
      ['claude-fallback', true],
      [baseParams.model, false],
    ]);
    expect(wire(server.requests[3]!).body.thread).toEqual({ type: 'continue', previous_message_id: expect.any(String) });
  });

  it('a snapshot taken after compactBeforeNextTurn keeps it scheduled: the resumed run sends the compaction request', async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')] },
      { content: [{ type: 'compaction', content: 'Summary of the work.', encrypted_content: null } as never] },
      { content: [text('done')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup] });
    let saved = '';
    for await (const _message of runner) {
      runner.compactBeforeNextTurn({ type: 'summarize', instructions: 'Keep the numbers.' } as never);
      saved = JSON.stringify(runner.toJSON());
      break;
    }
    expect(JSON.parse(saved).compaction).toEqual({ scheduled: { type: 'summarize', instructions: 'Keep the numbers.' } });
    const resumed = resumeToolRunner(server.client(), JSON.parse(saved), { tools: [lookup] });
    expect(await resumed).toMatchObject({ content: [{ text: 'done' }] });
    expect(wire(server.requests[1]!).body.compaction).toEqual({ type: 'summarize', instructions: 'Keep the numbers.' });
    expect(wire(server.requests[2]!).messages).toEqual([
      { role: 'assistant', content: [{ type: 'compaction', content: 'Summary of the work.', encrypted_content: null }] },
    ]);
  });

  for (const at of ['the final answer', 'a turn']) it(`a snapshot taken in the loop body of the compaction's reply after ${at} holds the compaction as adopted: the resumed run asks for it again neither, nor the model for a turn the run never made`, async () => {
    const turns: ScriptedReply[] = at === 'a turn' ? [{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')] }, { content: [text('Done.')] }, { content: [text('Done again.')] }] : [{ content: [text('Done.')] }, { content: [text('Asked again.')] }];
    let summaries = 0;
    const step = (request: RecordedRequest) => (wire(request).body.compaction ? { content: [{ type: 'compaction', content: `Summary ${++summaries}.`, encrypted_content: null } as never], stop_reason: 'compaction' as never } : turns.shift()!);
    const server = await mockServer([step, step, step, step, step]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup] });
    let snapshot: RunnerSnapshot | undefined;
    for await (const message of runner) {
      if (message.content[0]!.type === 'compaction') snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
      else if (!snapshot) runner.compactBeforeNextTurn();
    }
    const sent = server.requests.length;
    const resumed = resumeToolRunner(server.client(), snapshot!, { tools: [lookup] });
    const last = await resumed;
    // Resumed, the run goes on as it did: after the final answer it had ended; after a turn, its next request is a turn.
    expect(server.requests.slice(sent).map((request) => (wire(request).body.compaction ? 'compaction' : 'turn'))).toEqual(at === 'a turn' ? ['turn'] : []);
    expect(resumed.params.messages[0]).toEqual({ role: 'assistant', content: [{ type: 'compaction', content: 'Summary 1.', encrypted_content: null }] });
    expect(resumed.stoppedBy).toBe('model');
    if (at === 'the final answer') {
      expect(last).toEqual(await runner.done());
      expect(resumed.usage).toEqual(runner.usage);
    }
  });

  for (const stream of [false, true]) it(`compactBeforeNextTurn on the final reply, its compaction request failing${stream ? ' (streamed)' : ''}: awaited again, the compaction goes again and the run ends (no turn after the answer)`, async () => {
    const compacted = { content: [{ type: 'compaction', content: 'Summary: looked up 1.', encrypted_content: null } as never] };
    const server = await mockServer([{ content: [toolUse('lookup', { n: 1 }, 'toolu_1')] }, { content: [text('Done.')] }, { error: { status: 500 } } as never, compacted, { content: [text('never')] }]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, stream, tools: [lookup] });
    await expect(async () => {
      for await (const item of runner) {
        const message = 'finalMessage' in item ? await item.finalMessage() : item;
        if (message.stop_reason === 'end_turn') runner.compactBeforeNextTurn();
      }
    }).rejects.toMatchObject({ status: 500 });
    await runner;
    expect(server.requests.map((request) => (wire(request).body.compaction ? 'compaction' : 'turn'))).toEqual(['turn', 'turn', 'compaction', 'compaction']);
    expect(runner.params.messages).toEqual([{ role: 'assistant', content: compacted.content }]);
    expect(runner.stoppedBy).toBe('model');
  });

  it('compactBeforeNextTurn on the final reply, its compaction failing, then a message pushed: the compaction goes with the next request and the run answers the message', async () => {
    const compacted = { content: [{ type: 'compaction', content: 'Summary: said done.', encrypted_content: null } as never] };
    const server = await mockServer([{ content: [text('Done.')] }, { error: { status: 500 } } as never, compacted, { content: [text('Berlin too.')] }]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), baseParams);
    await expect(async () => {
      for await (const _message of runner) runner.compactBeforeNextTurn();
    }).rejects.toMatchObject({ status: 500 });
    runner.pushMessages({ role: 'user', content: 'Also Berlin.' });
    expect(await runner).toMatchObject({ content: [{ text: 'Berlin too.' }] });
    expect(server.requests.map((request) => (wire(request).body.compaction ? 'compaction' : 'turn'))).toEqual(['turn', 'compaction', 'compaction', 'turn']);
  });

  it('compactBeforeNextTurn asked for on the final reply, past budget.maxTokens: not sent (no request past the budget); the run ends on the reply', async () => {
    const server = await mockServer([{ content: [text('done')], usage: { input_tokens: 250, output_tokens: 20 } }, { content: [text('never')] }]);
    const { lines, logger } = captureLogger();
    const runner = toolRunner(server.client({ logger, logLevel: 'info' }), baseParams, { budget: { maxTokens: 200 } });
    for await (const _message of runner) runner.compactBeforeNextTurn();
    expect(server.requests).toHaveLength(1);
    expect(runner.stoppedBy).toBe('model');
    expect(lines).toContainEqual({ level: 'info', message: 'The compaction asked for (compactBeforeNextTurn) is not sent: budget.maxTokens reached: 270 of 200 tokens' });
  });

  it('compactBeforeNextTurn sends a compaction request after the turn; its block replaces the history', async () => {
    const server = await mockServer([
      { content: [toolUse('lookup', { n: 1 }, 'toolu_1')] },
      { content: [{ type: 'compaction', content: 'Summary of the work.', encrypted_content: null } as never] },
      { content: [text('done')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup] });
    const yielded: string[] = [];
    for await (const message of runner) {
      yielded.push(message.content[0]!.type);
      if (yielded.length === 1) runner.compactBeforeNextTurn();
    }
    expect(yielded).toEqual(['tool_use', 'compaction', 'text']);
    expect(wire(server.requests[1]!).body.compaction).toEqual({ type: 'summarize' });
    expect(wire(server.requests[1]!).messages).toHaveLength(3);
    expect(wire(server.requests[2]!).messages).toEqual([
      { role: 'assistant', content: [{ type: 'compaction', content: 'Summary of the work.', encrypted_content: null }] },
    ]);
    expect(wire(server.requests[2]!).body).not.toHaveProperty('compaction');
  });
});
