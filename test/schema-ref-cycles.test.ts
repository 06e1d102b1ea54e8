/**
 * A plain JSON Schema whose `$ref`s (or in-place keywords: allOf, not, dependentSchemas, ...) lead
 * back to the same subschema without descending into the input would make the validator recurse
 * forever on every call, read as "nested too deeply" and blamed on the model's valid input: it is a
 * TypeError from tool(), naming the loop. A recursive schema that goes through `items` or
 * `properties` (a tree) is a schema like any other.
 */
import { describe, expect, it } from 'vitest';
import { tool, toolRunner } from 'tool-runner';
import { historyProblems, text, toolResults, toolUse } from 'tool-runner/testing';
import { baseParams, mockServer } from './helpers.js';

const define = (inputSchema: object, run: (input: unknown) => string = () => 'ran') => tool({ name: 'x', inputSchema: inputSchema as { type: 'object' }, run });

const refused = /^Tool 'x': the input schema is not a valid JSON Schema: /;
const never = /without descending into the input \(.*\), so validating would never end/;

const tree = {
  type: 'object',
  $defs: {
    node: {
      type: 'object',
      properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } },
      required: ['name'],
    },
  },
  $ref: '#/$defs/node',
};

describe('a $ref loop that reads no input is refused by tool(), naming the loop', () => {
  it('a $ref to its own place', () => {
    const self = () => define({ type: 'object', properties: { a: { $ref: '#/properties/a' } } });
    expect(self).toThrow(TypeError);
    expect(self).toThrow(refused);
    expect(self).toThrow(/: properties\.a\.\$ref: leads back to properties\.a without descending into the input \(properties\.a\.\$ref → properties\.a\)/);
  });

  it('two $defs that $ref each other', () => {
    const pair = () => define({ type: 'object', $defs: { x: { $ref: '#/$defs/y' }, y: { $ref: '#/$defs/x' } }, properties: { a: { $ref: '#/$defs/x' } } });
    expect(pair).toThrow(TypeError);
    expect(pair).toThrow(refused);
    expect(pair).toThrow(/: \$defs\.x\.\$ref: leads back to \$defs\.x without descending into the input \(\$defs\.x\.\$ref → \$defs\.y\.\$ref → \$defs\.x\)/);
  });

  it.each([
    ['allOf back to the root', { type: 'object', allOf: [{ $ref: '#' }] }, /: allOf\.0: leads back to \(root\) /],
    ['not, through an $anchor', { type: 'object', $defs: { n: { $anchor: 'n', not: { $ref: '#n' } } }, properties: { q: { $ref: '#n' } } }, /: \$defs\.n\.not: leads back to \$defs\.n /],
    ['dependentSchemas (in place: the same object)', { type: 'object', dependentSchemas: { a: { $ref: '#' } } }, /: dependentSchemas\.a: leads back to \(root\) /],
    ['then', { type: 'object', properties: { p: { if: { type: 'string' }, then: { $ref: '#/properties/p' } } } }, /: properties\.p\.then: leads back to properties\.p /],
    [
      'a 2019-09 $recursiveRef',
      { $schema: 'https://json-schema.org/draft/2019-09/schema', $recursiveAnchor: true, type: 'object', anyOf: [{ $recursiveRef: '#' }] },
      /: anyOf\.0: leads back to \(root\) /,
    ],
    [
      'a draft-07 $ref beside keywords',
      { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', definitions: { a: { $ref: '#/definitions/a', required: ['x'] } }, properties: { p: { $ref: '#/definitions/a' } } },
      /: definitions\.a\.\$ref: leads back to definitions\.a /,
    ],
  ])('%s', (_, schema, message) => {
    expect(() => define(schema)).toThrow(refused);
    expect(() => define(schema)).toThrow(message);
    expect(() => define(schema)).toThrow(never);
  });

  it('the run’s output schema too, when the runner is made', () => {
    const output = { type: 'object', properties: { a: { $ref: '#/properties/a' } } } as { type: 'object' };
    expect(() => toolRunner({} as never, baseParams, { output })).toThrow(/properties\.a\.\$ref: leads back to properties\.a /);
  });
});

describe('a recursive schema that descends into the input is a schema like any other', () => {
  it.each([
    ['a tree through items', tree],
    ['a $ref to the root through properties', { type: 'object', properties: { a: { $ref: '#' } } }],
    ['a $ref to the root through propertyNames', { type: 'object', propertyNames: { $ref: '#/$defs/name' }, $defs: { name: { type: 'string', maxLength: 3 } } }],
    ['a 2019-09 $recursiveRef through items', { $schema: 'https://json-schema.org/draft/2019-09/schema', $recursiveAnchor: true, type: 'object', properties: { kids: { type: 'array', items: { $recursiveRef: '#' } } } }],
    ['one $ref after another, without a loop', { type: 'object', $defs: { a: { $ref: '#/$defs/b' }, b: { allOf: [{ $ref: '#/$defs/c' }] }, c: { type: 'object' } }, properties: { p: { $ref: '#/$defs/a' }, q: { $ref: '#/$defs/a' } } }],
  ])('%s', (_, schema) => {
    expect(() => define(schema)).not.toThrow();
  });

  it('the tree validates a nested input, and names the place of a wrong one', () => {
    const { validateInput } = define(tree);
    const good = { name: 'root', children: [{ name: 'a', children: [{ name: 'a1' }] }, { name: 'b', children: [] }] };
    expect(validateInput!(good)).toEqual({ ok: true, value: good });
    const wrong = validateInput!({ name: 'root', children: [{ name: 'a', children: [{ name: 7 }, {}] }] });
    expect(wrong).toMatchObject({ ok: false });
    const paths = (wrong as { issues: Array<{ path: string }> }).issues.map((issue) => issue.path);
    expect(paths).toEqual(expect.arrayContaining(['children[0].children[0].name', 'children[0].children[1].name']));
  });

  it('a tool with the tree runs on valid input in a real run, and the model hears of a wrong nested one', async () => {
    const seen: unknown[] = [];
    const input = { name: 'root', children: [{ name: 'a', children: [{ name: 'a1' }] }] };
    const server = await mockServer([
      { content: [toolUse('x', input, 'toolu_1'), toolUse('x', { name: 'root', children: [{ children: [] }] }, 'toolu_2')] },
      { content: [text('done')] },
    ]);
    const runner = toolRunner(server.client(), { ...baseParams, tools: [define(tree, (value) => (seen.push(value), 'ran'))] });
    await runner;
    expect(seen).toEqual([input]);
    const [ran, wrong] = toolResults(server.requests[1]!);
    expect(ran).toMatchObject({ tool_use_id: 'toolu_1', content: 'ran' });
    expect(ran!.is_error).not.toBe(true);
    expect(wrong).toMatchObject({ tool_use_id: 'toolu_2', is_error: true, content: expect.stringMatching(/^- children\[0\]\.name: is required$/m) });
    expect(wrong!.content).not.toMatch(/nested too deeply/);
    expect(historyProblems(runner.params.messages)).toEqual([]);
  });
});
