/**
 * The history's validity invariant: every `tool_use` of an assistant message is answered by
 * exactly one `tool_result` in the very next user message. Helpers to read and keep it.
 */
import type {
  BetaContentBlockParam,
  BetaMessage,
  BetaMessageParam,
  BetaToolResultBlockParam,
  BetaToolUseBlock,
  ToolResultContent,
  ToolResultMessage,
} from './types.js';

type AnyMessage = BetaMessageParam | BetaMessage;

/** The `tool_use` blocks of a message (none for a user message or string content). */
export function toolUsesOf(message: AnyMessage | undefined): BetaToolUseBlock[] {
  if (!message || message.role !== 'assistant' || typeof message.content === 'string') return [];
  return (message.content as BetaContentBlockParam[]).filter(
    (block): block is BetaToolUseBlock => block.type === 'tool_use',
  );
}

/** The ids answered by the `tool_result` blocks of a user message. */
export function answeredIds(message: AnyMessage | undefined): Set<string> {
  const ids = new Set<string>();
  if (!message || message.role !== 'user' || typeof message.content === 'string') return ids;
  for (const block of message.content as BetaContentBlockParam[]) {
    if (block.type === 'tool_result') ids.add(block.tool_use_id);
  }
  return ids;
}

/**
 * A deep copy of the caller's messages, so that later edits of the caller's objects never change
 * what the runner sends. Each message is rebuilt as `{ role, content }` (other fields after them),
 * the shape of the messages the runner appends: the SDK looks at every message and block of each
 * request (for its `x-stainless-helper` header), and a history whose messages come in one shape
 * more makes that look-up megamorphic, slower on every message of every request (with the whole
 * history, 1,000 turns: 1.04 → 1.01 × the hand-written loop's CPU per turn, `bench/paired.ts`).
 * Extra fields are assigned one by one: a literal `{ role, content, ...extra }` gives its objects
 * another hidden class than `{ role, content }` (V8's `%HaveSameMap`).
 */
export function copyHistory(messages: readonly BetaMessageParam[]): BetaMessageParam[] {
  return messages.map((message) => {
    const { role, content, ...extra } = message as { role: unknown; content: unknown };
    const copy: Record<string, unknown> = { role, content: copied(content) };
    if (!('id' in message)) {
      for (const key in extra) {
        const value = copied(extra[key as keyof typeof extra]);
        if (value !== undefined) copy[key] = value;
      }
    }
    return copy as unknown as BetaMessageParam;
  });
}

/**
 * `value` as `structuredClone` copies it, or as JSON sends it when it holds what `structuredClone` cannot copy (a
 * function in a block, a `Proxy`: a UI framework's reactive list), as the SDK's runner copies a history: the runner
 * threw `DataCloneError` when it was made.
 */
export function copied(value: unknown): unknown {
  try {
    return structuredClone(value);
  } catch (error) {
    if ((error as { name?: unknown } | null)?.name !== 'DataCloneError') throw error;
    // A function itself (a method of the message) has no JSON: left out, as JSON leaves it out of the request.
    const json = JSON.stringify(value);
    return json === undefined ? undefined : (JSON.parse(json) as unknown);
  }
}

/**
 * A reply placed in the history as the API returned it (a `BetaMessage`: `id`, `usage`, …) is kept as a
 * message param, its role and content, as the SDK's runner keeps it.
 */
export function asMessageParams(messages: BetaMessageParam[]): BetaMessageParam[] {
  return messages.some((message) => 'id' in message) ? messages.map(asMessageParam) : messages;
}

/** One message of {@link asMessageParams}: a reply as the API returned it becomes its role and content; a param stays itself. */
function asMessageParam(message: BetaMessageParam): BetaMessageParam {
  return 'id' in message ? ({ role: message.role, content: message.content } as BetaMessageParam) : message;
}

/** The same message: the same object, or the same role and content (compared as JSON). */
export function sameMessage(a: BetaMessageParam, b: BetaMessageParam): boolean {
  return a === b || (a.role === b.role && JSON.stringify(a.content) === JSON.stringify(b.content));
}

