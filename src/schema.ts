/**
 * One interface over the three kinds of input schema a tool may have: a zod v4 schema, any
 * Standard Schema that can export JSON Schema, or a plain JSON Schema object. Each gives the
 * JSON Schema sent to the API and a run-time validator.
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import { compileJsonSchema } from './json-schema.js';
import { brandClass } from './brand.js';
import { cutText } from './cut.js';
import { isThenable } from './completion.js';
import { quotingTypeError, thrownText, thrownMessage } from './described.js';
import {
  type CompiledSchema,
  type JsonObjectSchema,
  type SchemaOwner,
  type ValidationIssue,
  type ValidationResult,
  formatPath,
} from './validation.js';

export type { CompiledSchema, JsonObjectSchema, SchemaOwner, ValidationIssue, ValidationResult };

/**
 * Any schema kind `tool()` (and `options.output`) accepts. A Standard Schema must export JSON Schema
 * too (Standard JSON Schema): one that cannot (zod 3, zod 4.0–4.1) does not compile ("Property
 * 'jsonSchema' is missing"), as `tool()` refuses it at run time.
 */
export type AnySchema = (StandardSchemaV1 & StandardJSONSchemaV1) | JsonObjectSchema;

/**
 * The value a schema validates to: inferred from zod / Standard Schema / `as const` JSON Schema.
 * Without `strictNullChecks` (a project not `strict`), a JSON Schema's value is an object of
 * `any`s: json-schema-to-ts needs strict mode, and its inference there is "excessively deep" for
 * every `tool()` call, zod ones included. (`undefined extends string` holds only without it.)
 */
export type SchemaValue<S> =
  S extends StandardSchemaV1<unknown, infer Output>
    ? Output
    : S extends JSONSchema
      ? undefined extends string
        ? Record<string, any>
        : FromSchema<S>
      : unknown;

/** What to write for a zod type JSON cannot carry: the model's input (and its final answer) is JSON. */
const JSON_INSTEAD = 'The model sends JSON: describe what it sends (a date as z.iso.datetime(), with .pipe(z.coerce.date()) to get a Date; a bigint as z.string() or z.number())';

export function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  return typeof schema === 'object' && schema !== null && '~standard' in schema;
}

/**
 * Compiles `schema` (a tool's input schema, or the run's output schema: `owner` says whose, for the
 * errors); throws a clear error when it cannot be used. `toolInput`: what the schema's own code throws is
 * a `SchemaThrew` (the model is told), and a zod schema with code of the user's in it parses async at once.
 */
export function compileSchema<T>(owner: SchemaOwner, schema: AnySchema, toolInput = false): CompiledSchema<T> {
  if (isStandardSchema(schema)) return compileStandardSchema<T>(owner, schema, toolInput);
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new TypeError(
      `${owner.label}: ${owner.key} must be a zod schema, a Standard Schema or a JSON Schema object, got ${describe(schema)}`,
    );
  }
  assertObjectSchema(owner, schema);
  return compileJsonSchema<T>(owner, schema);
}

/** What to do about a Standard Schema that exports no JSON Schema: zod/mini's (of a zod that can) is told apart from an older zod's. */
function exportAdvice(schema: StandardSchemaV1): string {
  const version = (schema as { _zod?: { version?: { major?: unknown; minor?: unknown } } })._zod?.version;
  const mini = version?.major === 4 && typeof version.minor === 'number' && version.minor >= 2;
  if (mini) return 'A zod/mini schema exports none: use classic zod (`import { z } from "zod"`), or pass `z.toJSONSchema(schema)`, a plain JSON Schema object.';
  // zod 3's API (no `_zod`): from zod 3, or from "zod/v3" of a zod 4 that could export it. "Use zod >= 4.2" left
  // a program on zod 4.6 that imports "zod/v3" with nothing to change.
  const def = (schema as { _def?: { typeName?: unknown } })._def;
  if (version === undefined && typeof def?.typeName === 'string') {
    return 'A schema of zod 3\'s API (zod 3, or "zod/v3" of zod 4) exports none: with zod >= 4.2 installed, import it from "zod" (`import { z } from "zod"`, not "zod/v3"), or pass a plain JSON Schema object.';
  }
  return 'Use zod >= 4.2 (zod 3 and zod 4.0–4.1 cannot export it, "zod/v4" of zod 3 neither), a library that implements Standard JSON Schema, or pass a plain JSON Schema object.';
}

