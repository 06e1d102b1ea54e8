/**
 * Values that break naive text handling: a thrown value `String()` cannot convert, and cuts that
 * would fall inside a surrogate pair (an emoji), which leave a lone surrogate the API refuses as
 * invalid JSON in every later request of the history.
 */
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HookError, ToolError, tool, toolRunner } from 'tool-runner';
import { StartOrder } from '../src/start-order.js';
import { stepClient } from '../src/dbos/steps.js';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, captureLogger, mockServer, wire } from './helpers.js';

/** Whether a text holds a lone surrogate: a high one not followed by a low one, or a low one not after a high one. */
const loneSurrogate = (value: string) => /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(value);

/** A tool-result's content as one text. */
const resultText = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content));

describe('a tool that throws a value String() cannot convert', () => {
  const throwers: Array<[string, () => unknown, RegExp]> = [
    ['an object without a prototype', () => Object.create(null), /^Error: \[object Object\]$/],
    ['an object whose toString throws', () => ({ toString: () => { throw new Error('no text'); } }), /^Error: \[object Object\]$/],
    [
      'an Error whose name getter throws',
      () => Object.defineProperty(new Error('disk full'), 'name', { get: () => { throw new Error('no name'); } }),
      /^Error: disk full$/,
    ],
    // Every read of these throws (instanceof, a property, `in`): unread, the run failed and the call ran again on a retry.
    [
      'a revoked Proxy',
      () => {
        const { proxy, revoke } = Proxy.revocable({}, {});
        revoke();
        return proxy;
      },
      /^Error: a thrown value that cannot be read \(TypeError: Cannot perform '\w+' on a proxy that has been revoked\)$/,
    ],
    [
      'a Proxy whose traps throw',
      () => new Proxy(new Error('x'), { get: () => { throw new Error('no get'); }, getPrototypeOf: () => { throw new Error('no prototype'); } }),
      /^Error: a thrown value that cannot be read \(Error: no prototype\)$/,
    ],
  ];

  for (const [label, make, answer] of throwers) {
    it(`${label}: the model gets an is_error result, the run goes on, and the tool ran once`, async () => {
      let runs = 0;
      const odd = tool({
        name: 'odd',
        inputSchema: { type: 'object', properties: {} } as const,
        run: async () => {
          runs++;
          throw make();
        },
      });
      const server = await mockServer([{ content: [toolUse('odd', {}, 'toolu_odd')] }, { content: [text('done')] }]);
      const { lines, logger } = captureLogger();
      const runner = toolRunner(server.client({ maxRetries: 0, logger, logLevel: 'warn' }), { ...baseParams, tools: [odd] });
      const final = await runner;
      expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: 'done' })]);
      expect(runs).toBe(1);
      const [result] = wire(server.requests[1]!).messages.at(-1).content;
      expect(result).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_odd', is_error: true, content: expect.stringMatching(answer) });
      expect(historyProblems(runner.params.messages)).toEqual([]);
      // The log says which call failed, with what it threw as text.
      expect(lines).toContainEqual({ level: 'warn', message: expect.stringMatching(/^Tool 'odd' \(toolu_odd\) failed: /) });
    });
  }
});

