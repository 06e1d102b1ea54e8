/**
 * Plain JSON Schema tools, validated without generated code (@cfworker/json-schema): issues the
 * model can act on for each kind of keyword, defaults, every draft, schema errors at tool() time,
 * and a validator that fails on its own account as a runner error.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { OutputError, ValidatorError, tool, toolRunner } from 'tool-runner';
import { mcpToolset } from 'tool-runner/mcp';
import { historyProblems, text, toolResults, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer, wire } from './helpers.js';

/** The text the model gets back for one call of a tool with `schema`, and the input `run` saw (if it ran). */
async function answer(schema: object, input: unknown) {
  const seen: unknown[] = [];
  const server = await mockServer([{ content: [toolUse('t', input, 'toolu_1')] }, { content: [text('ok')] }]);
  await toolRunner(server.client(), { ...baseParams, tools: [tool({ name: 't', inputSchema: schema as { type: 'object' }, run: (value) => (seen.push(value), 'ran') })] });
  const result = toolResults(server.requests[1]!)[0]!;
  return { content: result.content as string, isError: result.is_error === true, seen: seen[0] };
}

const lines = (content: string) => content.split('\n').filter((line) => line.startsWith('- '));

/** A run with `schema` as `options.output` whose model replies `replies` in turn: its output, or the error it ended with, and the repair turns' issues. */
async function output(schema: object, replies: unknown[]) {
  const server = await mockServer(replies.map((reply) => ({ content: [text(typeof reply === 'string' ? reply : JSON.stringify(reply))] })));
  const runner = toolRunner(server.client(), baseParams, { output: schema as { type: 'object' } });
  const error = await runner.then(() => undefined, (thrown: unknown) => thrown);
  const repairs = server.requests.slice(1).map((request) => lines(String(wire(request).messages.at(-1).content)));
  return { value: runner.output, error, repairs };
}

