/**
 * A plain JSON Schema (drafts 4, 6, 7, 2019-09, 2020-12) as a run-time validator that generates no
 * code (`@cfworker/json-schema` interprets the schema: no `eval`, no `new Function`), so it runs
 * wherever the SDK does, Cloudflare Workers included. Everything is prepared when the tool is
 * defined: a call only walks the schema. See docs/validation.md for the choice.
 */
import { type OutputUnit, type Schema, dereference, validate } from '@cfworker/json-schema';
import { applyDefaults, hasDefaults } from './json-schema-defaults.js';
import { schemaProblem } from './json-schema-check.js';
import { type Resolve, keywordLookup, toIssues } from './json-schema-issues.js';
import { type Preparing, prepareSchema } from './json-schema-prepare.js';
import { everyArrayDistinct } from './distinct-items.js';
import { draftOf, setOwn } from './json-schema-walk.js';
import type { CompiledSchema, JsonObjectSchema, SchemaOwner } from './validation.js';
import { thrownMessage } from './described.js';

type Lookup = Record<string, Schema | boolean>;

/**
 * Prepares `schema` (already checked to be an object schema) of `owner` (a tool, the run's output); throws a TypeError naming
 * what is wrong. `fillDefaults: false` validates the input as it is, its `default`s left to whoever reads it (an MCP server).
 */
export function compileJsonSchema<T>(owner: SchemaOwner, schema: JsonObjectSchema, fillDefaults = true): CompiledSchema<T> {
  // The schema is checked as the caller wrote it (so that its errors name the caller's places), and
  // the validator gets a copy of its own: it marks the objects it is given, and reads some forms
  // differently from ajv (json-schema-prepare.ts). The caller's object is never changed.
  const draft = draftOf(schema.$schema);
  const checked = dereferenced(owner, () => asSent(structuredClone(schema)) as Schema);
  const problem = schemaProblem(checked.schema, draft, checked.resolve);
  if (problem) throw invalidSchema(owner, problem);
  const preparing: Preparing = {};
  const { schema: copy, lookup, resolve } = dereferenced(owner, () => prepareSchema(checked.schema, draft, preparing) as Schema);
  // The validator compares each item of a `uniqueItems` array with every other: an input whose arrays hold distinct
  // items (found in linear time) goes to the schema without `uniqueItems`, which says the same of it.
  const distinct = preparing.sawUniqueItems ? dereferenced(owner, () => prepareSchema(checked.schema, draft, { withoutUniqueItems: true }) as Schema) : undefined;
  const keywordAt = keywordLookup(copy, resolve);
  const defaults = fillDefaults && hasDefaults(copy) ? { resolve, matches: (sub: unknown, value: unknown) => validate(value, sub as Schema, draft, lookup, true).valid } : undefined;
  return {
    jsonSchema: schema,
    validate(input) {
      let value: unknown;
      let result: ReturnType<typeof validate>;
      try {
        // A copy, so that neither defaults nor the tool's own changes reach the model's tool_use block.
        value = jsonCopy(input);
        // No value at all (a hook's `{ input: undefined }`): the validator cannot judge it; JSON has no such input.
        if (value === undefined) return { ok: false, issues: [{ path: '(root)', message: 'is missing (undefined): the input must be a JSON value' }] };
        if (defaults) applyDefaults(copy, value, defaults);
        result = distinct && everyArrayDistinct(value) ? validate(value, distinct.schema, draft, distinct.lookup, false) : validate(value, copy, draft, lookup, false);
      } catch (error) {
        // The copy and the validator recurse (and spread each subschema's errors into an argument
        // list): an input nested thousands deep, or with tens of thousands of errors, exhausts the
        // stack. That is the input's size, which the model can change, not a failing validator.
        if (!isStackOverflow(error)) throw error;
        return { ok: false, issues: [{ path: '(root)', message: 'is nested too deeply or too large to validate' }] };
      }
      if (result.valid) return { ok: true, value: value as T };
      return { ok: false, issues: toIssues(result.errors as OutputUnit[], keywordAt, value) };
    },
  };
}

/**
 * A copy of the caller's schema as the request carries it: a key set to `undefined` (`enum: choices` when there are none,
 * `additionalProperties: strict ? false : undefined`) left out, as JSON leaves it out. Changes the copy it is given.
 */
