/**
 * Over an SDK thread, the answers of the calls runs decided not to run, kept beside their replies in the thread's
 * history, for a later run over the thread (or a fork of it) to answer them so too (sdk-thread.ts).
 */
import { answeredIds, toolUsesOf } from './history.js';
import type { BetaMessageParam } from './types.js';

/**
 * The calls runs over a thread decided not to run, by id, with the error that answers them: cut off by `max_tokens`
 * (one `runToolsEagerly` had started: its result was not kept), in a paused turn, past a limit. The thread keeps such
 * a reply's calls unanswered; a later run over it, or over a fork of it, answers them so too, and never runs them.
 * Kept by the reply's `content` in the thread's history, which the thread's forks share.
 */
const notRunBeside = new WeakMap<object, Map<string, string>>();

/** Keeps, beside each reply of `held` (a thread's history) with calls in `notRun`, their answers. */
export function keepNotRun(held: readonly BetaMessageParam[], notRun: ReadonlyMap<string, string>): void {
  for (const message of held) {
    const { content } = message;
    if (message.role !== 'assistant' || !Array.isArray(content)) continue;
    for (const { id } of toolUsesOf(message)) {
      const text = notRun.get(id);
      if (text === undefined) continue;
      const kept = notRunBeside.get(content) ?? new Map<string, string>();
      kept.set(id, text);
      notRunBeside.set(content, kept);
    }
  }
}

/** The answers kept beside the replies of `held` (`keepNotRun`) for calls `held` leaves unanswered; none when there are none. */
export function notRunIn(held: readonly BetaMessageParam[]): ReadonlyMap<string, string> | undefined {
  let all: Map<string, string> | undefined;
  for (const { content } of held) {
    const kept = Array.isArray(content) ? notRunBeside.get(content) : undefined;
    if (kept) for (const [id, text] of kept) (all ??= new Map()).set(id, text);
  }
  if (all) for (const message of held) for (const id of answeredIds(message)) all.delete(id);
  return all;
}