describe('JSON Schema issues the model can act on', () => {
  const order = {
    type: 'object',
    properties: {
      id: { type: 'string', pattern: '^A-\\d+$' },
      quantity: { type: 'integer', minimum: 1, maximum: 10, multipleOf: 1 },
      colour: { enum: ['red', 'green'] },
      items: { type: 'array', items: { $ref: '#/$defs/item' }, minItems: 1, uniqueItems: true },
      contact: { anyOf: [{ type: 'string', minLength: 3 }, { type: 'null' }] },
      kind: { const: 'order' },
    },
    required: ['id', 'kind'],
    additionalProperties: false,
    $defs: { item: { type: 'object', properties: { sku: { type: 'string', maxLength: 4 } }, required: ['sku'] } },
  };

  it('each problem on a line of its own, at its path, saying what the value must be', async () => {
    const { content, isError, seen } = await answer(order, {
      id: 'B-7',
      quantity: 0,
      colour: 'blue',
      items: [{ sku: 'TOOLONG' }, {}],
      contact: 'x',
      extra: 1,
    });
    expect(isError).toBe(true);
    expect(seen).toBeUndefined();
    expect(content.split('\n')[0]).toBe("Invalid input for tool 't':");
    expect(lines(content)).toEqual([
      '- kind: is required',
      '- id: must match the pattern "^A-\\\\d+$"',
      '- quantity: must be >= 1',
      '- colour: must be one of "red", "green"',
      '- items[0].sku: must have at most 4 characters',
      '- items[1].sku: is required',
      '- contact: must match at least one of the schemas in anyOf (the issues of each follow)',
      '- contact: must have at least 3 characters',
      '- contact: must be null',
      '- extra: is not allowed',
    ]);
  });

  it('types, numbers, arrays and objects', async () => {
    const schema = {
      type: 'object',
      properties: {
        n: { type: ['number', 'null'], exclusiveMaximum: 5 },
        tags: { type: 'array', maxItems: 1, uniqueItems: true },
        pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }] },
        meta: { type: 'object', minProperties: 1, propertyNames: { pattern: '^[a-z]+$' } },
      },
    };
    expect(lines((await answer(schema, { n: 'x' })).content)).toEqual(['- n: must be number or null']);
    expect(lines((await answer(schema, { n: 5 })).content)).toEqual(['- n: must be < 5']);
    expect(lines((await answer(schema, { tags: [1, 1] })).content)).toEqual([
      '- tags: must have at most 1 item',
      '- tags: must not have duplicate items (items 0 and 1 are equal)',
    ]);
    expect(lines((await answer(schema, { pair: [1, 'a'] })).content)).toEqual(['- pair[0]: must be string', '- pair[1]: must be number']);
    expect(lines((await answer(schema, { meta: {} })).content)).toEqual(['- meta: must have at least 1 property']);
    expect(lines((await answer(schema, 'not an object')).content)).toEqual(['- (root): must be object']);
  });

  it('uniqueItems: a long array of distinct items runs; an item repeated (objects in another key order too) is answered; under not, the same as before', async () => {
    const schema = {
      type: 'object',
      properties: {
        ids: { type: 'array', uniqueItems: true },
        rows: { type: 'array', items: { type: 'array', uniqueItems: true } },
        mixed: { type: 'array', items: { $ref: '#/$defs/pair' } },
        other: { not: { type: 'array', uniqueItems: true } },
      },
      $defs: { pair: { type: 'array', uniqueItems: true } },
    };
    const ids = Array.from({ length: 20_000 }, (_, index) => index);
    const distinct = { ids, rows: [[{ a: 1, b: 2 }, { b: 2, a: 3 }], [[1, 2], [2, 1]]], mixed: [[1, '1', null, true, 'true', [1], { '1': 1 }]] };
    expect(await answer(schema, distinct)).toEqual({ content: 'ran', isError: false, seen: distinct });
    expect(lines((await answer(schema, { ids: [...ids.slice(0, 2_000), 1_999] })).content)).toEqual(['- ids: must not have duplicate items (items 1999 and 2000 are equal)']);
    expect(lines((await answer(schema, { rows: [[], [{ a: 1, b: [2] }, { b: [2], a: 1 }]] })).content)).toEqual(['- rows[1]: must not have duplicate items (items 0 and 1 are equal)']);
    expect(lines((await answer(schema, { mixed: [[1, 2], [3, 3]] })).content)).toEqual(['- mixed[1]: must not have duplicate items (items 0 and 1 are equal)']);
    expect((await answer(schema, { other: [1, 1] })).content).toBe('ran');
    expect((await answer(schema, { other: [1, 2] })).isError).toBe(true);
  });

  it('contains, minContains and maxContains say what the array must hold, and nothing of the items that need not match', async () => {
    const schema = {
      type: 'object',
      properties: {
        roles: { type: 'array', contains: { const: 'admin' } },
        scores: { type: 'array', contains: { type: 'number' }, minContains: 2, maxContains: 3 },
        tags: { type: 'array', items: { type: 'string' }, contains: { const: 'a' }, minContains: 2 },
      },
    };
    expect(lines((await answer(schema, { roles: ['user'] })).content)).toEqual(['- roles: must contain at least one item matching {"const":"admin"}']);
    expect(lines((await answer(schema, { roles: [] })).content)).toEqual(['- roles: must contain at least one item matching {"const":"admin"}']);
    // Items "x" and "y" may stay: no line tells the model to change them.
    expect(lines((await answer(schema, { scores: [1, 'x', 'y'] })).content)).toEqual(['- scores: must contain at least 2 items matching {"type":"number"} (1 does)']);
    expect(lines((await answer(schema, { scores: [1] })).content)).toEqual(['- scores: must contain at least 2 items matching {"type":"number"} (it has 1 item)']);
    expect(lines((await answer(schema, { scores: [1, 2, 3, 4] })).content)).toEqual(['- scores: must contain at most 3 items matching {"type":"number"} (4 do)']);
    // An item's own issue (items: string) stays beside the count.
    expect(lines((await answer(schema, { tags: ['a', 3] })).content)).toEqual(['- tags[1]: must be string', '- tags: must contain at least 2 items matching {"const":"a"} (1 does)']);
    // A long subschema is cut, never inside a surrogate pair (the API refuses a lone half): the run's output's issues are not cut again.
    const emoji = { type: 'object', properties: { a: { type: 'array', contains: { const: `${'x'.repeat(189)}😀` } } } };
    const { error } = await output(emoji, [{ a: ['y'] }, { a: ['y'] }]);
    expect((error as OutputError).issues).toEqual([{ path: 'a', message: `must contain at least one item matching {"const":"${'x'.repeat(189)}…` }]);
  });

  it('draft-04 (boolean exclusiveMinimum, tuple items) and draft-07 schemas, by their $schema', async () => {
    const draft4 = {
      $schema: 'http://json-schema.org/draft-04/schema#',
      type: 'object',
      properties: { n: { type: 'number', minimum: 0, exclusiveMinimum: true }, t: { type: 'array', items: [{ type: 'string' }] } },
    };
    expect(lines((await answer(draft4, { n: 0, t: [1] })).content)).toEqual(['- n: must be > 0', '- t[0]: must be string']);
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', definitions: { s: { type: 'string' } }, properties: { s: { $ref: '#/definitions/s' } } };
    expect(lines((await answer(draft7, { s: 1 })).content)).toEqual(['- s: must be string']);
    expect(await answer(draft7, { s: 'ok' })).toMatchObject({ isError: false, seen: { s: 'ok' } });
  });

  it("OpenAPI 3.0's boolean exclusiveMaximum/exclusiveMinimum beside maximum/minimum, without a draft-04 $schema: read as draft 4 reads it", async () => {
    const schema = {
      type: 'object',
      properties: {
        n: { type: 'number', minimum: 0, maximum: 5, exclusiveMaximum: true },
        m: { type: 'number', minimum: 0, exclusiveMinimum: true },
        k: { type: 'number', maximum: 5, exclusiveMaximum: false },
      },
    };
    const before = JSON.stringify(schema);
    expect(await answer(schema, { n: 3, m: 0.5, k: 5 })).toMatchObject({ isError: false, seen: { n: 3, m: 0.5, k: 5 } });
    expect(lines((await answer(schema, { n: 5, m: 0, k: 6 })).content)).toEqual(['- n: must be < 5', '- m: must be > 0', '- k: must be <= 5']);
    expect(lines((await answer(schema, { n: -1 })).content)).toEqual(['- n: must be >= 0']);
    expect(JSON.stringify(schema)).toBe(before);
    // The run's output schema too (the same validator).
    expect(await output(schema, [{ n: 3 }])).toMatchObject({ value: { n: 3 }, error: undefined });
    expect(await output(schema, [{ n: 5 }, { n: 4.5 }])).toMatchObject({ value: { n: 4.5 }, repairs: [['- n: must be < 5']] });
  });

  it('draft-04/06/07: the keywords beside a $ref are enforced, as ajv enforced them (those drafts say to ignore them)', async () => {
    const draft7 = 'http://json-schema.org/draft-07/schema#';
    const city = {
      $schema: draft7,
      type: 'object',
      $ref: '#/definitions/b',
      definitions: { b: { properties: { city: { type: 'string' } } } },
      required: ['city'],
      additionalProperties: false,
    };
    const before = JSON.stringify(city);
    expect(lines((await answer(city, { cty: 'Paris' })).content)).toEqual(['- city: is required', '- cty: is not allowed']);
    expect(JSON.stringify(city)).toBe(before);
    const short = {
      $schema: 'http://json-schema.org/draft-04/schema#',
      type: 'object',
      definitions: { s: { type: 'string' } },
      properties: { a: { $ref: '#/definitions/s', maxLength: 2, description: 'two letters' }, b: { $ref: '#/definitions/s', allOf: [{ minLength: 1 }] } },
    };
    expect(lines((await answer(short, { a: 'abc', b: '' })).content)).toEqual(['- a: must have at most 2 characters', '- b: must have at least 1 character']);
    expect(lines((await answer(short, { a: 1, b: 2 })).content)).toEqual(['- a: must be string', '- b: must be string']);
    expect(await answer(short, { a: 'ab', b: 'c' })).toMatchObject({ isError: false, seen: { a: 'ab', b: 'c' } });
    // additionalProperties sees the properties of its own schema only, as ajv read it: `city` is allowed here, not above.
    const { additionalProperties: _, ...open } = city;
    expect(await output(open, [{}, { city: 'Paris' }])).toMatchObject({ value: { city: 'Paris' }, repairs: [['- city: is required']] });
  });

  it("OpenAPI 3.0's nullable: true lets null through beside the type (and the enum), as ajv did", async () => {
    const schema = {
      type: 'object',
      properties: { v: { type: 'string', nullable: true }, c: { type: 'string', enum: ['red', 'green'], nullable: true }, n: { type: ['number', 'null'], nullable: true } },
    };
    const before = JSON.stringify(schema);
    expect(await answer(schema, { v: null, c: null, n: null })).toMatchObject({ isError: false, seen: { v: null, c: null, n: null } });
    expect(lines((await answer(schema, { v: 1, c: 'blue' })).content)).toEqual(['- v: must be string or null', '- c: must be one of "red", "green", null']);
    expect(JSON.stringify(schema)).toBe(before);
    expect(await output(schema, [{ v: null }])).toMatchObject({ value: { v: null }, error: undefined });
  });

  it('an unevaluatedProperties: false says nothing of a declared property that has issues of its own (it told the model to leave it out)', async () => {
    // (Under a property: the API takes no `allOf` at an input schema's top level.)
    const trip = {
      type: 'object',
      allOf: [{ properties: { city: { type: 'string' } }, required: ['city'] }],
      properties: { days: { type: 'integer' } },
      unevaluatedProperties: false,
    };
    const schema = { type: 'object', properties: { trip }, required: ['trip'] };
    expect(lines((await answer(schema, { trip: { city: 7, days: 'two', extra: 1 } })).content)).toEqual(['- trip.city: must be string', '- trip.days: must be integer', '- trip.extra: is not allowed']);
  });

  it('names that would read as something else are quoted: ["1"] is a property, [1] an index; quotes in names kept whole', async () => {
    const schema = {
      type: 'object',
      properties: { '0': { type: 'string' }, list: { type: 'array', items: { type: 'string' } }, 'a.b': { type: 'string' } },
      required: ['1', 'say "hi"'],
      dependentRequired: { 'a"b': ['c"d'] },
    };
    expect(lines((await answer(schema, { '0': 1, list: [1], 'a.b': 2, 'a"b': 3 })).content)).toEqual([
      '- ["1"]: is required',
      '- ["say \\"hi\\""]: is required',
      '- ["c\\"d"]: is required when "a\\"b" is present',
      '- ["0"]: must be string',
      '- list[0]: must be string',
      '- ["a.b"]: must be string',
    ]);
    // A zod record's keys are names too.
    const zodTool = tool({ name: 'z', inputSchema: z.object({ counts: z.record(z.string(), z.number()) }), run: () => '' });
    expect(await zodTool.validateInput!({ counts: { '7': 'x' } })).toMatchObject({ ok: false, issues: [{ path: 'counts["7"]' }] });
  });

  it('a const reached through $recursiveRef (2019-09) is named (it read "must be undefined")', async () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2019-09/schema',
      $recursiveAnchor: true,
      type: 'object',
      properties: { k: { const: 'yes' }, c: { $recursiveRef: '#' } },
    };
    expect(lines((await answer(schema, { c: { k: 'no' } })).content)).toEqual(['- c.k: must be "yes"']);
  });

  it('format is an annotation, as before: a value that does not look like an email still reaches the tool', async () => {
    const schema = { type: 'object', properties: { email: { type: 'string', format: 'email' }, format: { type: 'string' } } };
    expect(await answer(schema, { email: 'not an email', format: 'x' })).toMatchObject({ isError: false, seen: { email: 'not an email', format: 'x' } });
  });

  it('format is an annotation wherever a $ref lands: under an unknown keyword (x-defs), a contentSchema, a draft-07 dependencies', async () => {
    const schema = {
      type: 'object',
      'x-defs': { em: { type: 'string', format: 'email' } },
      properties: { e: { $ref: '#/x-defs/em' }, c: { $ref: '#/properties/x/contentSchema' }, x: { contentSchema: { type: 'string', format: 'email' } } },
      examples: [{ e: 'a@b.c', format: 'kept' }],
    } as const;
    expect(await answer(schema, { e: 'bob at example', c: 'nope' })).toMatchObject({ isError: false, seen: { e: 'bob at example', c: 'nope' } });
    expect(lines((await answer(schema, { e: 1 })).content)).toEqual(['- e: must be string']);
    const draft7 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', dependencies: { a: { properties: { e: { format: 'email' } } } } };
    expect(await answer(draft7, { a: 1, e: 'nope' })).toMatchObject({ isError: false });
    expect(schema['x-defs'].em.format).toBe('email');
  });

  it('defaults fill missing properties in nested objects, array items and through $ref, in a copy the tool gets', async () => {
    const schema = {
      type: 'object',
      properties: {
        unit: { type: 'string', default: 'celsius' },
        options: { type: 'object', properties: { depth: { type: 'integer', default: 1 } }, default: {} },
        stops: { type: 'array', items: { $ref: '#/$defs/stop' } },
      },
      $defs: { stop: { type: 'object', properties: { wait: { type: 'number', default: 0 } } } },
    } as const;
    const input = { stops: [{}, { wait: 5 }] };
    const { seen, isError } = await answer(schema, input);
    expect(isError).toBe(false);
    expect(seen).toEqual({ unit: 'celsius', options: { depth: 1 }, stops: [{ wait: 0 }, { wait: 5 }] });
    expect(input).toEqual({ stops: [{}, { wait: 5 }] });
  });

  it('defaults under the then/else the if picks, the dependentSchemas of present properties, patternProperties and additionalProperties; a recursive default filled once', async () => {
    const schema = {
      type: 'object',
      properties: { kind: { enum: ['metric', 'imperial'] }, unit: { type: 'string' }, country: { type: 'string' } },
      if: { properties: { kind: { const: 'imperial' } }, required: ['kind'] },
      then: { properties: { unit: { default: 'fahrenheit' } } },
      else: { properties: { unit: { default: 'celsius' } } },
      dependentSchemas: { city: { properties: { country: { default: 'FR' } } } },
      patternProperties: { '^opt_': { type: 'object', properties: { on: { default: true } } } },
      additionalProperties: { type: 'object', properties: { weight: { default: 1 } } },
    } as const;
    expect((await answer(schema, { kind: 'imperial' })).seen).toEqual({ kind: 'imperial', unit: 'fahrenheit' });
    expect((await answer(schema, {})).seen).toEqual({ unit: 'celsius' });
    expect((await answer(schema, { kind: 'metric', city: {}, opt_x: {}, extra: {} })).seen).toEqual({
      kind: 'metric',
      unit: 'celsius',
      country: 'FR',
      city: { weight: 1 },
      opt_x: { on: true },
      extra: { weight: 1 },
    });
    const tree = { type: 'object', properties: { child: { $ref: '#', default: {} } } } as const;
    expect(await answer(tree, {})).toMatchObject({ isError: false, seen: { child: {} } });
  });

  it("leaves the caller's schema as it was (the validator works on a copy)", () => {
    const schema = { type: 'object', properties: { a: { $ref: '#/$defs/a', format: 'uri' } }, $defs: { a: { type: 'string' } } } as const;
    const before = JSON.stringify(schema);
    const made = tool({ name: 't', inputSchema: schema, run: () => '' });
    expect(JSON.stringify(schema)).toBe(before);
    expect(Object.getOwnPropertyNames(schema.properties.a)).toEqual(['$ref', 'format']);
    expect(made.input_schema).toBe(schema);
  });
});

