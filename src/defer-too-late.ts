/** What `deferToolCall()` says about a call it cannot hold: one that has started. */
import type { BetaToolUseBlock } from './types.js';

/**
 * A call that has started is not held (as in the SDK's runner); said, since holding it was meant to keep its effect (a
 * file deleted) from happening. Without `stream: true` every call has started by then: `runToolsEagerly` starts a
 * reply's calls before the loop body is given it, so a hold asked for in the body never takes.
 */
export function deferTooLate(toolUse: BetaToolUseBlock | string, streaming: boolean): string {
  const call = typeof toolUse === 'string' ? `the call ${toolUse}` : `the call to '${toolUse.name}' (${toolUse.id})`;
  const why = streaming
    ? "a call starts once the model has moved on from it (the next block, or the end of the reply). Hold it from the stream's 'contentBlock' listener, as its block completes."
    : "without stream: true, runToolsEagerly starts a reply's calls before the loop body is given the reply. To hold a call, set stream: true and call deferToolCall() from the stream's 'contentBlock' listener, or leave runToolsEagerly off: the calls then start only once the loop body is done with the reply.";
  return `deferToolCall(): ${call} has started already, so it is not held: ${why}`;
}
