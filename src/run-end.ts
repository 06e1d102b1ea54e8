/** How a run ends, in words and outcomes the runner gives: a reply that failed, a stop before any reply, a change after the end. */
import { APIUserAbortError } from '@anthropic-ai/sdk';
import type { StoppedBy } from './stop-reason.js';
import type { BetaMessage } from './types.js';

export const AWAITED_IN_BODY =
  'The runner was awaited (or runUntilDone() called) inside its own loop body: it settles only once the loop ends, which waits for this body, so an await here never returns. Use runner.generateToolResponse() for this turn, or await the runner after the loop.';

/**
 * How a turn's reply failed, once it settled; none when it arrived, or when the runner aborted it
 * (a `break`). Aborted by the run's signal, it failed: the run rejects with the abort error.
 */
export async function replyFailure(message: Promise<BetaMessage>, signal: AbortSignal | undefined): Promise<{ error: unknown } | undefined> {
  try {
    await message;
    return undefined;
  } catch (error) {
    const aborted = error instanceof APIUserAbortError || (error as { cause?: unknown }).cause instanceof APIUserAbortError;
    return aborted && !signal?.aborted ? undefined : { error };
  }
}

/** Why a run that stopped before any reply did, and how to go on: a limit a failed request used up, say. */
export function noReplyReason(stoppedBy: StoppedBy | undefined): string {
  if (stoppedBy === 'max_iterations') return ': max_iterations was reached before any reply (a failed request counts); raise it with setMessagesParams and iterate again';
  if (stoppedBy === 'budget') return ': the budget was reached before any reply was kept; resume with a larger budget to go on';
  if (stoppedBy === 'approval') return ': it stopped for approval before any reply (the history ends with calls that need it); decide runner.pendingApprovals and await again';
  if (stoppedBy === 'break') return ': the loop body left the loop (break) before any reply was whole (a stream it did not read to its end is not kept); iterate again, or read the stream (await stream.finalMessage()) before leaving';
  return '';
}

/** A history or params set once the run ended for good (on the model's answer, or a `break`): nothing sends them. */
export function changedAfterEndText(stoppedBy: StoppedBy | undefined): string {
  return `The run has ended (stoppedBy '${stoppedBy}'): the messages and params set now are not sent, and awaiting the runner gives its last reply again. To go on, resume it: resumeToolRunner(client, runner.toJSON(), { tools }) sends them.`;
}
