import { betaTool } from '@anthropic-ai/sdk/helpers/beta/json-schema';
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolError, tool, toolRunner } from 'tool-runner';
import { historyProblems, text, toolResults, toolUse } from 'tool-runner/testing';
import { baseParams, captureLogger, mockServer, unhandledDuring, wire } from './helpers.js';

/** Runs one model turn that calls `name` with `input`, and returns the tool_result the runner sent back. */
async function resultFor(tools: Parameters<typeof toolRunner>[1]['tools'], name: string, input: unknown, clientOptions = {}) {
  const call = toolUse(name, input, 'toolu_x');
  const server = await mockServer([{ content: [call] }, { content: [text('ok')] }]);
  await toolRunner(server.client(clientOptions), { ...baseParams, tools });
  return toolResults(server.requests[1]!)[0]!;
}

const positive = {
  type: 'object',
  properties: { n: { type: 'integer', minimum: 1 }, label: { type: 'string', default: 'none' } },
  required: ['n'],
  additionalProperties: false,
} as const;

/** A Standard Schema that is not zod: checks `{ n: positive integer }`. */
const standardPositive: StandardSchemaV1<{ n: number }> & StandardJSONSchemaV1<{ n: number }> = {
  '~standard': {
    version: 1,
    vendor: 'hand-made',
    validate(value) {
      const n = (value as { n?: unknown })?.n;
      if (typeof n === 'number' && Number.isInteger(n) && n > 0) return { value: { n } };
      return { issues: [{ message: 'must be a positive integer', path: ['n'] }] };
    },
    jsonSchema: {
      input: () => ({ type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] }),
      output: () => ({ type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] }),
    },
  },
};

describe('tool() schemas are all validated at run time', () => {
  const cases = [
    ['zod', z.object({ n: z.number().int().positive(), label: z.string().default('none') })],
    ['Standard Schema', standardPositive],
    ['JSON Schema', positive],
  ] as const;

  for (const [kind, inputSchema] of cases) {
    it(`${kind}: valid input reaches run, invalid input is answered with the issues and run is not called`, async () => {
      const seen: unknown[] = [];
      const make = () =>
        tool({ name: 'count', inputSchema: inputSchema as typeof positive, run: (input) => (seen.push(input), 'counted') });
      const ok = await resultFor([make()], 'count', { n: 3 });
      expect(ok).toMatchObject({ content: 'counted' });
      expect(ok.is_error).toBeUndefined();
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ n: 3 });
      const bad = await resultFor([make()], 'count', { n: -1 });
      expect(bad.is_error).toBe(true);
      expect(bad.content).toMatch(/Invalid input for tool 'count'/);
      expect(bad.content).toMatch(/- n: /);
      expect(seen).toHaveLength(1);
    });
  }

  it('zod and JSON Schema defaults are applied to the input run receives, not to the history', async () => {
    const seen: unknown[] = [];
    const call = toolUse('count', { n: 1 });
    const server = await mockServer([{ content: [call] }, { content: [text('ok')] }]);
    await toolRunner(server.client(), {
      ...baseParams,
      tools: [tool({ name: 'count', inputSchema: positive, run: (input) => (seen.push(input), 'ok') })],
    });
    expect(seen).toEqual([{ n: 1, label: 'none' }]);
    expect(wire(server.requests[1]!).messages[1].content[0].input).toEqual({ n: 1 });
  });

  it('lists missing, extra and mistyped fields with their paths', async () => {
    const result = await resultFor([tool({ name: 'count', inputSchema: positive, run: () => 'never' })], 'count', {
      label: 5,
      extra: true,
    });
    expect(result.content).toContain('- n: is required');
    expect(result.content).toContain('- extra: is not allowed');
    expect(result.content).toContain('- label: must be string');
  });

  it('sends the JSON Schema of each kind to the API, with extra tool fields passed through', async () => {
    const server = await mockServer([{ content: [text('ok')] }]);
    await toolRunner(server.client(), {
      ...baseParams,
      tools: [
        tool({ name: 'a', inputSchema: z.object({ q: z.string() }), run: () => '', cache_control: { type: 'ephemeral' } }),
        tool({ name: 'b', description: 'B', inputSchema: positive, run: () => '', strict: true, needsApproval: false }),
        tool({ name: 'c', inputSchema: standardPositive, run: () => '' }),
      ],
    });
    const tools = wire(server.requests[0]!).body.tools;
    expect(tools[0]).toMatchObject({ name: 'a', cache_control: { type: 'ephemeral' }, input_schema: { type: 'object', required: ['q'] } });
    expect(tools[1]).toEqual({ name: 'b', description: 'B', strict: true, input_schema: positive });
    expect(tools[2]).toEqual({ name: 'c', input_schema: standardPositive['~standard'].jsonSchema.input({ target: 'draft-2020-12' }) });
  });

  it('rejects a schema that is not an object at the top level, and a run that is not a function', () => {
    expect(() => tool({ name: 'x', inputSchema: z.string() as never, run: () => '' })).toThrow(/must describe an object/);
    expect(() => tool({ name: 'x', inputSchema: { type: 'array' } as never, run: () => '' })).toThrow(/must describe an object/);
    expect(() => tool({ name: 'x', inputSchema: positive, run: 'nope' as never })).toThrow(/`run` must be a function/);
  });
});

