/** `textOf(message)`: the text of a reply, for the many programs that print or check it. */

/**
 * The text blocks of a message (or a message param with block content), joined; `''` without any.
 *
 * @example
 * ```ts
 * const final = await toolRunner(client, params);
 * console.log(textOf(final));
 * ```
 */
export function textOf(message: { content: string | ReadonlyArray<{ type: string }> }): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .filter((block): block is { type: 'text'; text: string } => block.type === 'text' && typeof (block as { text?: unknown }).text === 'string')
    .map((block) => block.text)
    .join('');
}
