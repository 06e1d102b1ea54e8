/**
 * Checks a plain JSON Schema when the tool is defined, so that a schema the validator cannot use is
 * the developer's error at `tool()` time, with where it is, and never an "invalid input" told to the
 * model at run time.
 */
import { type Draft, forEachSubschema, isObject } from './json-schema-walk.js';

const TYPES: ReadonlySet<string> = new Set(['object', 'array', 'string', 'number', 'integer', 'boolean', 'null']);

const COUNTS = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties', 'minContains', 'maxContains'];
const NUMBERS = ['minimum', 'maximum'];
const LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];

/** What the check knows besides the schema: its draft, and whether a `$ref` found at a schema points to a schema the validator knows. */
interface Context {
  draft: Draft;
  resolves: (node: Record<string, unknown>) => boolean;
}

/** The first problem of `schema` (written in `draft`), as `where: what`, or undefined when it can be used. */
export function schemaProblem(schema: unknown, draft: Draft, resolves: Context['resolves']): string | undefined {
  return problemAt(schema, [], { draft, resolves }, 0);
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

function ownProblem(schema: Record<string, unknown>, { draft, resolves }: Context): { key: string; message: string } | undefined {
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
    if (!resolves(schema)) return { key: '$ref', message: `${JSON.stringify($ref)} does not point to a schema in this schema (only references inside the schema are followed)` };
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
    return `${JSON.stringify(pattern)} is not a valid regular expression (${error instanceof Error ? error.message : String(error)})`;
  }
}

function at(where: readonly string[], message: string): string {
  return `${where.length > 0 ? where.join('.') : '(root)'}: ${message}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}
