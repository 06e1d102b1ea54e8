/**
 * Checks a plain JSON Schema when the tool is defined, so that a schema the validator cannot use is
 * the developer's error at `tool()` time, with where it is, and never an "invalid input" told to the
 * model at run time.
 */
import type { Resolve } from './json-schema-issues.js';
import { type Draft, forEachSubschema, isObject } from './json-schema-walk.js';
import { thrownMessage } from './described.js';

const TYPES: ReadonlySet<string> = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);

const COUNTS = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'minContains', 'maxContains'];
const NUMBERS = ['minimum', 'maximum'];
const LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];

/** What the check knows besides the schema: its draft, and the schema a `$ref` found at a schema points to (undefined when the validator knows none). */
interface Context {
  draft: Draft;
  resolve: Resolve;
}

/** The first problem of `schema` (written in `draft`), as `where: what`, or undefined when it can be used. */
export function schemaProblem(schema: unknown, draft: Draft, resolve: Resolve): string | undefined {
  return problemAt(schema, [], { draft, resolve }, 0) ?? loopProblem(schema, resolve);
}

function problemAt(schema: unknown, where: string[], context: Context, depth: number): string | undefined {
  if (typeof schema === 'boolean') return undefined;
  if (!isObject(schema)) return at(where, `a schema must be an object or a boolean, got ${describe(schema)}`);
  if (depth > 100) return at(where, 'the schema is nested more than 100 levels deep');
  const own = ownProblem(schema, context);
  if (own) return at([...where, own.key], own.message);
  let found: string | undefined;
  forEachSubschema(schema, (sub, path) => {
    found ??= problemAt(sub, [...where, ...path], context, depth + 1);
  });
  return found;
}

function ownProblem(schema: Record<string, unknown>, { draft, resolve }: Context): { key: string; message: string } | undefined {
  const { type, required, pattern, patternProperties, multipleOf, $ref } = schema;
  if (Array.isArray(type) && type.length === 0) return { key: 'type', message: 'must name at least one type (an empty list allows no value)' };
  const types = Array.isArray(type) ? type : type === undefined ? [] : [type];
  for (const name of types) {
    if (typeof name !== 'string' || !TYPES.has(name)) {
      return { key: 'type', message: `${JSON.stringify(name)} is not a JSON Schema type (${[...TYPES].join(', ')})` };
    }
  }
  if (required !== undefined && (!Array.isArray(required) || required.some((name) => typeof name !== 'string'))) {
    return { key: 'required', message: 'must be an array of property names' };
  }
  if ('enum' in schema && !(Array.isArray(schema.enum) && schema.enum.length > 0)) {
    return { key: 'enum', message: 'must be a non-empty array of values (an empty one allows no value)' };
  }
  if (schema.uniqueItems !== undefined && typeof schema.uniqueItems !== 'boolean') {
    return { key: 'uniqueItems', message: `must be a boolean, got ${JSON.stringify(schema.uniqueItems)}` };
  }
  const names = namesProblem(schema);
  if (names) return names;
  for (const key of COUNTS) {
    const value = schema[key];
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= 0)) {
      return { key, message: `must be a non-negative integer, got ${JSON.stringify(value)}` };
    }
  }
  for (const key of NUMBERS) {
    if (schema[key] !== undefined && typeof schema[key] !== 'number') return { key, message: `must be a number, got ${JSON.stringify(schema[key])}` };
  }
  const bounds = exclusiveBoundProblem(schema, draft);
  if (bounds) return bounds;
  if (multipleOf !== undefined && !(typeof multipleOf === 'number' && multipleOf > 0)) {
    return { key: 'multipleOf', message: `must be a number greater than 0, got ${JSON.stringify(multipleOf)}` };
  }
  for (const key of LISTS) {
    if (schema[key] !== undefined && !(Array.isArray(schema[key]) && (schema[key] as unknown[]).length > 0)) {
      return { key, message: 'must be a non-empty array of schemas' };
    }
  }
  for (const key of ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']) {
    if (schema[key] !== undefined && !isObject(schema[key])) return { key, message: 'must be an object whose values are schemas' };
  }
  if (pattern !== undefined) {
    const problem = typeof pattern === 'string' ? regexProblem(pattern) : 'must be a string';
    if (problem) return { key: 'pattern', message: problem };
  }
  if (isObject(patternProperties)) {
    for (const key in patternProperties) {
      const problem = regexProblem(key);
      if (problem) return { key: `patternProperties.${key}`, message: problem };
    }
  }
  // The validator knows neither (it would let any value through there): never a silent pass.
  if ('$dynamicRef' in schema) return { key: '$dynamicRef', message: 'is not supported by the validator (2020-12 dynamic scope); use $ref' };
  if (schema.$recursiveRef !== undefined && schema.$recursiveRef !== '#') {
    return { key: '$recursiveRef', message: `must be "#" (the only value 2019-09 defines), got ${JSON.stringify(schema.$recursiveRef)}` };
  }
  if ($ref !== undefined) {
    if (typeof $ref !== 'string') return { key: '$ref', message: 'must be a string' };
    if (resolve(schema) === undefined) return { key: '$ref', message: `${JSON.stringify($ref)} does not point to a schema in this schema (only references inside the schema are followed)` };
  }
  return undefined;
}