describe('a Standard Schema validator that fails without naming a problem ({ issues: [] })', () => {
  it('is answered with a line saying so, not an empty list', async () => {
    const silent = { '~standard': { ...standardPositive['~standard'], validate: () => ({ issues: [] }) } };
    const ran: unknown[] = [];
    const result = await resultFor([tool({ name: 'count', inputSchema: silent, run: (input) => (ran.push(input), 'ran') })], 'count', { n: 3 });
    // The model read "Invalid input for tool 'count':", an empty line, and the hint: nothing to fix.
    expect(result).toMatchObject({ is_error: true, content: "Invalid input for tool 'count':\n- (root): not valid (the schema's validator named no problem)\nFix the input and call the tool again." });
    expect(ran).toEqual([]);
  });
});

describe('a zod union no option of which matches', () => {
  it("is answered with the issues of each option under the union's path (zod says only \"Invalid input\"), from tool() and from betaZodTool", async () => {
    const inputSchema = z.object({ target: z.union([z.object({ path: z.string() }), z.object({ url: z.url() })]), v: z.union([z.string(), z.number()]) });
    const input = { target: { path: 5 }, v: true };
    for (const made of [tool({ name: 'open', inputSchema, run: () => 'ran' }), betaZodTool({ name: 'open', description: 'Open', inputSchema, run: async () => 'ran' })]) {
      const result = await resultFor([made as never], 'open', input);
      expect(result.is_error).toBe(true);
      expect(String(result.content).split('\n').filter((line) => line.startsWith('- '))).toEqual([
        '- target: Invalid input: it matches none of the options (the issues of each follow)',
        '- target.path: Invalid input: expected string, received number',
        '- target.url: Invalid input: expected string, received undefined',
        '- v: Invalid input: it matches none of the options (the issues of each follow)',
        '- v: Invalid input: expected string, received boolean',
        '- v: Invalid input: expected number, received boolean',
      ]);
    }
  });
});

