/** Errors of the runner's own, beside the SDK's typed errors (which reach the caller unchanged). */
import { APIConnectionError, AnthropicError } from '@anthropic-ai/sdk';
import { brandClass } from './brand.js';
import type { ValidationIssue } from './schema.js';
import { thrownText, thrownMessage } from './described.js';
import { cutSaying } from './cut.js';

/** Errors thrown before anything was sent (an SDK thread that refuses a turn), marked where they are thrown. */
const NOT_SENT_ERRORS = new WeakSet<object>();

/** Marks `error` as thrown before the request was sent: it reaches the caller as it is, not as a reply that failed. */
export function notSent(error: unknown): unknown {
  if (typeof error === 'object' && error !== null) NOT_SENT_ERRORS.add(error);
  return error;
}

/**
 * Whether the request whose promise is `sent` had its response when it failed with `error` (its body was being read).
 * The SDK's `APIPromise` tells when its response came (`asResponse()`, settled by the failed request); else the error's
 * kind does: a body that is no JSON, undici's `terminated`, or (a client of another shape, which reads a stream inside its
 * `create`) the SDK's plain `AnthropicError` of a stream that broke. What failed before a response came (a middleware's
 * own error, the SDK's checks of the request) reaches the caller as it is, as from the SDK's runner.
 */
export async function hadResponse(sent: PromiseLike<unknown> | undefined, error: unknown): Promise<boolean> {
  if (READ_ERRORS.has(error as object)) return true;
  const asResponse = (sent as { asResponse?: () => Promise<unknown> } | undefined)?.asResponse;
  const bodyRead = error instanceof SyntaxError || isTerminated(error) || isConnectionLost(error);
  // An SDK thread's promise gives its response once the body is read too: a body that failed there is told by its kind.
  if (typeof asResponse === 'function') return bodyRead || asResponse.call(sent).then(() => true, () => false);
  // (None made: `create` threw at once, as the SDK refuses a long request that is not streamed.)
  return bodyRead || (sent !== undefined && error instanceof AnthropicError && error.constructor === AnthropicError);
}

/** undici's error of a connection that closed while a body was read. */
function isTerminated(error: unknown): boolean {
  return error instanceof TypeError && error.message === 'terminated';
}

/**
 * The SDK's error of a connection lost while a reply was read: from 1.17 on, the SDK says so with an `APIConnectionError`
 * ("Connection error.") whose cause is undici's `terminated` (1.14 let the `TypeError`, or a plain `AnthropicError`, through).
 */
function isConnectionLost(error: unknown): error is APIConnectionError {
  return error instanceof APIConnectionError && isTerminated((error as { cause?: unknown }).cause);
}

const READ_ERRORS = new WeakSet<object>();

/** How much of the failure a `ReplyError`'s message quotes. */
const MAX_DETAIL = 500;

/** Marks `error` as a reply that could not be read (a body of another shape than a message). */
export function unreadable(error: Error): Error {
  READ_ERRORS.add(error);
  return error;
}

/** Whether `error` is one `unreadable` marked. */
export function isUnreadable(error: unknown): error is Error {
  return READ_ERRORS.has(error as object);
}

/**
 * A reply that could not be read: a stream that broke mid-reply, or a body that is not valid JSON.
 * Nothing of it was added to the history: iterating again sends the same request again.
 */
export class ReplyError extends AnthropicError {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'ReplyError';
  }

  /**
   * The SDK's status, connection and abort errors pass through, and so does what was thrown before a reply came to be
   * read (`read` false: a stream that never connected, or no `hadResponse`): nothing was sent, or nothing came.
   * Anything else (a body that is no JSON, a stream cut off) becomes a ReplyError; `complete`: the stream had the whole
   * message (`message_stop`) when it broke. (`this`, not the class's name: esbuild renames a class that names itself,
   * and stacks would read `_ReplyError`.)
   */
  static from(error: unknown, streamed: boolean, read: boolean, complete = false): unknown {
    // The SDK's error of a connection that failed once the reply was being read (from 1.17 on, whatever the runtime's words:
    // undici's `terminated`, Deno's, a browser's): the reply broke. (Its timeout, a class of its own, stays as it is.)
    const lost = read && error instanceof APIConnectionError && error.constructor === APIConnectionError;
    if (error instanceof AnthropicError && error.constructor !== AnthropicError && !lost) return error;
    if (!read || NOT_SENT_ERRORS.has(error as object)) return error;
    // (The connection lost: undici's words, as before the SDK's `APIConnectionError` wrapped them.)
    const cause = lost ? (error.cause as { message?: unknown } | undefined)?.message : undefined;
    const said = typeof cause === 'string' ? cause : thrownMessage(error);
    // Cut short: the SDK's error for a tool input that is no JSON quotes the input whole (300 kB of it put what to do,
    // below, out of every log line's reach). The `cause` keeps it whole.
    const detail = cutSaying(said, MAX_DETAIL, 'see the cause');
    // A stream whose events made no message the runner reads (`unreadable`) did not break: its reply could not be read.
    const what = !streamed || READ_ERRORS.has(error as object)
      ? "The API's reply could not be read"
      : `The reply stream broke ${complete ? 'after the message was complete, before the stream ended' : 'before the message was complete'}`;
    return new this(
      `${what} (${detail}). Nothing of it was added to the history; iterate again to send the request again.`,
      { cause: error },
    );
  }
}

/**
 * A tool's validator failed for a reason of its own (it threw instead of answering, or the runtime
 * refused it, as Cloudflare Workers refuse code generated from strings). The model's input is not to
 * blame, so the model is not told it was invalid: the run stops with this error; `cause` is what the
 * validator threw. Nothing of the call was added to the history.
 */
export class ValidatorError extends Error {
  /** The tool whose validator failed. */
  readonly tool: string;

  constructor(tool: string, cause: unknown) {
    super(`The input validator of tool '${tool}' failed: ${thrownText(cause)}`, { cause });
    this.name = 'ValidatorError';
    this.tool = tool;
  }
}

/**
 * The run's final reply gave no valid output for `options.output`: text that is not JSON or does
 * not match the schema after the repair turns (`outputRepairs`), a refusal, or a reply cut off by
 * `max_tokens`. The reply stays the last message of the history; iterating again (or `await runner`)
 * asks the model once more, with the issues.
 */
export class OutputError extends AnthropicError {
  /** The final reply's text. */
  readonly text: string;
  /** What is wrong with it, field by field (`(root)` for the whole text); empty for a refusal or a cut-off reply that parses. */
  readonly issues: ValidationIssue[];
  /** The final reply's `stop_reason`: `'end_turn'` for invalid text, `'refusal'`, `'max_tokens'`, … */
  readonly stopReason: string | null;

  constructor(message: string, details: { text: string; issues: ValidationIssue[]; stopReason: string | null }) {
    super(message);
    this.name = 'OutputError';
    this.text = details.text;
    this.issues = details.issues;
    this.stopReason = details.stopReason;
  }
}

brandClass(ReplyError, 'ReplyError');
brandClass(ValidatorError, 'ValidatorError');
brandClass(OutputError, 'OutputError');
