/**
 * The rules the API applies to a history, as a list of problems: `historyProblems` for the caller (with the
 * runner's own promise of results in their calls' order), `apiHistoryProblems` for the testing kit's server,
 * which refuses what the API refuses. A history read from JSON may hold anything: what is not a message or a
 * block is a problem of its own, never a TypeError.
 */
import { hasEmptyContent, isBlank, isThinking } from './history.js';
import type { BetaMessageParam } from './types.js';

/** The fields of a user or assistant message param, and of a system message param (SDK 1.14). */
const MESSAGE_FIELDS: ReadonlySet<string> = new Set(['role', 'content']);
const SYSTEM_MESSAGE_FIELDS: ReadonlySet<string> = new Set(['role', 'content', 'clear_at', 'output_config']);
const ROLES: ReadonlySet<unknown> = new Set(['user', 'assistant', 'system']);

type Block = Record<string, unknown> & { type: string };

/**
 * The rules the API applies to a history, as a list of problems (empty when valid): every
 * `tool_use` answered exactly once in the very next user message and nowhere else, its results
 * there before any other block; no result without its call; no two `tool_use` blocks with one id
 * in the whole history; no empty content, no text block without non-whitespace text (but in an
 * assistant message with thinking, which goes back as it came); an error result of text, not empty; no
 * field a message param has not (a reply placed as the SDK returned it has `id`, `usage`, ...); messages
 * and blocks that are objects, of a role the API takes. And the promise the runner keeps besides (the API
 * does not check it): results in the order of their calls.
 */
export function historyProblems(messages: readonly BetaMessageParam[]): string[] {
  if (!Array.isArray(messages)) throw new TypeError(`historyProblems: messages must be an array of message params, got ${messages === null ? 'null' : typeof messages}`);
  return problemsOf(messages, true);
}

/**
 * The problems the API refuses a request for: `historyProblems` without the runner's own promise of results in their
 * calls' order. `from`: the first message the request sent (those before it are a thread's, which the server holds as
 * it made them: they are read, not judged).
 */
export function apiHistoryProblems(messages: readonly unknown[], from = 0): string[] {
  return problemsOf(messages, false, from);
}

function problemsOf(messages: readonly unknown[], inCallOrder: boolean, from = 0): string[] {
  const problems: string[] = [];
  /** Each tool_use id, and the message that first holds it. */
  const useIds = new Map<string, number>();
  messages.forEach((_, i) => {
    const found = messageProblemsIn(messages, i, useIds, inCallOrder);
    if (i >= from) problems.push(...found);
  });
  return problems;
}

/** The problems of message `i` of `messages` (its own, and of its calls and results); `useIds` gains its calls' ids. */
function messageProblemsIn(messages: readonly unknown[], i: number, useIds: Map<string, number>, inCallOrder: boolean): string[] {
  const problems: string[] = [];
  const message = messages[i];
  const blocks = messageProblems(message, i, i === messages.length - 1, problems);
  if (blocks === undefined) return problems;
  const { role } = message as { role: string };
  if (role === 'user') problems.push(...resultProblems(blocks, i, usesOf(messages[i - 1]), inCallOrder));
  else if (role === 'assistant') {
    for (const block of blocks) if (block.type === 'tool_result') problems.push(`message ${i}: tool_result ${String(block['tool_use_id'])} is in an assistant message (results go in the user message after the call)`);
  }
  const uses = role === 'assistant' ? blocks.filter((block) => block.type === 'tool_use') : [];
  for (const use of uses) {
    const id = String(use['id']);
    // The fields the API requires of a call.
    const missing = [typeof use['id'] !== 'string' && 'string id', typeof use['name'] !== 'string' && 'string name'].filter(Boolean);
    if (missing.length > 0) problems.push(`message ${i}: tool_use ${id} has no ${missing.join(' and no ')} (the API requires them)`);
    const first = useIds.get(id);
    if (first === undefined) useIds.set(id, i);
    else problems.push(`message ${i}: tool_use id ${id} repeats ${first === i ? 'an id of the same message' : `the id of a tool_use in message ${first}`}`);
  }
  if (uses.length > 0 && i < messages.length - 1) {
    const answered = new Set(resultsOf(messages[i + 1]).map((block) => String(block['tool_use_id'])));
    for (const use of uses) {
      if (!answered.has(String(use['id']))) problems.push(`message ${i}: tool_use ${String(use['id'])} (${String(use['name'])}) has no tool_result in message ${i + 1}`);
    }
  }
  return problems;
}

/**
 * The problems of message `i` itself (its shape, role, fields, empty or blank content); its blocks, when it is a message
 * (a string's content has none). `last`: the history's last message, which may be an empty assistant message (a prefill).
 */
