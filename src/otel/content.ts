/**
 * The content a `chat` span records with `captureContent`, in the shape of the GenAI semantic
 * conventions: `gen_ai.system_instructions` a list of parts, `gen_ai.input.messages` and
 * `gen_ai.output.messages` lists of `{ role, parts }` (the output with its `finish_reason`), each
 * part `{ type: 'text', content }`, `reasoning`, `tool_call`, `tool_call_response`, or
 * `anthropic_<block type>` with only its type (images, documents, redacted thinking). Image and
 * document data and `encrypted_` fields are never recorded. All of it fits in `maxContentBytes`
 * bytes of UTF-8: whole parts are left out, oldest first (the system instructions, then the
 * messages in order, the reply last).
 */
import { toolResultContentBlocks, utf8Length, withoutLeftOutFields } from '../sdk-span-content.js';
import type { BetaMessage } from '../types.js';

export const SYSTEM_INSTRUCTIONS = 'gen_ai.system_instructions';
export const INPUT_MESSAGES = 'gen_ai.input.messages';
export const OUTPUT_MESSAGES = 'gen_ai.output.messages';

/** One message of a content attribute: its parts' JSON, between the JSON that opens and closes it. */
interface ShapedMessage {
  open: string;
  parts: string[];
  close: string;
}

/**
 * One content attribute: a JSON list of messages, or (`bare`: the system instructions) the list of
 * parts of its one message, whose `open` and `close` are the list's brackets.
 */
export interface ContentList {
  name: string;
  messages: ShapedMessage[];
  bare: boolean;
}

/**
 * The system instructions and input messages of a request's body, shaped (none for a body without them), for content
 * of at most `limit` bytes. Parts are left out oldest first, so once the messages after one hold more than `limit`
 * characters of JSON (a character is at least a byte of UTF-8), that one and all before it, and the system
 * instructions, are left out whole: they are not shaped (a long run's history was made into JSON whole on every turn,
 * to keep its last `limit` bytes). Only those without parts are kept, as `fitContent` keeps them.
 */
export function requestContent(body: Record<string, unknown>, limit = Infinity): ContentList[] {
  const lists: ContentList[] = [];
  const system = body['system'];
  const messages = body['messages'];
  let shaped: ShapedMessage[] | undefined;
  let cut = false;
  if (Array.isArray(messages)) {
    shaped = [];
    let length = 0;
    let index = messages.length - 1;
    for (; index >= 0 && length <= limit; index--) {
      const message = shapedMessage(messages[index]);
      shaped.push(message);
      length += message.open.length + message.close.length;
      for (const part of message.parts) length += part.length + 1;
    }
    cut = index >= 0;
    for (; index >= 0; index--) if (hasNoParts(messages[index]?.content)) shaped.push(shapedMessage(messages[index]));
    shaped.reverse();
  }
  if (system !== undefined && system !== null && (!cut || hasNoParts(system))) lists.push({ name: SYSTEM_INSTRUCTIONS, messages: [{ open: '[', parts: partsOf(system), close: ']' }], bare: true });
  if (shaped) lists.push({ name: INPUT_MESSAGES, messages: shaped, bare: false });
  return lists;
}

function shapedMessage(message: { role?: unknown; content?: unknown }): ShapedMessage {
  return { open: `{"role":${JSON.stringify(message.role)},"parts":[`, parts: partsOf(message.content), close: ']}' };
}

/** Whether `partsOf(content)` is empty (a message so shaped stays whatever is left out). */
function hasNoParts(content: unknown): boolean {
  return typeof content !== 'string' && (!Array.isArray(content) || content.length === 0);
}

/** The reply, shaped. */
export function replyContent(message: BetaMessage): ContentList {
  const close = message.stop_reason ? `],"finish_reason":${JSON.stringify(message.stop_reason)}}` : ']}';
  return { name: OUTPUT_MESSAGES, messages: [{ open: `{"role":${JSON.stringify(message.role)},"parts":[`, parts: partsOf(message.content), close }], bare: false };
}

/** The attributes of `lists` within `limit` bytes, and whether something was left out for it. */
export function fitContent(lists: readonly ContentList[], limit: number): { attributes: Record<string, string>; truncated: boolean } {
  const whole = lists.map((list) => serialize(list, 0));
  const length = whole.reduce((sum, json) => sum + (json?.length ?? 0), 0);
  // A UTF-16 code unit takes at most three bytes of UTF-8: content a third of the limit long fits unmeasured.
  const size = 3 * length <= limit ? 0 : sizeOf(whole);
  if (size <= limit) return { attributes: attributesOf(lists, whole), truncated: false };
  const total = lists.reduce((sum, list) => sum + list.messages.reduce((count, message) => count + message.parts.length, 0), 0);
  let dropped = partsToDrop(lists, size - limit);
  let kept = withoutFirst(lists, dropped);
  // The count is exact but for messages without parts, which stay: one part more until it fits.
  while (dropped < total && sizeOf(kept) > limit) kept = withoutFirst(lists, ++dropped);
  return { attributes: attributesOf(lists, kept), truncated: true };
}