describe('cuts never split a surrogate pair', () => {
  it('maxToolResultChars: a text result, and a text block, cut before an emoji rather than inside it', async () => {
    const emoji = '😀'.repeat(20);
    const asString = tool({ name: 'as_string', inputSchema: { type: 'object', properties: {} } as const, run: () => `${'a'.repeat(9)}${emoji}` });
    const asBlocks = tool({ name: 'as_blocks', inputSchema: { type: 'object', properties: {} } as const, run: () => [{ type: 'text' as const, text: `${'b'.repeat(9)}${emoji}` }] });
    const server = await mockServer([{ content: [toolUse('as_string', {}, 'toolu_s'), toolUse('as_blocks', {}, 'toolu_b')] }, { content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [asString, asBlocks] }, { maxToolResultChars: 10 });
    await runner;
    const [fromString, fromBlocks] = wire(server.requests[1]!).messages.at(-1).content;
    expect(fromString.content).toMatch(/^a{9}\n\[truncated: /);
    expect(fromBlocks.content[0].text).toBe('b'.repeat(9));
    for (const result of [fromString, fromBlocks]) expect(loneSurrogate(resultText(result.content))).toBe(false);
  });

  it('an invalid call whose issue is cut at 200 characters: the answer holds no half of an emoji', async () => {
    const strict = tool({ name: 'strict', inputSchema: z.object({ city: z.string() }).strict(), run: () => 'ok' });
    // zod's issue, 'Unrecognized key: "😀😀…', has 19 units before the emoji: the 200th falls on the first half of a pair.
    const key = '😀'.repeat(150);
    const server = await mockServer([{ content: [toolUse('strict', { city: 'Paris', [key]: 1 }, 'toolu_strict')] }, { content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [strict] });
    await runner;
    const [result] = wire(server.requests[1]!).messages.at(-1).content;
    expect(result).toMatchObject({ is_error: true, content: expect.stringContaining('😀…') });
    expect(loneSurrogate(result.content)).toBe(false);
  });

  it("the summary request after a context overflow: the history's longest texts are cut without a lone surrogate", async () => {
    for (const offset of [0, 1]) {
      const big = tool({ name: 'big', inputSchema: { type: 'object', properties: {} } as const, run: () => 'a'.repeat(offset) + '😀'.repeat(20_000) });
      const server = await mockServer({ contextWindow: 8000, steps: [{ content: [toolUse('big', {})] }, { content: [text('summary of the work')] }, { content: [text('done')] }] });
      const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [big], compactionControl: { enabled: true } }, { maxToolResultChars: 1_000_000 });
      await runner;
      // The first request, the one the server refused as too long, the summary request, and the request after it.
      expect(server.requests.length).toBe(4);
      const summary = JSON.stringify(wire(server.requests[2]!).messages);
      expect(summary).toContain('characters cut to fit the summary request');
      // JSON.stringify writes a lone surrogate as an escape: none may appear.
      expect(summary).not.toMatch(/\\ud[89ab][0-9a-f]{2}(?!\\ud[c-f])/i);
    }
  });
});

describe("a lone surrogate in a tool's result (a tool that cut its text inside an emoji: '😀'.slice(0, 1))", () => {
  const high = '😀'.slice(0, 1);
  const low = '😀'.slice(1);
  const none = { type: 'object', properties: {} } as const;

  it('is sent as U+FFFD, a pair kept, wherever the result holds text (a string, text blocks, a search result, a thrown message, a ToolError, an onToolCall result): the run goes on', async () => {
    const tools = [
      tool({ name: 'as_string', inputSchema: none, run: () => `cut at ${high}, 😀 whole` }),
      tool({ name: 'as_blocks', inputSchema: none, run: () => [{ type: 'text' as const, text: `${low}tail` }] }),
      tool({
        name: 'as_search',
        inputSchema: none,
        run: () => [{ type: 'search_result' as const, source: 'https://x.test', title: `title ${high}`, content: [{ type: 'text' as const, text: `found ${high}` }] }],
      }),
      tool({ name: 'throws', inputSchema: none, run: () => { throw new Error(`failed at ${high}`); } }),
      tool({ name: 'refuses', inputSchema: none, run: () => { throw new ToolError([{ type: 'text', text: `no ${low}` }]); } }),
      tool({ name: 'cached', inputSchema: none, run: () => 'not run' }),
    ];
    const calls = ['as_string', 'as_blocks', 'as_search', 'throws', 'refuses', 'cached'].map((name) => toolUse(name, {}, `toolu_${name}`));
    const server = await mockServer([{ content: calls }, { content: [text('done')] }]);
    const runner = toolRunner(
      server.client({ maxRetries: 0 }),
      { ...baseParams, tools },
      { hooks: { onToolCall: (call) => (call.name === 'cached' ? { result: `cached ${high}` } : undefined) }, logger: captureLogger().logger },
    );
    expect((await runner).content).toEqual([expect.objectContaining({ text: 'done' })]);
    const sent = wire(server.requests[1]!).messages.at(-1).content;
    expect(sent.map((result: { content: unknown }) => result.content)).toEqual([
      'cut at \ufffd, 😀 whole',
      [{ type: 'text', text: '\ufffdtail' }],
      [{ type: 'search_result', source: 'https://x.test', title: 'title \ufffd', content: [{ type: 'text', text: 'found \ufffd' }] }],
      'Error: failed at \ufffd',
      [{ type: 'text', text: 'no \ufffd' }],
      'cached \ufffd',
    ]);
    // The history the run keeps is what was sent: every later request of the run can be read too.
    expect(loneSurrogate(JSON.stringify(runner.params.messages))).toBe(false);
  });

  it('generateToolResponse() in the loop body gives, and the run sends, the result as it is sent', async () => {
    const cut = tool({ name: 'cut', inputSchema: none, run: () => `cut ${high}` });
    const server = await mockServer([{ content: [toolUse('cut', {}, 'toolu_cut')] }, { content: [text('done')] }]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [cut] });
    const given: unknown[] = [];
    for await (const _ of runner) given.push((await runner.generateToolResponse())?.content[0]?.content);
    expect(given).toEqual(['cut \ufffd', undefined]);
    expect(wire(server.requests[1]!).messages.at(-1).content[0].content).toBe('cut \ufffd');
  });

  it("a toolset member's result, and a document's text: as a tool's", async () => {
    const member = { ...toolUse('read_page', {}, 'toolu_m'), toolset_name: 'browser' };
    const server = await mockServer([{ content: [member] }, { content: [text('done')] }]);
    const page = { type: 'document', title: `page ${high}`, source: { type: 'text', media_type: 'text/plain', data: `body ${low} 😀` } };
    const browser = { type: 'browser_toolset_20260801', run: async () => [{ type: 'text', text: `read ${high}` }, page] };
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams, tools: [browser as never] });
    expect((await runner).content).toEqual([expect.objectContaining({ text: 'done' })]);
    expect(wire(server.requests[1]!).messages.at(-1).content[0].content).toEqual([
      { type: 'text', text: 'read \ufffd' },
      { type: 'document', title: 'page \ufffd', source: { type: 'text', media_type: 'text/plain', data: 'body \ufffd 😀' } },
    ]);
  });

  it("the testing kit's server refuses a request holding one with the API's 400: a lone surrogate in a message you push is sent as you gave it", async () => {
    const server = await mockServer([{ content: [text('never')] }]);
    const runner = toolRunner(server.client({ maxRetries: 0 }), { ...baseParams });
    runner.pushMessages({ role: 'assistant', content: 'Noted.' }, { role: 'user', content: `And this: ${high}` });
    const error = await runner.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    // Where the API's parser stops: just after the lone escape, in characters (code points) of the body.
    const body = JSON.stringify(server.requests[0]!.body);
    const at = [...body.slice(0, body.indexOf('\\ud83d') + 6)].length;
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: `The request body is not valid JSON: no low surrogate in string: line 1 column ${at + 1} (char ${at})` },
    });
    // Refused before the model saw it: no step used.
    expect((await server.client().beta.messages.create(baseParams)).content[0]).toMatchObject({ text: 'never' });
    server.assertComplete();
  });
});