describe('a strict tool of a zod schema (strict: true)', () => {
  it("sends every object closed, as the API's strict mode requires and the SDK's betaZodTool sends it; a JSON Schema tool's goes as given", async () => {
    const inputSchema = z.object({ city: z.string(), address: z.object({ street: z.string() }), stops: z.array(z.object({ at: z.string() })), kind: z.union([z.object({ p: z.string() }), z.string()]) });
    const extra = z.object({ loose: z.looseObject({ q: z.string() }), scores: z.record(z.string(), z.number()) });
    const server = await mockServer([{ content: [text('ok')] }, { content: [text('ok')] }]);
    const ours = tool({ name: 'trip', strict: true, inputSchema, run: () => 'ran' });
    const open = tool({ name: 'open', inputSchema, run: () => 'ran' });
    const others = tool({ name: 'others', strict: true, inputSchema: extra, run: () => 'ran' });
    const plain = tool({ name: 'plain', strict: true, inputSchema: { type: 'object', properties: { n: { type: 'object' } } }, run: () => 'ran' });
    await toolRunner(server.client(), { ...baseParams, tools: [ours, open, others, plain] });
    const sdk = betaZodTool({ name: 'trip', strict: true, inputSchema, run: () => 'ran' } as never) as unknown as { input_schema: object };
    await server.client().beta.messages.toolRunner({ ...baseParams, tools: [sdk as never] }).runUntilDone();
    const [sent, sdkSent] = [wire(server.requests[0]!).body.tools, wire(server.requests[1]!).body.tools];
    expect(sent[0].input_schema).toEqual(sdkSent[0].input_schema);
    expect(JSON.stringify(sent[0].input_schema).match(/"additionalProperties":false/g)).toHaveLength(4);
    // Not strict: zod's input form, as before; a loose object and a record keep what they say; a plain schema as given.
    expect(JSON.stringify(sent[1].input_schema)).not.toContain('additionalProperties');
    expect(sent[2].input_schema.properties).toMatchObject({ loose: { additionalProperties: {} }, scores: { additionalProperties: { type: 'number' } } });
    expect(sent[3].input_schema).toEqual({ type: 'object', properties: { n: { type: 'object' } } });
  });
});

describe('SDK-made tools and plain definitions work unchanged', () => {
  it('betaZodTool (validated by its parse) and betaTool run; a plain server tool is sent and never run', async () => {
    const seen: unknown[] = [];
    const zodTool = betaZodTool({
      name: 'zod_tool',
      description: 'z',
      inputSchema: z.object({ q: z.string() }),
      run: (input) => (seen.push(input), 'zod ok'),
    });
    const jsonTool = betaTool({
      name: 'json_tool',
      description: 'j',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
      run: (input) => (seen.push(input), 'json ok'),
    });
    const webSearch = { type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 2 };
    const server = await mockServer([
      { content: [toolUse('zod_tool', { q: 'a' }, 'toolu_1'), toolUse('json_tool', { q: 'b' }, 'toolu_2'), toolUse('zod_tool', { q: 3 }, 'toolu_3')] },
      { content: [text('ok')] },
    ]);
    await toolRunner(server.client(), { ...baseParams, tools: [zodTool, jsonTool, webSearch] });
    expect(seen).toEqual([{ q: 'a' }, { q: 'b' }]);
    const [first, second, third] = wire(server.requests[1]!).messages[2].content;
    expect(first).toMatchObject({ content: 'zod ok' });
    expect(second).toMatchObject({ content: 'json ok' });
    expect(third).toMatchObject({ is_error: true, content: expect.stringContaining("Invalid input for tool 'zod_tool'") });
    expect(wire(server.requests[0]!).body.tools.map((entry: { name: string }) => entry.name)).toEqual(['zod_tool', 'json_tool', 'web_search']);
    expect(wire(server.requests[0]!).body.tools[2]).toEqual(webSearch);
  });
});