/**
 * Keywords whose subschemas the validator applies to the value it is checking itself, not to a part
 * of it (as `properties`, `items`, `propertyNames`, ... do); `$ref` and `$recursiveRef` too.
 */
const IN_PLACE: ReadonlySet<string> = new Set(['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentSchemas', 'dependencies']);

/** One in-place step from a schema: the keyword's place, the schema it leads to, and that schema's place. */
interface Step {
  where: readonly string[];
  to: unknown;
  toWhere: readonly string[];
}

/**
 * A loop of in-place steps (`{a: {$ref: '#/properties/a'}}`, two `$defs` that `$ref` each other):
 * the validator would follow it forever on the same value, and overflow the stack on every call
 * (which would read as an input too deep). A recursive schema must pass through a keyword that
 * takes a part of the value, as a tree's `items: {$ref: '#/$defs/node'}` does.
 */
function loopProblem(schema: unknown, resolve: Resolve): string | undefined {
  const places = placesOf(schema);
  const done = new Set<object>();
  for (const [start, where] of places) {
    if (done.has(start)) continue;
    const loop = loopFrom(start, where, (node, at) => inPlaceSteps(node, at, places, resolve), done);
    if (!loop) continue;
    const target = name(loop.at(-1)!.toWhere);
    const chain = [...loop.map((step) => name(step.where)), target].join(' → ');
    const hint = 'a recursive schema must pass through properties, items or another keyword that applies to a part of the value';
    return at(loop[0]!.where, `leads back to ${target} without descending into the input (${chain}), so validating would never end (${hint})`);
  }
  return undefined;
}

/** Each schema object under `schema` (by the keywords that hold subschemas), with where it is. */
function placesOf(schema: unknown): Map<Record<string, unknown>, readonly string[]> {
  const places = new Map<Record<string, unknown>, readonly string[]>();
  const visit = (node: unknown, where: readonly string[]) => {
    if (!isObject(node) || places.has(node)) return;
    places.set(node, where);
    forEachSubschema(node, (sub, path) => visit(sub, [...where, ...path]));
  };
  visit(schema, []);
  return places;
}

/** The in-place steps from `node` (at `where`). A `$ref` into a place the walk does not know is named by its value. */
function inPlaceSteps(node: Record<string, unknown>, where: readonly string[], places: Map<Record<string, unknown>, readonly string[]>, resolve: Resolve): Step[] {
  const steps: Step[] = [];
  for (const keyword of ['$ref', '$recursiveRef'] as const) {
    if (typeof node[keyword] !== 'string') continue;
    const to = resolve(node, keyword);
    steps.push({ where: [...where, keyword], to, toWhere: (isObject(to) && places.get(to)) || [JSON.stringify(node[keyword])] });
  }
  forEachSubschema(node, (sub, path) => {
    if (IN_PLACE.has(path[0]!)) steps.push({ where: [...where, ...path], to: sub, toWhere: [...where, ...path] });
  });
  return steps;
}

