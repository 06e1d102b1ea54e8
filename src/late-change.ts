/**
 * A history the caller changes after the loop body, while the reply still comes (a streamed reply: a
 * chat's follow-up typed as the answer streams, `runner.pushMessages` from a timer or a stream
 * listener). As in the SDK's runner: messages appended to the history the request went with come after
 * the reply and the results of its calls; a history that no longer begins with it drops the reply.
 */
import { extendsHistory } from './history.js';
import type { BetaMessageParam } from './types.js';

/** What the caller appended to `sent` (the history the request went with), or `undefined` when `now` no longer begins with it. */
export function appendedTo(sent: readonly BetaMessageParam[], now: readonly BetaMessageParam[]): BetaMessageParam[] | undefined {
  return extendsHistory(now, sent) ? now.slice(sent.length) : undefined;
}

/**
 * Puts `added` after `reply` and the user message of results that answers it, when `reply` is in the
 * history; at the end otherwise (the reply was not kept, or the history was replaced since).
 */
export function insertAfterReply(messages: BetaMessageParam[], reply: BetaMessageParam | undefined, added: readonly BetaMessageParam[]): void {
  const at = reply ? messages.lastIndexOf(reply) : -1;
  if (at < 0) {
    messages.push(...added);
    return;
  }
  const next = messages[at + 1];
  const answered = next?.role === 'user' && Array.isArray(next.content) && next.content.some((block) => block.type === 'tool_result');
  messages.splice(at + (answered ? 2 : 1), 0, ...added);
}
