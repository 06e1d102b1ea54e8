/**
 * What the API refuses in a request body before any model sees it, checked by the testing kit's
 * server so that an offline test fails where production would: a body that lacks a required field,
 * no messages, a message with empty content, calls and results that do not pair, a history the API's
 * other rules refuse (`historyProblems`), more than four cache breakpoints, a custom tool whose name or input schema the API does not take. The
 * answer is a 400 `invalid_request_error`, and no step is consumed.
 */
import { API_PROPERTY_KEY, refusedPropertyNames, topLevelComposition } from '../api-input-schema.js';
import { hasEmptyContent } from '../history.js';
import { apiHistoryProblems } from '../history-problems.js';
import { API_TOOL_NAME } from '../tool-name.js';
import type { MessagesRoute } from './routes.js';

/** Why the API would refuse `body` on `route` (the message of its 400), or `undefined`; `conversation` is the whole history (a thread's continue sends only the new messages). */
export function refusal(body: unknown, route: MessagesRoute, conversation: readonly unknown[]): string | undefined {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const missing = missingField(fields, route);
  if (missing) return `${missing}: Field required`;
  if (conversation.length === 0) return 'messages: at least one message is required';
  const empty = conversation.findIndex((message, i) => hasEmptyContent((message ?? {}) as { content?: unknown }) && !(i === conversation.length - 1 && (message as { role?: unknown }).role === 'assistant'));
  if (empty !== -1) return `messages.${empty}: all messages must have non-empty content except for the optional final assistant message`;
  const unpaired = unpairedCall(conversation);
  if (unpaired) return unpaired;
  // The rest of the API's rules about a history (historyProblems without the runner's own promise of order), about
  // the messages the body sent: a thread's earlier ones are the server's, as it made them.
  const sent = Array.isArray(fields['messages']) ? (fields['messages'] as unknown[]).length : conversation.length;
  const problem = apiHistoryProblems(conversation, conversation.length - sent)[0];
  if (problem !== undefined) return `messages: ${problem}`;
  const tools = Array.isArray(fields['tools']) ? (fields['tools'] as unknown[]) : [];
  // (Counted in the body: a thread's earlier messages are the server's, and the SDK's thread sends them without their marks.)
  const marks = cacheBreakpoints(fields, tools, Array.isArray(fields['messages']) ? (fields['messages'] as unknown[]) : []);
  if (marks > MAX_CACHE_BREAKPOINTS) return `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${marks}.`;
  const named = tools.findIndex((tool) => isCustom(tool) && !API_TOOL_NAME.test(String((tool as { name?: unknown }).name)));
  if (named !== -1) return `tools.${named}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
  return schemaRefusal(tools);
}

/** The API's limit of cache breakpoints in one request (automatic caching, the body's own `cache_control`, takes one). */
const MAX_CACHE_BREAKPOINTS = 4;

/**
 * The cache breakpoints of a request: its top-level `cache_control`, and the tools, system blocks and message blocks
 * (a tool result's own blocks among them) that have one. Marks a program puts on the blocks of its history stay there,
 * so marking the newest results each turn without taking the older marks off is refused from the fifth on.
 */
function cacheBreakpoints(fields: Record<string, unknown>, tools: readonly unknown[], messages: readonly unknown[]): number {
  const marked = (value: unknown) => typeof value === 'object' && value !== null && (value as { cache_control?: unknown }).cache_control != null;
  const markedIn = (blocks: unknown): number =>
    Array.isArray(blocks) ? blocks.reduce((sum: number, block: unknown) => sum + (marked(block) ? 1 : 0) + markedIn((block as { content?: unknown } | null)?.content), 0) : 0;
  let count = (marked(fields) ? 1 : 0) + tools.filter(marked).length + markedIn(fields['system']);
  for (const message of messages) count += markedIn((message as { content?: unknown } | null)?.content);
  return count;
}

/** The API's refusal of a custom tool's input schema: none, composition at its top level, a property name out of its pattern. */
function schemaRefusal(tools: readonly unknown[]): string | undefined {
  for (const [i, tool] of tools.entries()) {
    if (!isCustom(tool)) continue;
    const schema = (tool as { input_schema?: unknown }).input_schema;
    if (schema === undefined) return `tools.${i}.custom.input_schema: Field required`;
    if (typeof schema !== 'object' || schema === null) continue;
    if (topLevelComposition(schema as Record<string, unknown>).length > 0) return `tools.${i}.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level`;
    if (refusedPropertyNames(schema as Record<string, unknown>).length > 0) return `tools.${i}.custom.input_schema.properties: Property keys should match pattern '${API_PROPERTY_KEY.source}'`;
  }
  return undefined;
}

/**
 * The API's refusal of a history whose calls and results do not pair: a `tool_use` whose next message
 * has no `tool_result` for it (unless it is the last message), or a `tool_result` that answers no
 * `tool_use` of the message before it. The messages are the API's own.
 */
function unpairedCall(conversation: readonly unknown[]): string | undefined {
  for (let i = 0; i < conversation.length; i++) {
    const uses = blocksOf(conversation[i], 'assistant', 'tool_use').map((block) => String(block['id']));
    const results = blocksOf(conversation[i + 1], 'user', 'tool_result').map((block) => String(block['tool_use_id']));
    if (uses.length > 0 && i < conversation.length - 1) {
      const unanswered = uses.filter((id) => !results.includes(id));
      if (unanswered.length > 0) {
        return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    }
    const answers = blocksOf(conversation[i], 'user', 'tool_result');
    const previous = blocksOf(conversation[i - 1], 'assistant', 'tool_use').map((block) => String(block['id']));
    const stray = answers.findIndex((block) => !previous.includes(String(block['tool_use_id'])));
    if (stray !== -1) {
      return `messages.${i}.content.${contentIndex(conversation[i], answers[stray]!)}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(answers[stray]!['tool_use_id'])}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
  }
  return undefined;
}

