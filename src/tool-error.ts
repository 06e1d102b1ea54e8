import { ToolError as SdkToolError } from '@anthropic-ai/sdk/lib/tools/ToolError';
import { brandClass } from './brand.js';
import { cutSaying } from './cut.js';
import { described, errorParts, thrownLine, thrownText } from './described.js';
import type { ToolResultContent } from './types.js';

/**
 * Throw it from a tool's `run` to choose exactly what the model reads as the error result
 * (`is_error: true`): a string or content blocks.
 *
 * @example
 * ```ts
 * run: async ({ id }) => {
 *   const row = await db.find(id);
 *   if (!row) throw new ToolError(`No order ${id}. Ask the user for the order number.`);
 *   return JSON.stringify(row);
 * }
 * ```
 */
export class ToolError extends SdkToolError {
  /** What the model receives as the `tool_result` content, with `is_error: true`. */
  declare readonly content: ToolResultContent;

  // The SDK's class, so that the SDK's own runner sends its content too (an agent tool run there, say).
  constructor(content: ToolResultContent, options?: { cause?: unknown }) {
    // (Plain JavaScript: the SDK's constructor reads the content as blocks, and `new ToolError(null)` or
    // `new ToolError(404)` threw "content.map is not a function", which the model then read as the tool's error.)
    const notBlock = Array.isArray(content) ? content.findIndex((block) => typeof block !== 'object' || block === null) : -1;
    if ((typeof content !== 'string' && !Array.isArray(content)) || notBlock >= 0) {
      const what = Array.isArray(content) ? `an array holding ${described(content[notBlock])}` : described(content);
      throw new TypeError(`ToolError: content must be a string or an array of content blocks, not ${what}`);
    }
    super(content);
    if (options && 'cause' in options) this.cause = options.cause;
  }
}

/**
 * A `ToolError`, ours or the SDK's, or a subclass of either that names itself (the SDK's toolsets
 * throw `UnknownMemberError`, `ConfirmDeclinedError`, ... as ToolErrors); by name and `content` for
 * another copy of either class.
 */
export function isToolError(value: unknown): value is { content: ToolResultContent } {
  return value instanceof ToolError || value instanceof SdkToolError || (value instanceof Error && errorParts(value).name === 'ToolError' && 'content' in value);
}

/**
 * What the model reads for a thrown value: a `ToolError`'s own content, an Error as
 * `${name}: ${message}` (never the stack), anything else as `Error: ${String(value)}`.
 */
export function thrownValueToContent(thrown: unknown): ToolResultContent {
  if (isToolError(thrown)) return thrown.content;
  return thrownLine(thrown);
}

/**
 * A thrown value for the log: an Error's stack (or `${name}: ${message}`), anything else as text, its message cut to
 * {@link MAX_LOGGED} characters (an error quoting a whole response body made a log line of megabytes). Never throws.
 */
export function thrownForLog(thrown: unknown): string {
  if (!(thrown instanceof Error)) return cutSaying(thrownText(thrown), MAX_LOGGED, 'not logged');
  const { name, message, stack } = errorParts(thrown);
  if (message.length <= MAX_LOGGED) return stack || thrownText(thrown);
  // The stack opens with the name and message (V8's, Bun's): its frames are kept after the message cut short. One made
  // before the message was (a wrapper that read the stack, then added the response body to the message; Bun's, made at
  // once) opens with other words: its frames are found by their `at` lines, else the log line went without them.
  const head = `${name}: ${message}`;
  const frames = stack === undefined ? '' : stack.startsWith(head) ? stack.slice(head.length) : framesOf(stack);
  return `${name}: ${cutSaying(message, MAX_LOGGED, 'not logged')}${frames}`;
}

/** The frames of a V8-style stack (`    at fn (file:1:2)` lines), from the first; none when it has no such line. */
function framesOf(stack: string): string {
  const at = stack.search(/\n\s+at /);
  return at < 0 ? '' : stack.slice(at);
}

/** How much of a thrown value's message a log line holds. */
const MAX_LOGGED = 2000;

brandClass(ToolError, 'ToolError');
