/** `tool()`: a runnable tool from any of the three schema kinds, and how a `tools` entry becomes its API definition. */
import { BETA_CLIENT_TOOL_UNION_KEYS } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { refusedByApi } from './api-input-schema.js';
import { misspeltField, nearLongName } from './described.js';
import { sdkHelperMark } from './helper-header.js';
import { type AnySchema, type SchemaValue, compileSchema, isStandardSchema } from './schema.js';
import type { AnyTool, ExtraToolFields, NeedsApproval, RunnableTool, ToolContext } from './surface.js';
import { closedObjects } from './strict-schema.js';
import type { CompiledSchema, JsonObjectSchema, SchemaOwner } from './validation.js';
import { checkToolName } from './tool-name.js';
import type { AnyCall, BetaToolUnion, Promisable, ToolResultContent } from './types.js';

/** The input type `run` receives for a schema: inferred from zod / Standard Schema / `as const` JSON Schema. */
export type InferInput<S> = SchemaValue<S>;

/**
 * `T`, from which the compiler infers no type argument: a tool's schema is inferred from `inputSchema` alone. Inferred
 * from an annotated `run` too, a JSON Schema's type was "excessively deep" (TS2589) for a record
 * (`additionalProperties` only). (TypeScript 5.4's `NoInfer`, written so that older compilers read it.)
 */
export type Unguessed<T> = [T][T extends unknown ? 0 : never];

/**
 * The input a tool's `run` receives: `ToolInput<typeof getWeather>`. For tools made by `tool()`,
 * the SDK's helpers, or any object with a typed `run`.
 */
export type ToolInput<T> = T extends { run: (input: infer Input, ...rest: any[]) => unknown } ? Input : never;

/**
 * A call of one of `Tools`: its name and its typed input, a union by tool name (`{ name: string; input: unknown }`
 * without runnable tools). A tool source (an MCP server's toolset) adds `{ name: string; input: unknown }`: its
 * tools are known only at run time; a tool whose input is `any` (typed `RunnableTool`) gives `unknown`.
 */
export type CallOf<Tools> = [CallsOf<Tools>] extends [never] ? AnyCall : CallsOf<Tools>;
type CallsOf<Tools> = Tools extends readonly (infer Entry)[] ? CallOfTool<Entry> : never;
type CallOfTool<Entry> = Entry extends { kind: 'tool-source' }
  ? AnyCall
  : Entry extends { name: infer Name extends string; run: (input: infer Input, ...rest: any[]) => unknown }
    ? { name: Name; input: 0 extends 1 & Input ? unknown : Input }
    : never;

/** The argument of {@link tool}. */
export type ToolOptions<S extends AnySchema> = ExtraToolFields & {
  name: string;
  /** (`undefined` is none: a value that may be missing passes as it is, under `exactOptionalPropertyTypes` too.) */
  description?: string | undefined;
  /** A zod v4 schema, a Standard Schema that exports JSON Schema, or a JSON Schema object (`as const` types it). */
  inputSchema: S;
  /**
   * What the model reads: a string or content blocks; nothing (`undefined`) is an empty result, as in the SDK. (The
   * tool made types its `run` as returning a result, as the SDK's tools do: one that returns nothing gives `undefined`.)
   */
  run: (input: Unguessed<InferInput<S>>, context: ToolContext) => Promisable<ToolResultContent | void>;
  needsApproval?: NeedsApproval<Unguessed<InferInput<S>>> | undefined;
  /** Abort the call (its `context.signal`) and answer with a timeout error after this many ms. */
  timeoutMs?: number | undefined;
};

/**
 * Defines a tool the runner can execute. The input is validated against `inputSchema` before
 * `run` is called; the model gets the validation issues instead when it is invalid.
 *
 * @example
 * ```ts
 * const getWeather = tool({
 *   name: 'get_weather',
 *   description: 'Current weather for a city',
 *   inputSchema: z.object({ location: z.string() }),
 *   run: async ({ location }) => JSON.stringify({ location, temperature: 21 }),
 * });
 * ```
 */
export function tool<const S extends AnySchema, const Name extends string = string>(
  options: ToolOptions<S> & { name: Name },
): RunnableTool<InferInput<S>> & { readonly name: Name } {
  if (typeof options !== 'object' || options === null) throw new TypeError('tool() takes an options object');
  const { name, inputSchema, run, ...rest } = options;
  if (typeof name !== 'string' || name.length === 0) {
    throw new TypeError('tool(): `name` must be a non-empty string');
  }
  checkToolName('tool()', name);
  if (typeof run !== 'function') {
    throw new TypeError(`Tool '${name}': \`run\` must be a function, got ${typeof run}`);
  }
  checkFieldNames(name, rest);
  // (Sent as it is: the API's 400 named the field, at the first request, not the tool.)
  if (rest.description !== undefined && typeof rest.description !== 'string') throw new TypeError(`Tool '${name}': \`description\` must be a string, got ${typeof rest.description}`);
  if (inputSchema === undefined) throw new TypeError(`Tool '${name}': \`inputSchema\` is required${schemaElsewhere(rest)}`);
  const owner = { label: `Tool '${name}'`, key: 'inputSchema', noun: 'the input schema' };
  const schema = compileSchema<InferInput<S>>(owner, inputSchema, true);
  // A plain JSON Schema goes as it is given; a zod schema's, for a strict tool, with its objects closed (as the API requires).
  const standard = isStandardSchema(inputSchema);
  const sent = rest.strict === true && standard ? closedObjects(schema.jsonSchema) : schema.jsonSchema;
  const refused = refusedByApi(sent as Record<string, unknown>);
  if (refused.length > 0) throw new TypeError(`Tool '${name}': the input schema cannot be sent to the model: ${refused.join('; ')}; the request would be refused whole`);
  const validateInput = standard ? schema.validate : bySentSchema(schema, { ...owner, key: 'input_schema', noun: 'the input_schema given in its place' });
  return { ...rest, name, input_schema: sent, run, validateInput } as RunnableTool<InferInput<S>> & { readonly name: Name };
}

