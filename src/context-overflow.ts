/**
 * Context overflow: the API rejects a request whose prompt is too long with a 400 (`prompt is too
 * long: 208310 tokens > 200000 maximum`). Without compaction that is a `ContextOverflowError`; with
 * `compactionControl` enabled the run compacts at once (compactions.ts) over a history cut to fit,
 * and sends the request again, once.
 */
import { APIError, BadRequestError } from '@anthropic-ai/sdk';
import { brandClass } from './brand.js';
import type { BetaMessageParam } from './types.js';
import { cutText } from './cut.js';

/** What the API said of an overflow: its numbers, when its message gives them. */
export interface Overflow {
  readonly tokens: number | undefined;
  readonly limit: number | undefined;
}

/** The API's words, and Amazon Bedrock's (`AnthropicBedrock`: a 400 `Input is too long for requested model.`, without numbers). */
const PROMPT_TOO_LONG = /prompt is too long|input is too long for requested model/i;
const NUMBERS = /prompt is too long:\s*(\d+)\s*tokens?\s*>\s*(\d+)/i;

/** The overflow a failed request reports (a 400 that says the prompt, or on Bedrock the input, is too long), else `undefined`. */
export function contextOverflow(error: unknown): Overflow | undefined {
  if (error instanceof ContextOverflowError) return error;
  if (!(error instanceof APIError) || error.status !== 400) return undefined;
  const message = error.apiMessage ?? error.message;
  if (!PROMPT_TOO_LONG.test(message)) return undefined;
  const numbers = NUMBERS.exec(message);
  return numbers ? { tokens: Number(numbers[1]), limit: Number(numbers[2]) } : { tokens: undefined, limit: undefined };
}

/**
 * The request was rejected because the prompt is too long for the model's context window, and
 * `compactionControl` was not enabled (or compacting did not make it fit). Nothing was appended:
 * shorten the history (`runner.setMessagesParams`) and iterate (or `await`) again to go on.
 * A `BadRequestError` (status 400) like the SDK's, with the API's `tokens` and `limit` when it gave them.
 *
 * @example
 * ```ts
 * try {
 *   await runner;
 * } catch (error) {
 *   if (!(error instanceof ContextOverflowError)) throw error;
 *   runner.setMessagesParams((params) => ({ ...params, messages: params.messages.slice(-4) }));
 *   await runner;
 * }
 * ```
 */
export class ContextOverflowError extends BadRequestError implements Overflow {
  /** The prompt's tokens, as the API counted them. */
  readonly tokens: number | undefined;
  /** The model's maximum. */
  readonly limit: number | undefined;

  /** `instead`: what the message says in place of the advice to shorten the history. */
  constructor(rejection: APIError, overflow: Overflow, instead?: string) {
    // With the rejection's error type, and the request it answered, which the SDK's errors carry from 1.17 on (a getter
    // there, given to the constructor; the constructor of 1.14 takes one argument less and leaves it out).
    const { type, request } = rejection as { type?: unknown; request?: unknown };
    super(...([400, rejection.error, rejection.message, rejection.headers ?? new Headers(), type, { request }] as unknown as ConstructorParameters<typeof BadRequestError>));
    this.name = 'ContextOverflowError';
    this.cause = rejection;
    this.tokens = overflow.tokens;
    this.limit = overflow.limit;
    // (Bedrock's message ends with a full stop of its own.)
    this.message = `${rejection.message.replace(/\.$/, '')}. ${instead ?? 'Nothing was appended: shorten the history (runner.setMessagesParams), or turn compactionControl on if it is off, then iterate again.'}`;
  }

  /** `error` as a ContextOverflowError when it reports an overflow, else `error` itself. (`this`: see ReplyError.from.) */
  static from(error: unknown): unknown {
    if (error instanceof this) return error;
    const overflow = contextOverflow(error);
    return overflow ? new this(error as APIError, overflow) : error;
  }
}

/**
 * The error a request rejected as too long ended with (its `request.end`: its span, the inspector's record) when the
 * run goes on to compact and send it again: it says so, not what the caller should do (the run goes on; nothing is
 * thrown). Told before the compaction starts, it says what the run tries, not that it did: the summary request may be
 * too long too, the history may not compact, the budget may run out (the run then fails, saying which).
 */
export function beingRecovered(rejection: unknown): unknown {
  const overflow = contextOverflow(rejection);
  if (!overflow) return rejection;
  const cause = rejection instanceof ContextOverflowError ? rejection.cause : rejection;
  return new ContextOverflowError(cause as APIError, overflow, RECOVERY_TRIED);
}

/** What a request's error says when the run goes on to compact and send it again. */
const RECOVERY_TRIED = 'compactionControl is on: the runner tries to compact the history and send the request again (the requests that follow, and the run, tell whether it did).';

