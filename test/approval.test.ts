import { getEventListeners } from 'node:events';
import { APIUserAbortError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ApprovalRequest, HookError, type RunnerEvent, type RunnerSnapshot, type ToolRunner, resumeToolRunner, textOf, tool, toolRunner } from 'tool-runner';
import { historyProblems, text, toolResults, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer, unhandledDuring, warningsDuring, wire } from './helpers.js';

function tools(log: string[]) {
  const transfer = tool({
    name: 'transfer',
    description: 'Moves money',
    inputSchema: z.object({ amount: z.number().positive(), to: z.string() }),
    needsApproval: (input) => input.amount > 100,
    run: ({ amount, to }) => (log.push(`transfer ${amount} to ${to}`), `sent ${amount} to ${to}`),
  });
  const balance = tool({
    name: 'balance',
    inputSchema: z.object({}),
    run: () => (log.push('balance'), '1000'),
  });
  const remove = tool({
    name: 'delete_account',
    inputSchema: z.object({}),
    needsApproval: true,
    run: () => (log.push('deleted'), 'deleted'),
  });
  return [transfer, balance, remove];
}

const script = () => [
  {
    content: [
      toolUse('balance', {}, 'toolu_balance'),
      toolUse('transfer', { amount: 50, to: 'ann' }, 'toolu_small'),
      toolUse('transfer', { amount: 500, to: 'bob' }, 'toolu_big'),
      toolUse('delete_account', {}, 'toolu_delete'),
    ],
  },
  { content: [text('Done.')] },
];

describe('approval decided too early', () => {
  it("a call decided as it starts waiting (its tool.end pending), before the reply's other calls end: the error says when it can be decided, and it can then", async () => {
    const server = await mockServer(script());
    const said: string[] = [];
    const runner: ReturnType<typeof toolRunner> = toolRunner(server.client(), { ...baseParams, tools: tools([]) }, {
      onEvent: (event) => {
        if (event.type !== 'tool.end' || !event.pending || event.call.id !== 'toolu_big') return;
        try {
          runner.approve('toolu_big');
        } catch (error) {
          said.push((error as Error).message);
        }
      },
    });
    await runner;
    expect(said).toEqual([
      "Tool call 'toolu_big' waits for approval, but is listed and decided only once its reply's other calls have ended: in runner.pendingApprovals after generateToolResponse() returns, or when the run stops for approval (options.approve decides as the call starts waiting)",
    ]);
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_big', 'toolu_delete']);
    runner.approve('toolu_big');
    runner.deny('toolu_delete');
    expect(textOf(await runner)).toBe('Done.');
  });
});