/**
 * Whether `ours` is `held` as the history keeps a reply: `held` as the API sent it (an SDK thread's
 * copy), blank text and all (`withoutBlankText`).
 */
export function sameKeptMessage(ours: BetaMessageParam, held: BetaMessageParam): boolean {
  if (sameMessage(ours, held)) return true;
  if (held.role !== 'assistant' || !Array.isArray(held.content)) return false;
  const kept = withoutBlankText(held.content as BetaMessage['content']);
  return kept !== held.content && sameMessage(ours, { role: held.role, content: kept });
}

/**
 * Whether `messages` is `held` (its first `length` messages) and then more, compared by value (an SDK
 * thread keeps its own copies, its replies as the API sent them, which the run keeps without blank text).
 */
export function extendsHistory(messages: readonly BetaMessageParam[], held: readonly BetaMessageParam[], length = held.length): boolean {
  if (messages.length < length) return false;
  for (let i = 0; i < length; i++) if (!sameKeptMessage(messages[i]!, held[i]!)) return false;
  return true;
}

/** An `is_error` tool result. */
export function errorResult(toolUseId: string, content: ToolResultContent): BetaToolResultBlockParam {
  return { type: 'tool_result', tool_use_id: toolUseId, content, is_error: true };
}

/**
 * An error result's content as the API takes it: text blocks only (it refuses the whole request for an
 * image or a document on an `is_error` result); a note says what was left out.
 */
export function textOnlyError(content: ToolResultContent): ToolResultContent {
  if (typeof content === 'string') return content;
  const texts = content.filter((block) => block.type === 'text');
  const left = content.length - texts.length;
  if (left === 0) return content;
  return [...texts, { type: 'text', text: `[${left} ${left === 1 ? 'block' : 'blocks'} other than text left out: an error result holds text only]` }];
}

/** Where a reply cut off stopped, by its stop reason: `max_tokens`, or the model's context window. */
const cutAt = (reason: string) => (reason === 'model_context_window_exceeded' ? "the model's context window" : 'max_tokens');
export const cutOffText = (name: string, reason = 'max_tokens') =>
  `Error: the call to '${name}' was cut off (the reply reached ${cutAt(reason)}), so it was not run.`;
export const brokenOffText = (name: string) =>
  `Error: the reply with the call to '${name}' broke off before it ended (its stream failed), so the call was not answered. Make it again if it is still needed.`;
/** A call that started while its reply streamed, the reply then breaking off (a stream that failed, even after its last event). */
export const startedBeforeBreakText = (name: string) =>
  `Error: the reply with the call to '${name}' broke off before it ended (its stream failed) after the call had started; its result was not kept.`;
/** The answers of the calls of `uses` that had started (`started`: their ids) when their reply broke off. */
export function startedBeforeBreak(uses: readonly BetaToolUseBlock[], started: readonly string[] | undefined): Map<string, string> {
  const ids = new Set(started);
  return new Map(uses.filter((use) => ids.has(use.id)).map((use) => [use.id, startedBeforeBreakText(use.name)]));
}
/** A turn the server paused: `pause_turn`, or `compaction` (it compacted the context mid-turn); the run sends it back to go on. */
export const pausedText = (name: string, reason = 'pause_turn') =>
  `Error: the call to '${name}' came in a paused turn (${reason}), whose calls do not run, so it was not run.`;
export const startedBeforePauseText = (name: string, reason = 'pause_turn') =>
  `Error: the turn was paused (${reason}) after the call to '${name}' had started; its result was not kept.`;
export const startedBeforeCutOffText = (name: string, reason = 'max_tokens') =>
  `Error: the reply was cut off (it reached ${cutAt(reason)}) after the call to '${name}' had started; its result was not kept.`;
export const duplicateIdText = (id: string) =>
  `Error: this call repeats the id '${id}' of an earlier call in the same message, so it was not run. Give each call its own id.`;
export const abortedWaitingText = (name: string) =>
  `Error: the call to '${name}' was aborted while it waited for approval, so it was not run.`;
export const notRunText = (name: string) =>
  `Error: the call to '${name}' was not answered before the conversation went on, so it was not run.`;

