/**
 * A history the caller changes after the loop body, while the reply still comes (a streamed reply: a
 * chat's follow-up typed as the answer streams, `runner.pushMessages` from a timer or a stream
 * listener). As in the SDK's runner: messages appended to the history the request went with come after
 * the reply and the results of its calls (once they are answered); a history that no longer begins with it drops the reply.
 */
import { answeredIds, extendsHistory, insertToolResults, toolUsesOf } from './history.js';
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
 * no longer has the reply where it was (the caller changed it since), the results go after the message that holds the calls.
 */
export function insertResultsAfterLate(messages: BetaMessageParam[], results: BetaMessageParam, late: LateAdditions | undefined): void {
  const reply = late ? messages[late.at + late.count] : undefined;
  if (!late || reply === undefined || reply !== late.reply || messages.slice(late.at + late.count + 1).some(isToolResults)) {
    insertAfterCalls(messages, results as ToolResultMessage);
    return;
  }
  const added = messages.slice(late.at, late.at + late.count);
  messages.splice(late.at, messages.length - late.at, reply, results, ...added, ...messages.slice(late.at + late.count + 1));
}

/**
 * Messages appended while the calls of the history's last message run (`calls`: after the loop body, or answered before a
 * request, as after a stop for approval) wait before it, as those appended while a reply streamed, and go after its results
 * once they are in. Left after it, they put its calls in the middle of the history: a snapshot taken meanwhile had the
 * resumed run answer them as never run, though they ran (or still ran, and run again there, as any call running does).
 * Returns where they are now (`late` as it was when nothing was appended).
 */
export function holdBeforeCalls(messages: BetaMessageParam[], before: readonly BetaMessageParam[], calls: BetaMessageParam, late: LateAdditions | undefined): LateAdditions | undefined {
  const added = before.at(-1) === calls ? appendedTo(before, messages) : undefined;
  // (Results the caller appended answer the calls themselves: they stay right after them, and theirs go nowhere.)
  if (!added || added.length === 0 || answersACallOf(added[0], calls)) return late;
  messages.splice(before.length - 1, messages.length, ...added, calls);
  const at = late?.reply === calls ? late.at : before.length - 1;
  return { at, count: messages.length - 1 - at, reply: calls };
}

/**
 * A history appended to outside the run while messages appended late wait before a reply whose calls are unanswered (a
 * stop for approval, a failure): it goes on past the reply (calls still waiting are answered as not run), so they go right
 * after it (its calls' answers before them), in the order they were appended. Left before it, they went to the model
 * ahead of the reply they followed, joined to the message before. Returns where they are now (`undefined`: not late).
 */
export function lateWentOnPast(messages: BetaMessageParam[], before: readonly BetaMessageParam[], late: LateAdditions | undefined): LateAdditions | undefined {
  if (!late?.reply || late.count === 0 || before[late.at + late.count] !== late.reply || toolUsesOf(late.reply).length === 0) return late;
  const added = appendedTo(before, messages);
  if (!added || added.length === 0) return late;
  const moved = messages.splice(late.at, late.count);
  // (Results the caller appended for the reply's calls stay right after it: the messages go after them.)
  const answers = answersACallOf(added[0], late.reply);
  messages.splice(late.at + (answers ? 2 : 1), 0, ...moved);
  return undefined;
}

/**
 * A snapshot taken while the calls of `calls` run, of a history the run does not reorder (over an SDK thread, whose
 * messages are the program's): messages appended after it wait before it in the snapshot, as `holdBeforeCalls` keeps
 * them off one, so the resumed run answers its calls (running again one still running) and places them after the
 * results. Left after it, the resumed run answered the calls as never run, though they ran. `messages`: the snapshot's,
 * in the order of `history`. Returns where they are, or `undefined` when nothing was appended (or it answers the calls).
 */
export function holdInSnapshot(messages: BetaMessageParam[], history: readonly BetaMessageParam[], calls: BetaMessageParam): LateAdditions | undefined {
  const at = history.indexOf(calls);
  if (at < 0 || at === history.length - 1 || messages.length !== history.length) return undefined;
  if (answersACallOf(history[at + 1], calls)) return undefined;
  messages.push(...messages.splice(at, 1));
  return { at, count: messages.length - 1 - at };
}

/** Moves the messages appended late to after the reply, which asks for no tools (a final answer, a paused turn). */
export function placeAfterReply(messages: BetaMessageParam[], late: LateAdditions): void {
  if (late.reply === undefined || messages[late.at + late.count] !== late.reply) return;
  const added = messages.splice(late.at, late.count);
  messages.splice(late.at + 1, 0, ...added);
}

/**
 * The results go right after the message that holds their calls (the last one, which the runner answers), wherever the
 * caller's history has it now. A history set while the calls ran (`setMessagesParams` from a timer, a chat's new
 * question) may hold that message no longer, or answer its calls itself: the results then go nowhere (the reply went
 * with them, as a history that no longer begins with the one sent drops a reply still coming). Put after the last
 * assistant message as before, they answered calls it does not make, and the API refused every later request.
 */
function insertAfterCalls(messages: BetaMessageParam[], results: ToolResultMessage): void {
  const first = results.content.find((block) => block.type === 'tool_result')?.tool_use_id;
  if (first === undefined) return insertToolResults(messages, results);
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!;
    if (message.role !== 'assistant' || !toolUsesOf(message).some((use) => use.id === first)) continue;
    if (!answeredIds(messages[i + 1]).has(first)) messages.splice(i + 1, 0, results);
    return;
  }
}

/** Whether `message` answers a call of `calls` (results the caller appended for them). */
function answersACallOf(message: BetaMessageParam | undefined, calls: BetaMessageParam): boolean {
  const answered = answeredIds(message);
  return answered.size > 0 && toolUsesOf(calls).some(({ id }) => answered.has(id));
}

function isToolResults(message: BetaMessageParam): boolean {
  return message.role === 'user' && Array.isArray(message.content) && message.content.some((block) => block.type === 'tool_result');
}

/** `messages` with the messages appended late, still before the reply, after it: the history as the server's thread holds it, the reply last but them. */
export function lateAfterReply(messages: readonly BetaMessageParam[], late: { at: number; count: number }): BetaMessageParam[] {
  const end = late.at + late.count;
  return [...messages.slice(0, late.at), messages[end]!, ...messages.slice(late.at, end), ...messages.slice(end + 1)];
}