/** What a ContextOverflowError says to do when compaction was on and did not make the request fit, by what failed. */
export const OVERFLOW_ADVICE = {
  notCompacted: 'compactionControl is on, but the history could not be compacted. Nothing was appended: shorten the history (runner.setMessagesParams), then iterate again.',
  summary: "compactionControl is on, but its summary request was too long too (what the history holds beside text, a large tool input say, is not cut for it). Nothing was appended: shorten the history (runner.setMessagesParams), then iterate again.",
  sentAgain: 'The history was compacted, but the request sent again was still too long. Nothing was appended: shorten the history (runner.setMessagesParams), then iterate again.',
};

/** The share of the limit an overflow's summary request aims at: room for the prompt, and for the count being rough. */
const SUMMARY_SHARE = 0.8;

/**
 * The history an overflow's summary request sends: when the API gave its numbers, the longest texts
 * (tool results first of all) cut to a common length, so that the whole comes to about 80% of the
 * limit by the request's own characters-per-token. Nothing else changes: every `tool_use` keeps its
 * `tool_result`, and the caller's messages are never mutated (changed ones are copies).
 * `otherChars`: what the request holds beside the messages (system, tools).
 */
export function fitForSummary(messages: readonly BetaMessageParam[], overflow: Overflow, otherChars: number): readonly BetaMessageParam[] {
  const { tokens, limit } = overflow;
  if (tokens === undefined || limit === undefined || !(tokens > limit) || limit <= 0) return messages;
  const texts = textsOf(messages);
  const textChars = texts.reduce((sum, piece) => sum + piece.text.length, 0);
  const allChars = charsWithoutMedia(messages) + otherChars;
  let budget = Math.floor((allChars * SUMMARY_SHARE * limit) / tokens) - (allChars - textChars);
  if (budget >= textChars) return messages;
  // Each text cut gets a note of about this many characters.
  budget -= NOTE_CHARS * texts.length;
  const cap = commonLength(texts.map((piece) => piece.text.length), Math.max(budget, 0));
  return cutTexts(messages, cap);
}

/**
 * The characters of the history as sent, less the base64 data of its images and documents: a screenshot is
 * hundreds of thousands of characters for about 1,600 tokens, so counted as text it made the characters-per-token
 * ratio a hundred times too high, and every text (the task itself) was cut to nothing. (The media's own tokens, which
 * no cut lessens, are left to the room the share keeps.)
 */
function charsWithoutMedia(messages: readonly BetaMessageParam[]): number {
  return JSON.stringify(messages, function (this: { type?: unknown }, key, value: unknown) {
    return key === 'data' && this.type === 'base64' ? '' : value;
  }).length;
}

/** The largest length `cap` such that the texts, each cut to `cap`, add up to at most `budget`. */
function commonLength(lengths: number[], budget: number): number {
  const sorted = [...lengths].sort((a, b) => a - b);
  let used = 0;
  for (let i = 0; i < sorted.length; i++) {
    const rest = sorted.length - i;
    if (used + sorted[i]! * rest > budget) return Math.floor((budget - used) / rest);
    used += sorted[i]!;
  }
  return sorted.at(-1) ?? 0;
}

interface TextPiece {
  text: string;
}

/** Every text of the history a cut may shorten: text blocks, string contents, tool results' texts. */
function textsOf(messages: readonly BetaMessageParam[]): TextPiece[] {
  const pieces: TextPiece[] = [];
  const visit = (content: unknown) => {
    if (typeof content === 'string') pieces.push({ text: content });
    else if (Array.isArray(content)) {
      for (const block of content as Array<{ type?: string; text?: unknown; content?: unknown }>) {
        if (block.type === 'text' && typeof block.text === 'string') pieces.push({ text: block.text });
        else if (block.type === 'tool_result') visit(block.content);
      }
    }
  };
  for (const message of messages) visit(message.content);
  return pieces;
}

const NOTE_CHARS = 50;

function cut(text: string, cap: number): string {
  return text.length <= cap ? text : `${cutText(text, cap)}\n[… ${text.length - cap} characters cut to fit the summary request]`;
}

function cutContent(content: unknown, cap: number): unknown {
  if (typeof content === 'string') return cut(content, cap);
  if (!Array.isArray(content)) return content;
  return content.map((block: { type?: string; text?: unknown; content?: unknown }) => {
    if (block.type === 'text' && typeof block.text === 'string' && block.text.length > cap) return { ...block, text: cut(block.text, cap) };
    if (block.type === 'tool_result' && block.content !== undefined) return { ...block, content: cutContent(block.content, cap) };
    return block;
  });
}

function cutTexts(messages: readonly BetaMessageParam[], cap: number): BetaMessageParam[] {
  return messages.map((message) => ({ ...message, content: cutContent(message.content, cap) }) as BetaMessageParam);
}

brandClass(ContextOverflowError, 'ContextOverflowError');

/** Compacts the run after a context overflow (`signal`: the turn's, which stops its summary request too); resolves to whether the request may go again. */
export interface OverflowRecovery {
  afterOverflow(overflow: Overflow, signal: AbortSignal | null | undefined): Promise<boolean>;
}
