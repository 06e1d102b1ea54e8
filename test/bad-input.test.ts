import { readFileSync } from 'node:fs';
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as zm from 'zod/mini';
import { z as z3 } from 'zod/v3';
import { ReplyError, agentTool, resumeToolRunner, textOf, tool, toolRunner } from 'tool-runner';
import { historyProblems, text, toolUse } from 'tool-runner/testing';
import { baseParams, captureLogger, mockServer, wire } from './helpers.js';

const order = (log: string[] = []) =>
  tool({
    name: 'get_order',
    inputSchema: z.object({ id: z.string().max(64), expand: z.boolean().optional() }).strict(),
    run: ({ id }) => (log.push(id), `order ${id}`),
  });

async function answers(calls: ReturnType<typeof toolUse>[], log: string[] = []) {
  const server = await mockServer([{ content: calls }, { content: [text('ok')] }]);
  const runner = toolRunner(server.client(), { ...baseParams, tools: [order(log)] });
  await runner;
  expect(historyProblems(runner.params.messages)).toEqual([]);
  return { results: runner.params.messages[2]!.content as Array<{ tool_use_id: string; content: string; is_error?: boolean }>, runner };
}

describe('bad input from the model gets an is_error result it can act on', () => {
  it('input that is not a JSON object (unparsable partial JSON arrives as a string)', async () => {
    const { results } = await answers([toolUse('get_order', '{"id": "A-1', 'toolu_1')]);
    expect(results[0]).toMatchObject({ is_error: true, content: expect.stringMatching(/Invalid input for tool 'get_order':\n- \(root\): /) });
  });

  it("the SDK's betaZodTool: zod's issues one per line with their paths, as for tool() (not zod's JSON dump)", async () => {
    const lookup = betaZodTool({ name: 'lookup', description: 'Finds an order', inputSchema: z.object({ id: z.string(), items: z.array(z.object({ qty: z.number() })) }), run: ({ id }) => `order ${id}` });
    const server = await mockServer([{ content: [toolUse('lookup', { items: [{ qty: 'two' }] }, 'toolu_z')] }, { content: [text('ok')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [lookup] });
    await runner;
    const [result] = runner.params.messages[2]!.content as Array<{ content: string; is_error?: boolean }>;
    expect(result!.is_error).toBe(true);
    expect(result!.content.split('\n')).toEqual([
      "Invalid input for tool 'lookup':",
      expect.stringMatching(/^- id: /),
      expect.stringMatching(/^- items\[0\]\.qty: /),
      'Fix the input and call the tool again.',
    ]);
  });

  it('missing, extra and mistyped fields, each with its path', async () => {
    const { results } = await answers([
      toolUse('get_order', {}, 'toolu_missing'),
      toolUse('get_order', { id: 'A', colour: 'red' }, 'toolu_extra'),
      toolUse('get_order', { id: 7, expand: 'yes' }, 'toolu_typed'),
    ]);
    expect(results.map((result) => result.is_error)).toEqual([true, true, true]);
    expect(results[0]!.content).toMatch(/- id: /);
    expect(results[1]!.content).toMatch(/colour/);
    expect(results[2]!.content).toMatch(/- id: .*\n- expand: /);
  });

  it('a huge unknown key, or thousands of wrong items: the answer lists 20 issues at most, each cut short, and ends with the hint to call again', async () => {
    const strictTool = tool({ name: 'tally', inputSchema: z.object({ v: z.array(z.number()) }).strict(), run: () => 'ok' });
    const server = await mockServer([
      { content: [toolUse('tally', { v: [], ['k'.repeat(60_000)]: 1 }, 'toolu_key'), toolUse('tally', { v: Array.from({ length: 5_000 }, () => 'x') }, 'toolu_items')] },
      { content: [text('ok')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [strictTool] });
    await runner;
    const [key, items] = runner.params.messages[2]!.content as Array<{ content: string; is_error?: boolean }>;
    expect(key!.is_error).toBe(true);
    expect(key!.content.length).toBeLessThan(600);
    expect(key!.content).toMatch(/k{10}…/);
    const lines = items!.content.split('\n');
    expect(lines).toHaveLength(1 + 20 + 1 + 1);
    expect(lines.at(-2)).toBe('- … and 4980 more');
    expect(lines.at(-1)).toBe('Fix the input and call the tool again.');
  });

  it('a huge input is rejected without echoing it back', async () => {
    const { results } = await answers([toolUse('get_order', { id: 'x'.repeat(500_000) })]);
    expect(results[0]!.is_error).toBe(true);
    expect(results[0]!.content.length).toBeLessThan(500);
  });

  it('a tool name that does not exist, or differs only in case, is "not found" with a hint', async () => {
    const { results } = await answers([toolUse('Get_Order', { id: 'A' }, 'toolu_case'), toolUse('cancel_order', {}, 'toolu_none')]);
    expect(results[0]!.content).toBe("Error: Tool 'Get_Order' not found. Did you mean 'get_order'?");
    expect(results[1]!.content).toBe("Error: Tool 'cancel_order' not found");
  });

  it('duplicate tool_use ids: the repeat gets an id of its own and an error; the first runs once', async () => {
    const log: string[] = [];
    const { results, runner } = await answers([toolUse('get_order', { id: 'A' }, 'toolu_same'), toolUse('get_order', { id: 'B' }, 'toolu_same')], log);
    expect(log).toEqual(['A']);
    expect(results.map((result) => result.tool_use_id)).toEqual(['toolu_same', 'toolu_same_dup1']);
    expect(results[1]).toMatchObject({ is_error: true, content: expect.stringContaining("repeats the id 'toolu_same'") });
    const assistant = runner.params.messages[1]!.content as Array<{ id: string }>;
    expect(assistant.map((block) => block.id)).toEqual(['toolu_same', 'toolu_same_dup1']);
  });

  it('duplicate tool_use ids over a message thread: the next request replays the history as kept (the server holds the repeats)', async () => {
    const server = await mockServer([{ content: [toolUse('get_order', { id: 'A' }, 'toolu_same'), toolUse('get_order', { id: 'B' }, 'toolu_same')] }, { content: [text('ok')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [order()] });
    const next = wire(server.requests[1]!);
    expect(next.body.thread).toEqual({ type: 'create' });
    expect(next.messages[1].content.map((block: { id: string }) => block.id)).toEqual(['toolu_same', 'toolu_same_dup1']);
    expect(historyProblems(next.messages)).toEqual([]);
  });
});

describe('bad input from the user is a clear error at construction, before any request', () => {
  it('each case', async () => {
    const server = await mockServer([]);
    const client = server.client();
    const make = (params: object, options?: object) => () => toolRunner(client, { ...baseParams, ...params } as never, options as never);
    expect(make({ messages: undefined })).toThrow(/params.messages must be an array/);
    expect(make({ messages: [{ role: 'bot', content: 'x' }] })).toThrow(/messages\[0\].role must be 'user', 'assistant' or 'system' \(a system message, SDK 1.14\), got "bot"/);
    expect(make({ tools: [order(), order()] })).toThrow(/two tools are named 'get_order'/);
    // A toolset is named after its family, which the API lets no other tool of the request have (the SDK's runner ran the
    // first toolset of a family, and this one the last, till the API refused the request).
    const screen = () => ({ type: 'computer_toolset_20260801', display_width_px: 1024, display_height_px: 768, run: async () => 'done' });
    expect(make({ tools: [screen(), screen()] })).toThrow("toolRunner: two tools are named 'computer' (a computer toolset is named 'computer'); tool names must be unique");
    expect(make({ tools: [screen(), { name: 'computer', input_schema: { type: 'object' }, run: async () => 'mine' }] })).toThrow(/two tools are named 'computer' \(a computer toolset/);
    expect(make({ tools: [{ type: 'browser_toolset_20260801' }, { type: 'browser_toolset_20260801', run: async () => 'done' }] })).toThrow(/two tools are named 'browser'/);
    // An entry no tool at all, after the two of one name: the clear error of the two (it crashed reading the entry).
    expect(make({ tools: [order(), order(), null] })).toThrow(/two tools are named 'get_order'; tool names must be unique/);
    expect(make({ max_iterations: -3 })).toThrow(/max_iterations must be a positive integer \(or 0 for no limit, as in the SDK\), got -3/);
    expect(make({ max_iterations: 1.5 })).toThrow(/max_iterations must be a positive integer/);
    expect(make({ tools: [{ name: 'x', input_schema: { type: 'object' }, run: 'not a function' }] })).toThrow(/tool 'x' has a `run` that is not a function/);
    expect(make({}, { timeuot: 5 })).toThrow(/unknown option 'timeuot'; the options are requestOptions, .*and the SDK's request options headers, signal, timeout/);
    expect(make({}, { body: {} })).toThrow(/the request option 'body' is set by the runner/);
    expect(() => tool({ name: 'x', inputSchema: z.array(z.string()) as never, run: () => '' })).toThrow(/must describe an object/);
    expect(() => tool({ name: 'x', inputSchema: z.object({}), run: undefined as never })).toThrow(/`run` must be a function/);
    // Sent as it was: the API's 400 named the field at the first request, not the tool.
    expect(() => tool({ name: 'x', inputSchema: z.object({}), description: 3 as never, run: () => '' })).toThrow(new TypeError("Tool 'x': `description` must be a string, got number"));
    // A zod older than 4.2 (or zod 3's "zod/v4") has no Standard JSON Schema to export.
    const oldZod = { '~standard': { version: 1, vendor: 'zod', validate: (value: unknown) => ({ value }) } };
    expect(() => tool({ name: 'x', inputSchema: oldZod as never, run: () => '' })).toThrow(/\(a zod schema\) cannot export JSON Schema .*Use zod >= 4\.2 \(zod 3 and zod 4\.0–4\.1 cannot export it/);
    // A zod shape not wrapped in z.object(), a union at the top level: said what they are.
    expect(() => tool({ name: 'x', inputSchema: { city: z.string() } as never, run: () => '' })).toThrow(/got type undefined \(a shape of schemas: wrap it in z\.object\(\{ \.\.\. \}\)\)/);
    expect(() => tool({ name: 'x', inputSchema: z.union([z.object({ a: z.string() }), z.object({ b: z.number() })]), run: () => '' })).toThrow(/got type undefined \(a union, `anyOf`, at the top level/);
    // An object schema the API refuses whole (a 400 for every request): composition at its top level, a property name out of its pattern.
    expect(() => tool({ name: 'x', inputSchema: { type: 'object', properties: { a: { type: 'string' } }, anyOf: [{ required: ['a'] }] }, run: () => '' })).toThrow(/^Tool 'x': the input schema cannot be sent to the model: anyOf at its top level .*the request would be refused whole$/);
    expect(() => tool({ name: 'x', inputSchema: z.object({ 'filter[id]': z.string(), 'a.b-c_d': z.string() }), run: () => '' })).toThrow(/the property "filter\[id\]" \(the API takes property names of 1 to 64 letters/);
    expect(() => tool({ name: 'x', inputSchema: z.object({ 'a.b-c_d': z.string() }), run: () => '' })).not.toThrow();
    // A zod type JSON cannot carry (a Date, a bigint): zod's words, and what to describe instead, which the model can send.
    expect(() => tool({ name: 'x', inputSchema: z.object({ when: z.date() }), run: () => '' })).toThrow(
      new TypeError("Tool 'x': the input schema cannot be written as JSON Schema, which the API takes: Date cannot be represented in JSON Schema. The model sends JSON: describe what it sends (a date as z.iso.datetime(), with .pipe(z.coerce.date()) to get a Date; a bigint as z.string() or z.number())"),
    );
    expect(() => tool({ name: 'x', inputSchema: z.object({ when: z.iso.datetime().pipe(z.coerce.date()) }), run: ({ when }) => when.toISOString() })).not.toThrow();
    // zod/mini of a zod that can: told so, not to upgrade.
    expect(() => tool({ name: 'x', inputSchema: zm.object({ q: zm.string() }) as never, run: () => '' })).toThrow(/cannot export JSON Schema .*A zod\/mini schema exports none: use classic zod/);
    // zod 3's API from "zod/v3" of this zod 4.6: "Use zod >= 4.2" named nothing to change; the import is what to change.
    expect(() => tool({ name: 'x', inputSchema: z3.object({ q: z3.string() }) as never, run: () => '' })).toThrow(
      /cannot export JSON Schema \(Standard JSON Schema\)\. A schema of zod 3's API \(zod 3, or "zod\/v3" of zod 4\) exports none: with zod >= 4\.2 installed, import it from "zod" \(`import \{ z \} from "zod"`, not "zod\/v3"\)/,
    );
    expect(make({}, { output: z3.object({ q: z3.string() }) })).toThrow(/options\.output \(a zod schema\) cannot export JSON Schema \(Standard JSON Schema\)\. A schema of zod 3's API/);
    // An option among the params would go to the API (which refuses it), a param among the options is unknown there: each names where it belongs.
    expect(make({ fallback: [] })).toThrow(new TypeError('toolRunner: `fallback` is an option of the runner, not a request param: pass it in the third argument, toolRunner(client, params, { fallback })'));
    expect(make({ concurrency: 2 })).toThrow(/`concurrency` is an option of the runner, not a request param/);
    expect(make({}, { compactionControl: { enabled: true } })).toThrow(/`compactionControl` is a param of the run, not an option: put it in the second argument/);
    expect(make({}, { stream: true })).toThrow(/`stream` is a param of the run, not an option/);
    const middleware = [(request: unknown, next: (r: unknown) => unknown) => next(request)];
    // A near miss of a param among the options (camelCase, a letter off) is named as that param, with a client whose middleware would take an option of the caller's own.
    expect(make({}, { maxIterations: 3 })).toThrow(/unknown option 'maxIterations'\. Did you mean `max_iterations`\? It is a param of the run: put it in the second argument/);
    expect(make({}, { maxIteration: 3, middleware: [(request: unknown, next: (r: unknown) => unknown) => next(request)] })).toThrow(/Did you mean `max_iterations`\?/);
    expect(make({}, { runToolEagerly: true })).toThrow(/Did you mean `runToolsEagerly`\?/);
    // The same word with another ending (as other libraries name them), with the client's middleware too: named, not left to it.
    expect(make({}, { approval: () => true })).toThrow(/unknown option 'approval'; .*\. Did you mean 'approve'\?$/);
    expect(make({}, { maxRetry: 2, middleware })).toThrow(/unknown option 'maxRetry'; .*\. Did you mean 'maxRetries'\?$/);
    expect(make({}, { toolTimeout: 5_000 })).toThrow(/Did you mean 'toolTimeoutMs'\?$/);
    // A param of the request among the options (as other libraries take `tools` or `model` there): named as a param, with the client's
    // middleware too, which would otherwise take it as a request option of the caller's own and send the run without it.
    for (const key of ['tools', 'model', 'messages', 'system', 'max_tokens', 'tool_choice', 'thinking', 'temperature', 'output_config']) {
      const why = new RegExp(`^toolRunner: \`${key}\` is a param of the request, not an option: put it in the second argument, toolRunner\\(client, \\{ \\.\\.\\.params, ${key} \\}\\)$`);
      expect(make({}, { [key]: [] })).toThrow(why);
      expect(make({}, { [key]: [], middleware })).toThrow(why);
    }
    // Its name in camelCase (as JavaScript names options), with the client's middleware too.
    for (const [key, meant] of [['maxTokens', 'max_tokens'], ['toolChoice', 'tool_choice'], ['stopSequences', 'stop_sequences'], ['Tools', 'tools']] as const) {
      const why = `toolRunner: unknown option '${key}'. Did you mean \`${meant}\`? It is a param of the request: put it in the second argument, toolRunner(client, { ...params, ${meant} })`;
      expect(make({}, { [key]: 1 })).toThrow(new TypeError(why));
      expect(make({}, { [key]: 1, middleware })).toThrow(new TypeError(why));
    }
    expect(make({ tools: [{ name: 'raw', input_schema: z.object({ id: z.string() }) }] })).toThrow(
      /tool 'raw': input_schema takes JSON Schema, not a schema object \(zod\): make the tool with tool\(\{ name, inputSchema, run \}\)/,
    );
    // A function given as a tool (as other libraries take tools, or tool() itself, not what it makes): named, with the fix.
    async function getWeather({ city }: { city: string }) {
      return city;
    }
    const notATool = /^toolRunner: every entry of tools must be an object \(a tool\), got a function: make a tool with tool\(\{ name, inputSchema, run \}\)$/;
    expect(make({ tools: [getWeather] })).toThrow(notATool);
    expect(make({ tools: [tool] })).toThrow(notATool);
    expect(make({ tools: ['get_weather'] })).toThrow(/must be an object \(a tool\), got "get_weather": make a tool with tool/);
    // valibot's schemas are plain objects with `~standard` in sight, arktype's are functions; zod's JSON Schema hides its `~standard`.
    const standard = { version: 1, vendor: 'valibot', validate: (value: unknown) => ({ value }) };
    expect(make({ tools: [{ name: 'v', input_schema: { kind: 'schema', type: 'object', '~standard': standard } }] })).toThrow(/tool 'v': input_schema takes JSON Schema, not a schema object \(valibot\)/);
    expect(make({ tools: [{ name: 'a', input_schema: Object.assign(() => true, { '~standard': { ...standard, vendor: 'arktype' } }) }] })).toThrow(/tool 'a': input_schema takes JSON Schema, not a schema object \(arktype\)/);
    expect(make({ tools: [{ name: 'j', input_schema: z.toJSONSchema(z.object({ id: z.string() })) }] })).not.toThrow();
    // A wrong type says what it got, a string quoted (not "got 5" for '5').
    expect(make({}, { toolTimeoutMs: '5' })).toThrow(new TypeError('toolRunner: options.toolTimeoutMs must be a positive number of milliseconds, at most 2147483647 (about 24.8 days), got "5"'));
    // A timer cannot keep longer (it would fire at once).
    expect(make({}, { toolTimeoutMs: Number.POSITIVE_INFINITY })).toThrow(RangeError);
    expect(make({}, { toolTimeoutMs: 2 ** 31 })).toThrow(/at most 2147483647 .*, got 2147483648/);
    expect(make({ signal: undefined })).not.toThrow();
    expect(make({ max_iterations: '3' })).toThrow(/max_iterations must be a positive integer .*, got "3"/);
    expect(make({ tools: [tool({ name: 'slow', inputSchema: z.object({}), run: () => '', timeoutMs: '5' as never })] })).toThrow(
      /tool 'slow': timeoutMs must be a positive number of milliseconds, .*got "5"/,
    );
    expect(make({}, { logger: true })).toThrow(/options.logger must be an object with debug, info, warn, error methods \(console or a pino logger\), got true/);
    expect(make({}, { logger: { warn: () => {} } })).toThrow(/got an object \(no debug, info, error\)/);
    expect(() => toolRunner(undefined as never, baseParams)).toThrow(new TypeError('toolRunner: the first argument must be an Anthropic client (or an SDK BetaMessageThread), got undefined'));
    expect(server.requests).toHaveLength(0);
  });

  it('a value of the wrong kind is a TypeError, a number too; a RangeError only for a number out of range', async () => {
    const server = await mockServer([{ content: [text('ok')] }]);
    const client = server.client();
    const make = (params: object, options?: object) => () => toolRunner(client, { ...baseParams, ...params } as never, options as never);
    // A number where an object, a function, a string or a signal goes was a RangeError ("out of range"), as a limit's is.
    expect(make({}, { hooks: 3 })).toThrow(new TypeError('toolRunner: options.hooks must be an object of hooks (onRequest, onMessage, onToolCall, onToolResult, onToolError), got 3'));
    expect(make({}, { hooks: { onToolCall: 1 } })).toThrow(new TypeError('toolRunner: hooks.onToolCall must be a function, got 1'));
    expect(make({}, { onEvent: 1 })).toThrow(TypeError);
    expect(make({}, { requestOptions: 1 })).toThrow(TypeError);
    expect(make({}, { signal: 1 })).toThrow(new TypeError('toolRunner: options.signal must be an AbortSignal (from an AbortController), got 1'));
    expect(make({}, { fallback: [{ model: 5 }] })).toThrow(new TypeError('toolRunner: options.fallback[0].model must be a non-empty string, got 5'));
    // A string where a number goes was a RangeError: a TypeError, as for concurrency.
    expect(make({}, { budget: { maxTokens: '100' } })).toThrow(new TypeError('toolRunner: options.budget.maxTokens must be a whole number of at least 1, got "100"'));
    expect(make({ max_iterations: '3' })).toThrow(TypeError);
    expect(make({ compactionControl: { enabled: true, keepTurns: '2' } })).toThrow(new TypeError('toolRunner: compactionControl.keepTurns must be a whole number, got "2"'));
    expect(() => agentTool({ name: 'helper', description: 'Helps', params: () => baseParams, maxDepth: '2' } as never)).toThrow(TypeError);
    // A number out of range stays a RangeError.
    expect(make({}, { budget: { maxTokens: 0 } })).toThrow(RangeError);
    expect(make({ max_iterations: -1 })).toThrow(RangeError);
    const runner = toolRunner(client, { ...baseParams, tools: [order()] });
    await runner;
    expect(() => runner.approve(5 as never)).toThrow(new TypeError('approve: the first argument is the id of a waiting call (runner.pendingApprovals[i].id), got 5'));
    expect(() => runner.deny('toolu_x', 5 as never)).toThrow(TypeError);
    expect(() => runner.setRequestOptions(() => 5 as never)).toThrow(new TypeError('setRequestOptions: the request options must be an object, got 5'));
  });

  it('setRequestOptions given an async function, or a promise: a clear error; the options were dropped in silence, the requests sent without them', async () => {
    const server = await mockServer([{ content: [text('ok')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [order()] });
    const refused = new TypeError('setRequestOptions: got a promise; pass the request options, or a function that returns them at once: await what they need first');
    expect(() => runner.setRequestOptions((async (options: object) => ({ ...options, headers: { 'x-tenant': 'acme' } })) as never)).toThrow(refused);
    expect(() => runner.setRequestOptions(Promise.resolve({ headers: { 'x-tenant': 'acme' } }) as never)).toThrow(refused);
    runner.setRequestOptions({ headers: { 'x-tenant': 'acme' } });
    await runner;
    expect(server.requests[0]!.headers['x-tenant']).toBe('acme');
  });

  it('options, or their requestOptions, given as a promise (an async function not awaited): a clear error at construction; the run went without them in silence', async () => {
    const server = await mockServer([{ content: [text('ok')] }]);
    const options = Promise.resolve({ headers: { 'x-tenant': 'acme' } });
    // Each was taken: a promise has no keys, so no option was unknown, and the requests went without the tenant's header.
    expect(() => toolRunner(server.client(), baseParams, options as never)).toThrow(new TypeError('toolRunner: options is a promise; await it first, and pass the options'));
    expect(() => toolRunner(server.client(), baseParams, { requestOptions: options as never })).toThrow(
      new TypeError('toolRunner: options.requestOptions is a promise; await it first, and pass the request options'),
    );
    await toolRunner(server.client(), baseParams, { requestOptions: await options });
    expect(server.requests[0]!.headers['x-tenant']).toBe('acme');
  });

  it("max_iterations 0 means no limit, as the README's list of construction errors says: only a negative or not whole one throws", async () => {
    const server = await mockServer([{ content: [toolUse('get_order', { id: 'A' })] }, { content: [toolUse('get_order', { id: 'B' })] }, { content: [text('done')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, max_iterations: 0, tools: [order()] });
    expect(textOf(await runner)).toBe('done');
    expect(runner.iteration).toBe(3);
    const reliability = readFileSync('README.md', 'utf8').split('## Reliability')[1]!.split('\n## ')[0]!;
    const atConstruction = reliability.slice(reliability.indexOf('a clear error at construction')).split('\n- ')[0]!.replace(/\s+/g, ' ');
    expect(atConstruction).toContain('`max_iterations` negative or not whole (0 means no limit)');
  });

  it('addTools / removeTools given an array, or something that is no tool, throw and change nothing', async () => {
    const server = await mockServer([{ content: [text('ok')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [order()] });
    expect(() => runner.addTools([order()] as never)).toThrow(new TypeError('addTools() takes each tool as an argument of its own: addTools(a, b), not addTools([a, b])'));
    expect(() => runner.removeTools(['get_order'] as never)).toThrow(/removeTools\(\) takes each tool as an argument of its own/);
    expect(() => runner.removeTools(undefined as never)).toThrow(new TypeError('removeTools() takes tools or tool names, got undefined'));
    // What the runner's tools param refuses, addTools() refuses too (it took them: the next request was refused, or the
    // added tool never ran, its calls "not found").
    expect(() => runner.addTools({ name: 'raw', input_schema: z.object({ id: z.string() }), run: () => '' } as never)).toThrow(
      new TypeError("addTools(): tool 'raw': input_schema takes JSON Schema, not a schema object (zod): make the tool with tool({ name, inputSchema, run }), which converts it"),
    );
    expect(() => runner.addTools({ name: 'plain', run: () => '' } as never)).toThrow(new TypeError("addTools(): tool 'plain' has no input_schema: make it with tool({ name, inputSchema, run })"));
    expect(() => runner.addTools({ name: 'x', input_schema: { type: 'object' }, run: 'not a function' } as never)).toThrow(new TypeError("addTools(): tool 'x' has a `run` that is not a function"));
    // (It read "tool 'undefined'".)
    expect(() => runner.addTools({ input_schema: { type: 'object' }, run: 'not a function' } as never)).toThrow(new TypeError('addTools(): a tool without a name has a `run` that is not a function'));
    await runner;
    expect(wire(server.requests[0]!).messages.filter((message: { role: string }) => message.role === 'system')).toEqual([]);
  });

  it('setMessagesParams given a function that changes the copy and forgets to return it, or no params: a clear error, nothing changed', async () => {
    const server = await mockServer([{ content: [text('ok')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [order()] });
    // "Cannot read properties of undefined (reading 'messages')", from inside the runner.
    const forgot = (params: { messages: unknown[] }) => void params.messages.push({ role: 'user', content: 'more' });
    expect(() => runner.setMessagesParams(forgot as never)).toThrow(new TypeError('setMessagesParams: the function must return the new params, (params) => ({ ...params, messages }), got undefined'));
    expect(() => runner.setMessagesParams(null as never)).toThrow(new TypeError('setMessagesParams: the params must be an object, or a function that returns them, got null'));
    // An async function: its promise was taken as params, and refused as "toolRunner: params.messages must be an array of messages".
    const later = async (params: { messages: unknown[] }) => ({ ...params, messages: [...params.messages, { role: 'user', content: 'more' }] });
    expect(() => runner.setMessagesParams(later as never)).toThrow(
      new TypeError('setMessagesParams: the function must return the new params, (params) => ({ ...params, messages }), got a promise: await what they need first, then set them'),
    );
    await runner;
    expect(wire(server.requests[0]!).messages).toEqual(baseParams.messages);
  });
});

describe("a new user's first mistakes are clear errors", () => {
  it('a tool without tool(), a promise in tools, params first, hooks misspelt, resumeToolRunner misused', async () => {
    const server = await mockServer([]);
    const client = server.client();
    const make = (params: object, options?: object) => () => toolRunner(client, { ...baseParams, ...params } as never, options as never);
    const plain = { name: 'get_weather', description: 'The weather', inputSchema: z.object({ city: z.string() }), run: () => 'sunny' };
    expect(make({ tools: [plain] })).toThrow(new TypeError("toolRunner: tool 'get_weather' has no input_schema: make it with tool({ name, inputSchema, run }), which turns inputSchema into it"));
    // A type of another API's tool (OpenAI's 'function') is no client tool of this one: still no input_schema.
    const shapedForAnotherApi = { type: 'function', name: 'lookup', parameters: { type: 'object' }, run: () => 'x' };
    expect(make({ tools: [shapedForAnotherApi] })).toThrow(/tool 'lookup' has no input_schema/);
    expect(make({ tools: [Promise.resolve(order())] })).toThrow(/an entry of tools is a promise: await it first/);
    expect(() => toolRunner(baseParams as never, client as never)).toThrow(/the first argument is the request params; pass your client first/);
    // null failed with "Cannot read properties of null (reading 'tools')".
    expect(() => toolRunner(client, null as never)).toThrow(new TypeError('toolRunner: params must be an object, got null'));
    expect(() => toolRunner(client, 'hi' as never)).toThrow(new TypeError('toolRunner: params must be an object, got "hi"'));
    // The messages API given for the client: it had failed only at the first await, saying the client had no messages API.
    for (const api of [client.beta.messages, client.messages]) {
      expect(() => toolRunner(api as never, baseParams)).toThrow('toolRunner: the first argument is a messages API (client.beta.messages or client.messages), not the client: pass the client itself, toolRunner(client, params)');
    }
    expect(make({}, { hooks: { onToolcall: () => {} } })).toThrow(/unknown hook 'onToolcall'; the hooks are onRequest, onMessage, onToolCall, onToolResult, onToolError/);
    // A slip names the hook meant, as a misspelt option does (it had only listed the five).
    expect(make({}, { hooks: { onToolResults: () => {} } })).toThrow(/unknown hook 'onToolResults'; the hooks are .*onToolError\. Did you mean 'onToolResult'\?$/);
    expect(make({}, { hooks: { on_message: () => {} } })).toThrow(/Did you mean 'onMessage'\?$/);
    expect(make({}, { hooks: { onToolcall: () => {} } })).toThrow(/Did you mean 'onToolCall'\?$/);
    expect(make({}, { hooks: { audit: () => {} } })).toThrow(/unknown hook 'audit'; the hooks are onRequest, onMessage, onToolCall, onToolResult, onToolError$/);
    expect(make({}, { hooks: () => {} })).toThrow(/options.hooks must be an object of hooks/);
    const runner = toolRunner(client, baseParams);
    const snapshot = runner.toJSON();
    expect(() => resumeToolRunner(client, JSON.stringify(snapshot) as never)).toThrow('resumeToolRunner: the snapshot is a string: JSON.parse it first');
    expect(() => resumeToolRunner(client, runner as never)).toThrow(/pass the runner's snapshot, runner.toJSON\(\), not the runner/);
    // The params (or any object but a snapshot): it said "snapshot version undefined is not supported", as if of another release.
    expect(() => resumeToolRunner(client, runner.params as never)).toThrow(
      new TypeError("resumeToolRunner: snapshot has no version, so it is not a runner's snapshot: pass what runner.toJSON() gave (or its JSON read back), not the params"),
    );
    expect(() => resumeToolRunner(client, {} as never)).toThrow(/^resumeToolRunner: snapshot has no version, so it is not a runner's snapshot: pass what runner\.toJSON\(\) gave \(or its JSON read back\)$/);
    // A run over an SDK thread resumed on the thread: it failed at the first request ("create is not a function").
    expect(() => resumeToolRunner(client.beta.messages.thread(baseParams) as never, snapshot)).toThrow(/the first argument is an SDK message thread; resume on a client, resumeToolRunner\(client, snapshot, \{ tools \}\)/);
    expect(() => resumeToolRunner(client, snapshot, { tools: [], budget: { maxToolCalls: 1 } } as never)).toThrow(/unknown key 'budget' in the third argument.*\{ options: \{ budget, \.\.\. \} \}/);
    // A tool given by its own name goes in the tools.
    const deploy = tool({ name: 'deploy', inputSchema: z.object({}), run: () => 'deployed' });
    expect(() => resumeToolRunner(client, snapshot, { deploy } as never)).toThrow(/unknown key 'deploy' in the third argument, which is \{ tools\?, options\? \}: the tools go in \{ tools: \[deploy, \.\.\.\] \}$/);
    expect(() => resumeToolRunner(client, snapshot, [order()] as never)).toThrow(/pass the tools as \{ tools: \[\.\.\.\] \}/);
    // A setting of the runner misspelt among the params would go to the API, which refuses it (400).
    expect(make({ max_iteration: 3 })).toThrow(new TypeError('toolRunner: unknown param `max_iteration`: did you mean `max_iterations`?'));
    expect(make({ maxIterations: 3 })).toThrow(/unknown param `maxIterations`: did you mean `max_iterations`\?/);
    expect(make({ runToolEagerly: true })).toThrow(/unknown param `runToolEagerly`: did you mean `runToolsEagerly`\?/);
    expect(make({ top_k: 5, stop_sequences: ['x'], metadata: {} })).not.toThrow();
    // A schema zod cannot write as JSON Schema: the error names the tool.
    expect(() => tool({ name: 'book', inputSchema: z.object({ on: z.date() }), run: () => '' })).toThrow(/^Tool 'book': the input schema cannot be written as JSON Schema, which the API takes: Date cannot be represented in JSON Schema/);
    // A schema library whose export throws a value with no text of its own (an object of no prototype): still this error, not String()'s TypeError.
    const noText = Object.create(null) as object;
    const odd = { '~standard': { version: 1, vendor: 'odd', validate: (value: unknown) => ({ value }), jsonSchema: { input: () => { throw noText; }, output: () => ({}) } } };
    expect(() => tool({ name: 'odd', inputSchema: odd as never, run: () => '' })).toThrow(/^Tool 'odd': the input schema cannot be written as JSON Schema, which the API takes: \[object Object\]/);
    expect(server.requests).toHaveLength(0);
  });

  it('a stream left (break) before its reply was whole, then await runner: the error says why there is no reply, and what to do', async () => {
    const server = await mockServer([{ content: [text('A long answer. '.repeat(20))], chunkSize: 5, eventDelayMs: 5 }]);
    const runner = toolRunner(server.client(), { ...baseParams, stream: true });
    for await (const stream of runner) {
      for await (const _event of stream) break;
      break;
    }
    await expect(runner).rejects.toThrow(/ended without a message from the model: the loop body left the loop \(break\) before any reply was whole .*await stream\.finalMessage\(\)/);
  });

  it('a tool name the Messages API refuses (a dot, a space, over 128 characters) is a TypeError from tool() and agentTool(), not a 400 that fails the whole request', () => {
    const run = () => 'x';
    const rule = "the Messages API takes 1 to 128 letters, digits, '_' and '-' (^[a-zA-Z0-9_-]{1,128}$)";
    expect(() => tool({ name: 'files.read', inputSchema: z.object({}), run })).toThrow(new TypeError(`tool(): the name "files.read" cannot be sent to the model: ${rule}`));
    expect(() => tool({ name: 'get weather', inputSchema: z.object({}), run })).toThrow(/^tool\(\): the name "get weather" cannot be sent/);
    expect(() => tool({ name: 'a'.repeat(129), inputSchema: z.object({}), run })).toThrow(/\(129 characters\) cannot be sent to the model/);
    expect(tool({ name: `A-${'b'.repeat(126)}`, inputSchema: z.object({}), run }).name).toHaveLength(128);
    expect(() => agentTool({ name: 'research.agent', description: 'Researches', params: () => baseParams })).toThrow(/^agentTool\(\): the name "research.agent" cannot be sent/);
  });

  it("tool(): a field misspelt (which the definition would leave out silently) or a schema under another name is named; a field of the tool's own stays", () => {
    const run = () => 'x';
    const schema = z.object({});
    expect(() => tool({ name: 't', descripton: 'Weather', inputSchema: schema, run } as never)).toThrow(new TypeError("Tool 't': unknown field `descripton`. Did you mean `description`?"));
    expect(() => tool({ name: 't', inputSchema: schema, run, timeout_ms: 50 } as never)).toThrow(/unknown field `timeout_ms`\. Did you mean `timeoutMs`\?/);
    expect(() => tool({ name: 't', inputSchema: schema, run, needApproval: true } as never)).toThrow(/unknown field `needApproval`\. Did you mean `needsApproval`\?/);
    // A timeout under another library's name would be no timeout at all; a slip in a field of the API's definition would not be sent.
    for (const key of ['timeout', 'timeoutSeconds']) {
      expect(() => tool({ name: 't', inputSchema: schema, run, [key]: 100 } as never)).toThrow(new TypeError(`Tool 't': unknown field \`${key}\`. Did you mean \`timeoutMs\` (milliseconds)?`));
    }
    expect(() => tool({ name: 't', inputSchema: schema, run, cache_contro: { type: 'ephemeral' } } as never)).toThrow(/unknown field `cache_contro`\. Did you mean `cache_control`\?/);
    expect(() => tool({ name: 't', inputSchema: schema, run, defer_loadin: true } as never)).toThrow(/Did you mean `defer_loading`\?/);
    expect(() => tool({ name: 't', input_schema: { type: 'object' }, run } as never)).toThrow(
      new TypeError("Tool 't': `inputSchema` is required (it got `input_schema`: tool() takes the schema, zod or JSON Schema, as `inputSchema`)"),
    );
    expect(() => tool({ name: 't', parameters: schema, run } as never)).toThrow(/it got `parameters`/);
    // Fields of the API's tool definition, and of the caller's own (short names are not guessed at), are kept.
    const kept = tool({ name: 't', inputSchema: schema, run, cache_control: { type: 'ephemeral' }, runs: 0 } as never) as unknown as Record<string, unknown>;
    expect(kept).toMatchObject({ cache_control: { type: 'ephemeral' }, runs: 0 });
    // agentTool's own fields too.
    expect(() => agentTool({ name: 'a', description: 'd', params: () => baseParams, max_depth: 2 } as never)).toThrow(new TypeError("agentTool 'a': unknown field `max_depth`. Did you mean `maxDepth`?"));
    expect(() => agentTool({ name: 'a', description: 'd', params: () => baseParams, maxDepht: 2 } as never)).toThrow(/Did you mean `maxDepth`\?/);
    // The short names too: the sub-agent's budget (its options) had gone unused.
    expect(() => agentTool({ name: 'a', description: 'd', params: () => baseParams, option: { budget: { maxToolCalls: 1 } } } as never)).toThrow(new TypeError("agentTool 'a': unknown field `option`. Did you mean `options`?"));
    expect(() => agentTool({ name: 'a', description: 'd', params: () => baseParams, clients: {} } as never)).toThrow(/unknown field `clients`\. Did you mean `client`\?/);
  });

  it('textOf given a runner not awaited or a stream: errors that say what to do', async () => {
    const server = await mockServer([{ content: [text('Hello.')] }, { content: [text('Hi.')] }]);
    const runner = toolRunner(server.client(), baseParams);
    expect(() => textOf(runner as never)).toThrow(/textOf\(\) was given a promise \(a runner not awaited\?\): await it first/);
    await runner;
    expect(runner.stoppedBy).toBe('model');
    const streamed = toolRunner(server.client(), { ...baseParams, stream: true });
    for await (const stream of streamed) {
      expect(() => textOf(stream as never)).toThrow(/textOf\(\) was given a stream: pass it the message, textOf\(await stream.finalMessage\(\)\)/);
      await stream.finalMessage();
    }
  });

  it('a request body that cannot be written as JSON is no failed reply: the error is thrown as it is', async () => {
    const server = await mockServer([{ content: [text('never')] }]);
    const metadata: Record<string, unknown> = {};
    metadata['self'] = metadata;
    const error = await toolRunner(server.client(), { ...baseParams, metadata } as never).runUntilDone().catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^Converting circular structure to JSON/);
    expect(error).not.toBeInstanceOf(ReplyError);
    expect(server.requests).toHaveLength(0);
  });

  it("the SDK's refusal to send a long request that is not streamed is no failed reply either: the SDK's error, as it is", async () => {
    const server = await mockServer([{ content: [text('never')] }]);
    const error = await toolRunner(server.client(), { ...baseParams, max_tokens: 64_000 }).runUntilDone().catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^Streaming is required for operations that may take longer than 10 minutes/);
    expect(error).not.toBeInstanceOf(ReplyError);
    expect(server.requests).toHaveLength(0);
  });

  it('request options the SDK would refuse only as a request goes, or that would break the run later, are clear errors at construction and in setRequestOptions', async () => {
    const server = await mockServer([{ content: [text('done')] }]);
    const make = (options: object) => () => toolRunner(server.client(), baseParams, options as never);
    // A signal that is no AbortSignal: the SDK's retry timer threw past the run, and the process ended.
    expect(make({ signal: {} })).toThrow(new TypeError('toolRunner: options.signal must be an AbortSignal (from an AbortController), got an object'));
    expect(make({ timeout: -5 })).toThrow(new RangeError('toolRunner: options.timeout must be a whole number of ms, 1 or more, got -5'));
    // The SDK takes 0, and ends every request at once.
    expect(make({ timeout: 0 })).toThrow(/options\.timeout must be a whole number of ms, 1 or more, got 0/);
    expect(make({ maxRetries: 'x' })).toThrow(/^toolRunner: options\.maxRetries must be a whole number of 0 or more, got "x"$/);
    expect(make({ headers: 'x-key: 1' })).toThrow(/options\.headers must be an object/);
    expect(make({ requestOptions: 'x' })).toThrow(/^toolRunner: options\.requestOptions must be an object of the SDK's request options, got "x"$/);
    expect(make({ requestOptions: { timeout: 1.5 } })).toThrow(/options\.requestOptions\.timeout must be a whole number of ms, 1 or more, got 1\.5/);
    expect(make({ requestOptions: { signal: 'stop' } })).toThrow(/options\.requestOptions\.signal must be an AbortSignal/);
    // A near miss or a runner option inside requestOptions: it had been taken and never applied.
    expect(make({ requestOptions: { timeuot: 5_000 } })).toThrow(/^toolRunner: options\.requestOptions: unknown request option 'timeuot'; .*Did you mean 'timeout'\?$/);
    expect(make({ requestOptions: { toolTimeoutMs: 5_000 } })).toThrow(/^toolRunner: options\.requestOptions: `toolTimeoutMs` is an option of the runner, not a request option/);
    // A listener that is no function threw at each event, and the run went on unwatched.
    expect(make({ onEvent: 'console.log' })).toThrow(/^toolRunner: options\.onEvent must be a function, or an array of functions, got "console\.log"$/);
    expect(make({ onEvent: [() => {}, null] })).toThrow(/options\.onEvent must be a function, or an array of functions, got an array/);
    expect(server.requests).toHaveLength(0);
    const runner = toolRunner(server.client(), baseParams, { signal: new AbortController().signal, timeout: 10_000, maxRetries: 0, onEvent: [() => {}] });
    expect(() => runner.setRequestOptions({ signal: {} as never })).toThrow(/^setRequestOptions: options\.signal must be an AbortSignal/);
    expect(() => runner.setRequestOptions({ maxRetries: -1 })).toThrow(/setRequestOptions: options\.maxRetries must be a whole number of 0 or more, got -1/);
    expect(() => runner.setRequestOptions(() => 'x' as never)).toThrow(/^setRequestOptions: the request options must be an object, got "x"$/);
    // A near miss, or an option of the runner, had been taken and left unused (a tool timeout never applied).
    expect(() => runner.setRequestOptions({ timeuot: 5_000 } as never)).toThrow(/^setRequestOptions: unknown request option 'timeuot'; the SDK's request options are headers, .*\. Did you mean 'timeout'\?$/);
    expect(() => runner.setRequestOptions({ toolTimeoutMs: 5_000 } as never)).toThrow(/^setRequestOptions: `toolTimeoutMs` is an option of the runner, not a request option: give it in the runner's options/);
    expect(() => runner.setRequestOptions({ concurency: 2 } as never)).toThrow(/^setRequestOptions: unknown request option 'concurency'; `concurrency` is an option of the runner/);
    expect(() => runner.setRequestOptions({ traceTag: 'x' } as never)).toThrow(/A request option of your own reaches only middleware/);
    // One of the caller's own, read by middleware, goes (as at construction).
    const middleware = [async (request: Request, next: (request: Request) => Promise<Response>) => next(request)];
    runner.setRequestOptions({ middleware, traceTag: 'x' } as never);
    // A param of the request (a model changed mid-run, say) is no request option, middleware or not: it went unused.
    expect(() => runner.setRequestOptions({ middleware, model: 'claude-opus-5' } as never)).toThrow(
      new TypeError("setRequestOptions: `model` is a param of the request, not a request option: give it in the params (the second argument of toolRunner, or runner.setMessagesParams((params) => ({ ...params, model })))"),
    );
    expect(make({ requestOptions: { tools: [] }, middleware })).toThrow(/^toolRunner: options\.requestOptions: `tools` is a param of the request, not a request option/);
    runner.setRequestOptions((previous) => ({ ...previous, middleware: undefined, traceTag: undefined }) as never);
    // Nothing changed by the refused calls: the run goes as it was set.
    expect(runner.requestOptions.maxRetries).toBe(0);
    expect(textOf(await runner)).toBe('done');
  });
});

describe('an input the model did not write', () => {
  it("an approver's edit, or an onToolCall hook's input, that is not valid: the model is told it was not its input, and the call did not run", async () => {
    const log: string[] = [];
    const server = await mockServer([{ content: [toolUse('get_order', { id: 'A' }, 'toolu_edit'), toolUse('get_order', { id: 'B' }, 'toolu_hook')] }, { content: [text('ok')] }]);
    const runner = toolRunner(
      server.client(),
      { ...baseParams, tools: [{ ...order(log), needsApproval: (input: { id: string }) => input.id === 'A' }] },
      {
        approve: () => ({ decision: 'allow', input: { id: 7 } }),
        hooks: { onToolCall: (call) => (call.input.id === 'B' ? { input: { id: 'B', colour: 'red' } as never } : undefined) },
      },
    );
    await runner;
    const results = runner.params.messages[2]!.content as Array<{ tool_use_id: string; content: string; is_error?: boolean }>;
    expect(results[0]).toMatchObject({ is_error: true, content: expect.stringMatching(/^Error: the approver replaced the input of this call with one that is not valid, so the call was not run\.\nInvalid input for tool 'get_order':\n- id: /) });
    // Not "call the tool again": the model's own input was not the one rejected.
    expect(results.map((result) => result.content)).not.toContainEqual(expect.stringContaining('call the tool again'));
    expect(results[1]).toMatchObject({ is_error: true, content: expect.stringMatching(/^Error: the onToolCall hook replaced the input of this call with one that is not valid/) });
    expect(log).toEqual([]);
  });

  it('the log says what was invalid, and that an edit is validated as the model\'s input is, before the schema\'s transforms', async () => {
    const server = await mockServer([{ content: [toolUse('pay', { amount: '12' }, 'toolu_pay'), toolUse('pay', { amount: 5 }, 'toolu_bad')] }, { content: [text('ok')] }]);
    const ran: number[] = [];
    // The schema takes a string and gives run a number: `call.input.amount` is 12, the number.
    const pay = tool({ name: 'pay', inputSchema: z.object({ amount: z.string().transform(Number) }), needsApproval: (input) => input.amount > 10, run: ({ amount }) => (ran.push(amount), 'paid') });
    const { lines, logger } = captureLogger();
    await toolRunner(server.client({ logger, logLevel: 'warn' }), { ...baseParams, tools: [pay] }, { approve: (call) => ({ decision: 'allow', input: { ...call.input } }) });
    expect(ran).toEqual([]);
    const warnings = lines.filter((line) => line.level === 'warn').map((line) => line.message);
    expect(warnings).toContainEqual(expect.stringMatching(/^Tool 'pay' \(toolu_bad\) got invalid input: Invalid input for tool 'pay': - amount: /));
    expect(warnings).toContainEqual(expect.stringMatching(/^Tool 'pay' \(toolu_pay\): the input the approver gave is invalid \(it is validated as the model's input is, before the schema's transforms: start from call\.toolUse\.input\); the call was not run: /));
  });
});

describe('security', () => {
  it('the API key never appears in any log line, at any level', async () => {
    const secret = 'sk-ant-api03-SECRET-KEY-do-not-log-0123456789';
    const { lines, logger } = captureLogger();
    const boom = tool({
      name: 'boom',
      inputSchema: z.object({}),
      run: () => {
        throw new Error('failed');
      },
    });
    const server = await mockServer([
      { error: { status: 429, retryAfter: 0.001 } },
      { content: [toolUse('boom', {}), toolUse('get_order', { id: 'A' }), toolUse('nope', {})] },
      { content: [text('ok')] },
    ]);
    await toolRunner(server.client({ apiKey: secret, logLevel: 'debug', logger }), { ...baseParams, tools: [boom, order()] });
    expect(lines.length).toBeGreaterThan(5);
    expect(lines.some((line) => line.level === 'debug')).toBe(true);
    // The SDK's debug lines carry the request with its headers; the key must be redacted there too.
    expect(lines.some((line) => /sending request/.test(line.message) && /authorization/i.test(line.message))).toBe(true);
    for (const line of lines) expect(line.message).not.toContain('SECRET-KEY');
  });
});