describe('blank text blocks in a tool result (the API refuses a text block without non-whitespace text there too)', () => {
  it('are left out; a result of only blank text goes without content', async () => {
    const blank = tool({ name: 'blank', inputSchema: { type: 'object', properties: {} } as const, run: () => [{ type: 'text' as const, text: '' }, { type: 'text' as const, text: ' \n' }] });
    const mixed = tool({ name: 'mixed', inputSchema: { type: 'object', properties: {} } as const, run: () => [{ type: 'text' as const, text: '' }, { type: 'text' as const, text: 'found 2 rows' }] });
    const server = await mockServer([{ content: [toolUse('blank', {}, 'toolu_blank'), toolUse('mixed', {}, 'toolu_mixed')] }, { content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [blank, mixed] });
    await runner;
    expect(wire(server.requests[1]!).messages.at(-1).content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_blank' },
      { type: 'tool_result', tool_use_id: 'toolu_mixed', content: [{ type: 'text', text: 'found 2 rows' }] },
    ]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('historyProblems names them in a history set by hand', () => {
    const problems = historyProblems([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'blank', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'ok' }, { type: 'text', text: '  ' }] }] },
    ]);
    expect(problems).toEqual(['message 2: tool_result toolu_1: text block 1 is only whitespace']);
  });
});

