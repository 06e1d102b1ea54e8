/**
 * What a thread's history holds past a run's (over an SDK thread): what the program, or another run, added there for
 * the run to take in, as the SDK's runner, whose history is the thread's, has it (sdk-thread.ts).
 */
import { answeredIds, copyHistory, hasEmptyContent, sameKeptMessage, toolUsesOf } from './history.js';
import type { BetaMessageParam } from './types.js';

/** The run's history, and whether calls it ends with may still run (the loop body is done with them, or they wait for approval). */
export interface RunHistory {
  messages: readonly BetaMessageParam[];
  callsOpen: boolean;
}
/**
 * What `held` (a thread's history) holds past the run's: past all of it, or past all but the results that end it, which
 * the thread gets with the next turn (the SDK's runner puts a reply's results right after it, ahead of what was added).
 * None when `held` does not go on from it. Past calls that may still run, only what answers them (another run over the
 * thread, or the program itself, sent results: the SDK's runner then runs none of them); anything else goes after their
 * results, once the run has them (a run stopped for approval leaves it in the thread meanwhile).
 */
export function additionsTo(held: readonly BetaMessageParam[], { messages, callsOpen }: RunHistory, ownReplyAt: number | undefined): BetaMessageParam[] {
  const last = messages.at(-1);
  if (goesOn(held, messages)) {
    const added = withoutUnkeptReply(held.slice(messages.length), messages.length === ownReplyAt);
    const waits = callsOpen && toolUsesOf(last).length > 0;
    return !waits || holdsResults(added) ? copyHistory(added) : [];
  }
  // Past the results the run holds for the reply before them, which the thread gets with the next turn.
  const results = messages.length - 1;
  if (answeredIds(last).size === 0 || toolUsesOf(messages[results - 1]).length === 0 || !goesOn(held, messages, results)) return [];
  const added = held.slice(results);
  // Results the thread holds already are the run's, not an addition.
  return answeredIds(added[0]).size > 0 ? [] : copyHistory(added);
}

/**
 * Where the run's own history ends in `held` when `held` is that history with, after each reply whose calls it leaves
 * unanswered before other messages (a reply cut off by `max_tokens`, then a note), the results another run over the
 * thread answered them with: the index in `held` just past the run's last message (the thread may hold more).
 * Undefined when `held` is not that.
 */
export function answeredAhead(held: readonly BetaMessageParam[], messages: readonly BetaMessageParam[]): number | undefined {
  if (held.length <= messages.length) return undefined;
  let at = 0;
  let answered = false;
  for (let i = 0; i < messages.length; i++, at++) {
    if (at < held.length && sameKeptMessage(messages[i]!, held[at]!)) continue;
    const calls = toolUsesOf(messages[i - 1]);
    const results = answeredIds(held[at]);
    if (calls.length === 0 || answeredIds(messages[i]).size > 0 || !calls.every((use) => results.has(use.id))) return undefined;
    at++;
    answered = true;
    if (at >= held.length || !sameKeptMessage(messages[i]!, held[at]!)) return undefined;
  }
  return answered ? at : undefined;
}

/**
 * Where the partial reply (`partial`: a stream that broke, which the thread kept in part) stood, when the run's history
 * ends with it and `held` (the thread's) holds, from there on, what another run over the thread got instead: it sent
 * the turn again, and the thread dropped the partial reply. Undefined otherwise.
 */
export function replacedPartial(held: readonly BetaMessageParam[], messages: readonly BetaMessageParam[], partial: { at: number; message: BetaMessageParam }): number | undefined {
  const { at, message } = partial;
  if (messages.length !== at + 1 || !sameKeptMessage(messages[at]!, message) || !goesOn(held, messages, at)) return undefined;
  return sameKeptMessage(held[at]!, message) ? undefined : at;
}

/**
 * `added` without the reply it starts with when that is the run's own (`own`: where the run's last turn put its reply)
 * and the run did not keep it: alone (a stream that broke, which the thread keeps in part; a reply the loop body left),
 * or empty, which cannot be sent. A reply something follows stays: the program, or another run, went on from it.
 */
function withoutUnkeptReply(added: BetaMessageParam[], own: boolean): BetaMessageParam[] {
  const first = added[0];
  if (first?.role !== 'assistant') return added;
  return hasEmptyContent(first) || (own && added.length === 1) ? added.slice(1) : added;
}

/** Whether `held` goes on past `messages`, which ends with calls, with nothing that answers them. */
export function addedWhileCallsWait(held: readonly BetaMessageParam[], messages: readonly BetaMessageParam[]): boolean {
  return toolUsesOf(messages.at(-1)).length > 0 && goesOn(held, messages) && !holdsResults(held, messages.length);
}

/** Whether a message of `messages` from `from` on holds tool results. */
function holdsResults(messages: readonly BetaMessageParam[], from = 0): boolean {
  for (let i = from; i < messages.length; i++) if (answeredIds(messages[i]).size > 0) return true;
  return false;
}

/**
 * Whether `held` (a thread's history) is the first `length` messages of `messages` (the run's), then more. (Lengths
 * first: a thread that holds no more than the run, as on every turn of a run, costs no comparison.)
 */
export function goesOn(held: readonly BetaMessageParam[], messages: readonly BetaMessageParam[], length = messages.length): boolean {
  if (held.length <= length) return false;
  for (let i = 0; i < length; i++) if (!sameKeptMessage(messages[i]!, held[i]!)) return false;
  return true;
}
