/**
 * A history the caller sets without the messages that repeat the model's last reply, as the SDK's
 * runner keeps its history (its thread state skips them): a program that places each reply it gets
 * back in the history (`runner.pushMessages(reply, question)`) does not send it twice.
 *
 * The rule, the SDK's: of the messages past what the history held up to its last reply (all of
 * them, when the new history does not start with that), a `BetaMessage` whose `id` is the last
 * reply's is left out, wherever that reply stands; and a message with the role and content of the
 * reply right before it. A reply is known by its content (the array it came with, or the one the
 * runner kept), as the SDK's thread knows it, so a copy of `runner.params.messages` keeps them known.
 */
import { extendsHistory, sameMessage } from './history.js';
import type { BetaMessageParam } from './types.js';

/** The id of the reply `message` is (its content is a reply's), if it is one; `replies`: the run's, by their content. */
const replyIdOf = (replies: WeakMap<object, string> | undefined, message: BetaMessageParam): string | undefined =>
  replies !== undefined && typeof message.content === 'object' ? replies.get(message.content) : undefined;

/** `messages` without the repeats of the last reply, given the history `base` they replace and the run's `replies`; `undefined` when none. */
export function withoutRepeatedReplies(messages: readonly BetaMessageParam[], base: readonly BetaMessageParam[], replies: WeakMap<object, string> | undefined): BetaMessageParam[] | undefined {
  let held = base.length;
  while (held > 0 && replyIdOf(replies, base[held - 1]!) === undefined) held--;
  const start = held > 0 && extendsHistory(messages, base, held) ? held : 0;
  let lastReply = start > 0 ? replyIdOf(replies, base[held - 1]!) : undefined;
  // The message before the one checked, and whether it is a reply (the history's, past a prefix it holds).
  let previous = start > 0 ? base[held - 1] : undefined;
  let previousIsReply = start > 0;
  let kept: BetaMessageParam[] | undefined;
  for (let i = start; i < messages.length; i++) {
    const message = messages[i]!;
    const repeats = 'id' in message ? lastReply !== undefined && message.id === lastReply : previousIsReply && sameMessage(message, previous!);
    if (repeats) {
      kept ??= messages.slice(0, i);
      continue;
    }
    kept?.push(message);
    const reply = replyIdOf(replies, message);
    previous = message;
    previousIsReply = reply !== undefined;
    if (reply !== undefined) lastReply = reply;
  }
  return kept;
}
