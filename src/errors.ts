/** Errors of the runner's own, beside the SDK's typed errors (which reach the caller unchanged). */
import { AnthropicError } from '@anthropic-ai/sdk';
import { brandClass } from './brand.js';
import type { ValidationIssue } from './schema.js';
import { thrownText } from './described.js';

/**
 * Errors thrown before a request is sent, not the reply's: the SDK's for missing credentials
 * (`validateHeaders`) or an `apiKey` function that failed, its refusal of a long request that is not
 * streamed (a `max_tokens` that may take more than 10 minutes), its checks of a request's `timeout`
 * and `maxRetries`, and a body that cannot be written as JSON (a circular or BigInt value).
 */
const NOT_SENT =
  /^Could not resolve authentication method|^The `apiKey` function|^Streaming is required for operations that may take longer than 10 minutes|^(timeout|maxRetries) must be (an|a positive) integer$|^Converting circular structure to JSON|^Do not know how to serialize a BigInt/;

/** Errors thrown before anything was sent (an SDK thread that refuses a turn), marked where they are thrown. */
const NOT_SENT_ERRORS = new WeakSet<object>();

/** Marks `error` as thrown before the request was sent: it reaches the caller as it is, not as a reply that failed. */
export function notSent(error: unknown): unknown {
  if (typeof error === 'object' && error !== null) NOT_SENT_ERRORS.add(error);
  return error;
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
   * The SDK's status, connection and abort errors pass through, and so does its refusal to send a
   * request without credentials (nothing was sent, no reply to read). Anything else (a body that is
   * no JSON, a stream cut off) becomes a ReplyError; `complete`: the stream had the whole message
   * (`message_stop`) when it broke. (`this`, not the class's name: esbuild renames a class that
   * names itself, and stacks would read `_ReplyError`.)
   */
  static from(error: unknown, streamed: boolean, complete = false): unknown {
    if (error instanceof AnthropicError && error.constructor !== AnthropicError) return error;
    if (error instanceof Error && (NOT_SENT.test(error.message) || NOT_SENT_ERRORS.has(error))) return error;
    const detail = error instanceof Error ? error.message : String(error);
    const what = !streamed
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
