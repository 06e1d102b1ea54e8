/** Reading what the runner sent, in a test: the blocks of a recorded request, typed. */
import type { BetaContentBlockParam, BetaMessageParam, BetaToolResultBlockParam } from '../types.js';

/** The content blocks of a message (a string content is one text block). */
export function blocksOf(message: BetaMessageParam | undefined): BetaContentBlockParam[] {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as BetaContentBlockParam[]) : [];
}

/**
 * The `tool_result` blocks of a request (or of a list of messages) after its last assistant message: what the runner
 * answered the model's last calls with. Not only the last message's: the results may be followed by the tool changes
 * `addTools()` / `removeTools()` send (a system message) and by messages the program appended while the reply streamed.
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
  const results: BetaToolResultBlockParam[] = [];
  for (let i = messages.length - 1; i >= 0 && messages[i]?.role !== 'assistant'; i--) {
    const found = blocksOf(messages[i]).filter((block): block is BetaToolResultBlockParam => block.type === 'tool_result');
    results.unshift(...found);
  }
  return results;
}
