/**
 * One interface over the three kinds of input schema a tool may have: a zod v4 schema, any
 * Standard Schema that can export JSON Schema, or a plain JSON Schema object. Each gives the
 * JSON Schema sent to the API and a run-time validator.
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020.js';

/** A JSON Schema object describing the tool's input (its top level must be `type: "object"`). */
export type JsonObjectSchema = { readonly type: 'object'; readonly [key: string]: unknown };

/** One reason an input was rejected, with where in the input it was found. */
export interface ValidationIssue {
  /** Dotted location in the input (`items[2].name`), or `(root)`. */
  path: string;
  message: string;
}

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

/** A schema turned into what the runner needs. */
export interface CompiledSchema<T> {
  jsonSchema: JsonObjectSchema;
  validate(input: unknown): ValidationResult<T> | Promise<ValidationResult<T>>;
}

/** Any schema kind `tool()` (and `options.output`) accepts. */
export type AnySchema = StandardSchemaV1 | JsonObjectSchema;

/** The value a schema validates to: inferred from zod / Standard Schema / `as const` JSON Schema. */
export type SchemaValue<S> =
  S extends StandardSchemaV1<unknown, infer Output>
    ? Output
    : S extends JSONSchema
      ? FromSchema<S>
      : unknown;

/** Who a schema belongs to, for its errors: `Tool 'x'` and `inputSchema`, or `toolRunner` and `options.output`. */
export interface SchemaOwner {
  label: string;
  key: string;
}

export function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  return typeof schema === 'object' && schema !== null && '~standard' in schema;
}

/**
 * Compiles `schema` (a tool's input schema, or the run's output schema: `owner` says which, for the
 * errors); throws a clear error when it cannot be used.
 */
export function compileSchema<T>(owner: SchemaOwner, schema: AnySchema): CompiledSchema<T> {
  if (isStandardSchema(schema)) return compileStandardSchema<T>(owner, schema);
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    throw new TypeError(
      `${owner.label}: ${owner.key} must be a zod schema, a Standard Schema or a JSON Schema object, got ${describe(schema)}`,
    );
  }
  assertObjectSchema(owner, schema);
  return compileJsonSchema<T>(schema);
}

function compileStandardSchema<T>(owner: SchemaOwner, schema: StandardSchemaV1): CompiledSchema<T> {
  const standard = schema['~standard'] as StandardSchemaV1['~standard'] &
    Partial<StandardJSONSchemaV1['~standard']>;
  if (!standard.jsonSchema || typeof standard.jsonSchema.input !== 'function') {
    throw new TypeError(
      `${owner.label}: the ${standard.vendor} schema of ${owner.key} cannot export JSON Schema (Standard JSON Schema). ` +
        'Use zod >= 4.2 (import from "zod" or "zod/v4"), a library that implements Standard JSON Schema, or pass a plain JSON Schema object.',
    );
  }
  const jsonSchema = standard.jsonSchema.input({ target: 'draft-2020-12' });
  assertObjectSchema(owner, jsonSchema);
  return {
    jsonSchema,
    validate(input) {
      const result = standard.validate(input);
      return result instanceof Promise ? result.then(fromStandardResult<T>) : fromStandardResult<T>(result);
    },
  };
}

function fromStandardResult<T>(result: StandardSchemaV1.Result<unknown>): ValidationResult<T> {
  if (!result.issues) return { ok: true, value: result.value as T };
  return {
    ok: false,
    issues: result.issues.map((issue) => ({
      path: formatPath((issue.path ?? []).map((segment) => (typeof segment === 'object' ? segment.key : segment))),
      message: issue.message,
    })),
  };
}

let ajv07: Ajv | undefined;
let ajv2020: Ajv2020 | undefined;

function compileJsonSchema<T>(schema: JsonObjectSchema): CompiledSchema<T> {
  const { $schema, ...rest } = schema as JsonObjectSchema & { $schema?: unknown };
  const options = { allErrors: true, useDefaults: true, strict: false, validateFormats: false } as const;
  const engine =
    typeof $schema === 'string' && $schema.includes('2020-12')
      ? (ajv2020 ??= new Ajv2020(options))
      : (ajv07 ??= new Ajv(options));
  let check: ValidateFunction | undefined;
  return {
    jsonSchema: schema,
    validate(input) {
      check ??= engine.compile(rest);
      // ajv writes defaults into the value it checks: never into the model's tool_use block.
      const value = structuredClone(input);
      if (check(value)) return { ok: true, value: value as T };
      return { ok: false, issues: (check.errors ?? []).map(fromAjvError) };
    },
  };
}

function fromAjvError(error: ErrorObject): ValidationIssue {
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as { missingProperty?: string; additionalProperty?: string };
  if (params.missingProperty !== undefined) {
    return { path: formatPath([...segments, params.missingProperty]), message: 'is required' };
  }
  if (params.additionalProperty !== undefined) {
    return { path: formatPath([...segments, params.additionalProperty]), message: 'is not allowed' };
  }
  return { path: formatPath(segments), message: error.message ?? 'is invalid' };
}

function formatPath(segments: ReadonlyArray<PropertyKey>): string {
  let path = '';
  for (const segment of segments) {
    const key = typeof segment === 'symbol' ? segment.toString() : String(segment);
    if (/^\d+$/.test(key)) path += `[${key}]`;
    else path += path ? `.${key}` : key;
  }
  return path || '(root)';
}

function assertObjectSchema(owner: SchemaOwner, schema: object): asserts schema is JsonObjectSchema {
  const type = (schema as { type?: unknown }).type;
  if (type !== 'object') {
    throw new TypeError(
      `${owner.label}: ${owner.key} must describe an object (type: "object") at the top level, got type ${JSON.stringify(type) ?? 'undefined'}`,
    );
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

/** Formats validation issues for the model, one per line, so it can repair its call. */
export function formatIssues(toolName: string, issues: ValidationIssue[]): string {
  const lines = issues.map((issue) => `- ${issue.path}: ${issue.message}`);
  return `Invalid input for tool '${toolName}':\n${lines.join('\n')}\nFix the input and call the tool again.`;
}