describe("a JSON Schema tool given another input_schema (the definition is read at each request)", () => {
  it('validates by the schema it sends: a value the new one allows runs; an invalid new schema is a runner error, not the model\'s', async () => {
    const seen: unknown[] = [];
    const open = tool({ name: 'open', inputSchema: { type: 'object', properties: { file: { type: 'string', enum: ['a.txt'] } }, required: ['file'] }, run: (input) => (seen.push(input), 'opened') });
    const server = await mockServer([{ content: [toolUse('open', { file: 'b.txt' }, 'toolu_1')] }, { content: [toolUse('open', { file: 'c.txt' }, 'toolu_2')] }, { content: [text('ok')] }]);
    open.input_schema = { type: 'object', properties: { file: { type: 'string', enum: ['a.txt', 'b.txt'] } }, required: ['file'] };
    await toolRunner(server.client(), { ...baseParams, tools: [open] });
    expect(wire(server.requests[0]!).body.tools[0].input_schema.properties.file.enum).toEqual(['a.txt', 'b.txt']);
    expect(seen).toEqual([{ file: 'b.txt' }]);
    expect(toolResults(server.requests[2]!)[0]).toMatchObject({ is_error: true, content: expect.stringContaining('- file: must be one of "a.txt", "b.txt"') });
    const broken = await mockServer([{ content: [toolUse('open', { file: 'a.txt' }, 'toolu_1')] }]);
    open.input_schema = { type: 'object', properties: { file: { type: 'strin' } } } as never;
    const failure = await toolRunner(broken.client(), { ...baseParams, tools: [open] }).then(() => undefined, (error: unknown) => error);
    expect(failure).toBeInstanceOf(ValidatorError);
    expect(String((failure as Error).cause)).toMatch(/input_schema given in its place is not a valid JSON Schema.*strin/);
  });
});