function compileStandardSchema<T>(owner: SchemaOwner, schema: StandardSchemaV1, toolInput: boolean): CompiledSchema<T> {
  const standard = schema['~standard'] as StandardSchemaV1['~standard'] &
    Partial<StandardJSONSchemaV1['~standard']>;
  if (!standard.jsonSchema || typeof standard.jsonSchema.input !== 'function') {
    throw new TypeError(`${owner.label}: ${owner.noun} (a ${standard.vendor} schema) cannot export JSON Schema (Standard JSON Schema). ${exportAdvice(schema)}`);
  }
  let jsonSchema: Record<string, unknown>;
  try {
    jsonSchema = standard.jsonSchema.input({ target: 'draft-2020-12' });
  } catch (error) {
    // (zod's own words, "Date cannot be represented in JSON Schema", say what but not whose, nor what to write instead.)
    const words = thrownMessage(error);
    const instead = /cannot be represented in JSON Schema/.test(words) ? `. ${JSON_INSTEAD}` : '';
    throw new TypeError(`${owner.label}: ${owner.noun} cannot be written as JSON Schema, which the API takes: ${words}${instead}`, { cause: error });
  }
  assertObjectSchema(owner, jsonSchema);
  const parseAsync = zodParseAsync(schema);
  const vendor = typeof standard.vendor === 'string' && standard.vendor !== '' ? `${standard.vendor} schema` : 'Standard Schema';
  if (!toolInput) {
    // A result of no shape is said with the option it came from: nothing else of the run names it (a tool's is its ValidatorError).
    const read = (result: StandardSchemaV1.Result<unknown>) => fromStandardResult<T>(result, vendor, `${owner.label}: ${owner.noun}: `);
    // Synchronous first, for a resumed run that reads its output again at once; in one pass while the run goes.
    const validate = (input: unknown) => {
      const result = standard.validate(input);
      return isThenable(result) ? Promise.resolve(result).then(read) : read(result);
    };
    return { jsonSchema, validate, validateOnce: parseAsync ? (input) => parseAsync(input).then(fromZodResult<T>) : validate };
  }
  // Made once, not for each call.
  const readInput = (settled: StandardSchemaV1.Result<unknown>) => fromStandardResult<T>(settled, vendor);
  return {
    jsonSchema,
    validate(input) {
      if (parseAsync) return parseAsync(input).then(fromZodResult<T>, schemaThrew);
      let result: StandardSchemaV1.Result<unknown> | Promise<StandardSchemaV1.Result<unknown>>;
      try {
        result = standard.validate(input);
      } catch (thrown) {
        return schemaThrew(thrown);
      }
      return isThenable(result) ? Promise.resolve(result).then(readInput, schemaThrew) : readInput(result);
    },
  };
}

/**
 * What a schema's own code (a refinement, a transform) threw while it validated: the model is told, as of a tool that
 * throws (a `ToolError`'s content word for word), not the run stopped. A runtime that refuses generated code is the
 * validator's own failure, not this.
 */
export class SchemaThrew extends Error {
  constructor(readonly thrown: unknown) {
    super(`the schema's own code threw: ${thrownText(thrown)}`, { cause: thrown });
    this.name = 'SchemaThrew';
  }
}
// The CommonJS build's entries each hold a copy (a tool() of one, run by another's runner).
brandClass(SchemaThrew, 'SchemaThrew');

function schemaThrew(thrown: unknown): never {
  throw thrown instanceof EvalError ? thrown : new SchemaThrew(thrown);
}

type ZodSafeParse = (input: unknown) => Promise<{ success: boolean; data?: unknown; error?: { issues: ReadonlyArray<StandardSchemaV1.Issue> } }>;

/**
 * zod's own async parse, for a zod schema with code of the user's in it (a refinement, a transform), which may be async:
 * zod's Standard Schema `validate` parses synchronously first, and an async refinement met there is started and dropped
 * (it runs twice, and its rejection goes unhandled, which ends a Node process) before the async parse runs it again.
 */
function zodParseAsync(schema: StandardSchemaV1): ZodSafeParse | undefined {
  const safeParseAsync = (schema as { safeParseAsync?: unknown }).safeParseAsync;
  if (typeof safeParseAsync !== 'function' || !hasUserCode(schema)) return undefined;
  return (input) => (safeParseAsync as ZodSafeParse).call(schema, input);
}