describe('tool results', () => {
  it('a string is sent as the content (the API reads it as one text block, as the SDK sends it); content blocks pass through', async () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } } as const;
    const document = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' } } as const;
    const blocks = await resultFor(
      [tool({ name: 'b', inputSchema: { type: 'object' }, run: () => [{ type: 'text', text: 'see' }, image, document] })],
      'b',
      {},
    );
    expect(blocks.content).toEqual([{ type: 'text', text: 'see' }, image, document]);
    const str = await resultFor([tool({ name: 's', inputSchema: { type: 'object' }, run: () => 'plain' })], 's', {});
    expect(str.content).toBe('plain');
  });

  it("a run with no signal and no timeout gives each call a signal of its own: abort listeners a tool adds go with the call, not onto one signal of the process", async () => {
    const signals: AbortSignal[] = [];
    const listen = tool({
      name: 'listen',
      inputSchema: z.object({}),
      run: (_input, { signal }) => {
        signals.push(signal);
        signal.addEventListener('abort', () => undefined, { once: true });
        return 'ok';
      },
    });
    const server = await mockServer([{ content: [toolUse('listen', {}), toolUse('listen', {})] }, { content: [toolUse('listen', {})] }, { content: [text('Done.')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [listen] });
    expect(signals).toHaveLength(3);
    expect(new Set(signals).size).toBe(3);
    expect(signals.every((signal) => !signal.aborted)).toBe(true);
  });
});

