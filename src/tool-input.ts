/**
 * A tool call's input, validated as the tool says (its `validateInput`, or its `parse` from the SDK's
 * helpers): the value the tool gets, or what the model reads about what is wrong.
 */
import { isThenable } from './completion.js';
import { ValidatorError } from './errors.js';
import { SchemaThrew, type ValidationResult, formatIssues, thrownIssues } from './schema.js';
import type { RunnableTool } from './surface.js';
import { isToolError } from './tool-error.js';
import type { ToolResultContent } from './types.js';
import { quotingTypeError, thrownMessage } from './described.js';

/** `message`: what the model reads (a `ToolError` the parser threw says it itself). */
export type Validated = { ok: true; value: unknown } | { ok: false; message: ToolResultContent };

/**
 * The validated input; a promise only when the tool's validator is asynchronous. A validator that
 * throws instead of answering failed on its own account: a ValidatorError, not the model's fault.
 */
export function validateInput(tool: RunnableTool, input: unknown): Validated | Promise<Validated> {
  if (tool.validateInput) {
    let result: ReturnType<NonNullable<RunnableTool['validateInput']>>;
    try {
      result = tool.validateInput(input);
    } catch (thrown) {
      return failedValidation(tool, thrown);
    }
    if (!isThenable(result)) return validated(tool, result);
    return Promise.resolve(result).then(
      (settled) => validated(tool, settled),
      (thrown: unknown) => failedValidation(tool, thrown),
    );
  }
  if (!tool.parse) return { ok: true, value: input };
  try {
    return { ok: true, value: tool.parse(input) };
  } catch (thrown) {
    // The SDK's helpers throw for invalid input; a runtime that refuses generated code is the parser's own failure.
    if (thrown instanceof EvalError) throw new ValidatorError(tool.name, thrown);
    return notValidated(tool, thrown);
  }
}

function validated(tool: RunnableTool, result: ValidationResult<unknown>): Validated {
  // (`{ ok: false }` without its issues, or with issues of no `{ path, message }` (`[{ message }]`, `['a is required']`),
  // failed with "Cannot read properties of undefined (reading 'length')", a bare TypeError naming no tool.)
  if (typeof result !== 'object' || result === null || typeof result.ok !== 'boolean' || (!result.ok && !(Array.isArray(result.issues) && result.issues.every(isListedIssue)))) {
    // Quoted short, a BigInt or a cycle shown (a zod `safeParse` result, `{ success, data }`, held the whole input, or failed
    // with JSON's own "Do not know how to serialize a BigInt", a bare TypeError instead of this ValidatorError).
    const listed = result?.ok === false && Array.isArray(result.issues);
    const said = (shown: string) => `validateInput returned ${shown} instead of { ok, value } or { ok, issues }${listed ? ' (each issue { path, message }, both strings)' : ''}`;
    // The value may hold the call's input (a safeParse result's `data`), an issue may quote it: spans and the inspector show it only when they capture contents.
    throw new ValidatorError(tool.name, quotingTypeError(said, result));
  }
  return result.ok ? result : { ok: false, message: formatIssues(tool.name, result.issues) };
}

/** An issue as `validateInput` answers it (`ValidationIssue`): the path and the message, both strings. */
function isListedIssue(issue: unknown): boolean {
  const { path, message } = (issue ?? {}) as { path?: unknown; message?: unknown };
  return typeof path === 'string' && typeof message === 'string';
}

/** A validator that threw: the model is told what the schema's own code threw (a refinement); else the validator failed. */
function failedValidation(tool: RunnableTool, thrown: unknown): Validated {
  if (thrown instanceof SchemaThrew) return notValidated(tool, thrown.thrown);
  throw new ValidatorError(tool.name, thrown);
}

function notValidated(tool: RunnableTool, thrown: unknown): Validated {
  // The parser's own answer to the model, word for word (as the SDK's runner sends it).
  if (isToolError(thrown)) return { ok: false, message: thrown.content };
  // A parser's error that holds its issues (zod's, from `betaZodTool`): one line per problem, as for `tool()`.
  const issues = thrownIssues(thrown);
  if (issues) return { ok: false, message: formatIssues(tool.name, issues) };
  const reason = thrownMessage(thrown).trim() || 'its schema failed, and said nothing of why';
  return { ok: false, message: `Invalid input for tool '${tool.name}': ${reason}` };
}
