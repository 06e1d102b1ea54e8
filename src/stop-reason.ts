/** Why a run stopped (`runner.stoppedBy`): the names SPEC §9.2 fixes, and how a failure maps to one. */
import { APIUserAbortError } from '@anthropic-ai/sdk';

/**
 * Why a run ended, once it has:
 * - `'model'`: the model asked for no tool (its reply is the answer);
 * - `'max_iterations'`: `max_iterations` requests were sent;
 * - `'approval'`: calls wait for `approve(id)` / `deny(id)` (`runner.pendingApprovals`);
 * - `'budget'`: `options.budget` ran out (tokens, or the model called past a tool-call limit again);
 * - `'loop_guard'`: the model repeated a call a second time past `options.loopGuard.maxRepeats`;
 * - `'abort'`: the run's signal aborted;
 * - `'break'`: the loop body left the loop;
 * - `'error'`: the run failed (the error reaches the iteration and `await runner`).
 */
export type StoppedBy = 'model' | 'max_iterations' | 'approval' | 'budget' | 'loop_guard' | 'abort' | 'break' | 'error';

/** The stops a limit makes: after raising it, iterating again goes on. */
export type LimitStop = 'max_iterations' | 'budget' | 'loop_guard';

/** The limit stops, by name (a snapshot's are checked against them). */
export const LIMIT_STOPS: Readonly<Record<LimitStop, true>> = { max_iterations: true, budget: true, loop_guard: true };

export function isLimit(stoppedBy: StoppedBy | undefined): stoppedBy is LimitStop {
  return stoppedBy !== undefined && Object.hasOwn(LIMIT_STOPS, stoppedBy);
}

/** The stop reasons of a reply that is no finished answer (cut off, or refused), and what happened, in words. */
const UNFINISHED_REPLIES: Readonly<Record<string, string>> = {
  max_tokens: 'was cut off at max_tokens',
  model_context_window_exceeded: "was cut off at the model's context window",
  refusal: 'was refused (the model refused)',
};

/**
 * Why a reply with this stop reason is no finished answer, in words (`was cut off at max_tokens`),
 * or `undefined` for a finished one: its text is not a whole answer, output or summary.
 */
export function unfinishedReply(stopReason: string | null | undefined): string | undefined {
  return stopReason ? UNFINISHED_REPLIES[stopReason] : undefined;
}

/**
 * The mark of an error that stands for a stop asked for, not a failure, though nothing in its name says so: DBOS's
 * error for a durable run cancelled (`DBOS.cancelWorkflow`), and the failed step of a tool it stopped. Registered:
 * the mark may be set by the other build's copy of this module.
 */
const CANCELLATION = Symbol.for('tool-runner.cancellation.v1');

/** Marks `error` as a cancellation (not enumerable: a log line or a copy shows the error as it was). */
export function markCancellation<E extends object>(error: E): E {
  if (!Object.isFrozen(error)) Object.defineProperty(error, CANCELLATION, { value: true });
  return error;
}

/**
 * An abort, which is a cancellation rather than a failure: the SDK's abort error (by its name, so that
 * code without the SDK's classes can ask), a fetch `AbortError`, a request the platform canceled, or an
 * error marked as one (`markCancellation`: a durable run cancelled).
 */
export function isCancellation(error: unknown): boolean {
  if (error instanceof APIUserAbortError) return true;
  if (typeof error !== 'object' || error === null) return false;
  if ((error as { [CANCELLATION]?: unknown })[CANCELLATION] === true) return true;
  const { name, message } = error as { name?: unknown; message?: unknown };
  // `name`, which the SDK sets on its errors and a bundler does not rename (a class's own name it may).
  return name === 'AbortError' || name === 'APIUserAbortError' || (message !== undefined && String(message).includes('FetchRequestCanceledException'));
}

/** A run that failed with `error`: aborted (by its signal, or the SDK's abort error), or failed. */
export function stoppedByFailure(error: unknown, signal: AbortSignal | undefined): 'abort' | 'error' {
  if (error instanceof APIUserAbortError || (error as { cause?: unknown } | null)?.cause instanceof APIUserAbortError) return 'abort';
  return signal?.aborted ? 'abort' : 'error';
}

/** What to do after a reply with this stop reason (SPEC §3). */
export function nextStepFor(stopReason: string | null): 'run_tools' | 'resume' | 'stop' {
  switch (stopReason) {
    case 'tool_use':
      return 'run_tools';
    case 'pause_turn':
    case 'compaction':
      return 'resume';
    default:
      return 'stop';
  }
}
