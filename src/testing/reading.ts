/** Reading what the runner sent, in a test: the blocks of a recorded request, typed. */
import type { BetaContentBlockParam, BetaMessageParam, BetaToolResultBlockParam } from '../types.js';

/** The content blocks of a message (a string content is one text block). */
export function blocksOf(message: BetaMessageParam | undefined): BetaContentBlockParam[] {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as BetaContentBlockParam[]) : [];
}

/**
 * The `tool_result` blocks of the last message of a request (or of a list of messages): what the
 * runner answered the model's calls with.
 *
 * @example
 * ```ts
 * const server = await createMockServer({
 *   steps: [{ content: [toolUse('lookup_order', { id: 'A-17' })] }, (request) => ({ content: [text(`status: ${toolResults(request)[0]?.content}`)] })],
 * });
 * ```
 */
export function toolResults(request: { messages: readonly BetaMessageParam[] } | readonly BetaMessageParam[]): BetaToolResultBlockParam[] {
  const messages = 'messages' in request ? request.messages : request;
  return blocksOf(messages.at(-1)).filter((block): block is BetaToolResultBlockParam => block.type === 'tool_result');
}
