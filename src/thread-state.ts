/**
 * What a run over an SDK thread uses of the thread's `_state` (the SDK's `ThreadState`), where the thread's public
 * methods do not reach: its threading, a fork for a compaction, a history or fields set anew, the check of a turn, and
 * whether its last reply is a partial one.
 */
import type { BetaMessageParam } from './types.js';

/** The parts of the SDK's `ThreadState` the run uses (each checked before use: another version may lack it). */
export interface ThreadStateLike {
  readonly threading?: boolean;
  fork?(fields?: Record<string, unknown>): unknown;
  stopThreading?(): void;
  setMessages?(messages: BetaMessageParam[]): void;
  setParams?(params: Record<string, unknown>): void;
  checkNextTurn?(fields: Record<string, unknown>): void;
}

export function stateOf(thread: object): ThreadStateLike | undefined {
  return (thread as { _state?: ThreadStateLike })._state;
}

/** The key, on a client over a thread, of the thread's own request headers as they are now (`thread.update({}, { headers })`). */
export const THREAD_HEADERS = Symbol('tool-runner.threadHeaders');

/**
 * The headers of a run's requests over a thread when the run gives none of its own: the thread's, as the SDK's runner
 * sends them (the run's helper header replaces the thread's `headers` option in the thread's request); none off a thread.
 */
export function threadHeadersOf(client: object): unknown {
  return (client as { [THREAD_HEADERS]?: () => unknown })[THREAD_HEADERS]?.();
}

/** The thread's own request headers (its `_state.options.headers`). */
export function ownHeadersOf(thread: object): unknown {
  return (stateOf(thread) as { options?: { headers?: unknown } } | undefined)?.options?.headers;
}

/**
 * Whether the thread's history ends with a reply whose stream broke before `message_stop`, which the thread keeps in
 * part and marks only in its own state: its next turn drops that reply and sends the turn again. Told by a copy of the
 * state (`fork`) that starts a turn, then is thrown away (at the `info` log level, the thread logs that it re-sends).
 */
export function endsWithPartialReply(thread: object, history: readonly BetaMessageParam[]): boolean {
  if (history.at(-1)?.role !== 'assistant') return false;
  const state = stateOf(thread);
  if (typeof state?.fork !== 'function') return false;
  try {
    const copy = state.fork() as { startTurn?: (messages: BetaMessageParam[], fields: Record<string, unknown>) => unknown; messages?: unknown };
    if (typeof copy.startTurn !== 'function') return false;
    copy.startTurn([], {});
    return Array.isArray(copy.messages) && copy.messages.length < history.length;
  } catch {
    // A state of another shape: taken as it reads.
    return false;
  }
}