function fromZodResult<T>(result: Awaited<ReturnType<ZodSafeParse>>): ValidationResult<T> {
  return result.success ? { ok: true, value: result.data as T } : { ok: false, issues: issuesOf(result.error?.issues ?? []) };
}

/**
 * A Standard Schema's result as the runner's. `vendor`: the schema's, in the words of an error about a result of no shape
 * (`zod schema`), after `whose` (the option it came from, when no error around it names one).
 */
function fromStandardResult<T>(result: StandardSchemaV1.Result<unknown>, vendor: string, whose = ''): ValidationResult<T> {
  // No result at all (5, undefined), or an object of neither kind (a `safeParse` result, `{ success, data }`): the
  // validator's own failure. Read as one without issues, the tool ran with no input, the run's output was `undefined`.
  if (typeof result !== 'object' || result === null || (!result.issues && !('value' in result))) {
    const said = (shown: string) => `${whose}the ${vendor}'s validate answered ${shown}, not a result ({ value } or { issues })`;
    // (A `safeParse` result holds the input.)
    throw quotingTypeError(said, result);
  }
  if (!result.issues) return { ok: true, value: result.value as T };
  // Issues that are no list of { message, path? }: the validator's own failure (a ValidatorError), not the input's. Their
  // list for the model failed with "Cannot read properties of undefined (reading 'length')", a bare TypeError.
  if (!Array.isArray(result.issues) || !result.issues.every(isIssue)) {
    const said = (shown: string) => `${whose}the ${vendor}'s validate answered issues that are no list of { message, path? }: ${shown}`;
    // An issue may quote the call's input: spans and the inspector show it only when they capture contents.
    throw quotingTypeError(said, result.issues);
  }
  return { ok: false, issues: issuesOf(result.issues) };
}

/**
 * Standard Schema issues (zod's among them) as the runner's: a dotted path and a message each. A zod union that no
 * option matched says only "Invalid input": the issues of each option follow it (under the union's path), as the JSON
 * Schema validator's `anyOf` does, so that the model can tell what to send.
 */
function issuesOf(issues: ReadonlyArray<StandardSchemaV1.Issue>, base: readonly PropertyKey[] = []): ValidationIssue[] {
  const found: ValidationIssue[] = [];
  for (const issue of issues) {
    const path = [...base, ...(issue.path ?? []).map((segment) => (typeof segment === 'object' ? segment.key : segment))];
    const options = unionOptions(issue);
    found.push({ path: formatPath(path), message: options ? `${issue.message}: it matches none of the options (the issues of each follow)` : issue.message });
    for (const option of options ?? []) found.push(...issuesOf(option, path));
  }
  return found;
}

/** The issues of each option a zod union tried (its `invalid_union` issue's `errors`), when it has them. */
function unionOptions(issue: StandardSchemaV1.Issue): ReadonlyArray<ReadonlyArray<StandardSchemaV1.Issue>> | undefined {
  const { code, errors } = issue as { code?: unknown; errors?: unknown };
  if (code !== 'invalid_union' || !Array.isArray(errors) || errors.length === 0) return undefined;
  return errors.every((option) => Array.isArray(option) && option.every(isIssue)) ? (errors as StandardSchemaV1.Issue[][]) : undefined;
}

function isIssue(issue: unknown): issue is StandardSchemaV1.Issue {
  const { message, path } = (issue ?? {}) as { message?: unknown; path?: unknown };
  return typeof message === 'string' && (path === undefined || (Array.isArray(path) && path.every(isSegment)));
}

/** A path's segment: a key, or `{ key }` (a `null` in the path failed with "Cannot read properties of null (reading 'key')"). */
function isSegment(segment: unknown): boolean {
  return ['string', 'number', 'symbol'].includes(typeof segment) || (typeof segment === 'object' && segment !== null);
}

/**
 * The issues of an error a parser threw, when it holds them as Standard Schema issues (a `ZodError`
 * from the SDK's `betaZodTool`): each with a message, and a path of keys.
 */