/** The steps of the first loop found from `start` (a depth-first walk, without recursion); the schemas it leaves without one are added to `done`. */
function loopFrom(start: Record<string, unknown>, where: readonly string[], stepsOf: (node: Record<string, unknown>, where: readonly string[]) => Step[], done: Set<object>): Step[] | undefined {
  const path: Array<{ node: object; steps: Step[]; next: number }> = [];
  const enter = (node: Record<string, unknown>, at: readonly string[]) => path.push({ node, steps: stepsOf(node, at), next: 0 });
  enter(start, where);
  while (path.length > 0) {
    const top = path[path.length - 1]!;
    const step = top.steps[top.next++];
    if (step === undefined) {
      done.add(top.node);
      path.pop();
    } else if (isObject(step.to) && !done.has(step.to)) {
      const open = path.findIndex((entry) => entry.node === step.to);
      if (open >= 0) return path.slice(open).map((entry) => entry.steps[entry.next - 1]!);
      enter(step.to, step.toWhere);
    }
  }
  return undefined;
}

/** `dependentRequired` (and `dependencies`, drafts 4 to 7, beside its schemas) maps a name to the names it requires. */
function namesProblem(schema: Record<string, unknown>): { key: string; message: string } | undefined {
  const { dependentRequired, dependencies } = schema;
  if (dependentRequired !== undefined && !isObject(dependentRequired)) {
    return { key: 'dependentRequired', message: 'must be an object whose values are arrays of property names' };
  }
  if (dependencies !== undefined && !isObject(dependencies)) {
    return { key: 'dependencies', message: 'must be an object whose values are schemas or arrays of property names' };
  }
  for (const [key, map] of [
    ['dependentRequired', dependentRequired],
    ['dependencies', dependencies],
  ] as const) {
    if (!isObject(map)) continue;
    for (const name in map) {
      const value = map[name];
      const names = Array.isArray(value) && value.every((item) => typeof item === 'string');
      if (names || (key === 'dependencies' && !Array.isArray(value))) continue;
      return { key: `${key}.${name}`, message: `must be an array of property names${key === 'dependencies' ? ' or a schema' : ''}, got ${JSON.stringify(value)}` };
    }
  }
  return undefined;
}

/**
 * `exclusiveMaximum` is a boolean beside `maximum` in draft 4, a number since draft 6; the boolean
 * form is taken in every draft too, as OpenAPI 3.0 writes it (json-schema-prepare.ts turns it into
 * the number). The same for the minimum.
 */
function exclusiveBoundProblem(schema: Record<string, unknown>, draft: Draft): { key: string; message: string } | undefined {
  for (const [bound, key] of [
    ['minimum', 'exclusiveMinimum'],
    ['maximum', 'exclusiveMaximum'],
  ] as const) {
    const value = schema[key];
    if (value === undefined) continue;
    if (draft === '4' && typeof value !== 'boolean') {
      return { key, message: `must be a boolean in draft-04 (a number since draft-06), got ${JSON.stringify(value)}` };
    }
    if (typeof value !== 'number' && typeof value !== 'boolean') return { key, message: `must be a number, got ${JSON.stringify(value)}` };
    if (value === true && typeof schema[bound] !== 'number') return { key, message: `true needs a number in ${bound} beside it` };
  }
  return undefined;
}

function regexProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'u');
    return undefined;
  } catch (error) {
    return `${JSON.stringify(pattern)} is not a valid regular expression (${thrownMessage(error)})`;
  }
}

function at(where: readonly string[], message: string): string {
  return `${name(where)}: ${message}`;
}

function name(where: readonly string[]): string {
  return where.length > 0 ? where.join('.') : '(root)';
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}
