/** Errors of the runner's own, beside the SDK's typed errors (which reach the caller unchanged). */
import { AnthropicError } from '@anthropic-ai/sdk';

/**
 * A reply that could not be read: a stream that broke mid-reply, or a body that is not valid JSON.
 * Nothing of it was added to the history: iterating again sends the same request again.
 */
export class ReplyError extends AnthropicError {
  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
    this.name = 'ReplyError';
  }

  /** The SDK's status, connection and abort errors pass through; anything else becomes a ReplyError. */
  static from(error: unknown, streamed: boolean): unknown {
    if (error instanceof AnthropicError && error.constructor !== AnthropicError) return error;
    const detail = error instanceof Error ? error.message : String(error);
    const what = streamed ? 'The reply stream broke before the message was complete' : "The API's reply could not be read";
    return new ReplyError(
      `${what} (${detail}). Nothing of it was added to the history; iterate again to send the request again.`,
      { cause: error },
    );
  }
}