export function thrownIssues(thrown: unknown): ValidationIssue[] | undefined {
  const issues = (thrown as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return undefined;
  return issues.every(isIssue) ? issuesOf(issues) : undefined;
}

function assertObjectSchema(owner: SchemaOwner, schema: object): asserts schema is JsonObjectSchema {
  const type = (schema as { type?: unknown }).type;
  if (type !== 'object') {
    throw new TypeError(
      `${owner.label}: ${owner.noun} must describe an object (type: "object") at the top level, got type ${JSON.stringify(type) ?? 'undefined'}${notObjectHint(schema)}`,
    );
  }
}

/** Why a schema of no type is none: a zod shape not wrapped in `z.object()`, or a union at the top level. */
function notObjectHint(schema: object): string {
  const values = Object.values(schema);
  if (values.length > 0 && values.every(isStandardSchema)) return ' (a shape of schemas: wrap it in z.object({ ... }))';
  const union = ['anyOf', 'oneOf'].find((key) => key in schema);
  return union ? ` (a union, \`${union}\`, at the top level: the API takes one object schema there; put the union in a field of an object)` : '';
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

/** The last line of an invalid call's result: the model may call again. */
const RETRY_HINT = '\nFix the input and call the tool again.';

/** `text` without the hint to call the tool again at its end (for a log, or an input the model did not write). */
export function withoutRetryHint(text: string): string {
  return text.endsWith(RETRY_HINT) ? text.slice(0, -RETRY_HINT.length) : text;
}

/** The issues an invalid call's result lists, and the characters of a path or message it shows: never a huge input echoed. */
const MAX_ISSUES = 20;
const MAX_ISSUE_CHARS = 200;

/** Formats validation issues for the model, one per line (`listedIssues`), so it can repair its call. */
export function formatIssues(toolName: string, issues: ValidationIssue[]): string {
  return `Invalid input for tool '${toolName}':\n${listedIssues(issues)}${RETRY_HINT}`;
}

/** The issues one per line, `- path: message` after `indent` (the first 20, each cut to 200 characters; then how many more). */
export function listedIssues(issues: readonly ValidationIssue[], indent = ''): string {
  // A Standard Schema validator may fail with no issue (`{ issues: [] }`): the model read an empty list, nothing to fix.
  if (issues.length === 0) return `${indent}- (root): not valid (the schema's validator named no problem)`;
  const lines = issues.slice(0, MAX_ISSUES).map((issue) => `${indent}- ${shortened(issue.path)}: ${shortened(issue.message)}`);
  if (issues.length > MAX_ISSUES) lines.push(`${indent}- … and ${issues.length - MAX_ISSUES} more`);
  return lines.join('\n');
}

function shortened(text: string): string {
  return text.length > MAX_ISSUE_CHARS ? `${cutText(text, MAX_ISSUE_CHARS)}…` : text;
}

/** zod schema kinds that run code of the user's (which may be async) when they parse. */
const USER_CODE_TYPES = new Set(['transform', 'custom', 'lazy', 'promise', 'function']);
/** zod checks that run code of the user's: `refine`, `superRefine`, `check`, `overwrite` (`trim()` among them). */
const USER_CODE_CHECKS = new Set(['custom', 'overwrite']);

type ZodNode = { _zod?: { def?: Record<string, unknown> & { type?: unknown; checks?: unknown } } };

/**
 * Whether a zod schema holds code of the user's anywhere in it (a refinement, a transform, a codec's decode, a lazy
 * part): walked once, when the tool is made. A function anywhere in a definition (but its error map) counts; a getter
 * is not called (a default's function would run), but for an object's shape (a recursive schema's getters).
 */
function hasUserCode(schema: unknown, seen = new Set<unknown>()): boolean {
  if (seen.has(schema)) return false;
  seen.add(schema);
  const def = (schema as ZodNode)._zod?.def;
  // Not a zod schema as this version knows it: its parse may run anything.
  if (!def) return true;
  if (USER_CODE_TYPES.has(def.type as string)) return true;
  const checks = Array.isArray(def.checks) ? (def.checks as ZodNode[]) : [];
  if (checks.some((check) => USER_CODE_CHECKS.has(check._zod?.def?.['check'] as string))) return true;
  for (const [key, property] of Object.entries(Object.getOwnPropertyDescriptors(def))) {
    if (key === 'checks' || key === 'error' || (property.get && key !== 'shape')) continue;
    const value: unknown = property.get ? def[key] : property.value;
    if (typeof value === 'function') return true;
    const parts = key === 'shape' && value && typeof value === 'object' ? Object.values(value) : Array.isArray(value) ? value : [value];
    for (const part of parts) if (part && typeof part === 'object' && '_zod' in part && hasUserCode(part, seen)) return true;
  }
  return false;
}