function messageProblems(message: unknown, i: number, last: boolean, problems: string[]): Block[] | undefined {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    problems.push(`message ${i} is not a message (an object with role and content): ${message === null ? 'null' : Array.isArray(message) ? 'an array' : typeof message}`);
    return undefined;
  }
  const { role, content } = message as { role?: unknown; content?: unknown };
  if (!ROLES.has(role)) problems.push(`message ${i} has role ${JSON.stringify(role) ?? 'undefined'}: the API takes 'user', 'assistant' or 'system'`);
  const fields = role === 'system' ? SYSTEM_MESSAGE_FIELDS : MESSAGE_FIELDS;
  const extra = Object.keys(message).filter((key) => !fields.has(key));
  if (extra.length > 0) problems.push(`message ${i} has fields the API does not take: ${extra.join(', ')}`);
  // A system message (SDK 1.14) may hold no content: its `output_config` alone, say.
  if (content === undefined && role === 'system') return [];
  if (typeof content !== 'string' && !Array.isArray(content)) {
    problems.push(`message ${i} has ${content === undefined ? 'no content' : 'content that is neither a string nor a list of blocks'}`);
    return undefined;
  }
  if (hasEmptyContent({ content })) {
    if (!(last && role === 'assistant')) problems.push(`message ${i} has empty content`);
  } else if (typeof content === 'string' && isBlank(content)) {
    // A string is one text block to the API.
    problems.push(`message ${i} has content of only whitespace`);
  }
  if (typeof content === 'string') return [];
  const blocks: Block[] = [];
  content.forEach((block: unknown, j) => {
    if (typeof block === 'object' && block !== null && typeof (block as { type?: unknown }).type === 'string') blocks.push(block as Block);
    else problems.push(`message ${i}: block ${j} is not a content block (an object with a type): ${block === null ? 'null' : typeof block}`);
  });
  // An assistant message with thinking goes back as it came, blank text and all.
  if (!(role === 'assistant' && blocks.some(isThinking))) {
    blocks.forEach((block, j) => {
      if (block.type === 'text' && isBlankText(block['text'])) problems.push(`message ${i}: text block ${j} is ${block['text'] === '' ? 'empty' : 'only whitespace'}`);
    });
  }
  return blocks;
}

/** The problems of the tool_result blocks of user message `i`, which answer `previousUses` (the calls of message `i - 1`). */
function resultProblems(blocks: readonly Block[], i: number, previousUses: readonly Block[], inCallOrder: boolean): string[] {
  const problems: string[] = [];
  const callOrder = new Map(previousUses.map((use, position) => [String(use['id']), position]));
  const seen = new Set<string>();
  let otherBlock: number | undefined;
  let lastCall = -1;
  blocks.forEach((block, j) => {
    if (block.type !== 'tool_result') {
      otherBlock ??= j;
      return;
    }
    const id = String(block['tool_use_id']);
    const position = callOrder.get(id);
    if (position === undefined) problems.push(`message ${i}: tool_result ${id} answers no tool_use of ${i === 0 ? 'a message before it (it is the first message)' : `message ${i - 1}`}`);
    if (seen.has(id)) problems.push(`message ${i}: tool_use ${id} answered twice`);
    if (otherBlock !== undefined) problems.push(`message ${i}: tool_result ${id} comes after a ${blocks[otherBlock]!.type} block (block ${otherBlock}): results come first`);
    const { content } = block;
    if (block['is_error'] === true) {
      if (Array.isArray(content) && content.some((part) => (part as { type?: unknown } | null)?.type !== 'text')) {
        problems.push(`message ${i}: tool_result ${id} is an error with content other than text (the API takes only text there)`);
      } else if (content === '' || (Array.isArray(content) && content.length === 0)) {
        problems.push(`message ${i}: tool_result ${id} is an error with empty content (the API refuses it)`);
      }
    }
    if (Array.isArray(content)) {
      content.forEach((part: unknown, k) => {
        const text = (part as { type?: unknown; text?: unknown } | null)?.type === 'text' ? (part as { text?: unknown }).text : undefined;
        if (isBlankText(text)) problems.push(`message ${i}: tool_result ${id}: text block ${k} is ${text === '' ? 'empty' : 'only whitespace'}`);
      });
    }
    if (position !== undefined && !seen.has(id)) {
      if (inCallOrder && position < lastCall) problems.push(`message ${i}: tool_result ${id} comes after the result of a later call: results go in the calls' order`);
      lastCall = Math.max(lastCall, position);
    }
    seen.add(id);
  });
  return problems;
}

/** The tool_use blocks of an assistant message of blocks (none for anything else). */
function usesOf(message: unknown): Block[] {
  return blocksOf(message, 'assistant', 'tool_use');
}

/** The tool_result blocks of a user message of blocks (none for anything else). */
function resultsOf(message: unknown): Block[] {
  return blocksOf(message, 'user', 'tool_result');
}

function blocksOf(message: unknown, role: string, type: string): Block[] {
  const { role: its, content } = (typeof message === 'object' && message !== null ? message : {}) as { role?: unknown; content?: unknown };
  if (its !== role || !Array.isArray(content)) return [];
  return content.filter((block): block is Block => typeof block === 'object' && block !== null && (block as { type?: unknown }).type === type);
}

function isBlankText(text: unknown): boolean {
  return typeof text === 'string' && isBlank(text);
}
