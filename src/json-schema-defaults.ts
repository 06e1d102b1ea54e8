/**
 * A JSON Schema's `default`s written into the input before it is validated, as ajv's `useDefaults`
 * did: a missing property whose schema under `properties` has a `default` gets a copy of it, in
 * nested objects and array items too, through `$ref`, `allOf`, the `then` or `else` that the `if`
 * picks, the `dependentSchemas` (and draft-07 `dependencies`) of the properties present, and the
 * `patternProperties` / `additionalProperties` of the properties present; never inside `anyOf`,
 * `oneOf`, `not` or `if` itself, where it is not known which branch applies.
 */
import { ignoredKeyword } from '@cfworker/json-schema';
import { isObject } from './json-schema-walk.js';

export interface DefaultsContext {
  /** The schema a node's `$ref` points to. */
  resolve: (node: Record<string, unknown>) => unknown;
  /** Whether `value` is valid against `schema` (an `if`), as the defaults written so far have it. */
  matches: (schema: unknown, value: unknown) => boolean;
}

/** A list of schemas, innermost first: those whose defaults the value being filled came from, or those applied to one value. */
interface Chain {
  schema: object;
  outer: Chain | undefined;
}

/**
 * Whether any `properties` entry of the schema has a `default` (else applying them is skipped):
 * anywhere a `$ref` may land, which is any object that is not a keyword's value (`enum`, `const`, ...).
 */
export function hasDefaults(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(hasDefaults);
  if (!isObject(schema)) return false;
  const { properties } = schema;
  if (isObject(properties)) {
    for (const name in properties) {
      const property = properties[name];
      if (isObject(property) && 'default' in property) return true;
    }
  }
  for (const key in schema) if (!ignoredKeyword[key] && hasDefaults(schema[key])) return true;
  return false;
}

/**
 * Writes the defaults that apply into `value` (a copy the caller owns). `inserted`: the property
 * schemas whose defaults `value` sits in; `applied`: the schemas applied to `value` already, through
 * `$ref`, `allOf`, ... (a schema that refers to itself there is followed once).
 */
export function applyDefaults(schema: unknown, value: unknown, context: DefaultsContext, inserted?: Chain, applied?: Chain): void {
  if (!isObject(schema) || within(applied, schema)) return;
  // In ajv's order: the keywords of any type first, then the object's (its own properties' defaults
  // first). Nothing is allocated for a node that applies no other schema to the same value.
  const { $ref, allOf } = schema;
  let here: Chain | undefined;
  if (typeof $ref === 'string') applyDefaults(context.resolve(schema), value, context, inserted, (here ??= { schema, outer: applied }));
  if (Array.isArray(allOf)) for (const sub of allOf) applyDefaults(sub, value, context, inserted, (here ??= { schema, outer: applied }));
  if (schema.if !== undefined && (schema.then !== undefined || schema.else !== undefined)) {
    const branch = context.matches(schema.if, value) ? schema.then : schema.else;
    applyDefaults(branch, value, context, inserted, (here ??= { schema, outer: applied }));
  }
  if (isObject(value)) objectDefaults(schema, value, context, inserted, applied);
  else if (Array.isArray(value)) {
    const { items, prefixItems } = schema;
    const tuple = Array.isArray(prefixItems) ? prefixItems : Array.isArray(items) ? items : undefined;
    for (let index = 0; index < value.length; index++) {
      const itemSchema = tuple && index < tuple.length ? tuple[index] : Array.isArray(items) ? undefined : items;
      applyDefaults(itemSchema, value[index], context, inserted);
    }
  }
}

function objectDefaults(schema: Record<string, unknown>, value: Record<string, unknown>, context: DefaultsContext, inserted: Chain | undefined, applied: Chain | undefined): void {
  const { properties, patternProperties, additionalProperties, dependentSchemas, dependencies } = schema;
  if (isObject(properties)) {
    for (const name in properties) {
      const property = properties[name];
      if (!isObject(property) || name === '__proto__') continue;
      if (Object.hasOwn(value, name)) applyDefaults(property, value[name], context, inserted);
      else if ('default' in property && !within(inserted, property)) {
        // A default of a recursive schema (`{child: {$ref: '#', default: {}}}`) is not filled in again inside itself.
        value[name] = structuredClone(property.default);
        applyDefaults(property, value[name], context, { schema: property, outer: inserted });
      }
    }
  }
  // Each property by the schemas its name picks, as the validator reads them.
  if (isObject(patternProperties) || isObject(additionalProperties)) {
    const patterns = isObject(patternProperties) ? compiled(patternProperties) : NO_PATTERNS;
    for (const name in value) {
      let matched = isObject(properties) && Object.hasOwn(properties, name);
      for (const [pattern, sub] of patterns) {
        if (!pattern.test(name)) continue;
        matched = true;
        applyDefaults(sub, value[name], context, inserted);
      }
      if (!matched) applyDefaults(additionalProperties, value[name], context, inserted);
    }
  }
  if (isObject(dependentSchemas)) dependentDefaults(schema, dependentSchemas, value, context, inserted, applied);
  if (isObject(dependencies)) dependentDefaults(schema, dependencies, value, context, inserted, applied);
}

/** The defaults of the schemas that the present properties require of the object (an array there names properties). */
function dependentDefaults(
  schema: object,
  map: Record<string, unknown>,
  value: Record<string, unknown>,
  context: DefaultsContext,
  inserted: Chain | undefined,
  applied: Chain | undefined,
): void {
  for (const name in map) {
    if (Object.hasOwn(value, name) && !Array.isArray(map[name])) applyDefaults(map[name], value, context, inserted, { schema, outer: applied });
  }
}

const NO_PATTERNS: ReadonlyArray<readonly [RegExp, unknown]> = [];

/** Each `patternProperties` entry's regular expression, made once per schema. */
const patternsOf = new WeakMap<object, Array<readonly [RegExp, unknown]>>();

function compiled(patternProperties: Record<string, unknown>): ReadonlyArray<readonly [RegExp, unknown]> {
  let patterns = patternsOf.get(patternProperties);
  if (!patterns) {
    patterns = Object.keys(patternProperties).map((pattern) => [new RegExp(pattern, 'u'), patternProperties[pattern]] as const);
    patternsOf.set(patternProperties, patterns);
  }
  return patterns;
}

function within(chain: Chain | undefined, schema: object): boolean {
  for (let at = chain; at; at = at.outer) if (at.schema === schema) return true;
  return false;
}