describe('what review found', () => {
  it('a hook that throws a value String() cannot convert stops the run with a HookError that says so', async () => {
    const server = await mockServer([{ content: [toolUse('odd', {}, 'toolu_h')] }, { content: [text('done')] }]);
    const odd = tool({ name: 'odd', inputSchema: { type: 'object', properties: {} } as const, run: () => 'ok' });
    const runner = toolRunner(server.client(), { ...baseParams, tools: [odd] }, { hooks: { onToolResult: () => { throw Object.create(null); } } });
    const error = await runner.then(() => undefined, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(HookError);
    expect((error as HookError).message).toBe('hooks.onToolResult threw: [object Object]');
  });

  it('a hook that throws a revoked Proxy stops the run with a HookError that says so (its cause an Error, readable), stoppedBy error', async () => {
    const server = await mockServer([{ content: [toolUse('odd', {}, 'toolu_h')] }, { content: [text('done')] }]);
    const odd = tool({ name: 'odd', inputSchema: { type: 'object', properties: {} } as const, run: () => 'ok' });
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const runner = toolRunner(server.client(), { ...baseParams, tools: [odd] }, { hooks: { onToolCall: () => { throw proxy; } } });
    const error = await runner.then(() => undefined, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(HookError);
    expect((error as HookError).message).toMatch(/^hooks\.onToolCall threw: Error: a thrown value that cannot be read \(TypeError: Cannot perform '\w+' on a proxy that has been revoked\)$/);
    expect((error as HookError).cause).toBeInstanceOf(Error);
    expect(runner.stoppedBy).toBe('error');
  });

  it("a durable run's order of starts: an id a history repeats in one message has one gate, so the calls after it still start", async () => {
    const order = new StartOrder(['toolu_a', 'toolu_a', 'toolu_b']);
    let started = false;
    const b = order.turnOf('toolu_b').then(() => (started = true));
    await Promise.resolve();
    expect(started).toBe(false);
    order.pass('toolu_a');
    await b;
    expect(started).toBe(true);
  });

  it("a durable run's step client carries its client's middleware: a request option of the caller's own is taken", () => {
    const client = new Anthropic({ apiKey: 'test-key', middleware: [(request, next) => next(request)] });
    expect(() => toolRunner(stepClient(client, false), { ...baseParams }, { tenant: 'acme' } as never)).not.toThrow();
    expect(() => toolRunner(stepClient(new Anthropic({ apiKey: 'test-key' }), false), { ...baseParams }, { tenant: 'acme' } as never)).toThrow(/unknown option 'tenant'/);
  });
  it("the caller's tools array changed after the runner was made (a push, a replacement, a removal) is not seen: the runner keeps its own list, as the README says", async () => {
    const make = (name: string) => tool({ name, inputSchema: z.object({}), run: () => `${name} ran` });
    const tools = [make('a'), make('b')];
    const server = await mockServer([{ content: [toolUse('b', {}, 'toolu_b'), toolUse('c', {}, 'toolu_c')] }, { content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools });
    tools.push(make('c'));
    tools[0] = make('d');
    for await (const _ of runner) tools.splice(1, 1);
    expect(wire(server.requests[0]!).body.tools.map((sent: { name: string }) => sent.name)).toEqual(['a', 'b']);
    // Over the thread, the next request says no tools changed.
    expect(wire(server.requests[1]!).body.tools).toBeUndefined();
    const [ranB, ranC] = wire(server.requests[1]!).messages.at(-1).content;
    expect(ranB).toMatchObject({ tool_use_id: 'toolu_b', content: 'b ran' });
    expect(ranC).toMatchObject({ tool_use_id: 'toolu_c', is_error: true });
    expect(runner.params.tools!.map((entry) => (entry as { name: string }).name)).toEqual(['a', 'b']);
  });

  it('a tool pushed into the params setMessagesParams hands in is registered, as in the SDK (the params were the run\'s own list)', async () => {
    const a = tool({ name: 'a', inputSchema: z.object({}), run: () => 'a ran' });
    const b = tool({ name: 'b', inputSchema: z.object({}), run: () => 'b ran' });
    const server = await mockServer([{ content: [toolUse('a', {}, 'toolu_a')] }, { content: [toolUse('b', {}, 'toolu_b')] }, { content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [a] });
    let added = false;
    for await (const _ of runner) {
      if (added) continue;
      added = true;
      // As a program written for the SDK's runner does it: the params it is given, changed in place.
      runner.setMessagesParams((params) => {
        (params.tools as unknown[]).push(b);
        return params as never;
      });
    }
    expect(wire(server.requests[2]!).messages.at(-1).content[0]).toMatchObject({ tool_use_id: 'toolu_b', content: 'b ran' });
    // Read, pushed into and handed back as it is: the copy changes the run's tools only through setMessagesParams.
    const before = runner.params.tools!.length;
    runner.params.tools!.push(a);
    expect(runner.params.tools).toHaveLength(before);
  });

  it("a run given no tools reads params.tools as an empty list, as it is typed (always there): a tool added through it runs, and the params handed back as they were send no tools", async () => {
    const lookup = tool({ name: 'lookup', inputSchema: z.object({}), run: () => 'found' });
    const server = await mockServer([{ content: [text('Which one?')] }, { content: [text('Let me look.')] }, { content: [toolUse('lookup', {}, 'toolu_l')] }, { content: [text('done')] }]);
    const plain = toolRunner(server.client(), baseParams);
    expect(plain.params.tools).toEqual([]);
    // Handed back as they were: still no tools (no `tools: []` in the body).
    plain.setMessagesParams((params) => params);
    await plain;
    expect(wire(server.requests[0]!).body).not.toHaveProperty('tools');
    const runner = toolRunner(server.client(), baseParams);
    for await (const message of runner) {
      if (message.content.some((block) => block.type === 'tool_use') || runner.params.tools.length > 0) continue;
      // Typed `ToolEntry[]`: `params.tools` was undefined here, and the spread threw "params.tools is not iterable".
      runner.setMessagesParams((params) => ({ ...params, tools: [...params.tools, lookup], messages: [...params.messages, message, { role: 'user', content: 'Look it up.' }] }));
    }
    expect(wire(server.requests[3]!).messages.at(-1).content[0]).toMatchObject({ tool_use_id: 'toolu_l', content: 'found' });
  });

  it('setRequestOptions refuses the request options the runner sets itself, as the third argument does', async () => {
    const server = await mockServer([{ content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams });
    expect(() => runner.setRequestOptions({ method: 'get' } as never)).toThrow("setRequestOptions: the request option 'method' is set by the runner for each request; leave it out");
    expect(() => runner.setRequestOptions(() => ({ path: '/x' }) as never)).toThrow(/'path' is set by the runner/);
    runner.setRequestOptions({ headers: { 'x-team': 'support' } });
    await runner;
    expect(server.requests[0]!.headers['x-team']).toBe('support');
  });
  it('a setMessagesParams function that changes the params in place and returns them: the next request goes with them', async () => {
    const server = await mockServer([{ content: [text('first')] }, { content: [text('second')] }]);
    const runner = toolRunner(server.client(), { ...baseParams });
    for await (const message of runner) {
      if (server.requests.length > 1) break;
      runner.setMessagesParams((params) => {
        params.max_tokens = 10;
        params.messages.push(message, { role: 'user', content: 'Go on.' });
        return params;
      });
    }
    expect(wire(server.requests[1]!).body.max_tokens).toBe(10);
    expect(wire(server.requests[1]!).messages.at(-1)).toEqual({ role: 'user', content: 'Go on.' });
  });
});