/**
 * Answers the calls of every assistant message but the last that the next message does not answer,
 * with `is_error` results in a user message right after it, so the API accepts the history (a call that
 * ran, in `ran`, with its own result). Returns the same array when nothing is missing.
 */
export function answerDanglingCalls(
  messages: BetaMessageParam[],
  notRun: ReadonlyMap<string, string> = NONE,
  ran?: ReadonlyMap<string, BetaToolResultBlockParam>,
): BetaMessageParam[] {
  let repaired: BetaMessageParam[] | undefined;
  for (let i = messages.length - 2; i >= 0; i--) {
    const uses = toolUsesOf(messages[i]);
    if (uses.length === 0) continue;
    const answered = answeredIds(messages[i + 1]);
    const missing = uses.filter((use) => !answered.has(use.id));
    if (missing.length === 0) continue;
    const results = missing.map((use) => ran?.get(use.id) ?? errorResult(use.id, notRun.get(use.id) ?? notRunText(use.name)));
    repaired ??= [...messages];
    if (answered.size === 0) repaired.splice(i + 1, 0, { role: 'user', content: results });
    // Some are answered in the next message: the missing join them there, all in the model's order, first.
    else repaired[i + 1] = withResultsInOrder(messages[i + 1]!, uses, results);
  }
  return repaired ?? messages;
}

/** `message` (a user message that answers some of `uses`) with `added` results too: every result first, in the order of `uses`. */
function withResultsInOrder(message: BetaMessageParam, uses: BetaToolUseBlock[], added: BetaToolResultBlockParam[]): BetaMessageParam {
  const blocks = message.content as BetaContentBlockParam[];
  const byId = new Map<string, BetaContentBlockParam>();
  for (const block of [...blocks, ...added]) if (block.type === 'tool_result') byId.set(block.tool_use_id, block);
  const results = uses.map((use) => byId.get(use.id)!);
  const others = blocks.filter((block) => block.type !== 'tool_result' || !uses.some((use) => use.id === block.tool_use_id));
  return { ...message, content: [...results, ...others] } as BetaMessageParam;
}

/**
 * A reply as the history keeps it: its role and content, with repeated tool_use ids made unique
 * (`renamed`: the repeats, with the text of their not-run results).
 */
export function keptReply(reply: BetaMessage): { kept: BetaMessageParam & { content: BetaMessage['content'] }; renamed: ReadonlyMap<string, string> } {
  const { content, renamed } = uniqueToolUseIds(withoutBlankText(reply.content));
  return { kept: { role: reply.role, content }, renamed };
}

/**
 * A history the caller set, as a request takes it. A reply placed there as the SDK returned it (a
 * `BetaMessage`: `id`, `model`, `usage`, ...) goes as its role and content, which is all the API takes
 * (it refuses other fields), as the SDK's runner sends it. The blank text blocks of assistant messages
 * (without thinking) are left out, as the runner keeps its replies: the API refuses them; not in the
 * last message (a prefill is the caller's), nor where nothing else would be left. Copies; the same
 * array when nothing changes.
 */
export function asRequestHistory(messages: BetaMessageParam[]): BetaMessageParam[] {
  let cleaned: BetaMessageParam[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]!;
    if (message.role !== 'assistant') continue;
    let tidy = asMessageParam(message);
    if (i < messages.length - 1 && Array.isArray(tidy.content)) {
      const content = withoutBlankText(tidy.content as BetaMessage['content']);
      if (content !== tidy.content && content.length > 0) tidy = { ...tidy, content } as BetaMessageParam;
    }
    if (tidy === message) continue;
    cleaned ??= [...messages];
    cleaned[i] = tidy;
  }
  return cleaned ?? messages;
}

/**
 * A reply's content without its text blocks of whitespace only (`"\n\n"` before a call), which the
 * API refuses in a request. A reply with thinking keeps every block as it came: the API refuses a
 * changed one.
 */
export function withoutBlankText(content: BetaMessage['content']): BetaMessage['content'] {
  let blank = false;
  for (const block of content) {
    if (isThinking(block)) return content;
    if (block.type === 'text' && isBlank(block.text)) blank = true;
  }
  return blank ? content.filter((block) => !(block.type === 'text' && isBlank(block.text))) : content;
}

