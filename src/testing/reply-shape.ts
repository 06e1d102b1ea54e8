/** A scripted step checked before it is sent: a mistake in the script is a clear 400, never an empty reply. */
import { described, misspeltField, nearNameOr } from '../described.js';

/** The fields of a scripted reply (`ScriptedReply`). */
const REPLY_FIELDS = ['content', 'stop_reason', 'stop_sequence', 'stop_details', 'usage', 'container', 'delayMs', 'eventDelayMs', 'chunkSize', 'error', 'disconnectAfterEvents', 'malformed', 'stallAfterEvents'];

/** A slip in a long field's name, or in `content` (`contents`), the field a step is made of. */
const nearField = nearNameOr('content');

/** What makes a scripted reply no reply the server can send, in words; none for one it can. */
export function replyShapeProblem(reply: object): string | undefined {
  // A block given where a reply belongs: `text('hi')` for `{ content: [text('hi')] }`.
  if (Array.isArray(reply) || (typeof (reply as { type?: unknown }).type === 'string' && !('content' in reply))) {
    return 'the step is a content block (or a list of them), not a reply: give { content: [block, ...] }';
  }
  // A field misspelt would be left out silently (`stopReason`, `chunksize`): the reply would not be the one scripted.
  const slip = misspeltField(reply, REPLY_FIELDS, nearField);
  if (slip) return `the step has no field \`${slip.key}\`: did you mean \`${slip.meant}\`?`;
  const { content, error } = reply as { content?: unknown; error?: { status?: unknown } };
  // A status that is no error (200) would be answered as a reply of no message.
  if (error !== undefined) {
    const status = (error as { status?: unknown } | null)?.status;
    if (!(typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599)) {
      return `the step's error.status must be an HTTP error status (400 to 599), got ${described(status)}`;
    }
  }
  if (content === undefined) return undefined;
  if (!Array.isArray(content)) return `the step's content is ${typeof content}, not an array of blocks`;
  for (let at = 0; at < content.length; at++) {
    const block = content[at] as { type?: unknown; text?: unknown } | null;
    if (typeof block?.type !== 'string') return `the step's content[${at}] is no content block (it has no type)`;
    if (block.type === 'text' && typeof block.text !== 'string') return `the step's content[${at}] is a text block without text`;
    // The runner answers a call by its id; the API gives every call one (toolUse() makes one like it).
    if ((block.type === 'tool_use' || block.type === 'server_tool_use') && (typeof (block as { id?: unknown }).id !== 'string' || typeof (block as { name?: unknown }).name !== 'string')) {
      return `the step's content[${at}] is a ${block.type} block without ${typeof (block as { id?: unknown }).id !== 'string' ? 'an id' : 'a name'}: make it with toolUse(name, input)`;
    }
  }
  return undefined;
}