/**
 * A JSON Schema tool validates by the schema it sends, which is read at each request: a schema given in place of its
 * `input_schema` (a new object; one changed in place is not seen) is prepared once, at the first call after it.
 */
function bySentSchema<T>(compiled: CompiledSchema<T>, owner: SchemaOwner): (this: { input_schema?: unknown } | undefined, input: unknown) => ReturnType<CompiledSchema<T>['validate']> {
  let { jsonSchema: from, validate } = compiled;
  return function (input) {
    const now = this?.input_schema;
    if (now !== from && typeof now === 'object' && now !== null) {
      validate = compileSchema<T>(owner, now as JsonObjectSchema, true).validate;
      from = now as JsonObjectSchema;
    }
    return validate(input);
  };
}

/** The fields `tool()` reads (an API tool key passes to the definition; any other field stays on the tool, unsent). */
const TOOL_OPTION_KEYS = ['name', 'description', 'inputSchema', 'run', 'needsApproval', 'timeoutMs'];

/** The names other libraries give a tool's timeout: `tool()` reads `timeoutMs` (milliseconds). */
const TIMEOUT_NAMES = ['timeout', 'timeoutSeconds', 'timeout_seconds', 'timeoutMillis', 'timeLimit', 'time_limit'];

/**
 * A field that misspells one `tool()` reads, or one of the API's tool definition (`cache_contro`), would be left out
 * of the definition silently (no description sent, no timeout): refused; so is a timeout under another name.
 */
function checkFieldNames(name: string, fields: object): void {
  const timeout = TIMEOUT_NAMES.find((key) => key in fields);
  if (timeout) throw new TypeError(`Tool '${name}': unknown field \`${timeout}\`. Did you mean \`timeoutMs\` (milliseconds)?`);
  // A short name (`run`) is near too many words to guess from one letter.
  const slip = misspeltField(fields, KNOWN_KEYS, nearLongName, API_KEYS);
  if (slip) throw new TypeError(`Tool '${name}': unknown field \`${slip.key}\`. Did you mean \`${slip.meant}\`?`);
}

/** Where a schema given under another name is, said beside "inputSchema is required". */
function schemaElsewhere(fields: object): string {
  const key = ['input_schema', 'schema', 'parameters'].find((other) => other in fields);
  return key ? ` (it got \`${key}\`: tool() takes the schema, zod or JSON Schema, as \`inputSchema\`)` : '';
}

/** Whether a `tools` entry can be executed by the runner. */
export function isRunnableTool(value: unknown): value is RunnableTool {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { run?: unknown }).run === 'function' &&
    typeof (value as { name?: unknown }).name === 'string'
  );
}

const API_KEYS: ReadonlySet<string> = new Set(BETA_CLIENT_TOOL_UNION_KEYS);
/** The keys a field of `tool()`'s options may be a slip of: its own and the API's (made once, not at each `tool()`). */
const KNOWN_KEYS: readonly string[] = [...TOOL_OPTION_KEYS, ...API_KEYS];
const definitions = new WeakMap<object, BetaToolUnion>();

/**
 * The API definition of a `tools` entry, as it is now. A runnable one (a tool, a toolset, a class instance with
 * state of its own) sends only the API's tool keys, as the SDK's runner does, read again when one changed (a
 * `description` set, a `cache_control` added, a `toJSON()` of live state: the SDK reads them at each request); a plain
 * definition goes as it is.
 */
export function toolDefinition(entry: AnyTool): BetaToolUnion {
  if (!isRunnableTool(entry) && !isRunnable(entry)) return entry as BetaToolUnion;
  const fields: object =
    typeof (entry as { toJSON?: unknown }).toJSON === 'function' ? (entry as unknown as { toJSON(): object }).toJSON() : entry;
  const known = definitions.get(entry);
  if (known && sameApiFields(known, fields)) return known;
  const definition = Object.fromEntries(Object.entries(fields).filter(([key]) => API_KEYS.has(key))) as BetaToolUnion;
  // The SDK's mark stays on the definition (as on the SDK runner's), so the SDK's own request tags it in `x-stainless-helper`.
  const mark = sdkHelperMark(entry);
  if (mark) (definition as unknown as Record<symbol, unknown>)[mark] = (entry as unknown as Record<symbol, unknown>)[mark];
  definitions.set(entry, definition);
  return definition;
}

/** Whether `fields` has the API keys `definition` was made of, each with the same value (an object's by reference). */
function sameApiFields(definition: object, fields: object): boolean {
  let count = 0;
  for (const key of Object.keys(fields)) {
    if (!API_KEYS.has(key)) continue;
    if ((definition as Record<string, unknown>)[key] !== (fields as Record<string, unknown>)[key]) return false;
    count++;
  }
  return count === Object.keys(definition).length;
}

/** Any entry with a `run` (a runnable toolset has no `name`). */
function isRunnable(entry: unknown): entry is object {
  return typeof entry === 'object' && entry !== null && typeof (entry as { run?: unknown }).run === 'function';
}
