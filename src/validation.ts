/** What a validator gives the runner: the schema sent to the API, and issues the model can act on. */

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
  /**
   * The same check in one asynchronous pass, when `validate` would run code of the user's twice (a zod schema with an
   * async refinement, which zod's Standard Schema meets in a synchronous pass first); `validate` when there is none.
   */
  validateOnce?(input: unknown): ValidationResult<T> | Promise<ValidationResult<T>>;
}

/**
 * Whose schema it is, for its errors: `Tool 'x'`, its `inputSchema`, "the input schema"; or
 * `toolRunner`, `options.output`, "options.output".
 */
export interface SchemaOwner {
  label: string;
  /** The option that takes it. */
  key: string;
  /** How an error names the schema. */
  noun: string;
}

/**
 * Dotted location in the input (`items[2].name`), or `(root)`: a number is an array index; a
 * property whose name would read as something else (`"1"`, `"a.b"`, `""`, one with a quote or a
 * space) is quoted in brackets (`["1"]`, `meta["a.b"]`).
 */
export function formatPath(segments: ReadonlyArray<PropertyKey>): string {
  let path = '';
  for (const segment of segments) {
    if (typeof segment === 'number') path += `[${segment}]`;
    else if (typeof segment === 'symbol') path += `[${segment.toString()}]`;
    else if (segment === '' || /^\d+$|[.[\]"'\s]/.test(segment)) path += `[${JSON.stringify(segment)}]`;
    else path += path ? `.${segment}` : segment;
  }
  return path || '(root)';
}