describe('a schema written in code with keys set to undefined', () => {
  it('is read as the request sends it (JSON leaves them out), not refused', async () => {
    const choices: string[] | undefined = undefined;
    const schema = { type: 'object', properties: { city: { type: 'string', enum: choices }, tags: { type: 'array', items: undefined } }, required: ['city'], additionalProperties: undefined };
    expect(() => tool({ name: 't', inputSchema: schema as { type: 'object' }, run: () => 'ran' })).not.toThrow();
    expect((await answer(schema, { city: 'Paris', tags: [1, 'a'], extra: true })).isError).toBe(false);
    expect(lines((await answer(schema, { city: 5 })).content)).toEqual([expect.stringMatching(/^- city: must be string/)]);
  });
});

describe('a schema that came from JSON, with a property named __proto__ (an own key there)', () => {
  it('validates that property: a valid input runs, an invalid one is answered, a $ref to a $defs entry of that name resolves', async () => {
    const closed = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}},"additionalProperties":false}');
    const ok = await answer(closed, JSON.parse('{"__proto__":"x"}'));
    expect(ok.isError).toBe(false);
    expect(Object.hasOwn(ok.seen as object, '__proto__')).toBe(true);
    const open = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}');
    const wrong = await answer(open, JSON.parse('{"__proto__":5}'));
    expect(wrong.isError).toBe(true);
    expect(lines(wrong.content)).toEqual([expect.stringMatching(/^- __proto__: must be string/)]);
    const referred = JSON.parse('{"type":"object","$defs":{"__proto__":{"type":"integer"}},"properties":{"n":{"$ref":"#/$defs/__proto__"}}}');
    expect((await answer(referred, { n: 2 })).isError).toBe(false);
    expect(lines((await answer(referred, { n: 'two' })).content)).toEqual([expect.stringMatching(/^- n: must be integer/)]);
  });
});