function attributesOf(lists: readonly ContentList[], values: Array<string | undefined>): Record<string, string> {
  const attributes: Record<string, string> = {};
  lists.forEach((list, index) => {
    if (values[index] !== undefined) attributes[list.name] = values[index];
  });
  return attributes;
}

const sizeOf = (values: Array<string | undefined>) => values.reduce((sum, json) => sum + (json === undefined ? 0 : utf8Length(json)), 0);

/** The JSON of each list without the first `skip` parts of them all. */
function withoutFirst(lists: readonly ContentList[], skip: number): Array<string | undefined> {
  return lists.map((list) => {
    const json = serialize(list, skip);
    for (const message of list.messages) skip = Math.max(0, skip - message.parts.length);
    return json;
  });
}

/** How many parts, from the first, to leave out so that `excess` bytes go (a message, a list, that loses all its parts goes whole). */
function partsToDrop(lists: readonly ContentList[], excess: number): number {
  let dropped = 0;
  for (const list of lists) {
    list.messages.forEach((message, index) => {
      message.parts.forEach((part, at) => {
        if (excess <= 0) return;
        dropped++;
        excess -= utf8Length(part);
        // A part with another after it goes with its comma; the last one takes its message, which
        // goes with its comma, or with the list's brackets when it was the list's last.
        if (at < message.parts.length - 1) excess -= 1;
        else excess -= utf8Length(message.open) + utf8Length(message.close) + (list.bare ? 0 : index < list.messages.length - 1 ? 1 : 2);
      });
    });
  }
  return dropped;
}

/** The JSON of `list` without its first `skip` parts; undefined when nothing is left of it. */
function serialize(list: ContentList, skip: number): string | undefined {
  const messages: string[] = [];
  for (const message of list.messages) {
    const { parts } = message;
    if (skip >= parts.length && parts.length > 0) {
      skip -= parts.length;
      continue;
    }
    const kept = skip > 0 ? parts.slice(skip) : parts;
    // A message without parts stays, and leaves the parts to skip to the messages after it.
    if (parts.length > 0) skip = 0;
    messages.push(`${message.open}${kept.join(',')}${message.close}`);
  }
  if (messages.length === 0) return undefined;
  return list.bare ? messages[0] : `[${messages.join(',')}]`;
}

/** The JSON of each part of a message's content (a string is one text part). */
function partsOf(content: unknown): string[] {
  if (typeof content === 'string') return [JSON.stringify({ type: 'text', content })];
  if (!Array.isArray(content)) return [];
  return content.map((block) => JSON.stringify(partOf(block)));
}

/** A content block as a part of the conventions; a kind they have no part for is a part with only its type. */
function partOf(block: Record<string, unknown>): Record<string, unknown> {
  const type = block['type'];
  switch (type) {
    case 'text':
      return { type: 'text', content: block['text'] };
    case 'thinking':
      return { type: 'reasoning', content: block['thinking'] };
    case 'tool_use':
    case 'server_tool_use':
    case 'mcp_tool_use': {
      const toolset = block['toolset_name'];
      const server = block['server_name'];
      return {
        type: 'tool_call',
        id: block['id'],
        name: block['name'],
        arguments: block['input'],
        ...(type === 'tool_use' && typeof toolset === 'string' && { anthropic_toolset_name: toolset }),
        ...(type === 'mcp_tool_use' && { anthropic_mcp_server_name: server }),
      };
    }
    case 'tool_result':
      return { type: 'tool_call_response', id: block['tool_use_id'], response: toolResultContentBlocks(block['content']) };
    default:
      if (typeof type !== 'string') return { type: 'anthropic_unknown' };
      // A server tool's result (web search, code execution, an MCP server's): what it holds, without data.
      if (type.endsWith('_tool_result') && 'tool_use_id' in block) return { type: 'tool_call_response', id: block['tool_use_id'], response: serverResult(block['content']) };
      return { type: `anthropic_${type}` };
  }
}

/** A server tool's result content, always a list: its text and search results with their fields, one object as it is. */
function serverResult(content: unknown): unknown[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [withoutLeftOutFields(content)];
  return content.map((block: { type?: unknown }) =>
    block.type === 'text' || block.type === 'search_result' || block.type === 'web_search_result' ? withoutLeftOutFields(block) : { type: typeof block.type === 'string' ? block.type : 'unknown' },
  );
}
