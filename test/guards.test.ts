import { getEventListeners } from 'node:events';
import { APIUserAbortError } from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { agentTool, tool, toolRunner } from 'tool-runner';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer, sleep, warningsDuring, wire } from './helpers.js';

/** Counts the calls running at once: `most`, the most at any time. */
function concurrencyMeter() {
  let running = 0;
  const meter = {
    most: 0,
    /** Runs `work` as one running call. */
    async during<T>(work: () => Promise<T>): Promise<T> {
      running++;
      meter.most = Math.max(meter.most, running);
      try {
        return await work();
      } finally {
        running--;
      }
    },
  };
  return meter;
}

const hanging = (name: string, seen: AbortSignal[], timeoutMs?: number) =>
  tool({
    name,
    inputSchema: z.object({}),
    ...(timeoutMs !== undefined && { timeoutMs }),
    run: (_input, context) => {
      seen.push(context.signal);
      return new Promise<string>(() => {});
    },
  });

describe('timeouts', () => {
  for (const mode of ['toolTimeoutMs', 'runToolsEagerly'] as const) it(`${mode}: a call's signal follows the run's signal only while the call runs (a server's signal shared by many runs keeps none of their calls)`, async () => {
    const server = await mockServer([{ content: [toolUse('probe', {}, 'toolu_s')] }, { content: [text('done')] }]);
    const shared = new AbortController();
    const seen: AbortSignal[] = [];
    const probe = tool({
      name: 'probe',
      inputSchema: z.object({}),
      run: (_input, { signal }) => {
        seen.push(signal);
        // A listener a tool leaves behind, as many do.
        signal.addEventListener('abort', () => {});
        return 'ok';
      },
    });
    const settings = mode === 'runToolsEagerly' ? { stream: true as const, runToolsEagerly: true } : {};
    await toolRunner(server.client(), { ...baseParams, tools: [probe], ...settings }, { signal: shared.signal, ...(mode === 'toolTimeoutMs' && { toolTimeoutMs: 5_000 }) });
    expect(seen).toHaveLength(1);
    shared.abort();
    expect(seen[0]!.aborted).toBe(false);
  });

  for (const stop of ['max_iterations', 'approval'] as const) it(`runToolsEagerly, the run stopped (${stop}) on the reply whose call ran: the call's signal no longer follows the run's`, async () => {
    const server = await mockServer([{ content: [toolUse('probe', {}, 'toolu_s'), ...(stop === 'approval' ? [toolUse('gated', {}, 'toolu_g')] : [])] }, { content: [text('done')] }]);
    const shared = new AbortController();
    const seen: AbortSignal[] = [];
    const probe = tool({ name: 'probe', inputSchema: z.object({}), run: (_input, { signal }) => (seen.push(signal), signal.addEventListener('abort', () => {}), 'ok') });
    const gated = tool({ name: 'gated', inputSchema: z.object({}), needsApproval: true, run: () => 'gated' });
    const runner = toolRunner(server.client(), { ...baseParams, tools: [probe, gated], stream: true, runToolsEagerly: true, ...(stop === 'max_iterations' && { max_iterations: 1 }) }, { signal: shared.signal });
    await runner.runUntilDone();
    expect(runner.stoppedBy).toBe(stop);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    shared.abort();
    expect(seen[0]!.aborted).toBe(false);
  });

  it('toolTimeoutMs with the run\'s signal: a call still running when the run aborts is aborted with the run\'s reason', async () => {
    const server = await mockServer([{ content: [toolUse('wait', {}, 'toolu_w')] }, { content: [text('never')] }]);
    const shared = new AbortController();
    let reason: unknown;
    // Aborted once the call runs (a fixed delay raced the first reply on a loaded machine: the run aborted before the call).
    const wait = tool({
      name: 'wait',
      inputSchema: z.object({}),
      run: (_input, { signal }) =>
        new Promise<string>((resolve) => {
          signal.addEventListener('abort', () => resolve(String((reason = signal.reason))));
          setTimeout(() => shared.abort(new Error('shutting down')), 10);
        }),
    });
    const runner = toolRunner(server.client(), { ...baseParams, tools: [wait] }, { signal: shared.signal, toolTimeoutMs: 5_000 });
    await expect(runner.runUntilDone()).rejects.toThrow();
    expect(reason).toEqual(new Error('shutting down'));
  });

  it('a tool past its own timeoutMs: its signal aborts and the model gets a timeout error', async () => {
    const signals: AbortSignal[] = [];
    const server = await mockServer([{ content: [toolUse('slow', {}, 'toolu_s')] }, { content: [text('ok')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [hanging('slow', signals, 50)] });
    await runner;
    expect(signals[0]?.aborted).toBe(true);
    // A timeout, as `AbortSignal.timeout()` says it: the tool can tell it from an abort.
    expect(signals[0]?.reason).toMatchObject({ name: 'TimeoutError', message: 'timed out after 50 ms' });
    expect(wire(server.requests[1]!).messages[2].content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_s',
      is_error: true,
      content: "Error: the call to 'slow' timed out after 50 ms and was stopped.",
    });
  });

  it('options.toolTimeoutMs applies to tools without their own; a tool’s own timeoutMs wins', async () => {
    const signals: AbortSignal[] = [];
    const server = await mockServer([
      { content: [toolUse('a', {}, 'toolu_a'), toolUse('b', {}, 'toolu_b')] },
      { content: [text('ok')] },
    ]);
    const started = performance.now();
    await toolRunner(server.client(), { ...baseParams, tools: [hanging('a', signals), hanging('b', signals, 30)] }, { toolTimeoutMs: 80 });
    const [a, b] = wire(server.requests[1]!).messages[2].content;
    expect(a.content).toMatch(/timed out after 80 ms/);
    expect(b.content).toMatch(/timed out after 30 ms/);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("options.toolTimeoutMs bounds a toolset member's call too", async () => {
    const hangingToolset = {
      type: 'computer_toolset_20260801' as const,
      display_width_px: 1024,
      display_height_px: 768,
      run: () => new Promise<never>(() => {}),
    };
    const member = { type: 'tool_use', id: 'toolu_click', name: 'left_click', input: { coordinate: [1, 2] }, toolset_name: 'computer' } as never;
    const server = await mockServer([{ content: [member] }, { content: [text('The screen froze.')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [hangingToolset as never] }, { toolTimeoutMs: 100 });
    expect(wire(server.requests[1]!).messages[2].content[0]).toMatchObject({
      tool_use_id: 'toolu_click',
      is_error: true,
      content: "Error: the call to 'left_click' timed out after 100 ms and was stopped.",
    });
  });

  it("the run aborted while a toolset member ignores its signal (no toolTimeoutMs): the call is answered as aborted at once, and the run rejects", async () => {
    const controller = new AbortController();
    let finished = false;
    const deafToolset = {
      type: 'computer_toolset_20260801' as const,
      display_width_px: 1024,
      display_height_px: 768,
      // A screenshot that never looks at its signal, and takes its time (a frozen screen).
      run: async () => {
        controller.abort();
        await sleep(2_000);
        finished = true;
        return 'late screenshot';
      },
    };
    const member = { type: 'tool_use', id: 'toolu_shot', name: 'screenshot', input: {}, toolset_name: 'computer' } as never;
    const server = await mockServer([{ content: [member] }, { content: [text('never')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [deafToolset as never] }, { signal: controller.signal });
    const started = performance.now();
    await expect(runner.runUntilDone()).rejects.toBeInstanceOf(APIUserAbortError);
    // The run waited for the member until it finished (for ever, for one that hangs).
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(finished).toBe(false);
    expect(runner.stoppedBy).toBe('abort');
    expect(runner.params.messages.at(-1)!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_shot', toolset_name: 'computer', is_error: true, content: "Error: the call to 'screenshot' was aborted before it finished." },
    ]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('a tool that rejects when its signal aborts is still answered as timed out', async () => {
    const server = await mockServer([{ content: [toolUse('polite', {}, 'toolu_p')] }, { content: [text('ok')] }]);
    const polite = tool({
      name: 'polite',
      inputSchema: z.object({}),
      timeoutMs: 30,
      run: (_input, { signal }) =>
        new Promise<string>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    });
    await toolRunner(server.client(), { ...baseParams, tools: [polite] });
    expect(wire(server.requests[1]!).messages[2].content[0].content).toMatch(/timed out after 30 ms/);
  });
});

describe('concurrency', () => {
  it('options.concurrency bounds the tools running at once; results keep the model order', async () => {
    const meter = concurrencyMeter();
    const work = tool({ name: 'work', inputSchema: z.object({ n: z.number() }), run: ({ n }) => meter.during(async () => (await sleep(20), `done ${n}`)) });
    const calls = Array.from({ length: 7 }, (_, n) => toolUse('work', { n }, `toolu_${n}`));
    const server = await mockServer([{ content: calls }, { content: [text('ok')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [work] }, { concurrency: 2 });
    expect(meter.most).toBe(2);
    expect(wire(server.requests[1]!).messages[2].content.map((result: { content: string }) => result.content)).toEqual(
      Array.from({ length: 7 }, (_, n) => `done ${n}`),
    );
  });

  it('calls still waiting for a slot when the run is aborted never start; every call is answered as aborted, those waiting as never run', async () => {
    const started: number[] = [];
    const charge = tool({
      name: 'charge',
      inputSchema: z.object({ n: z.number() }),
      // Ignores its signal, as a side effect in flight would.
      run: async ({ n }) => {
        started.push(n);
        // The run aborts while the first call runs (a fixed delay from the start raced the first reply on a loaded machine).
        if (n === 1) setTimeout(() => controller.abort(), 20);
        await sleep(150);
        return `charged ${n}`;
      },
    });
    const calls = [1, 2, 3].map((n) => toolUse('charge', { n }, `toolu_${n}`));
    const server = await mockServer([{ content: calls }]);
    const controller = new AbortController();
    const runner = toolRunner(server.client(), { ...baseParams, tools: [charge] }, { concurrency: 1, signal: controller.signal });
    await expect(runner.runUntilDone()).rejects.toThrow();
    await sleep(400);
    expect(started).toEqual([1]);
    const results = runner.params.messages.at(-1)!.content as Array<{ content: string }>;
    expect(results.map((result) => result.content)).toEqual([
      "Error: the call to 'charge' was aborted before it finished.",
      "Error: the call to 'charge' was aborted before it started, so it was not run.",
      "Error: the call to 'charge' was aborted before it started, so it was not run.",
    ]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
});

describe('many calls at once on one signal', () => {
  it("twenty calls of one reply under the run's signal: no MaxListenersExceededWarning (one listener per signal), and an abort still answers each", async () => {
    const warnings = await warningsDuring(async () => {
      const controller = new AbortController();
      const calls = Array.from({ length: 20 }, (_, i) => toolUse('slow', { n: i }, `toolu_${i}`));
      const server = await mockServer([{ content: calls }, { content: [text('done')] }]);
      const slow = tool({
        name: 'slow',
        inputSchema: z.object({ n: z.number() }),
        // Its signal left alone (a tool's own listeners are its own business): the runner's listeners are what is counted.
        run: () => new Promise<string>(() => {}),
      });
      const runner = toolRunner(server.client(), { ...baseParams, tools: [slow] }, { signal: controller.signal });
      const done = runner.runUntilDone().catch((error: unknown) => error);
      while (server.requests.length < 1) await sleep(5);
      await sleep(30);
      controller.abort();
      expect(await done).toBeInstanceOf(APIUserAbortError);
      const answers = runner.params.messages.at(-1)!.content as Array<{ content: string }>;
      expect(answers.map((answer) => answer.content)).toEqual(calls.map(() => "Error: the call to 'slow' was aborted before it finished."));
      // Twelve sub-agents at once (agentTool), each waiting on the run's signal to count its usage, and twelve delayed replies of the testing kit.
      const helper = agentTool({ name: 'helper', description: 'Helps', params: ({ task }) => ({ ...baseParams, messages: [{ role: 'user', content: task }] }) });
      const helpers = Array.from({ length: 12 }, (_, i) => toolUse('helper', { task: `t${i}` }, `toolu_h${i}`));
      const agents = await mockServer([{ content: helpers }, ...helpers.map(() => ({ content: [text('helped')], delayMs: 20 })), { content: [text('done')] }]);
      await toolRunner(agents.client(), { ...baseParams, tools: [helper] }, { signal: new AbortController().signal });
    });
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });
});

describe("many runs at once on one signal (a server's)", () => {
  it('fifteen runs with a request in flight hold one listener on the shared signal, not one a request (no MaxListenersExceededWarning); its abort still stops each', async () => {
    const warnings = await warningsDuring(async () => {
      const shared = new AbortController();
      // Each request held by the server (stalled after its headers when streamed) until the shared signal aborts.
      const server = await mockServer(Array.from({ length: 15 }, (_, n) => (n % 2 ? { content: [text('late')], delayMs: 60_000 } : { content: [text('late')], stallAfterEvents: 0 })));
      const runs = Array.from({ length: 15 }, (_, n) =>
        toolRunner(server.client(), { ...baseParams, stream: n % 2 === 0 }, n % 3 ? { signal: shared.signal } : { requestOptions: { signal: shared.signal } }).runUntilDone().catch((error: unknown) => error),
      );
      while (server.requests.length < 15) await sleep(5);
      expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
      shared.abort();
      for (const outcome of await Promise.all(runs)) expect(outcome).toBeInstanceOf(APIUserAbortError);
      expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    });
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('their requests settled, the shared signal holds no listener of theirs', async () => {
    const shared = new AbortController();
    const server = await mockServer(Array.from({ length: 12 }, () => ({ content: [text('done')] })));
    await Promise.all(Array.from({ length: 12 }, (_, n) => toolRunner(server.client(), { ...baseParams, stream: n % 2 === 0 }, { signal: shared.signal })));
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });
});

describe("a toolset's calls (BetaRunnableToolset) under the run's guards", () => {
  it('runToolsEagerly: a member call that ignores its signal, of a reply that broke, ends before the turn goes again (a toolset takes one call at a time)', async () => {
    let running = 0;
    let most = 0;
    const deaf = {
      type: 'computer_toolset_20260801' as const,
      display_width_px: 1024,
      display_height_px: 768,
      run: async () => {
        running++;
        most = Math.max(most, running);
        await sleep(400);
        running--;
        return 'shot';
      },
    };
    const member = (id: string) => ({ type: 'tool_use', id, name: 'screenshot', input: {}, toolset_name: 'computer' }) as never;
    const primary = await mockServer([{ content: [member('toolu_1'), text('and more text streaming slowly after the call')], eventDelayMs: 30, disconnectAfterEvents: 8 }, { content: [member('toolu_2')] }, { content: [text('done')] }]);
    const runner = toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, tools: [deaf as never], runToolsEagerly: true });
    await expect(runner.runUntilDone()).rejects.toThrow(/broke/);
    // Iterated again, as the error says: the turn goes again, and its call of the toolset starts.
    await runner.runUntilDone();
    expect(primary.requests).toHaveLength(3);
    expect(most).toBe(1);
  });

  it("runToolsEagerly: the run's abort ends the wait for a member call of a reply that broke, one that hangs answered as aborted at once", async () => {
    const hangs = { type: 'computer_toolset_20260801' as const, display_width_px: 1024, display_height_px: 768, run: () => new Promise<string>(() => {}) };
    const member = (id: string) => ({ type: 'tool_use', id, name: 'screenshot', input: {}, toolset_name: 'computer' }) as never;
    const primary = await mockServer([{ content: [member('toolu_1'), text('and more text streaming slowly after the call')], eventDelayMs: 30, disconnectAfterEvents: 8 }]);
    const controller = new AbortController();
    const runner = toolRunner(primary.client({ maxRetries: 0 }), { ...baseParams, tools: [hangs as never], runToolsEagerly: true }, { signal: controller.signal });
    const done = runner.runUntilDone();
    done.catch(() => {});
    // The reply broke; the run waits for the member call before it goes on, until its signal aborts.
    await sleep(800);
    controller.abort();
    const outcome = await Promise.race([done.then(() => 'resolved', () => 'rejected'), sleep(2000).then(() => 'hung')]);
    expect(outcome).toBe('rejected');
  });

  const member = (name: string, input: unknown, id: string) => ({ type: 'tool_use', id, name, input, toolset_name: 'computer' }) as never;
  const computer = (run: (toolUse: { name: string; input: unknown }) => Promise<unknown>) => ({
    type: 'computer_toolset_20260801' as const,
    display_width_px: 1024,
    display_height_px: 768,
    run: (_context: unknown, toolUse: { name: string; input: unknown }) => run(toolUse),
  });

  it('aborted while an action runs: the actions queued behind it never start (no click after stop)', async () => {
    const done: string[] = [];
    const controller = new AbortController();
    const screen = computer(async ({ name }) => {
      if (name === 'screenshot') {
        controller.abort();
        await sleep(50);
      }
      done.push(name);
      return `did ${name}`;
    });
    const server = await mockServer([{ content: [member('screenshot', {}, 'toolu_1'), member('left_click', { coordinate: [1, 2] }, 'toolu_2'), member('key', { text: 'a' }, 'toolu_3')] }, { content: [text('ok')] }]);
    const ends: string[] = [];
    const runner = toolRunner(server.client(), { ...baseParams, tools: [screen as never] }, { signal: controller.signal, onEvent: (event) => void (event.type === 'tool.end' && ends.push(event.call.id)) });
    await runner.runUntilDone().catch(() => {});
    await sleep(100);
    expect(done).toEqual(['screenshot']);
    // Each is told it never started (not "an earlier action failed"), and listeners hear of each.
    const results = (runner.params.messages.at(-1)!.content as Array<{ tool_use_id: string; content: string }>).map((result) => [result.tool_use_id, result.content]);
    expect(results).toEqual([
      // Answered at once as aborted, as a tool that ignores its signal is: the run does not wait for it.
      ['toolu_1', "Error: the call to 'screenshot' was aborted before it finished."],
      ['toolu_2', "Error: the call to 'left_click' was aborted before it started, so it was not run."],
      ['toolu_3', "Error: the call to 'key' was aborted before it started, so it was not run."],
    ]);
    expect(ends).toEqual(['toolu_1', 'toolu_2', 'toolu_3']);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('maxToolResultChars cuts a member\'s result; concurrency counts its calls; the loop guard tells a member from a tool of the same name', async () => {
    const meter = concurrencyMeter();
    const screen = computer(({ name }) => meter.during(async () => (await sleep(30), name === 'screenshot' ? 'x'.repeat(5_000) : `did ${name}`)));
    const own = tool({ name: 'zoom', inputSchema: z.object({ level: z.number() }), run: () => meter.during(async () => (await sleep(30), 'zoomed')) });
    const server = await mockServer([
      { content: [member('screenshot', {}, 'toolu_1'), toolUse('zoom', { level: 2 }, 'toolu_2'), member('zoom', { level: 2 }, 'toolu_3')] },
      { content: [text('ok')] },
    ]);
    await toolRunner(server.client(), { ...baseParams, tools: [screen as never, own] }, { maxToolResultChars: 1_000, concurrency: 1, loopGuard: { maxRepeats: 1 } });
    const results = wire(server.requests[1]!).messages[2].content as Array<{ content: string; is_error?: boolean }>;
    expect(results[0]!.content).toContain('[truncated: the result had 5000 characters; only the first 1000 are shown]');
    expect(results[0]!.content.length).toBeLessThan(1_100);
    expect(results.map((result) => [result.content.slice(0, 6), result.is_error])).toEqual([
      ['xxxxxx', undefined],
      ['zoomed', undefined],
      ['did zo', undefined],
    ]);
    expect(meter.most).toBe(1);
  });
});

describe('concurrency: a slot goes to the call that waited', () => {
  it('concurrency 1: a call whose hook ends as a tool ends does not slip in beside the one waiting; they start in line', async () => {
    // The third call's hook ends in the very tick the first tool ends, in each of several ticks.
    for (let ticks = 0; ticks < 12; ticks++) {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const meter = concurrencyMeter();
      const started: number[] = [];
      const work = tool({
        name: 'work',
        inputSchema: z.object({ i: z.number() }),
        run: ({ i }) =>
          meter.during(async () => {
            started.push(i);
            if (i === 0) {
              setTimeout(open, 20);
              await gate;
            } else await sleep(5);
            return `r${i}`;
          }),
      });
      const server = await mockServer([{ content: [0, 1, 2].map((i) => toolUse('work', { i }, `toolu_${i}`)) }, { content: [text('ok')] }]);
      const onToolCall = async (call: { input: unknown }) => {
        if ((call.input as { i: number }).i !== 2) return;
        await gate;
        for (let tick = 0; tick < ticks; tick++) await null;
      };
      await toolRunner(server.client(), { ...baseParams, tools: [work] }, { concurrency: 1, hooks: { onToolCall } });
      expect({ ticks, most: meter.most, started }).toEqual({ ticks, most: 1, started: [0, 1, 2] });
    }
  });
});

describe('result size', () => {
  const big = (size: number) => tool({ name: 'big', inputSchema: z.object({}), run: () => 'x'.repeat(size) });

  it('maxToolResultChars truncates an oversized result with a visible note', async () => {
    const server = await mockServer([{ content: [toolUse('big', {})] }, { content: [text('ok')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [big(5_000)] }, { maxToolResultChars: 1_000 });
    const content = wire(server.requests[1]!).messages[2].content[0].content as string;
    expect(content.startsWith('x'.repeat(1_000))).toBe(true);
    expect(content).toContain('[truncated: the result had 5000 characters; only the first 1000 are shown]');
    expect(content.length).toBeLessThan(1_100);
  });

  it('the default keeps one runaway tool from filling the request: 100,000 characters', async () => {
    const server = await mockServer([{ content: [toolUse('big', {})] }, { content: [text('ok')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [big(3_000_000)] });
    const content = wire(server.requests[1]!).messages[2].content[0].content as string;
    expect(content.length).toBeLessThan(100_200);
    expect(content).toContain('the result had 3000000 characters');
  });

  it('text blocks are cut together, other blocks kept', async () => {
    const image = { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'AAAA' } };
    const blocks = tool({
      name: 'blocks',
      inputSchema: z.object({}),
      run: () => [{ type: 'text' as const, text: 'a'.repeat(60) }, image, { type: 'text' as const, text: 'b'.repeat(60) }],
    });
    const server = await mockServer([{ content: [toolUse('blocks', {})] }, { content: [text('ok')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [blocks] }, { maxToolResultChars: 100 });
    const content = wire(server.requests[1]!).messages[2].content[0].content;
    expect(content).toEqual([
      { type: 'text', text: 'a'.repeat(60) },
      image,
      { type: 'text', text: 'b'.repeat(40) },
      { type: 'text', text: '[truncated: the result had 120 characters; only the first 100 are shown]' },
    ]);
  });

  it('a block the cut leaves blank goes (the API refuses blank text): a cut at an emoji, or before spaces', async () => {
    for (const second of ['😀xxxxxxxx', '   xxxxxxxx']) {
      const blocks = tool({ name: 'blocks', inputSchema: z.object({}), run: () => [{ type: 'text' as const, text: 'a'.repeat(9) }, { type: 'text' as const, text: second }] });
      const server = await mockServer([{ content: [toolUse('blocks', {})] }, { content: [text('ok')] }]);
      const runner = toolRunner(server.client(), { ...baseParams, tools: [blocks] }, { maxToolResultChars: 10 });
      await runner;
      expect(wire(server.requests[1]!).messages[2].content[0].content).toEqual([
        { type: 'text', text: 'a'.repeat(9) },
        { type: 'text', text: `[truncated: the result had ${9 + second.length} characters; only the first 10 are shown]` },
      ]);
      expect(historyProblems(runner.params.messages)).toEqual([]);
    }
  });

  it("a search result's text and a document's text count and are cut too (they were sent whole)", async () => {
    const search = { type: 'search_result' as const, source: 'https://example.com', title: 'Example', content: [{ type: 'text' as const, text: 's'.repeat(3_000) }] };
    const document = { type: 'document' as const, source: { type: 'text' as const, media_type: 'text/plain' as const, data: 'd'.repeat(3_000) } };
    const pages = { type: 'document' as const, source: { type: 'content' as const, content: [{ type: 'text' as const, text: 'p'.repeat(3_000) }] } };
    const found = tool({ name: 'found', inputSchema: z.object({}), run: () => [{ type: 'text' as const, text: 't'.repeat(500) }, search, document, pages] });
    const server = await mockServer([{ content: [toolUse('found', {})] }, { content: [text('ok')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [found] }, { maxToolResultChars: 1_000 });
    expect(wire(server.requests[1]!).messages[2].content[0].content).toEqual([
      { type: 'text', text: 't'.repeat(500) },
      { ...search, content: [{ type: 'text', text: 's'.repeat(500) }] },
      { type: 'text', text: '[truncated: the result had 9500 characters; only the first 1000 are shown]' },
    ]);
  });

  it("a document of text and images cut past its text keeps its images", async () => {
    const image = { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'AAAA' } };
    const pages = { type: 'document' as const, source: { type: 'content' as const, content: [{ type: 'text' as const, text: 'p'.repeat(3_000) }, image] } };
    const found = tool({ name: 'found', inputSchema: z.object({}), run: () => [{ type: 'text' as const, text: 't'.repeat(1_000) }, pages] });
    const server = await mockServer([{ content: [toolUse('found', {})] }, { content: [text('ok')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [found] }, { maxToolResultChars: 1_000 });
    expect(wire(server.requests[1]!).messages[2].content[0].content).toEqual([
      { type: 'text', text: 't'.repeat(1_000) },
      { ...pages, source: { type: 'content', content: [image] } },
      { type: 'text', text: '[truncated: the result had 4000 characters; only the first 1000 are shown]' },
    ]);
  });
});

describe('options are checked at construction', () => {
  it('rejects unknown option names and values out of range before any request', async () => {
    const server = await mockServer([]);
    const client = server.client();
    expect(() => toolRunner(client, baseParams, { concurency: 2 } as never)).toThrow(/unknown option 'concurency'; the options are requestOptions, logger, concurrency/);
    expect(() => toolRunner(client, baseParams, { concurrency: 0 })).toThrow(/concurrency must be a positive integer/);
    expect(() => toolRunner(client, baseParams, { toolTimeoutMs: -5 })).toThrow(/toolTimeoutMs must be a positive number/);
    expect(() => toolRunner(client, baseParams, { maxToolResultChars: 1.5 })).toThrow(/maxToolResultChars must be a positive integer/);
    expect(server.requests).toHaveLength(0);
  });

  it('a history left valid after a timeout', async () => {
    const server = await mockServer([{ content: [toolUse('slow', {})] }, { content: [text('ok')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [hanging('slow', [], 20)] });
    await runner;
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
});