/** The blocks of `type` in `message`, when it is a message of `role` with a list of blocks (a request's body is not trusted to be well formed). */
function blocksOf(message: unknown, role: string, type: string): Array<Record<string, unknown>> {
  const { role: its, content } = (typeof message === 'object' && message !== null ? message : {}) as { role?: unknown; content?: unknown };
  if (its !== role || !Array.isArray(content)) return [];
  return content.filter((block): block is Record<string, unknown> => typeof block === 'object' && block !== null && (block as { type?: unknown }).type === type);
}

function contentIndex(message: unknown, block: unknown): number {
  return ((message as { content: unknown[] }).content).indexOf(block);
}

/** The first field the API requires on `route` that `fields` lacks (a count needs no `max_tokens`). */
function missingField(fields: Record<string, unknown>, route: MessagesRoute): string | undefined {
  if (route.model === undefined && fields['model'] === undefined) return 'model';
  if (route.kind === 'create' && fields['max_tokens'] === undefined) return 'max_tokens';
  if (fields['messages'] === undefined) return 'messages';
  return undefined;
}

/** A tool defined by the caller (no `type`, or `custom`), whose name the API checks; a server or client tool of the API has a name of its own. */
function isCustom(tool: unknown): boolean {
  const type = (tool as { type?: unknown } | null)?.type;
  return type === undefined || type === null || type === 'custom';
}

/**
 * A surrogate's `\u` escape after a run of backslashes: an escape when the run is odd (`\\ud83d` is a backslash
 * and text). JSON.stringify escapes a lone surrogate so (a pair goes as the character, in UTF-8).
 */
const SURROGATE_ESCAPE = /(\\+)u([dD][89a-fA-F][0-9a-fA-F]{2})/g;

/**
 * The API's refusal of a body that is not valid JSON for its parser, which (unlike `JSON.parse`) takes no lone
 * surrogate: a high one not followed by its low one's escape, or a low one alone. Its message names the place
 * as Python's JSON errors do, in characters (code points) of the body.
 */
export function invalidJson(raw: string): string | undefined {
  SURROGATE_ESCAPE.lastIndex = 0;
  for (let found = SURROGATE_ESCAPE.exec(raw); found !== null; found = SURROGATE_ESCAPE.exec(raw)) {
    if (found[1]!.length % 2 === 0) continue;
    const at = found.index + found[1]!.length - 1;
    if (parseInt(found[2]!, 16) >= 0xdc00) return notJson(raw, 'invalid high surrogate in string', at);
    const low = at + 6;
    if (raw[low] !== '\\' || raw[low + 1] !== 'u') return notJson(raw, 'no low surrogate in string', low);
    const code = parseInt(raw.slice(low + 2, low + 6), 16);
    if (!(code >= 0xdc00 && code <= 0xdfff)) return notJson(raw, 'invalid low surrogate in string', low);
    SURROGATE_ESCAPE.lastIndex = low + 6;
  }
  return undefined;
}

function notJson(raw: string, what: string, at: number): string {
  const before = [...raw.slice(0, at)];
  const lineStart = before.lastIndexOf('\n');
  const line = before.filter((char) => char === '\n').length + 1;
  return `The request body is not valid JSON: ${what}: line ${line} column ${before.length - lineStart} (char ${before.length})`;
}
