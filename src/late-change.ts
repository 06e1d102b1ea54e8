/**
 * A history the caller changes after the loop body, while the reply still comes (a streamed reply: a
 * chat's follow-up typed as the answer streams, `runner.pushMessages` from a timer or a stream
 * listener). As in the SDK's runner: messages appended to the history the request went with come after
 * the reply and the results of its calls (once they are answered); a history that no longer begins with it drops the reply.
 */
import { extendsHistory, insertToolResults } from './history.js';
import type { BetaMessageParam, ToolResultMessage } from './types.js';

/** What the caller appended to `sent` (the history the request went with), or `undefined` when `now` no longer begins with it. */
export function appendedTo(sent: readonly BetaMessageParam[], now: readonly BetaMessageParam[]): BetaMessageParam[] | undefined {
  return extendsHistory(now, sent) ? now.slice(sent.length) : undefined;
}

/** Where the messages appended late are: `count` of them from `at`, right before the reply (at `at + count`, once placed). */
export interface LateAdditions {
  at: number;
  count: number;
  reply?: BetaMessageParam | undefined;
}

/**
 * Puts `results` (the answers to the reply's calls) right after the reply, and the messages appended late after them,
 * as the SDK's runner does: the history held them before the reply while its calls were unanswered. When the history
 * no longer has the reply where it was (the caller changed it since), the results go after the last reply as usual.
 */
export function insertResultsAfterLate(messages: BetaMessageParam[], results: BetaMessageParam, late: LateAdditions | undefined): void {
  const reply = late ? messages[late.at + late.count] : undefined;
  if (!late || reply === undefined || reply !== late.reply || messages.slice(late.at + late.count + 1).some(isToolResults)) {
    insertToolResults(messages, results as ToolResultMessage);
    return;
  }
  const added = messages.slice(late.at, late.at + late.count);
  messages.splice(late.at, messages.length - late.at, reply, results, ...added, ...messages.slice(late.at + late.count + 1));
}

/** Moves the messages appended late to after the reply, which asks for no tools (a final answer, a paused turn). */
export function placeAfterReply(messages: BetaMessageParam[], late: LateAdditions): void {
  if (late.reply === undefined || messages[late.at + late.count] !== late.reply) return;
  const added = messages.splice(late.at, late.count);
  messages.splice(late.at + 1, 0, ...added);
}

function isToolResults(message: BetaMessageParam): boolean {
  return message.role === 'user' && Array.isArray(message.content) && message.content.some((block) => block.type === 'tool_result');
}

/** `messages` with the messages appended late, still before the reply, after it: the history as the server's thread holds it, the reply last but them. */
export function lateAfterReply(messages: readonly BetaMessageParam[], late: { at: number; count: number }): BetaMessageParam[] {
  const end = late.at + late.count;
  return [...messages.slice(0, late.at), messages[end]!, ...messages.slice(late.at, end), ...messages.slice(end + 1)];
}
