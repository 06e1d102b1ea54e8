/** The SDK types the runner speaks in, gathered in one place. */
import type { BetaContentBlockParam, BetaToolResultBlockParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';

export type {
  BetaCompactionConfig,
  BetaContentBlock,
  BetaContentBlockParam,
  BetaMessage,
  BetaMessageParam,
  BetaTextBlock,
  BetaThinkingBlock,
  BetaToolResultBlockParam,
  BetaToolUnion,
  BetaToolUseBlock,
  BetaUsage,
  MessageCreateParamsBase,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';

/** What a tool result may hold: a string, or content blocks (text, image, document, search_result). */
export type ToolResultContent = Exclude<BetaToolResultBlockParam['content'], undefined>;

/** One content block of a tool result. */
export type ToolResultContentBlock = Exclude<ToolResultContent, string>[number];

/** A tool call by name and input: `CallOf<Tools>` narrows it to a union by tool name. */
export interface AnyCall {
  name: string;
  input: unknown;
}

/** A value or a promise of it. */
export type Promisable<T> = T | Promise<T>;

/**
 * The user message that answers the tool calls of one assistant message: its blocks read as tool
 * results, and it takes any other block a user message may hold (a program written for the SDK's
 * `BetaUserMessageParam` pushes a text block after the results).
 */
export interface ToolResultMessage {
  role: 'user';
  content: BetaToolResultBlockParam[] & BetaContentBlockParam[];
}