function asSent(copy: unknown, seen = new Set<object>()): unknown {
  if (typeof copy !== 'object' || copy === null || seen.has(copy)) return copy;
  seen.add(copy);
  if (Array.isArray(copy)) for (const item of copy) asSent(item, seen);
  else for (const key of Object.keys(copy)) {
    const value = (copy as Record<string, unknown>)[key];
    if (value === undefined) delete (copy as Record<string, unknown>)[key];
    else asSent(value, seen);
  }
  return copy;
}

/** The schema `make` makes with its `$ref`s resolved (the validator's lookup), and a resolver of a node's `$ref`. */
function dereferenced(owner: SchemaOwner, make: () => Schema) {
  let schema: Schema;
  let lookup: Lookup;
  try {
    schema = make();
    lookup = dereference(schema);
  } catch (error) {
    throw invalidSchema(owner, thrownMessage(error));
  }
  // A `$recursiveRef` ("#") to the schema its place resolves "#" to: the root, or the nearest `$id`'s
  // (the validator's dynamic scope may pick an outer `$recursiveAnchor`; this is for messages only).
  const resolve: Resolve = (node, keyword = '$ref') =>
    keyword === '$ref' ? lookup[(node.__absolute_ref__ as string | undefined) ?? (node.$ref as string)] : lookup[node.__absolute_recursive_ref__ as string];
  return { schema, lookup, resolve };
}

/** The most objects and arrays an input's copy makes: past it, the input is too large (a value shared at each of 40 levels is 2^40). */
const MAX_COPIED = 1_000_000;

/**
 * A copy of `value` as JSON would carry it: an object's `undefined` properties left out, an array's
 * `undefined` items (and holes) null, an object met twice copied twice (defaults filled in one place
 * stay there), an object with `toJSON` (a URL, a Date) as that gives it (its address, its time), any
 * other object by its own fields (a class's instance, a Map: `{}`). The model's input is JSON already;
 * an input an approver or a hook edited (`{ ...call.input, cc: undefined }`, a `URL`) is read as the
 * API would read it, not refused by the validator. A cycle, or more than `MAX_COPIED` objects, throws
 * a RangeError: too deep or too large to validate. `fromToJSON`: what a `toJSON` gave, whose own
 * `toJSON` is not called again (as JSON calls it once a value).
 */
function jsonCopy(value: unknown, state: { within: Set<object>; copied: number } = { within: new Set(), copied: 0 }, fromToJSON = false): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const toJSON = fromToJSON ? undefined : (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return jsonCopy(toJSON.call(value), state, true);
  if (state.within.has(value)) throw new RangeError('the input holds itself (a cycle)');
  if (++state.copied > MAX_COPIED) throw new RangeError('the input is too large to copy');
  // One frame a level: about 3,600 levels copied (JSON carries about 4,500; deeper is too deep to validate).
  state.within.add(value);
  let copy: unknown;
  if (Array.isArray(value)) {
    const items: unknown[] = new Array(value.length);
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      items[index] = item === undefined ? null : jsonCopy(item, state);
    }
    copy = items;
  } else {
    const fields: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const item = (value as Record<string, unknown>)[key];
      if (item === undefined) continue;
      setOwn(fields, key, jsonCopy(item, state));
    }
    copy = fields;
  }
  state.within.delete(value);
  return copy;
}

/** A stack exhausted: a `RangeError` in V8 and JavaScriptCore, an `InternalError` ("too much recursion") in SpiderMonkey. */
function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError || (error instanceof Error && error.name === 'InternalError');
}

/** The errors `invalidSchema` made: `isInvalidSchemaError` knows them without reading their words. */
const invalidSchemas = new WeakSet<object>();

function invalidSchema(owner: SchemaOwner, problem: string): TypeError {
  const error = new TypeError(`${owner.label}: ${owner.noun} is not a valid JSON Schema: ${problem}`);
  invalidSchemas.add(error);
  return error;
}

/** Whether `error` says a schema is no valid JSON Schema (one this runner cannot compile). */
export function isInvalidSchemaError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && invalidSchemas.has(error);
}