describe('an input a hook edited with values JSON sends in its own form', () => {
  it('a URL goes as its address and a Date as its time, as the request carries them; an object the runtime cannot copy as its fields, not a failure of the validator', async () => {
    const schema = { type: 'object', properties: { url: { type: 'string' }, at: { type: 'string' }, extra: { type: 'object' } }, required: ['url'], additionalProperties: false } as const;
    const seen: unknown[] = [];
    const fetchTool = tool({ name: 'fetch', inputSchema: schema, run: (input) => (seen.push(input), 'fetched') });
    class Holder {
      label = 'kept';
      call = () => 'a function: no copy';
    }
    class Self {
      when = new Date(0);
      gone = undefined;
      toJSON() {
        return this;
      }
    }
    const edits = [
      { url: new URL('https://example.com/a b'), at: new Date(Date.UTC(2026, 0, 2)) },
      { url: 'https://example.com/b', extra: new Holder() },
      { url: { toJSON: () => 'https://example.com/c' }, extra: new Self() },
    ];
    const server = await mockServer([{ content: edits.map((_, index) => toolUse('fetch', { url: 'x' }, `toolu_${index}`)) }, { content: [text('ok')] }]);
    await toolRunner(server.client(), { ...baseParams, tools: [fetchTool] }, { hooks: { onToolCall: (call) => ({ input: edits[Number(call.toolUse.id.slice(6))] }) } });
    expect(seen[0]).toEqual({ url: 'https://example.com/a%20b', at: '2026-01-02T00:00:00.000Z' });
    expect(seen[1]).toMatchObject({ url: 'https://example.com/b', extra: { label: 'kept' } });
    // A toJSON called once a value, as JSON calls it; what it gives copied as JSON sends it.
    expect(seen[2]).toEqual({ url: 'https://example.com/c', extra: { when: '1970-01-01T00:00:00.000Z' } });
    expect(toolResults(server.requests[1]!).map((result) => result.content)).toEqual(['fetched', 'fetched', 'fetched']);
  });
});

describe('an input too deep or too large to validate is answered, never a failure of the run', () => {
  const nest = (depth: number) => {
    let value: Record<string, unknown> = {};
    for (let level = 0; level < depth; level++) value = { a: value };
    return value;
  };
  const tooBig = ['- (root): is nested too deeply or too large to validate'];

  it('a tool input nested 1,000 deep under a recursive schema, or with 70,000 errors: the model is told, and may send a smaller one; 3,000 deep under a free-form field reaches the tool', async () => {
    const tree = { type: 'object', properties: { a: { $ref: '#' } } };
    const tooDeep = await answer(tree, nest(1000));
    expect(tooDeep).toMatchObject({ isError: true, seen: undefined });
    expect(lines(tooDeep.content)).toEqual(tooBig);
    expect(await answer(tree, nest(20))).toMatchObject({ isError: false });
    // The validator does not walk a free-form value: as deep as JSON carries it (the copy the tool gets goes deeper).
    const freeForm = { type: 'object', properties: { data: {} } };
    const deep = await answer(freeForm, { data: nest(3000) });
    expect(deep).toMatchObject({ isError: false, content: 'ran' });
    expect(JSON.stringify(deep.seen)).toBe(JSON.stringify({ data: nest(3000) }));
    const strings = { type: 'object', properties: { a: { type: 'array', items: { type: 'string' } } } };
    expect(lines((await answer(strings, { a: Array.from({ length: 70_000 }, (_, index) => index) })).content)).toEqual(tooBig);
  });

  it('the run’s output: a repair turn, then an OutputError with the issue (not a bare RangeError)', async () => {
    const deep = JSON.stringify({ a: nest(1000) });
    const { error, repairs } = await output({ type: 'object', properties: { a: { $ref: '#' } } }, [deep, deep]);
    expect(error).toBeInstanceOf(OutputError);
    expect((error as OutputError).issues).toEqual([{ path: '(root)', message: 'is nested too deeply or too large to validate' }]);
    expect(repairs).toEqual([tooBig]);
  });
});