describe('errors (SPEC §5)', () => {
  const throwing = (value: () => unknown) =>
    tool({
      name: 'boom',
      inputSchema: { type: 'object' },
      run: () => {
        throw value();
      },
    });

  it('a thrown Error gives is_error with `${name}: ${message}` and never the stack', async () => {
    const result = await resultFor([throwing(() => new Error('boom'))], 'boom', {});
    expect(result).toEqual({ type: 'tool_result', tool_use_id: 'toolu_x', content: 'Error: boom', is_error: true });
    const typeError = await resultFor([throwing(() => new TypeError('x is not a function'))], 'boom', {});
    expect(typeError.content).toBe('TypeError: x is not a function');
  });

  it("what a tool() schema's own code throws (a refinement, a transform, sync or async) is the model's answer, as from the SDK's betaZodTool: a ToolError's content word for word; the run goes on", async () => {
    const refused = () => {
      throw new ToolError('No user "bob"; ask for another name.');
    };
    const cases: Array<[z.ZodType<{ user: string }>, string]> = [
      [z.object({ user: z.string().refine(refused) }), 'No user "bob"; ask for another name.'],
      [z.object({ user: z.string().refine(async () => refused()) }), 'No user "bob"; ask for another name.'],
      [z.object({ user: z.string().transform((): string => { throw new Error('directory offline'); }) }), "Invalid input for tool 'lookup': directory offline"],
      // An error that says nothing: said so, not an empty reason.
      [z.object({ user: z.string().refine(() => { throw new Error(''); }) }), "Invalid input for tool 'lookup': its schema failed, and said nothing of why"],
    ];
    for (const [inputSchema, content] of cases) {
      const lookup = tool({ name: 'lookup', inputSchema, run: ({ user }) => `found ${user}` });
      expect(await resultFor([lookup], 'lookup', { user: 'bob' })).toEqual({ type: 'tool_result', tool_use_id: 'toolu_x', content, is_error: true });
    }
  });

  it('an async refinement runs once a call, and one that rejects leaves no unhandled rejection (zod parses async at once)', async () => {
    let checks = 0;
    const unhandled = await unhandledDuring(async () => {
      const known = tool({ name: 'lookup', inputSchema: z.object({ user: z.string().refine(async (user) => (checks++, user === 'ann'), 'unknown user') }), run: ({ user }) => `found ${user}` });
      expect(await resultFor([known], 'lookup', { user: 'ann' })).toMatchObject({ content: 'found ann' });
      expect(checks).toBe(1);
      // A codec's async decode too.
      const decoded = z.codec(z.string(), z.string(), { decode: async (user: string) => (checks++, user.toUpperCase()), encode: (user: string) => user });
      const upper = tool({ name: 'lookup', inputSchema: z.object({ user: decoded }), run: ({ user }) => `found ${user}` });
      expect(await resultFor([upper], 'lookup', { user: 'ann' })).toMatchObject({ content: 'found ANN' });
      expect(checks).toBe(2);
      const failing = tool({ name: 'lookup', inputSchema: z.object({ user: z.string().refine(async () => Promise.reject(new Error('lookup failed'))) }), run: () => 'found' });
      expect(await resultFor([failing], 'lookup', { user: 'ann' })).toMatchObject({ is_error: true, content: "Invalid input for tool 'lookup': lookup failed" });
    });
    expect(unhandled).toEqual([]);
  });

  it('a thrown non-Error value gives `Error: ${String(value)}`', async () => {
    expect((await resultFor([throwing(() => 'oops')], 'boom', {})).content).toBe('Error: oops');
    expect((await resultFor([throwing(() => 42)], 'boom', {})).content).toBe('Error: 42');
    expect((await resultFor([throwing(() => undefined)], 'boom', {})).content).toBe('Error: undefined');
  });

  it('a rejected promise is handled like a throw', async () => {
    const rejecting = tool({ name: 'boom', inputSchema: { type: 'object' }, run: async () => Promise.reject(new RangeError('far')) });
    expect((await resultFor([rejecting], 'boom', {})).content).toBe('RangeError: far');
  });

  it('ToolError sends its own content, string or blocks', async () => {
    expect((await resultFor([throwing(() => new ToolError('Ask for the order number.'))], 'boom', {})).content).toBe(
      'Ask for the order number.',
    );
    const blocks = [{ type: 'text' as const, text: 'details' }];
    expect((await resultFor([throwing(() => new ToolError(blocks))], 'boom', {})).content).toEqual(blocks);
  });

  it('a ToolError made in plain JavaScript with content that is neither (null, a number, an array holding null): a TypeError saying so, which the model reads too', async () => {
    expect(() => new ToolError(null as never)).toThrow(new TypeError('ToolError: content must be a string or an array of content blocks, not null'));
    expect(() => new ToolError(404 as never)).toThrow(/content blocks, not 404$/);
    expect(() => new ToolError([{ type: 'text', text: 'a' }, undefined] as never)).toThrow(/content blocks, not an array holding undefined$/);
    const result = await resultFor([throwing(() => new ToolError(null as never))], 'boom', {});
    expect(result.content).toBe('TypeError: ToolError: content must be a string or an array of content blocks, not null');
  });

  it('an error result holds text only, as the API requires: an image a ToolError (an MCP isError result) carries is left out, with a note; historyProblems flags one', async () => {
    const picture = { type: 'image' as const, source: { type: 'base64' as const, media_type: 'image/png' as const, data: 'iVBORw0KGgo=' } };
    const result = await resultFor([throwing(() => new ToolError([{ type: 'text', text: 'render failed' }, picture]))], 'boom', {});
    expect(result).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_x',
      is_error: true,
      content: [{ type: 'text', text: 'render failed' }, { type: 'text', text: '[1 block other than text left out: an error result holds text only]' }],
    });
    const history = [
      { role: 'user' as const, content: 'go' },
      { role: 'assistant' as const, content: [toolUse('boom', {}, 'toolu_x')] },
      { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_x', is_error: true, content: [picture] }] },
    ];
    expect(historyProblems(history)).toEqual(['message 2: tool_result toolu_x is an error with content other than text (the API takes only text there)']);
  });

  it('a ToolError whose content holds something that is no content block is answered saying so (it failed the run)', async () => {
    const result = await resultFor([throwing(() => new ToolError([{ type: 'text' } as never]))], 'boom', {});
    expect(result).toMatchObject({ is_error: true, content: "Error: tool 'boom' threw a ToolError whose content is an array whose item 0 is a text block without text" });
  });

  it('an unknown tool, or a plain definition without run, gets "not found"', async () => {
    const result = await resultFor([], 'nope', {});
    expect(result).toEqual({ type: 'tool_result', tool_use_id: 'toolu_x', content: "Error: Tool 'nope' not found", is_error: true });
    const plain = { name: 'client_side', input_schema: { type: 'object' as const } };
    expect((await resultFor([plain], 'client_side', {})).content).toBe("Error: Tool 'client_side' not found");
  });

  it('a tool returning something that is not a string or blocks is an error result', async () => {
    const result = await resultFor([tool({ name: 'bad', inputSchema: { type: 'object' }, run: () => ({ a: 1 }) as never })], 'bad', {});
    expect(result.is_error).toBe(true);
    expect(result.content).toMatch(/returned object; a tool must return a string/);
  });

  it('an array that holds something other than content blocks is an error result too (it was sent, or crashed the run on null)', async () => {
    const returning = (value: unknown) => tool({ name: 'bad', inputSchema: { type: 'object' }, run: () => value as never });
    const cases: Array<[unknown, RegExp]> = [
      [[null], /returned an array whose item 0 is null; a tool must return a string/],
      [[{ type: 'text', text: 'ok' }, 42], /returned an array whose item 1 is number;/],
      [[{ type: 'bogus' }], /returned an array whose item 0 is no content block \(its type: 'bogus'; a result holds text, image, document, search_result, tool_reference, browser_state blocks\)/],
      [[{ text: 'no type' }], /item 0 is no content block \(its type: none;/],
      [[{ type: 'text' }], /returned an array whose item 0 is a text block without text;/],
    ];
    for (const [value, message] of cases) {
      const result = await resultFor([returning(value)], 'bad', {});
      expect(result.is_error).toBe(true);
      expect(result.content).toMatch(message);
    }
    const blocks = [{ type: 'text', text: 'fine' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }];
    expect((await resultFor([returning(blocks)], 'bad', {})).content).toEqual(blocks);
  });

  it("a toolset member's result is checked as a tool's: what no result may hold is an error result, not sent", async () => {
    const values: unknown[] = [null, 42, { foo: 1 }, [null], [{ type: 'bogus' }], [{ type: 'text' }], 'fine', [{ type: 'text', text: 'fine' }]];
    const member = (i: number) => ({ ...toolUse('click', { i }, `toolu_${i}`), toolset_name: 'computer' });
    const server = await mockServer([...values.map((_, i) => ({ content: [member(i)] })), { content: [text('done')] }]);
    const computer = { type: 'computer_toolset_20260801', run: async (_context: unknown, use: { input: { i: number } }) => values[use.input.i] };
    const runner = toolRunner(server.client(), { ...baseParams, tools: [computer as never] });
    await runner;
    const results = server.requests.slice(1).map((request) => toolResults(request)[0]!);
    expect(results.slice(0, 6).map((result) => [result.is_error, result.content])).toEqual([
      [true, "Error: the computer toolset returned null for 'click'; a result is a string or content blocks"],
      [true, expect.stringContaining('returned number')],
      [true, expect.stringContaining('returned object')],
      [true, expect.stringContaining('returned an array whose item 0 is null')],
      [true, expect.stringContaining("item 0 is no content block (its type: 'bogus'")],
      [true, expect.stringContaining('item 0 is a text block without text')],
    ]);
    expect(results.slice(6).map((result) => [result.is_error, result.content])).toEqual([
      [undefined, 'fine'],
      [undefined, [{ type: 'text', text: 'fine' }]],
    ]);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
});

describe('logging', () => {
  const saved = process.env['ANTHROPIC_LOG'];
  afterEach(() => {
    if (saved === undefined) delete process.env['ANTHROPIC_LOG'];
    else process.env['ANTHROPIC_LOG'] = saved;
  });
  const failing = tool({
    name: 'boom',
    inputSchema: { type: 'object' },
    run: function explode() {
      throw new Error('kaboom');
    },
  });

  it('a failing tool is logged through the client logger with its name, id and stack', async () => {
    const { lines, logger } = captureLogger();
    await resultFor([failing], 'boom', {}, { logger, logLevel: 'warn' });
    const line = lines.find((entry) => entry.message.includes('kaboom'));
    expect(line?.level).toBe('warn');
    expect(line?.message).toContain("Tool 'boom' (toolu_x) failed");
    expect(line?.message).toMatch(/\n\s+at .*explode/);
  });

  // A tool failing with an error that quotes a whole response body wrote a warn line of megabytes, the stack at its end.
  it("a failing tool's huge error message is logged cut short, saying how much is left out, with the stack's frames", async () => {
    const hugeFailure = tool({
      name: 'fetch_page',
      inputSchema: { type: 'object' },
      run: function fetchPage() {
        throw new Error(`upstream answered 500: ${'y'.repeat(3_000_000)}`);
      },
    });
    const { lines, logger } = captureLogger();
    await resultFor([hugeFailure], 'fetch_page', {}, { logger, logLevel: 'warn' });
    const line = lines.find((entry) => entry.message.startsWith("Tool 'fetch_page'"));
    expect(line?.level).toBe('warn');
    expect(line!.message.length).toBeLessThan(4000);
    expect(line?.message).toMatch(/^Tool 'fetch_page' \(toolu_x\) failed: Error: upstream answered 500: y+… \(\d+ more characters: not logged\)\n\s+at .*fetchPage/);
  });

  // A stack made before the message took the body in (a wrapper that read it first; Bun makes it at once) opened with
  // other words than the message: the log line went without any frame.
  it("a failing tool's huge error message added after its stack was made: logged cut short, with the stack's frames", async () => {
    const hugeFailure = tool({
      name: 'fetch_page',
      inputSchema: { type: 'object' },
      run: function fetchPage() {
        const error = new Error('upstream answered 500');
        void error.stack;
        error.message += `: ${'y'.repeat(3_000_000)}`;
        throw error;
      },
    });
    const { lines, logger } = captureLogger();
    await resultFor([hugeFailure], 'fetch_page', {}, { logger, logLevel: 'warn' });
    const line = lines.find((entry) => entry.message.startsWith("Tool 'fetch_page'"));
    expect(line!.message.length).toBeLessThan(4000);
    expect(line?.message).toMatch(/^Tool 'fetch_page' \(toolu_x\) failed: Error: upstream answered 500: y+… \(\d+ more characters: not logged\)\n\s+at .*fetchPage/);
  });

  it("a ToolError (the tool's own answer, such as an MCP isError result) is logged at info, without a stack, and without its text (a result: at debug only)", async () => {
    const refusing = tool({
      name: 'refuse',
      inputSchema: { type: 'object' },
      run: function refuse() {
        throw new ToolError('No order with that number.');
      },
    });
    const info = captureLogger();
    await resultFor([refusing], 'refuse', {}, { logger: info.logger, logLevel: 'info' });
    expect(info.lines.filter((entry) => entry.message.startsWith("Tool 'refuse'"))).toEqual([{ level: 'info', message: "Tool 'refuse' (toolu_x) answered with an error (a ToolError)" }]);
    // The text the model reads is the call's result: not logged above debug (it logged the text at info).
    expect(info.lines.some((entry) => entry.message.includes('No order with that number.'))).toBe(false);
    const debug = captureLogger();
    await resultFor([refusing], 'refuse', {}, { logger: debug.logger, logLevel: 'debug' });
    expect(debug.lines.some((entry) => entry.level === 'debug' && entry.message.includes('No order with that number.'))).toBe(true);
  });

  it('ANTHROPIC_LOG sets the level: off logs nothing, debug logs inputs and results', async () => {
    process.env['ANTHROPIC_LOG'] = 'off';
    const quiet = captureLogger();
    await resultFor([failing], 'boom', {}, { logger: quiet.logger });
    expect(quiet.lines.filter((line) => line.message.includes('boom'))).toEqual([]);

    process.env['ANTHROPIC_LOG'] = 'debug';
    const verbose = captureLogger();
    const echo = tool({ name: 'echo', inputSchema: { type: 'object' }, run: () => 'secret-result' });
    await resultFor([echo], 'echo', { q: 'secret-input' }, { logger: verbose.logger });
    const debug = verbose.lines.filter((line) => line.level === 'debug').map((line) => line.message);
    expect(debug.some((line) => line.includes('secret-input'))).toBe(true);
    expect(debug.some((line) => line.includes('secret-result'))).toBe(true);
  });

  it("a toolset member's call is logged as a tool's: its input and result at debug, a failure at warn with its stack, a ToolError at info without its text", async () => {
    const member = (name: string, input: unknown, id: string) => ({ ...toolUse(name, input, id), toolset_name: 'computer' });
    const computer = {
      type: 'computer_toolset_20260801',
      run: async (_context: unknown, use: { name: string; input: { q: string } }) => {
        if (use.name === 'crash') throw new Error('display gone');
        if (use.name === 'refuse') throw new ToolError('No such window.');
        return `shot of ${use.input.q}`;
      },
    };
    const logged = async (level: 'debug' | 'info' | 'warn', name: string) => {
      const { lines, logger } = captureLogger();
      const server = await mockServer([{ content: [member(name, { q: 'secret-input' }, 'toolu_m')] }, { content: [text('ok')] }]);
      await toolRunner(server.client({ logger, logLevel: level }), { ...baseParams, tools: [computer as never] });
      return lines;
    };
    const debug = (await logged('debug', 'screenshot')).filter((line) => line.level === 'debug').map((line) => line.message);
    expect(debug).toContain(`Running tool 'screenshot' (toolu_m) of the computer toolset with input {"q":"secret-input"}`);
    expect(debug.some((line) => line.startsWith("Tool 'screenshot' (toolu_m) of the computer toolset result: ") && line.includes('shot of secret-input'))).toBe(true);
    const crash = (await logged('warn', 'crash')).filter((line) => line.message.includes('toolu_m'));
    expect(crash.map((line) => line.level)).toEqual(['warn']);
    expect(crash[0]!.message).toMatch(/^Tool 'crash' \(toolu_m\) of the computer toolset failed: Error: display gone\n\s+at /);
    const refuse = (await logged('info', 'refuse')).filter((line) => line.message.includes('toolu_m'));
    expect(refuse).toEqual([{ level: 'info', message: "Tool 'refuse' (toolu_m) of the computer toolset answered with an error (a ToolError)" }]);
  });

  it("a toolset member's call that timed out, or of a family the run has no toolset of, is logged at warn, as a tool's is", async () => {
    const member = (name: string, family: string, id: string) => ({ ...toolUse(name, {}, id), toolset_name: family });
    const computer = { type: 'computer_toolset_20260801', run: (_context: unknown, _use: unknown, signal?: AbortSignal) => new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(new Error('stopped')))) };
    const { lines, logger } = captureLogger();
    const server = await mockServer([{ content: [member('screenshot', 'computer', 'toolu_slow'), member('navigate', 'browser', 'toolu_none')] }, { content: [text('ok')] }]);
    await toolRunner(server.client({ logger, logLevel: 'warn' }), { ...baseParams, tools: [computer as never] }, { toolTimeoutMs: 50 });
    const results = wire(server.requests[1]!).messages[2].content;
    expect(results.map((block: { is_error?: boolean }) => block.is_error)).toEqual([true, true]);
    expect(lines.filter((line) => line.level === 'warn').map((line) => line.message).sort()).toEqual([
      "Tool 'navigate' (toolu_none) of the browser toolset not found",
      "Tool 'screenshot' (toolu_slow) of the computer toolset timed out after 50 ms",
    ]);
  });

  it('inputs and results are not logged above debug', async () => {
    const { lines, logger } = captureLogger();
    const echo = tool({ name: 'echo', inputSchema: { type: 'object' }, run: () => 'secret-result' });
    await resultFor([echo], 'echo', { q: 'secret-input' }, { logger, logLevel: 'info' });
    expect(lines.some((line) => /secret-(input|result)/.test(line.message))).toBe(false);
  });
});