/**
 * A tool result's blocks without the text blocks that hold no non-whitespace text, which the API
 * refuses there too; `undefined` when nothing is left (a result without content, which it takes).
 */
export function withoutBlankResultText(content: ToolResultContent): ToolResultContent | undefined {
  if (typeof content === 'string' || !content.some((block) => block.type === 'text' && isBlank(block.text))) return content;
  const kept = content.filter((block) => !(block.type === 'text' && isBlank(block.text)));
  return kept.length > 0 ? kept : undefined;
}

/** What an error result with nothing to say says: the API refuses an `is_error` result whose content is empty. */
export const EMPTY_ERROR_TEXT = 'The tool call failed with an empty error message.';

/** A result's content with its blank text left out (`withoutBlankResultText`); an error's, `EMPTY_ERROR_TEXT` when nothing is left. */
export function resultContentToSend(content: ToolResultContent | undefined, isError: boolean | undefined): ToolResultContent | undefined {
  const kept = content === undefined ? undefined : withoutBlankResultText(content);
  if (!isError) return kept;
  return kept === undefined || (typeof kept === 'string' ? isBlank(kept) : kept.length === 0) ? EMPTY_ERROR_TEXT : kept;
}

export function isBlank(text: string): boolean {
  return !/\S/.test(text);
}

/** A thinking block: a message that holds one goes back as it came. */
export function isThinking(block: { type: string }): boolean {
  return block.type === 'thinking' || block.type === 'redacted_thinking';
}

/**
 * A reply whose tool_use ids repeat within it: the repeats get ids of their own (`<id>_dup<n>`),
 * so each call can be answered exactly once; `renamed` lists them (they are answered, not run).
 */
export function uniqueToolUseIds(content: BetaMessage['content']): { content: BetaMessage['content']; renamed: ReadonlyMap<string, string> } {
  let calls = 0;
  for (const block of content) if (block.type === 'tool_use') calls++;
  // The usual reply: no two calls, nothing to check.
  if (calls < 2) return { content, renamed: NONE };
  const seen = new Set<string>();
  const renamed = new Map<string, string>();
  let changed: BetaMessage['content'] | undefined;
  content.forEach((block, i) => {
    if (block.type !== 'tool_use') return;
    if (!seen.has(block.id)) {
      seen.add(block.id);
      return;
    }
    let n = 1;
    while (seen.has(`${block.id}_dup${n}`)) n++;
    const id = `${block.id}_dup${n}`;
    seen.add(id);
    renamed.set(id, duplicateIdText(block.id));
    changed ??= [...content];
    changed[i] = { ...block, id };
  });
  return { content: changed ?? content, renamed };
}

const NONE: ReadonlyMap<string, string> = new Map();

/**
 * `results` with an error result, `textOf(call)`, for each of `uses` it does not answer: every call
 * answered, in the calls' order (other blocks after the results).
 */
export function answeringEvery(results: ToolResultMessage, uses: readonly BetaToolUseBlock[], textOf: (use: BetaToolUseBlock) => string): ToolResultMessage {
  const given = new Map<string, BetaToolResultBlockParam>();
  const others: ToolResultMessage['content'][number][] = [];
  for (const block of results.content) {
    if (block.type === 'tool_result') given.set(block.tool_use_id, block);
    else others.push(block);
  }
  const content = uses.map((use) => given.get(use.id) ?? errorResult(use.id, textOf(use)));
  return { ...results, content: [...content, ...others] as ToolResultMessage['content'] };
}

/** Puts `results` right after the last assistant message: the API takes results only there. */
export function insertToolResults(messages: BetaMessageParam[], results: ToolResultMessage): void {
  let at = messages.length;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === 'assistant') {
      at = i + 1;
      break;
    }
  }
  if (at === messages.length) messages.push(results);
  else messages.splice(at, 0, results);
}

/** Whether `message` has empty content (`''` or no blocks), which the API takes only in a last assistant message. */
export function hasEmptyContent(message: { content?: unknown }): boolean {
  return Array.isArray(message.content) ? message.content.length === 0 : message.content === '';
}
