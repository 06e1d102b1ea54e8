/**
 * A history the caller changes after the loop body, while the reply still comes (a streamed reply: a
 * chat's follow-up typed as the answer streams, `runner.pushMessages` from a timer or a stream
 * listener). As in the SDK's runner: messages appended to the history the request went with come after
 * the reply and the results of its calls (once they are answered); a history that no longer begins with it drops the reply.
 */
import { extendsHistory } from './history.js';
import type { BetaMessageParam } from './types.js';

/** What the caller appended to `sent` (the history the request went with), or `undefined` when `now` no longer begins with it. */
export function appendedTo(sent: readonly BetaMessageParam[], now: readonly BetaMessageParam[]): BetaMessageParam[] | undefined {
  return extendsHistory(now, sent) ? now.slice(sent.length) : undefined;
}

/**
 * Moves `added` (the messages appended late, which the history holds before the reply while its calls are answered:
 * a stop for approval or a failure leaves the reply last, its calls to answer) to after `reply` and the user message
 * of results that answers it. Nothing moves when the history no longer holds them all before the reply (changed since).
 */
export function moveAfterReply(messages: BetaMessageParam[], reply: BetaMessageParam | undefined, added: readonly BetaMessageParam[]): void {
  const at = reply ? messages.lastIndexOf(reply) : -1;
  if (at < 0) return;
  const before = messages.slice(0, at).filter((message) => !added.includes(message));
  if (before.length + added.length !== at) return;
  const next = messages[at + 1];
  const answered = next?.role === 'user' && Array.isArray(next.content) && next.content.some((block) => block.type === 'tool_result');
  const after = at + (answered ? 2 : 1);
  messages.splice(0, messages.length, ...before, ...messages.slice(at, after), ...added, ...messages.slice(after));
}
