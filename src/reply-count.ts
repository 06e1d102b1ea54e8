/**
 * A reply arrived: its `onMessage` hook is awaited, then it is counted into the run's state (its usage, the last
 * message; calls it cut off not run). A reply whose hook throws is not kept, but it was paid for: its usage counts.
 */
import { type RunContext, runSignal } from './run-context.js';
import { callRunHook } from './run-hooks.js';
import type { BetaMessage } from './types.js';
import { addUsage } from './usage.js';

/** The calls of the reply that started while it streamed (`runToolsEagerly`). */
interface StartedCalls {
  started(id: string): boolean;
}

/** The reply once its hook is done and it is counted; a promise only when the hook returns one. `elsewhere`: a fallback's. */
export function receivedReply(run: RunContext, eager: StartedCalls, reply: BetaMessage, elsewhere: boolean): BetaMessage | Promise<BetaMessage> {
  const hooked = callRunHook(run, 'onMessage', runSignal(run), reply);
  if (!hooked) return counted(run, eager, reply, elsewhere);
  return hooked.then(
    () => counted(run, eager, reply, elsewhere),
    (error: unknown) => {
      // The reply is not kept, but it was paid for: its usage counts (runner.usage, budget.maxTokens).
      run.state.usage = addUsage(run.state.usage, reply.usage);
      throw error;
    },
  );
}

function counted(run: RunContext, eager: StartedCalls, reply: BetaMessage, elsewhere: boolean): BetaMessage {
  // A complete call of a reply then cut off by max_tokens (or paused) may have started while it streamed: the model is told so.
  const dropped = run.state.count(reply, run.state.settings.runToolsEagerly ? (id) => eager.started(id) : undefined, elsewhere);
  // The model reads no result of those: calling one again is no repeat for the loop guard (it would be told to use a result it never had).
  for (const use of dropped) run.control.resultNotKept(use);
  return reply;
}