describe('a schema the validator cannot use is an error at tool() time, saying where', () => {
  const bad = (inputSchema: object) => () => tool({ name: 'x', inputSchema: inputSchema as { type: 'object' }, run: () => '' });
  it.each([
    [{ type: 'object', properties: { n: { type: 'numbr' } } }, /properties\.n\.type: "numbr" is not a JSON Schema type/],
    [{ type: 'object', properties: { s: { type: 'string', pattern: '([a-z]' } } }, /properties\.s\.pattern: "\(\[a-z\]" is not a valid regular expression/],
    [{ type: 'object', properties: { r: { $ref: '#/$defs/missing' } } }, /properties\.r\.\$ref: "#\/\$defs\/missing" does not point to a schema/],
    [{ type: 'object', required: 'a' }, /\(root\)\.required|required: must be an array of property names/],
    [{ type: 'object', properties: { s: { type: 'string', minLength: -1 } } }, /properties\.s\.minLength: must be a non-negative integer, got -1/],
    [{ type: 'object', properties: { a: 5 } }, /properties\.a: a schema must be an object or a boolean, got number/],
    [{ type: 'object', anyOf: [] }, /anyOf: must be a non-empty array of schemas/],
    [{ type: 'object', not: [] }, /^[^]*: not: a schema must be an object or a boolean, got an array$/],
    [{ type: 'object', additionalProperties: [] }, /: additionalProperties: a schema must be an object or a boolean, got an array$/],
    [{ type: 'object', propertyNames: [{ maxLength: 1 }] }, /: propertyNames: a schema must be an object or a boolean, got an array$/],
    [{ type: 'object', if: [{ required: ['a'] }], then: { required: ['b'] } }, /: if: a schema must be an object or a boolean, got an array$/],
    [{ type: 'object', properties: { a: { type: 'array', contains: [{ const: 1 }] } } }, /properties\.a\.contains: a schema must be an object or a boolean, got an array$/],
    [{ type: 'object', properties: { q: { type: [] } } }, /properties\.q\.type: must name at least one type/],
    [{ type: 'object', properties: { q: { enum: [] } } }, /properties\.q\.enum: must be a non-empty array of values/],
    [{ type: 'object', properties: { q: { enum: 'red' } } }, /properties\.q\.enum: must be a non-empty array of values/],
    [{ type: 'object', dependentRequired: { a: 'bc' } }, /dependentRequired\.a: must be an array of property names, got "bc"$/],
    [{ type: 'object', dependentRequired: ['a'] }, /: dependentRequired: must be an object/],
    [{ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', dependencies: { a: ['b', 1] } }, /dependencies\.a: must be an array of property names or a schema, got \["b",1\]$/],
    [{ type: 'object', properties: { l: { type: 'array', uniqueItems: 'yes' } } }, /properties\.l\.uniqueItems: must be a boolean, got "yes"/],
    [{ type: 'object', properties: { n: { exclusiveMaximum: true } } }, /properties\.n\.exclusiveMaximum: true needs a number in maximum beside it/],
    [{ type: 'object', properties: { n: { exclusiveMinimum: 'yes' } } }, /properties\.n\.exclusiveMinimum: must be a number, got "yes"/],
    [{ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object', properties: { n: { exclusiveMinimum: 0 } } }, /properties\.n\.exclusiveMinimum: must be a boolean in draft-04/],
  ])('%j', (schema, message) => {
    expect(bad(schema)).toThrow(TypeError);
    expect(bad(schema)).toThrow(/^Tool 'x': the input schema is not a valid JSON Schema: /);
    expect(bad(schema)).toThrow(message);
  });
});

describe('keywords the validator does not know are errors at tool() time, never a silent pass', () => {
  const tree = { type: 'object', $dynamicAnchor: 'node', properties: { name: { type: 'string' }, kids: { type: 'array', items: { $dynamicRef: '#node' } } } } as const;

  it('$dynamicRef (2020-12), and a $recursiveRef other than "#" (2019-09)', () => {
    expect(() => tool({ name: 'x', inputSchema: tree, run: () => '' })).toThrow(
      /^Tool 'x': the input schema is not a valid JSON Schema: properties\.kids\.items\.\$dynamicRef: is not supported by the validator/,
    );
    const recursive = { $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object', properties: { k: { $recursiveRef: '#/properties' } } } as const;
    expect(() => tool({ name: 'x', inputSchema: recursive, run: () => '' })).toThrow(/properties\.k\.\$recursiveRef: must be "#"/);
    // A $dynamicAnchor that no $dynamicRef uses is a plain anchor, which changes nothing: the schema is used.
    const anchored = { type: 'object', $dynamicAnchor: 'node', properties: { name: { type: 'string' } } } as const;
    expect(tool({ name: 'x', inputSchema: anchored, run: () => '' }).validateInput?.({ name: 5 })).toMatchObject({ ok: false });
  });

  it('an MCP tool whose schema has one is sent as it is, its input unchecked here (as the SDK does): the server validates it', async () => {
    const mcp = new Server({ name: 'dynamic', version: '1.0.0' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'tree', description: 'Takes a tree', inputSchema: tree }] }));
    mcp.setRequestHandler(CallToolRequestSchema, async (request) => ({ content: [{ type: 'text', text: `got ${JSON.stringify(request.params.arguments)}` }] }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await mcp.connect(serverSide);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const server = await mockServer([{ content: [toolUse('tree', { name: 5, kids: [{ name: 5 }] }, 'toolu_1')] }, { content: [text('ok')] }]);
      await toolRunner(server.client(), { ...baseParams, tools: [await mcpToolset(client)] });
      expect(wire(server.requests[0]!).body.tools[0].input_schema).toEqual(tree);
      expect(toolResults(server.requests[1]!)[0]).toMatchObject({ content: [{ type: 'text', text: 'got {"name":5,"kids":[{"name":5}]}' }] });
    } finally {
      await client.close();
    }
  });
});

describe('a validator that fails on its own account is a runner error, never blamed on the model', () => {
  async function run(tools: Parameters<typeof toolRunner>[1]['tools']) {
    const server = await mockServer([{ content: [toolUse('add', { a: 1, b: 2 }, 'toolu_1')] }, { content: [text('ok')] }]);
    const runner = toolRunner(server.client(), { ...baseParams, tools });
    const error = await runner.runUntilDone().catch((thrown: unknown) => thrown);
    return { error: error as ValidatorError, runner, server };
  }

  it('validateInput that throws (the runtime refused generated code, say): ValidatorError with the tool and the cause; the model is told nothing', async () => {
    const refused = new EvalError('Code generation from strings disallowed for this context');
    const add = {
      ...tool({ name: 'add', inputSchema: z.object({ a: z.number(), b: z.number() }), run: () => 'never' }),
      validateInput: () => {
        throw refused;
      },
    };
    const { error, runner, server } = await run([add]);
    expect(error).toBeInstanceOf(ValidatorError);
    expect(error).toMatchObject({
      name: 'ValidatorError',
      tool: 'add',
      message: "The input validator of tool 'add' failed: EvalError: Code generation from strings disallowed for this context",
    });
    expect(error.cause).toBe(refused);
    expect(server.requests).toHaveLength(1);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });

  it('an asynchronous validator that rejects, and one that answers with something that is not a result', async () => {
    const base = tool({ name: 'add', inputSchema: z.object({ a: z.number() }), run: () => 'never' });
    const rejecting = { ...base, validateInput: () => Promise.reject(new Error('schema registry unreachable')) };
    expect((await run([rejecting])).error).toMatchObject({ name: 'ValidatorError', message: "The input validator of tool 'add' failed: Error: schema registry unreachable" });
    const confused = { ...base, validateInput: () => undefined as never };
    expect((await run([confused])).error).toMatchObject({ name: 'ValidatorError', message: expect.stringMatching(/validateInput returned undefined instead of/) });
  });

  it('a validator that fails with issues of no shape (none at all, no message, not a list): a ValidatorError saying so, not a bare TypeError', async () => {
    const base = tool({ name: 'add', inputSchema: z.object({ a: z.number() }), run: () => 'never' });
    const standard = (issues: unknown) => ({ '~standard': { version: 1, vendor: 'mine', validate: () => ({ issues }), jsonSchema: { input: () => ({ type: 'object' }), output: () => ({ type: 'object' }) } } });
    // Each failed with "Cannot read properties of undefined (reading 'length')", naming no tool, when the model was told of the issues.
    const answers: Array<[object, string]> = [
      [{ ...base, validateInput: () => ({ ok: false }) as never }, 'validateInput returned {"ok":false} instead of { ok, value } or { ok, issues }'],
      [tool({ name: 'add', inputSchema: standard([{}]) as never, run: () => 'never' }), "the mine schema's validate answered issues that are no list of { message, path? }: [{}]"],
      [tool({ name: 'add', inputSchema: standard('bad') as never, run: () => 'never' }), `the mine schema's validate answered issues that are no list of { message, path? }: "bad"`],
      // No result at all: the tool ran, with no input.
      [tool({ name: 'add', inputSchema: { '~standard': { ...standard([])['~standard'], validate: () => 5 } } as never, run: () => 'never' }), "the mine schema's validate answered 5, not a result ({ value } or { issues })"],
      // An object of neither kind (a `safeParse` result): the tool ran with no input. A promise of one too.
      [tool({ name: 'add', inputSchema: { '~standard': { ...standard([])['~standard'], validate: (data: unknown) => ({ success: true, data }) } } as never, run: () => 'never' }), `the mine schema's validate answered {"success":true,"data":{"a":1,"b":2}}, not a result ({ value } or { issues })`],
      [tool({ name: 'add', inputSchema: { '~standard': { ...standard([])['~standard'], validate: async () => ({ ok: true }) } } as never, run: () => 'never' }), `the mine schema's validate answered {"ok":true}, not a result ({ value } or { issues })`],
      // A null in the path: "Cannot read properties of null (reading 'key')".
      [tool({ name: 'add', inputSchema: standard([{ message: 'x', path: ['a', null] }]) as never, run: () => 'never' }), `the mine schema's validate answered issues that are no list of { message, path? }: [{"message":"x","path":["a",null]}]`],
    ];
    for (const [add, said] of answers) {
      const { error, server } = await run([add as never]);
      expect(error).toBeInstanceOf(ValidatorError);
      expect(error.message).toBe(`The input validator of tool 'add' failed: TypeError: ${said}`);
      expect(server.requests).toHaveLength(1);
    }
  });

  it("a validateInput whose issues are no { path, message } (a path left out, plain strings): a ValidatorError saying so, not a bare TypeError", async () => {
    const base = tool({ name: 'add', inputSchema: z.object({ a: z.number() }), run: () => 'never' });
    // Each failed with "Cannot read properties of undefined (reading 'length')", naming no tool, as the issues were listed.
    const answers: Array<[unknown[], string]> = [
      [[{ message: 'a is too big' }], '[{"message":"a is too big"}]'],
      [['a is required'], '["a is required"]'],
      [[{ path: 'a' }], '[{"path":"a"}]'],
    ];
    for (const [issues, shown] of answers) {
      const { error, server } = await run([{ ...base, validateInput: () => ({ ok: false, issues }) as never }]);
      expect(error).toBeInstanceOf(ValidatorError);
      expect(error.message).toBe(`The input validator of tool 'add' failed: TypeError: validateInput returned {"ok":false,"issues":${shown}} instead of { ok, value } or { ok, issues } (each issue { path, message }, both strings)`);
      expect(server.requests).toHaveLength(1);
    }
  });

  it('a Standard Schema whose issues are of the shapes the spec allows (a path of { key } and symbols, empty, frozen, a class of issues) is told to the model, not a ValidatorError', async () => {
    const standard = (issues: unknown) => ({ '~standard': { version: 1, vendor: 'mine', validate: () => ({ issues }), jsonSchema: { input: () => ({ type: 'object' }), output: () => ({ type: 'object' }) } } });
    class Issue {
      constructor(
        readonly path: readonly unknown[],
        private readonly said: string,
      ) {}
      get message() {
        return this.said;
      }
    }
    const answers: Array<[unknown, string]> = [
      [Object.freeze([Object.freeze({ message: 'frozen', path: Object.freeze(['a', 0]) })]), '- a[0]: frozen'],
      [[{ message: 'keyed', path: [{ key: 'a' }, { key: 2 }, Symbol('s'), { key: Symbol('k') }] }], '- a[2][Symbol(s)][Symbol(k)]: keyed'],
      [[{ message: 'at the top', path: [] }], '- (root): at the top'],
      [[new Issue(['a'], 'of a class')], '- a: of a class'],
    ];
    for (const [issues, line] of answers) {
      const { error, server } = await run([tool({ name: 'add', inputSchema: standard(issues) as never, run: () => 'never' })]);
      expect(error).toMatchObject({ role: 'assistant' }); // (the run's final message: it ended well)
      expect(toolResults(server.requests[1]!)[0]).toMatchObject({ is_error: true, content: `Invalid input for tool 'add':\n${line}\nFix the input and call the tool again.` });
    }
  });

  it("a validator that answers with zod's safeParse result ({ success, data }): a ValidatorError quoting it short, a BigInt in it too", async () => {
    const base = tool({ name: 'add', inputSchema: z.object({ a: z.number() }), run: () => 'never' });
    // JSON's own "Do not know how to serialize a BigInt" was the run's error, a bare TypeError naming no tool.
    const bigint = { ...base, validateInput: () => ({ success: true, data: { a: 1n } }) as never };
    expect((await run([bigint])).error).toMatchObject({ name: 'ValidatorError', tool: 'add', message: `The input validator of tool 'add' failed: TypeError: validateInput returned {"success":true,"data":{"a":1n}} instead of { ok, value } or { ok, issues }` });
    // The whole input in the message (a document of 100 kB to write, say).
    const whole = { ...base, validateInput: () => ({ success: true, data: { a: 1, text: 'x'.repeat(100_000) } }) as never };
    const { error } = await run([whole]);
    expect(error).toBeInstanceOf(ValidatorError);
    expect(error.message).toMatch(/^The input validator of tool 'add' failed: TypeError: validateInput returned \{"success":true,"data":\{"a":1,"text":"x+… instead of \{ ok, value \} or \{ ok, issues \}$/);
    expect(error.message.length).toBeLessThan(400);
  });

  it("a parse (the SDK's helpers) that throws EvalError is the parser's failure; one that throws for the input is the model's", async () => {
    const parsing = (parse: (input: unknown) => unknown) => ({ name: 'add', input_schema: { type: 'object' as const }, parse, run: () => 'ran' });
    const { error } = await run([
      parsing(() => {
        throw new EvalError('Code generation from strings disallowed for this context');
      }),
    ]);
    expect(error).toBeInstanceOf(ValidatorError);
    const { error: none, server } = await run([
      parsing(() => {
        throw new Error('a: expected string');
      }),
    ]);
    expect(none).not.toBeInstanceOf(Error);
    expect(toolResults(server.requests[1]!)[0]).toMatchObject({ is_error: true, content: "Invalid input for tool 'add': a: expected string" });
  });
});