describe('approval with options.approve', () => {
  it("runs waiting for the approver under one shared signal hold one listener on it, not one a run (a server's signal)", async () => {
    const server = await mockServer(Array.from({ length: 30 }, (_, n) => (request: { body: unknown }) => (wire(request as never).messages.length > 1 ? { content: [text('done')] } : { content: [toolUse('pay', {}, `toolu_${n}`)] })) as never);
    const shared = new AbortController();
    const decisions: Array<() => void> = [];
    const pay = tool({ name: 'pay', inputSchema: z.object({}), needsApproval: true, run: () => 'paid' });
    const approve = () => new Promise<{ decision: 'allow' }>((resolve) => decisions.push(() => resolve({ decision: 'allow' })));
    const runs = Array.from({ length: 15 }, () => toolRunner(server.client(), { ...baseParams, tools: [pay] }, { signal: shared.signal, approve }).runUntilDone());
    while (decisions.length < 15) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(getEventListeners(shared.signal, 'abort').length).toBeLessThanOrEqual(1);
    for (const decide of decisions) decide();
    await Promise.all(runs);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it("an approver that stops waiting for a person when its signal aborts, and never removes that listener, leaves none on the runs' shared signal (a server's: Node warned at the eleventh question)", async () => {
    const server = await mockServer(Array.from({ length: 24 }, () => (request: { body: unknown }) => (wire(request as never).messages.length > 1 ? { content: [text('done')] } : { content: [toolUse('pay', {})] })) as never);
    const shared = new AbortController();
    const pay = tool({ name: 'pay', inputSchema: z.object({}), needsApproval: true, run: () => 'paid' });
    const approve = (_call: unknown, { signal }: { signal: AbortSignal }) =>
      new Promise<{ decision: 'allow' }>((resolve, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        setTimeout(() => resolve({ decision: 'allow' }), 5);
      });
    const warnings = await warningsDuring(async () => {
      await Promise.all(Array.from({ length: 12 }, () => toolRunner(server.client(), { ...baseParams, tools: [pay] }, { signal: shared.signal, approve }).runUntilDone()));
    });
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    // Still told of the run's abort while a question waits.
    const waiting = await mockServer([{ content: [toolUse('pay', {})] }]);
    let asked: () => void = () => {};
    const questionAsked = new Promise<void>((resolve) => (asked = resolve));
    // A person who never decides: only the abort ends the wait.
    const never = (_call: unknown, { signal }: { signal: AbortSignal }) => (asked(), new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })));
    const run = toolRunner(waiting.client(), { ...baseParams, tools: [pay] }, { signal: shared.signal, approve: never }).runUntilDone().catch((error: unknown) => error);
    await questionAsked;
    shared.abort();
    expect(await run).toBeInstanceOf(APIUserAbortError);
  });

  it('asks for each call that needs it: allow, deny with a reason, allow with edited input (validated again)', async () => {
    const log: string[] = [];
    const asked: ApprovalRequest[] = [];
    const server = await mockServer(script());
    const runner = toolRunner(server.client(), { ...baseParams, tools: tools(log) }, {
      approve: (call) => {
        asked.push(call);
        if (call.name === 'delete_account') return { decision: 'deny', reason: 'never delete accounts' };
        return { decision: 'allow', input: { amount: 200, to: 'bob' } };
      },
    });
    await runner;
    expect(asked.map((call) => [call.name, call.input, call.toolUse.id]).sort()).toEqual([
      ['delete_account', {}, 'toolu_delete'],
      ['transfer', { amount: 500, to: 'bob' }, 'toolu_big'],
    ]);
    expect(log.sort()).toEqual(['balance', 'transfer 200 to bob', 'transfer 50 to ann']);
    const results = wire(server.requests[1]!).messages[2].content;
    expect(results.map((result: { tool_use_id: string }) => result.tool_use_id)).toEqual(['toolu_balance', 'toolu_small', 'toolu_big', 'toolu_delete']);
    expect(results[2]).toMatchObject({ content: 'sent 200 to bob' });
    expect(results[3]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_delete',
      is_error: true,
      content: "Error: the call to 'delete_account' was denied by the user: never delete accounts. It was not run.",
    });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('edited input that fails validation is answered with the issues and not run', async () => {
    const log: string[] = [];
    const server = await mockServer([{ content: [toolUse('transfer', { amount: 500, to: 'bob' })] }, { content: [text('ok')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: tools(log) }, { approve: () => ({ decision: 'allow', input: { amount: -1 } }) });
    expect(log).toEqual([]);
    expect(wire(server.requests[1]!).messages[2].content[0]).toMatchObject({ is_error: true, content: expect.stringContaining('- amount:') });
  });

  it('edited input with a field set to undefined (a JSON Schema tool) reads as JSON would: the field left out, the call run', async () => {
    const received: unknown[] = [];
    const send = tool({
      name: 'send',
      inputSchema: { type: 'object', properties: { to: { type: 'string' }, cc: { type: 'string' }, tags: { type: 'array', items: { type: ['string', 'null'] } } }, required: ['to'], additionalProperties: false },
      needsApproval: true,
      run: (input) => (received.push(input), 'sent'),
    });
    const server = await mockServer([
      { content: [toolUse('send', { to: 'a@x', cc: 'b@x', tags: ['t'] }, 'toolu_a'), toolUse('send', { to: 'c@x', cc: 'd@x' }, 'toolu_b')] },
      { content: [text('ok')] },
    ]);
    // The usual way to drop an optional field in JavaScript; an undefined item in an array is null, as in JSON.
    const approve = (call: ApprovalRequest) => ({ decision: 'allow' as const, input: call.toolUse.id === 'toolu_a' ? { ...(call.input as object), cc: undefined, tags: ['t', undefined] } : { to: 'e@x', cc: undefined } });
    const runner = toolRunner(server.client(), { ...baseParams, tools: [send] }, { approve });
    await runner;
    expect(received).toEqual([{ to: 'a@x', tags: ['t', null] }, { to: 'e@x' }]);
    expect(received.map((input) => Object.keys(input as object))).toEqual([['to', 'tags'], ['to']]);
    expect(wire(server.requests[1]!).messages[2].content.map((result: { content: string; is_error?: boolean }) => [result.content, result.is_error])).toEqual([
      ['sent', undefined],
      ['sent', undefined],
    ]);
    // `runner.approve(id, { input })` too.
    const paused = await mockServer([{ content: [toolUse('send', { to: 'a@x', cc: 'b@x' }, 'toolu_c')] }, { content: [text('ok')] }]);
    const manual = toolRunner(paused.client(), { ...baseParams, tools: [send] });
    await manual.runUntilDone();
    manual.approve('toolu_c', { input: { to: 'f@x', cc: undefined } });
    await manual.runUntilDone();
    expect(received.at(-1)).toEqual({ to: 'f@x' });
    expect(historyProblems(manual.params.messages)).toEqual([]);
  });

  it("an input a hook built (a JSON Schema tool) reads as JSON would: an array's hole is null, an object met twice is two (defaults stay apart); a cycle, or too much to copy, is invalid input", async () => {
    const received: unknown[] = [];
    const point = { type: 'object', properties: { x: { type: 'number', default: 1 }, y: { type: 'number', default: 2 } }, additionalProperties: false };
    const keep = tool({
      name: 'keep',
      inputSchema: { type: 'object', properties: { tags: { type: 'array', items: { type: ['string', 'null'] } }, a: point, b: point, meta: {} } },
      run: (input) => (received.push(input), 'kept'),
    });
    const holed: Array<string | undefined> = ['a'];
    holed[2] = 'c';
    const shared: Record<string, unknown> = { x: 5 };
    // 2^40 objects were it copied as JSON would carry it.
    let huge: Record<string, unknown> = { leaf: true };
    for (let level = 0; level < 40; level++) huge = { left: huge, right: huge };
    const cycle: Record<string, unknown> = { name: 'loop' };
    cycle.self = cycle;
    const inputs = [{ tags: holed }, { a: shared, b: shared }, { meta: huge }, { meta: cycle }];
    const server = await mockServer([{ content: inputs.map((_, index) => toolUse('keep', {}, `toolu_${index}`)) }, { content: [text('ok')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [keep] }, { hooks: { onToolCall: (call) => ({ input: inputs[Number(call.id.slice('toolu_'.length))] }) } });
    await runner;
    const results = toolResults(server.requests[1]!);
    expect(results.map((result) => result.content).slice(0, 2)).toEqual(['kept', 'kept']);
    for (const result of results.slice(2)) expect(result).toMatchObject({ is_error: true, content: expect.stringContaining('(root): is nested too deeply or too large to validate') });
    expect(received).toEqual([{ tags: ['a', null, 'c'] }, { a: { x: 5, y: 2 }, b: { x: 5, y: 2 } }]);
    const [, apart] = received as Array<{ a: object; b: object }>;
    expect(apart!.a).not.toBe(apart!.b);
    expect(shared).toEqual({ x: 5 });
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('a denial whose reason is not a string (an Error, a number, an object) still denies, with the reason as text', async () => {
    const server = await mockServer([{ content: [toolUse('delete_account', {}, 'toolu_a'), toolUse('delete_account', {}, 'toolu_b'), toolUse('delete_account', {}, 'toolu_c')] }, { content: [text('ok')] }]);
    const reasons = [new Error('policy 7'), 42, { rule: 7 }];
    await toolRunner(server.client(), { ...baseParams, tools: tools([]) }, { approve: () => ({ decision: 'deny', reason: reasons.shift() as never }) });
    expect(wire(server.requests[1]!).messages[2].content.map((result: { content: string }) => result.content)).toEqual([
      "Error: the call to 'delete_account' was denied by the user: Error: policy 7. It was not run.",
      "Error: the call to 'delete_account' was denied by the user: 42. It was not run.",
      // A plain object as JSON: the model had read "[object Object]".
      'Error: the call to \'delete_account\' was denied by the user: {"rule":7}. It was not run.',
    ]);
  });

  it('an approver that throws or answers nonsense stops the run with a clear error', async () => {
    const server = await mockServer([{ content: [toolUse('delete_account', {})] }, { content: [toolUse('delete_account', {})] }, { content: [toolUse('delete_account', {})] }]);
    const throwing = toolRunner(server.client(), { ...baseParams, tools: tools([]) }, {
      approve: () => {
        throw new Error('approval service down');
      },
    });
    await expect(throwing.runUntilDone()).rejects.toThrow(new HookError('approve', new Error('approval service down')).message);
    const nonsense = toolRunner(server.client(), { ...baseParams, tools: tools([]) }, { approve: () => ({ decision: 'yes' }) as never });
    await expect(nonsense.runUntilDone()).rejects.toThrow(/options.approve returned \{"decision":"yes"\}/);
    // A misspelt field would have run the model's input, not the edit.
    const log: string[] = [];
    const misspelt = toolRunner(server.client(), { ...baseParams, tools: tools(log) }, { approve: () => ({ decision: 'allow', inputs: {} }) as never });
    await expect(misspelt.runUntilDone()).rejects.toThrow(/options.approve returned \{"decision":"allow","inputs":\{\}\} for 'delete_account' \(a decision has no field 'inputs'\)/);
    expect(log).toEqual([]);
  });

  it('an approver that answers nonsense stops the run with a HookError, as one that throws; the answer quoted short, a cycle or a BigInt in it too', async () => {
    const cyclic: Record<string, unknown> = { decision: 'maybe' };
    cyclic['self'] = cyclic;
    const shared = { path: '/tmp/a' };
    const answers: Array<[unknown, RegExp]> = [
      [{ decision: 'yes' }, /^approve threw: TypeError: options\.approve returned \{"decision":"yes"\} for 'delete_account'; return \{ decision: 'allow' \}/],
      // JSON's own words ("Converting circular structure to JSON", "Do not know how to serialize a BigInt") were the error.
      [cyclic, /options\.approve returned \{"decision":"maybe","self":\[Circular\]\} for 'delete_account'; return \{ decision: 'allow' \}/],
      [{ decision: 1n }, /options\.approve returned \{"decision":1n\} for 'delete_account'; return/],
      // An object met twice, no cycle: it read `"original":[Circular]`.
      [{ decision: 'yes', input: shared, original: shared }, /options\.approve returned \{"decision":"yes","input":\{"path":"\/tmp\/a"\},"original":\{"path":"\/tmp\/a"\}\} for 'delete_account'; return/],
      // An Error returned rather than thrown, a function, a Map: JSON writes {} for them (`returned {}`), or leaves them out.
      [new Error('not now'), /options\.approve returned \[Error: not now\] for 'delete_account'; return/],
      [{ decision: () => 'allow', seen: new Map([['a', 1]]), tags: new Set(), kind: Symbol('k') }, /options\.approve returned \{"decision":\[function\],"seen":\[Map\(1\)\],"tags":\[Set\(0\)\],"kind":Symbol\(k\)\} for 'delete_account'; return/],
      [{ decision: 'maybe', list: [shared, [shared, cyclic]] }, /options\.approve returned \{"decision":"maybe","list":\[\{"path":"\/tmp\/a"\},\[\{"path":"\/tmp\/a"\},\{"decision":"maybe","self":\[Circular\]\}\]\]\} for 'delete_account'; return/],
      // An edited document under a misspelt field: 5 MB in the message.
      [{ decision: 'allow', inputs: { doc: 'x'.repeat(5_000_000) } }, /options\.approve returned \{"decision":"allow","inputs":\{"doc":"x+… for 'delete_account' \(a decision has no field 'inputs'\)/],
    ];
    for (const [answer, message] of answers) {
      const server = await mockServer([{ content: [toolUse('delete_account', {})] }]);
      const log: string[] = [];
      const runner = toolRunner(server.client(), { ...baseParams, tools: tools(log) }, { approve: () => answer as never });
      const error = await runner.runUntilDone().then(() => undefined, (thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(HookError);
      expect((error as HookError).hook).toBe('approve');
      expect((error as HookError).cause).toBeInstanceOf(TypeError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message.length).toBeLessThan(500);
      expect(log).toEqual([]);
    }
  });

  it('an approver that stops waiting by throwing when the run is aborted: the calls are answered as aborted (the asked one never ran), the run rejects with the abort error', async () => {
    const log: string[] = [];
    const server = await mockServer([{ content: [toolUse('balance', {}, 'toolu_balance'), toolUse('delete_account', {}, 'toolu_delete')] }]);
    const controller = new AbortController();
    // The run aborts while the approver is asked (a fixed delay from the start raced the first reply on a loaded machine).
    const approve = (_call: ApprovalRequest, { signal }: { signal: AbortSignal }) =>
      new Promise<never>((_resolve, reject) => (signal.addEventListener('abort', () => reject(signal.reason)), setTimeout(() => controller.abort(), 20)));
    const runner = toolRunner(server.client(), { ...baseParams, tools: tools(log) }, { approve, signal: controller.signal });
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(APIUserAbortError);
    expect(runner.stoppedBy).toBe('abort');
    expect(log).toEqual(['balance']);
    expect(runner.params.messages.at(-1)!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_balance', content: '1000' },
      { type: 'tool_result', tool_use_id: 'toolu_delete', is_error: true, content: "Error: the call to 'delete_account' was aborted before it started, so it was not run." },
    ]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it.each([undefined, 5_000])('a needsApproval rule asked after the run aborted, which rejects as its signal says (timeoutMs %s), leaves no unhandled rejection', async (timeoutMs) => {
    let runner: ToolRunner | undefined;
    const unhandled = await unhandledDuring(async () => {
      const server = await mockServer([{ content: [toolUse('guarded', { x: 1 }, 'toolu_1')] }, { content: [text('done')] }]);
      const controller = new AbortController();
      const guarded = tool({
        name: 'guarded',
        inputSchema: z.object({ x: z.number() }),
        ...(timeoutMs && { timeoutMs }),
        needsApproval: async (_input, { signal }) => {
          signal.throwIfAborted();
          return true;
        },
        run: async () => 'ran',
      });
      runner = toolRunner(server.client(), { ...baseParams, tools: [guarded] }, { signal: controller.signal, hooks: { onToolCall: () => controller.abort() } });
      await expect(runner.runUntilDone()).rejects.toThrow(APIUserAbortError);
    });
    // A Node process ends on an unhandled rejection.
    expect(unhandled).toEqual([]);
    expect(historyProblems(runner!.params.messages)).toEqual([]);
  });

  it('a needsApproval rule that answers neither true nor false stops the run with a HookError: an approval never fails open', async () => {
    for (const answer of [1, 'yes', { reason: 'big' }, Promise.resolve('no')]) {
      const log: string[] = [];
      const server = await mockServer([{ content: [toolUse('refund', { amount: 500 })] }, { content: [text('never')] }]);
      const refund = tool({ name: 'refund', inputSchema: z.object({ amount: z.number() }), needsApproval: () => answer as never, run: () => (log.push('refunded'), 'refunded') });
      const runner = toolRunner(server.client(), { ...baseParams, tools: [refund] }, { approve: () => ({ decision: 'allow' }) });
      const error = await runner.runUntilDone().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(HookError);
      expect((error as Error).message).toMatch(/^needsApproval of 'refund' threw: TypeError: it returned .*: a rule must return true or false \(a promise of one\)$/);
      expect(log).toEqual([]);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it("the run's signal ends a needsApproval rule or an async validator that never answers: the call is answered as aborted, not run", async () => {
    const stalled = {
      rule: tool({ name: 'refund', inputSchema: z.object({ amount: z.number() }), needsApproval: () => new Promise<boolean>(() => {}), run: () => 'refunded' }),
      validator: tool({ name: 'refund', inputSchema: z.object({ amount: z.number() }).refine(() => new Promise<boolean>(() => {})), run: () => 'refunded' }),
    };
    for (const refund of Object.values(stalled)) {
      const server = await mockServer([{ content: [toolUse('refund', { amount: 500 }, 'toolu_r')] }]);
      const controller = new AbortController();
      // Aborted once the call has started (its rule or validator then waits), not at a time the reply may not have come by.
      const abortOnceStarted = (event: RunnerEvent) => void (event.type === 'tool.start' && setTimeout(() => controller.abort(), 30));
      const runner = toolRunner(server.client(), { ...baseParams, tools: [refund] }, { signal: controller.signal, approve: () => ({ decision: 'allow' }), onEvent: abortOnceStarted });
      await expect(runner.runUntilDone()).rejects.toBeInstanceOf(APIUserAbortError);
      expect(runner.params.messages.at(-1)!.content).toEqual([
        { type: 'tool_result', tool_use_id: 'toolu_r', is_error: true, content: "Error: the call to 'refund' was aborted before it started, so it was not run." },
      ]);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it("the tool's timeout (its own, or toolTimeoutMs) bounds a needsApproval rule or an async validator that never answers: answered as timed out, not run; the run goes on", async () => {
    const ruleSignals: AbortSignal[] = [];
    const stalled = {
      'it was checked whether it needs approval': (timeoutMs?: number) =>
        tool({ name: 'refund', inputSchema: z.object({ amount: z.number() }), needsApproval: (_input, { signal }) => (ruleSignals.push(signal), new Promise<boolean>(() => {})), ...(timeoutMs && { timeoutMs }), run: () => 'refunded' }),
      'its input was validated': (timeoutMs?: number) =>
        tool({ name: 'refund', inputSchema: z.object({ amount: z.number() }).refine(() => new Promise<boolean>(() => {})), ...(timeoutMs && { timeoutMs }), run: () => 'refunded' }),
    };
    for (const [step, make] of Object.entries(stalled)) {
      for (const [refund, options] of [[make(60), {}], [make(), { toolTimeoutMs: 60 }]] as const) {
        const server = await mockServer([{ content: [toolUse('refund', { amount: 500 }, 'toolu_r')] }, { content: [text('It timed out.')] }]);
        const run = new AbortController();
        const runner = toolRunner(server.client(), { ...baseParams, tools: [refund] }, { ...options, signal: run.signal, approve: () => ({ decision: 'allow' }) });
        expect(textOf(await runner.runUntilDone())).toBe('It timed out.');
        // The wait left nothing on the run's signal (a server's, shared by every run).
        expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
        expect(runner.params.messages[2]!.content).toEqual([
          { type: 'tool_result', tool_use_id: 'toolu_r', is_error: true, content: `Error: the call to 'refund' timed out after 60 ms while ${step}, and was not run.` },
        ]);
        expect(historyProblems(runner.params.messages)).toEqual([]);
      }
    }
    // The rule's signal aborted when its time was up: a policy service it called stops too.
    expect(ruleSignals.map((signal) => signal.aborted)).toEqual([true, true]);
  });

  it("the tool's timeout bounds the wait for a decision: past it the call is answered as timed out, not run, and the approver's signal aborts", async () => {
    const log: string[] = [];
    const signals: AbortSignal[] = [];
    const slowToDecide = tool({ name: 'wire_money', inputSchema: z.object({}), needsApproval: true, timeoutMs: 80, run: () => (log.push('wired'), 'wired') });
    const server = await mockServer([{ content: [toolUse('wire_money', {}, 'toolu_w')] }, { content: [text('Nobody answered.')] }]);
    const approve = (_call: ApprovalRequest, { signal }: { signal: AbortSignal }) => (signals.push(signal), new Promise<never>(() => {}));
    const runner = toolRunner(server.client(), { ...baseParams, tools: [slowToDecide] }, { approve });
    await runner;
    expect(log).toEqual([]);
    expect(signals[0]?.aborted).toBe(true);
    expect(wire(server.requests[1]!).messages.at(-1).content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_w', is_error: true, content: "Error: the call to 'wire_money' timed out after 80 ms waiting for approval and was not run." },
    ]);
    expect(runner.stoppedBy).toBe('model');
  });

  it("a question's time runs from when it is asked, not from when it joined the line", async () => {
    const log: string[] = [];
    const send = tool({ name: 'send', inputSchema: z.object({ n: z.number() }), needsApproval: true, run: ({ n }) => (log.push(`sent ${n}`), `sent ${n}`) });
    const server = await mockServer([{ content: [1, 2, 3].map((n) => toolUse('send', { n }, `toolu_${n}`)) }, { content: [text('All sent.')] }]);
    // Each answer takes 150 ms; each call has 300 ms: the third is asked 300 ms after the first.
    const approve = () => new Promise<{ decision: 'allow' }>((resolve) => setTimeout(() => resolve({ decision: 'allow' }), 150));
    await toolRunner(server.client(), { ...baseParams, tools: [send] }, { approve, toolTimeoutMs: 300 });
    expect(log).toEqual(['sent 1', 'sent 2', 'sent 3']);
  });
});

describe('the approver after an abort', () => {
  it('a question the approver never answers, abandoned by an abort, does not hold the line: iterating again with a new signal asks the next', async () => {
    const gated = tool({ name: 'gated', inputSchema: z.object({ q: z.string() }), needsApproval: true, run: ({ q }) => `gated ${q}` });
    const server = await mockServer([{ content: [toolUse('gated', { q: 'a' })] }, { content: [text('done')] }]);
    const controller = new AbortController();
    const asked: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [gated] }, {
      signal: controller.signal,
      // The first question is never answered (a person who left, an approver that does not heed its signal).
      // Aborted while asked (a fixed delay from the start raced the first reply on a loaded machine).
      approve: (call) => (asked.push(call.input.q), asked.length === 1 ? (setTimeout(() => controller.abort(), 20), new Promise<never>(() => {})) : { decision: 'allow' }),
    });
    await expect(runner.runUntilDone()).rejects.toThrow(APIUserAbortError);
    runner.setRequestOptions({ signal: new AbortController().signal });
    // The aborted call was answered as aborted: the model's next reply is what goes on.
    server.setSteps([{ content: [toolUse('gated', { q: 'b' })] }, { content: [text('done')] }]);
    const final = await runner.runUntilDone();
    expect(final.content[0]).toMatchObject({ text: 'done' });
    expect(asked).toEqual(['a', 'b']);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
});

describe('approval without options.approve: the run stops with pendingApprovals', () => {
  it('done() taken after a call is decided waits for the run that goes on, not the approval stop it had settled on', async () => {
    const risky = tool({ name: 'risky', inputSchema: z.object({}), needsApproval: true, run: () => 'done' });
    const server = await mockServer([{ content: [toolUse('risky', {}, 'toolu_r')] }, { content: [text('Finished.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [risky] });
    await runner;
    expect(runner.stoppedBy).toBe('approval');
    runner.approve('toolu_r');
    const done = runner.done();
    const driven = runner.runUntilDone();
    expect(await done).toMatchObject({ content: [{ text: 'Finished.' }] });
    await driven;
  });

  it('runs the calls that need no approval, stops, and goes on after approve / deny', async () => {
    const log: string[] = [];
    const server = await mockServer(script());
    const runner = toolRunner(server.client(), { ...baseParams, tools: tools(log) });
    const stopped = await runner;
    expect(stopped.stop_reason).toBe('tool_use');
    expect(log.sort()).toEqual(['balance', 'transfer 50 to ann']);
    expect(runner.pendingApprovals.map(({ id, name, input }) => ({ id, name, input }))).toEqual([
      { id: 'toolu_big', name: 'transfer', input: { amount: 500, to: 'bob' } },
      { id: 'toolu_delete', name: 'delete_account', input: {} },
    ]);
    expect(server.requests).toHaveLength(1);
    // The history holds the reply, its calls not yet answered: a state the runner answers first when it goes on.
    expect(runner.params.messages.at(-1)?.role).toBe('assistant');

    // The edited input given bare (or null) in place of { input }: said, and nothing decided.
    expect(() => runner.approve('toolu_big', null as never)).toThrow(/^approve: the second argument is \{ input\? \} \(the edited input, validated as the model's\), or nothing, got null$/);
    expect(() => runner.approve('toolu_big', 'bob' as never)).toThrow(TypeError);
    // An edit given bare as an object (a UI's body passed on): it would have run the model's input.
    expect(() => runner.approve('toolu_big', { amount: 50, to: 'bob' } as never)).toThrow(/^approve: the second argument is \{ input\? \} .*; got an object with 'amount': an edited input goes in \{ input: \.\.\. \}$/);
    // The call given in place of its id, or a reason that is no string (the model had read "[object Object]"): said.
    expect(() => runner.approve(runner.pendingApprovals[0] as never)).toThrow(/^approve: the first argument is the id of a waiting call \(runner\.pendingApprovals\[i\]\.id\): pass call\.id, approve\(call\.id\), got an object$/);
    expect(() => runner.deny('toolu_delete', { reason: 'not today' } as never)).toThrow(/^deny: the reason is a string, which the model reads \(deny\(id, 'why'\)\), or nothing, got an object$/);
    runner.approve('toolu_big', { input: { amount: 150, to: 'bob' } });
    runner.deny('toolu_delete', 'not today');
    expect(() => runner.approve('toolu_big')).toThrow(/'toolu_big' was already decided/);
    expect(() => runner.deny('toolu_unknown')).toThrow(/'toolu_unknown' is not waiting for approval/);
    const final = await runner;
    expect(final.content[0]).toMatchObject({ text: 'Done.' });
    expect(log.sort()).toEqual(['balance', 'transfer 150 to bob', 'transfer 50 to ann']);
    const results = wire(server.requests[1]!).messages[2].content;
    expect(results.map((result: { tool_use_id: string; is_error?: boolean }) => [result.tool_use_id, result.is_error ?? false])).toEqual([
      ['toolu_balance', false],
      ['toolu_small', false],
      ['toolu_big', false],
      ['toolu_delete', true],
    ]);
    expect(results[3].content).toMatch(/denied by the user: not today/);
    expect(runner.pendingApprovals).toEqual([]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('generateToolResponse() in the loop body gives null when every call waits (an empty user message is no answer), then the answers once decided', async () => {
    const log: string[] = [];
    const server = await mockServer([{ content: [toolUse('delete_account', {}, 'toolu_delete')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: tools(log) });
    const responses: unknown[] = [];
    for await (const _message of runner) responses.push(await runner.generateToolResponse());
    expect(responses).toEqual([null]);
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_delete']);
    runner.approve('toolu_delete');
    const final = await runner;
    expect(final.content[0]).toMatchObject({ text: 'Done.' });
    expect(log).toEqual(['deleted']);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('aborted while one call waits for a decision and another still runs: the run rejects with the abort, each call answered (the waiting one as aborted)', async () => {
    const controller = new AbortController();
    const slow = tool({
      name: 'slow',
      inputSchema: z.object({}),
      run: (_input, { signal }) => {
        setTimeout(() => controller.abort(), 10);
        return new Promise<string>((resolve) => signal.addEventListener('abort', () => resolve('stopped')));
      },
    });
    const gated = tool({ name: 'gated', inputSchema: z.object({}), needsApproval: true, run: () => 'ran' });
    const server = await mockServer([{ content: [toolUse('gated', {}, 'toolu_gated'), toolUse('slow', {}, 'toolu_slow')] }, { content: [text('never')] }]);
    const ends: unknown[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [gated, slow] }, {
      signal: controller.signal,
      onEvent: (event) => void (event.type === 'tool.end' && event.call.id === 'toolu_gated' && ends.push({ pending: event.pending, cancelled: event.cancelled, error: event.result?.is_error })),
    });
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(APIUserAbortError);
    expect(runner.stoppedBy).toBe('abort');
    // The listeners see the wait end, as the history does.
    expect(ends).toEqual([{ pending: true, cancelled: undefined, error: undefined }, { pending: undefined, cancelled: true, error: true }]);
    expect(runner.pendingApprovals).toEqual([]);
    expect(runner.params.messages.at(-1)!.content).toEqual([
      expect.objectContaining({ tool_use_id: 'toolu_gated', is_error: true, content: "Error: the call to 'gated' was aborted while it waited for approval, so it was not run." }),
      expect.objectContaining({ tool_use_id: 'toolu_slow', is_error: true, content: expect.stringMatching(/aborted/) }),
    ]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it("aborted while a call waits for a decision, a message pushed in its cancelled tool.end: the results stay (the call that ran with its own), the message once after them", async () => {
    const controller = new AbortController();
    const ran: string[] = [];
    const charge = tool({ name: 'charge', inputSchema: z.object({}), run: () => (ran.push('charge'), 'charged 5 EUR') });
    const gated = tool({ name: 'gated', inputSchema: z.object({}), needsApproval: true, run: () => (ran.push('gated'), 'ran') });
    const server = await mockServer([{ content: [toolUse('gated', {}, 'toolu_gated'), toolUse('charge', {}, 'toolu_charge')] }, { content: [text('never')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [gated, charge] }, {
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type !== 'tool.end') return;
        // The charge went through; the user stops the run, and a chat's next message comes as its wait ends.
        if (event.call.id === 'toolu_charge') controller.abort();
        if (event.cancelled) runner.pushMessages({ role: 'user', content: 'Stop, and tell me what you did.' });
      },
    });
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(APIUserAbortError);
    const answered = [
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [expect.objectContaining({ id: 'toolu_gated' }), expect.objectContaining({ id: 'toolu_charge' })] },
      {
        role: 'user',
        content: [
          expect.objectContaining({ tool_use_id: 'toolu_gated', is_error: true, content: "Error: the call to 'gated' was aborted while it waited for approval, so it was not run." }),
          { type: 'tool_result', tool_use_id: 'toolu_charge', content: 'charged 5 EUR' },
        ],
      },
      { role: 'user', content: 'Stop, and tell me what you did.' },
    ];
    // The results went into the history the listener had replaced (lost), and the message was placed twice more.
    expect(runner.params.messages).toEqual(answered);
    // Iterated again, the run (still aborted) answers nothing anew: the charge is not told 'aborted before it started'.
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(APIUserAbortError);
    expect(runner.params.messages).toEqual(answered);
    expect(ran).toEqual(['charge']);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('aborted while the run was stopped for approval, then iterated: the undecided call is answered as aborted while it waited', async () => {
    const ran: string[] = [];
    const gated = tool({ name: 'gated', inputSchema: z.object({ n: z.number() }), needsApproval: true, run: ({ n }) => (ran.push(`gated ${n}`), 'ran') });
    const server = await mockServer([{ content: [toolUse('gated', { n: 1 }, 'toolu_1'), toolUse('gated', { n: 2 }, 'toolu_2')] }, { content: [text('never')] }]);
    const controller = new AbortController();
    const runner = toolRunner(server.client(), { ...baseParams, tools: [gated] }, { signal: controller.signal });
    await runner;
    expect(runner.stoppedBy).toBe('approval');
    runner.approve('toolu_1');
    controller.abort();
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(APIUserAbortError);
    expect(ran).toEqual([]);
    expect(runner.params.messages.at(-1)!.content).toEqual([
      // Approved, but the abort came before it started: it never ran.
      expect.objectContaining({ tool_use_id: 'toolu_1', is_error: true, content: "Error: the call to 'gated' was aborted before it started, so it was not run." }),
      expect.objectContaining({ tool_use_id: 'toolu_2', is_error: true, content: "Error: the call to 'gated' was aborted while it waited for approval, so it was not run." }),
    ]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('a call that waits for approval in a reply the loop body leaves (runToolsEagerly, break): its wait ends for the listeners (tool.end, cancelled)', async () => {
    const gated = tool({ name: 'gated', inputSchema: z.object({}), needsApproval: true, run: () => 'ran' });
    const server = await mockServer([{ content: [toolUse('gated', {}, 'toolu_g'), text('and some more text after the call, streamed slowly')], eventDelayMs: 5 }]);
    const ends: Array<{ pending: boolean | undefined; cancelled: true | undefined }> = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [gated], stream: true, runToolsEagerly: true }, {
      onEvent: (event) => void (event.type === 'tool.end' && ends.push({ pending: event.pending, cancelled: event.cancelled })),
    });
    for await (const stream of runner) {
      for await (const _event of stream) if (ends.length > 0) break;
      break;
    }
    expect(runner.stoppedBy).toBe('break');
    expect(ends).toEqual([{ pending: true, cancelled: undefined }, { pending: undefined, cancelled: true }]);
    // The body pushes a message in place of the reply instead: the wait ends once.
    ends.length = 0;
    const again = await mockServer([{ content: [toolUse('gated', {}, 'toolu_g'), text('and some more text after the call, streamed slowly')], eventDelayMs: 5 }, { content: [text('Fine.')] }]);
    const pushing = toolRunner(again.client(), { ...baseParams, tools: [gated], stream: true, runToolsEagerly: true }, {
      onEvent: (event) => void (event.type === 'tool.end' && ends.push({ pending: event.pending, cancelled: event.cancelled })),
    });
    let pushed = false;
    for await (const stream of pushing) {
      for await (const _event of stream) {
        if (ends.length > 0 && !pushed) pushing.pushMessages({ role: 'user', content: 'Never mind that.' });
        if (ends.length > 0) pushed = true;
      }
    }
    expect(ends).toEqual([{ pending: true, cancelled: undefined }, { pending: undefined, cancelled: true }]);
  });

  it('a message pushed instead of a decision: the waiting calls are answered as not run, and their waits end for the listeners (an approved one too)', async () => {
    const gated = tool({ name: 'gated', inputSchema: z.object({}), needsApproval: true, run: () => 'ran' });
    const server = await mockServer([{ content: [toolUse('gated', {}, 'toolu_g'), toolUse('gated', {}, 'toolu_h')] }, { content: [text('Fine, not then.')] }]);
    const ends: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [gated] }, {
      onEvent: (event) => void (event.type === 'tool.end' && ends.push(`${event.call.id}:${event.pending ? 'pending' : event.cancelled ? 'cancelled' : 'ended'}`)),
    });
    await runner;
    runner.approve('toolu_h');
    runner.pushMessages({ role: 'user', content: 'Never mind.' });
    await runner;
    expect(ends).toEqual(['toolu_g:pending', 'toolu_h:pending', 'toolu_g:cancelled', 'toolu_h:cancelled']);
    // Approved and run, then a message pushed: only the call still waiting ends as cancelled.
    ends.length = 0;
    const again = await mockServer([{ content: [toolUse('gated', {}, 'toolu_a'), toolUse('gated', {}, 'toolu_b')] }, { content: [text('Fine.')] }]);
    const partly = toolRunner(again.client(), { ...baseParams, tools: [gated] }, {
      onEvent: (event) => void (event.type === 'tool.end' && ends.push(`${event.call.id}:${event.pending ? 'pending' : event.cancelled ? 'cancelled' : 'ended'}`)),
    });
    await partly;
    partly.approve('toolu_a');
    await partly;
    partly.pushMessages({ role: 'user', content: 'Never mind.' });
    await partly;
    expect(ends.filter((end) => end.startsWith('toolu_a'))).toEqual(['toolu_a:pending', 'toolu_a:ended']);
    expect(ends.filter((end) => end.startsWith('toolu_b'))).toEqual(['toolu_b:pending', 'toolu_b:pending', 'toolu_b:cancelled']);
    expect(runner.pendingApprovals).toEqual([]);
    expect(wire(server.requests[1]!).messages.slice(-2)).toEqual([
      { role: 'user', content: ['toolu_g', 'toolu_h'].map((id) => expect.objectContaining({ tool_use_id: id, is_error: true, content: expect.stringMatching(/not answered before the conversation went on/) })) },
      { role: 'user', content: 'Never mind.' },
    ]);
  });

  it.each([false, true])('a message pushed instead of a decision: a call of the reply that ran (needing none, or approved) is answered with its result, not as not run (resumed from a snapshot: %s)', async (resumed) => {
    let charges = 0;
    const charge = tool({ name: 'charge', inputSchema: z.object({}), run: () => `charged (${++charges})` });
    const gated = tool({ name: 'gated', inputSchema: z.object({}), needsApproval: true, run: () => 'ran' });
    const server = await mockServer([
      { content: [toolUse('charge', {}, 'toolu_c'), toolUse('gated', {}, 'toolu_a'), toolUse('gated', {}, 'toolu_b')] },
      { content: [text('Fine.')] },
    ]);
    const first = toolRunner(server.client(), { ...baseParams, tools: [charge, gated] });
    await first;
    first.approve('toolu_a');
    await first;
    const runner = resumed ? resumeToolRunner(server.client(), JSON.parse(JSON.stringify(first.toJSON())), { tools: [charge, gated] }) : first;
    runner.pushMessages({ role: 'user', content: 'Never mind the rest.' });
    await runner;
    expect(charges).toBe(1);
    const results = wire(server.requests[1]!).messages.at(-2).content.map((block: { content: string }) => block.content);
    expect(results).toEqual(['charged (1)', 'ran', expect.stringMatching(/^Error: the call to 'gated' was not answered before the conversation went on/)]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it("a message appended while the reply's other calls ran (it waits before the reply through the stop), then one pushed instead of a decision: both go after the calls' results, in the order they were appended, not the first before the reply", async () => {
    const charge = tool({ name: 'charge', inputSchema: z.object({}), run: async () => (await new Promise((resolve) => setTimeout(resolve, 80)), 'charged') });
    const gated = tool({ name: 'gated', inputSchema: z.object({}), needsApproval: true, run: () => 'ran' });
    const reply = { content: [toolUse('charge', {}, 'toolu_c'), toolUse('gated', {}, 'toolu_g')] };
    const contents = (messages: Array<{ content: unknown }>) => messages.map((message) => (typeof message.content === 'string' ? message.content : (message.content as Array<{ id?: string; tool_use_id?: string }>).map((block) => block.id ?? block.tool_use_id)));
    for (const resumed of [false, true]) {
      for (const answered of [false, true]) {
        const server = await mockServer([reply, { content: [text('Fine.')] }]);
        let runner: ToolRunner = toolRunner(server.client(), { ...baseParams, tools: [charge, gated] });
        for await (const message of runner) {
          // A chat's next message, while the charge runs.
          if (message.stop_reason === 'tool_use') setTimeout(() => runner.pushMessages({ role: 'user', content: 'Thanks!' }), 20);
        }
        expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_g']);
        if (resumed) runner = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())), { tools: [charge, gated] });
        // Instead of a decision: another message (or the calls answered by hand, then it).
        const byHand = { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_c', content: 'by hand' }, { type: 'tool_result' as const, tool_use_id: 'toolu_g', content: 'by hand' }] };
        runner.pushMessages(...(answered ? [byHand] : []), { role: 'user', content: 'Actually, stop.' });
        await runner;
        const sent = wire(server.requests[1]!).messages;
        expect(contents(sent)).toEqual(['Weather in Paris?', ['toolu_c', 'toolu_g'], ['toolu_c', 'toolu_g'], 'Thanks!', 'Actually, stop.']);
        expect(sent[2].content[0].content).toBe(answered ? 'by hand' : 'charged');
        expect(historyProblems(sent)).toEqual([]);
      }
    }
  });

  it('a history set in place of the waiting calls, ending with other calls: the old waits end for the listeners, and only the new calls wait', async () => {
    const gated = tool({ name: 'gated', inputSchema: z.object({}), needsApproval: true, run: () => 'ran' });
    const server = await mockServer([{ content: [toolUse('gated', {}, 'toolu_old')] }, { content: [text('Done.')] }]);
    const ends: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [gated] }, {
      onEvent: (event) => void (event.type === 'tool.end' && ends.push(`${event.call.id}:${event.pending ? 'pending' : event.cancelled ? 'cancelled' : 'ended'}`)),
    });
    await runner;
    runner.approve('toolu_old');
    runner.setMessagesParams((params) => ({
      ...params,
      messages: [...params.messages.slice(0, -1), { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_new', name: 'gated', input: {} }] }],
    }));
    await runner;
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_new']);
    expect(ends).toEqual(['toolu_old:pending', 'toolu_old:cancelled', 'toolu_new:pending']);
    // The decision about the replaced call is gone with it: the new call waits for its own.
    runner.approve('toolu_new');
    expect(await runner).toMatchObject({ content: [{ text: 'Done.' }] });
    expect(ends.at(-1)).toBe('toolu_new:ended');
  });

  it('a history set with another call under a waiting call\'s id (other input): the approval given for the old one does not run the new one', async () => {
    const inputs: unknown[] = [];
    const gated = tool({ name: 'gated', inputSchema: z.object({ n: z.number() }), needsApproval: true, run: (input) => (inputs.push(input), 'ran') });
    const server = await mockServer([{ content: [toolUse('gated', { n: 1 }, 'toolu_same')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [gated] });
    await runner;
    runner.approve('toolu_same');
    runner.setMessagesParams((params) => ({
      ...params,
      messages: [...params.messages.slice(0, -1), { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_same', name: 'gated', input: { n: 2 } }] }],
    }));
    await runner;
    // The new call waits for its own decision; nothing ran.
    expect(runner.pendingApprovals.map((call) => call.input)).toEqual([{ n: 2 }]);
    expect(inputs).toEqual([]);
    runner.approve('toolu_same');
    await runner;
    expect(inputs).toEqual([{ n: 2 }]);
  });

  it('a history set with the waiting call itself, its input\'s keys in another order (a copy stored as jsonb): the decision given stands', async () => {
    const inputs: unknown[] = [];
    const gated = tool({ name: 'gated', inputSchema: z.object({ a: z.number(), b: z.number() }), needsApproval: true, run: (input) => (inputs.push(input), 'ran') });
    const server = await mockServer([{ content: [toolUse('gated', { a: 1, b: 2 }, 'toolu_keys')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [gated] });
    await runner;
    runner.approve('toolu_keys');
    runner.setMessagesParams((params) => ({
      ...params,
      messages: [...params.messages.slice(0, -1), { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_keys', name: 'gated', input: { b: 2, a: 1 } }] }],
    }));
    expect(await runner).toMatchObject({ content: [{ text: 'Done.' }] });
    expect(inputs).toEqual([{ a: 1, b: 2 }]);
  });

  it('a history that ends with a call that needs approval: await rejects saying the run stopped for approval before any reply; decided, it goes on', async () => {
    const gated = tool({ name: 'gated', inputSchema: z.object({}), needsApproval: true, run: () => 'ran' });
    const server = await mockServer([{ content: [text('Done.')] }]);
    const messages = [...baseParams.messages, { role: 'assistant' as const, content: [toolUse('gated', {}, 'toolu_first')] }];
    const runner = toolRunner(server.client(), { ...baseParams, messages, tools: [gated] });
    await expect(runner.runUntilDone()).rejects.toThrow(/stopped for approval before any reply \(the history ends with calls that need it\); decide runner\.pendingApprovals and await again/);
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_first']);
    runner.approve('toolu_first');
    expect((await runner).content).toEqual([expect.objectContaining({ text: 'Done.' })]);
  });

  it('iterating again without deciding stops again at once, sending nothing', async () => {
    const server = await mockServer(script());
    const runner = toolRunner(server.client(), { ...baseParams, tools: tools([]) });
    await runner;
    runner.approve('toolu_big');
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_delete']);
    await runner;
    expect(server.requests).toHaveLength(1);
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_delete']);
  });
});

describe('a decision made while the run goes on', () => {
  it('a call listed at the last stop, approved while the run answers the others, runs in that pass (the run stopped with it listed as waiting, its decision hidden)', async () => {
    const ran: string[] = [];
    const slow = tool({ name: 'slow', inputSchema: z.object({ n: z.number() }), needsApproval: true, run: async ({ n }) => (await new Promise((resolve) => setTimeout(resolve, 100)), ran.push(`slow ${n}`), 'ok') });
    const server = await mockServer([{ content: [toolUse('slow', { n: 1 }, 'toolu_a'), toolUse('slow', { n: 2 }, 'toolu_b')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [slow] });
    await runner;
    runner.approve('toolu_a');
    const going = runner.runUntilDone();
    await new Promise((resolve) => setTimeout(resolve, 30));
    runner.approve('toolu_b');
    expect(await going).toMatchObject({ content: [{ text: 'Done.' }] });
    expect(runner.stoppedBy).toBe('model');
    expect(ran).toEqual(['slow 1', 'slow 2']);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
});

describe('generateToolResponse() while a call of the reply waits for approval', () => {
  it('a result the loop body replaced in its message is sent as replaced once the waiting call is decided (it went as the tool gave it)', async () => {
    const gated = tool({ name: 'gated', inputSchema: z.object({}), needsApproval: true, run: () => 'gated ran' });
    const search = tool({ name: 'search', inputSchema: z.object({}), run: () => 'SECRET-TOKEN=abc123 raw result' });
    const server = await mockServer([{ content: [toolUse('search', {}, 'toolu_s'), toolUse('gated', {}, 'toolu_g')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [search, gated] });
    for await (const _message of runner) {
      const response = await runner.generateToolResponse();
      if (response) response.content[0] = { type: 'tool_result', tool_use_id: 'toolu_s', content: '[redacted]' };
    }
    expect(runner.stoppedBy).toBe('approval');
    runner.approve('toolu_g');
    await runner;
    expect(wire(server.requests[1]!).messages.at(-1).content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_s', content: '[redacted]' },
      { type: 'tool_result', tool_use_id: 'toolu_g', content: 'gated ran' },
    ]);
  });
});

describe('deciding in the loop body the calls generateToolResponse() found waiting', () => {
  const setup = async () => {
    const log: string[] = [];
    const server = await mockServer([{ content: [toolUse('delete_account', {}, 'toolu_delete'), toolUse('balance', {}, 'toolu_balance')] }, { content: [text('Done.')] }]);
    const ends: Array<{ id: string; pending?: boolean; cancelled?: true }> = [];
    const onEvent = (event: RunnerEvent) => void (event.type === 'tool.end' && ends.push({ id: event.call.id, ...(event.pending && { pending: true }), ...(event.cancelled && { cancelled: true }) }));
    const runner = toolRunner(server.client(), { ...baseParams, tools: tools(log) }, { onEvent });
    return { log, server, runner, ends };
  };

  it('the waiting calls are in pendingApprovals at once; approved or denied there, they run (or not) in this pass and the run does not stop', async () => {
    for (const decide of ['approve', 'deny'] as const) {
      const { log, server, runner } = await setup();
      const seen: Array<{ results: string[] | undefined; waiting: string[] }> = [];
      for await (const _message of runner) {
        const response = await runner.generateToolResponse();
        seen.push({ results: response?.content.map((result) => result.tool_use_id), waiting: runner.pendingApprovals.map((call) => call.id) });
        if (runner.pendingApprovals.length === 0) continue;
        if (decide === 'approve') runner.approve('toolu_delete');
        else runner.deny('toolu_delete', 'not today');
      }
      expect(seen).toEqual([{ results: ['toolu_balance'], waiting: ['toolu_delete'] }, { results: undefined, waiting: [] }]);
      expect(runner.stoppedBy).toBe('model');
      expect(server.requests).toHaveLength(2);
      const [deleted, balance] = wire(server.requests[1]!).messages.at(-1).content;
      expect(balance).toEqual({ type: 'tool_result', tool_use_id: 'toolu_balance', content: '1000' });
      if (decide === 'approve') {
        expect(deleted).toEqual({ type: 'tool_result', tool_use_id: 'toolu_delete', content: 'deleted' });
        expect(log).toEqual(['balance', 'deleted']);
      } else {
        expect(deleted).toMatchObject({ tool_use_id: 'toolu_delete', is_error: true, content: expect.stringContaining('not today') });
        expect(log).toEqual(['balance']);
      }
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it('asked again after a decision, generateToolResponse() answers the decided call; the other waits alone, and the snapshot taken then resumes with the decision', async () => {
    const log: string[] = [];
    const server = await mockServer([{ content: [toolUse('delete_account', {}, 'toolu_delete'), toolUse('transfer', { amount: 500, to: 'bob' }, 'toolu_big'), toolUse('balance', {}, 'toolu_balance')] }, { content: [text('Done.')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: tools(log) });
    const seen: Array<{ results: string[] | undefined; waiting: string[] }> = [];
    let snapshot: RunnerSnapshot | undefined;
    for await (const _message of runner) {
      await runner.generateToolResponse();
      if (runner.pendingApprovals.length === 0) continue;
      runner.approve('toolu_delete');
      const again = await runner.generateToolResponse();
      seen.push({ results: again?.content.map((result) => result.tool_use_id), waiting: runner.pendingApprovals.map((call) => call.id) });
      snapshot = JSON.parse(JSON.stringify(runner.toJSON()));
    }
    expect(seen).toEqual([{ results: ['toolu_delete', 'toolu_balance'], waiting: ['toolu_big'] }]);
    expect(runner.stoppedBy).toBe('approval');
    expect(runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_big']);
    expect(log).toEqual(['balance', 'deleted']);
    const resumedLog: string[] = [];
    const resumed = resumeToolRunner(server.client(), snapshot!, { tools: tools(resumedLog) });
    expect(resumed.pendingApprovals.map((call) => call.id)).toEqual(['toolu_big']);
  });

  it('left undecided, the run stops with them; a reply the body leaves with break takes its waits along (pendingApprovals empty, the wait ended for the listeners)', async () => {
    const undecided = await setup();
    for await (const _message of undecided.runner) await undecided.runner.generateToolResponse();
    expect(undecided.runner.stoppedBy).toBe('approval');
    expect(undecided.runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_delete']);
    undecided.runner.approve('toolu_delete');
    expect((await undecided.runner).content[0]).toMatchObject({ text: 'Done.' });
    expect(undecided.log).toEqual(['balance', 'deleted']);

    const left = await setup();
    for await (const _message of left.runner) {
      await left.runner.generateToolResponse();
      expect(left.runner.pendingApprovals.map((call) => call.id)).toEqual(['toolu_delete']);
      break;
    }
    expect(left.runner.stoppedBy).toBe('break');
    expect(left.runner.pendingApprovals).toEqual([]);
    expect(() => left.runner.approve('toolu_delete')).toThrow(/is not waiting for approval/);
    expect(left.ends).toEqual([{ id: 'toolu_delete', pending: true }, { id: 'toolu_balance' }, { id: 'toolu_delete', cancelled: true }]);
  });
});

describe('a message pushed after the loop body while a streamed reply still comes (late), with the reply’s calls not yet answered', () => {
  const streamedCall = (name: string) => [{ content: [toolUse(name, {}, 'toolu_1')], eventDelayMs: 10 }, { content: [text('Done.')] }];
  /** Iterates, pushing a follow-up on the reply's first block, after the body is done with the stream. */
  async function pushLate(runner: ReturnType<typeof toolRunner>) {
    let pushed = false;
    for await (const stream of runner as AsyncIterable<{ on(event: 'streamEvent', listener: (event: { type: string }) => void): void }>) {
      stream.on('streamEvent', (event) => {
        if (pushed || event.type !== 'content_block_start') return;
        pushed = true;
        runner.pushMessages({ role: 'user', content: 'Also, cc Bob.' });
      });
    }
  }

  /** A call that waits for approval, the customer's follow-up pushed while its reply streamed: the run stopped for approval. */
  async function stoppedWithLateFollowUp(thread: false | undefined) {
    const ran: string[] = [];
    const send = tool({ name: 'send', inputSchema: z.object({}), needsApproval: true, run: () => (ran.push('send'), 'sent') });
    const server = await mockServer(streamedCall('send'));
    const runner = toolRunner(server.client(), { ...baseParams, stream: true, tools: [send], ...(thread === false && { thread }) });
    await pushLate(runner);
    expect(runner.stoppedBy).toBe('approval');
    return { ran, send, server, runner };
  }

  it('a call that waits for approval: the run stops with the reply last (the follow-up before it), and the approved call runs', async () => {
    for (const thread of [undefined, false] as const) {
      const { ran, server, runner } = await stoppedWithLateFollowUp(thread);
      expect(runner.params.messages.map((message) => message.role)).toEqual(['user', 'user', 'assistant']);
      runner.approve('toolu_1');
      await runner;
      expect(ran).toEqual(['send']);
      // Answered, the call's results go right after it, and the follow-up after them (as in the run that never stopped).
      expect(wire(server.requests[1]!).messages.slice(-3)).toEqual([
        { role: 'assistant', content: [expect.objectContaining({ type: 'tool_use', id: 'toolu_1' })] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sent' }] },
        { role: 'user', content: 'Also, cc Bob.' },
      ]);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it('the same resumed from a snapshot (another process): the follow-up goes after the results there too, and the thread goes on', async () => {
    for (const thread of [undefined, false] as const) {
      const { ran, send, server, runner } = await stoppedWithLateFollowUp(thread);
      const resumed = resumeToolRunner(server.client(), JSON.parse(JSON.stringify(runner.toJSON())) as RunnerSnapshot, { tools: [send] });
      resumed.approve('toolu_1');
      await resumed;
      expect(ran).toEqual(['send']);
      // As in the run that never stopped: the follow-up was typed after the reply, and goes after its results.
      expect(server.requests[1]!.messages.slice(-4)).toEqual([
        { role: 'user', content: baseParams.messages[0]!.content },
        { role: 'assistant', content: [expect.objectContaining({ type: 'tool_use', id: 'toolu_1' })] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sent' }] },
        { role: 'user', content: 'Also, cc Bob.' },
      ]);
      // Over a thread, the server holds the reply: the resumed run continues it with the results and the follow-up.
      if (thread === undefined) expect(wire(server.requests[1]!).body.thread).toMatchObject({ type: 'continue' });
      expect(historyProblems(resumed.params.messages)).toEqual([]);
    }
  });

  it('a hook that fails about the call: iterating again runs only the hook, and the follow-up goes after the results', async () => {
    const ran: string[] = [];
    const work = tool({ name: 'work', inputSchema: z.object({}), run: () => (ran.push('work'), 'worked') });
    let failures = 1;
    const server = await mockServer(streamedCall('work'));
    const runner = toolRunner(server.client(), { ...baseParams, stream: true, tools: [work] }, { hooks: { onToolResult: () => { if (failures-- > 0) throw new Error('hook down'); } } });
    await expect(pushLate(runner)).rejects.toThrow(HookError);
    expect(runner.params.messages.map((message) => message.role)).toEqual(['user', 'user', 'assistant']);
    await runner;
    expect(ran).toEqual(['work']);
    expect(wire(server.requests[1]!).messages.slice(-2)).toEqual([
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'worked' }] },
      { role: 'user', content: 'Also, cc Bob.' },
    ]);
  });
});
