/** `textOf(message)`: the text of a reply, for the many programs that print or check it. */
import { isThenable } from './completion.js';

/**
 * The text blocks of a message, a message param or a tool result, joined; `''` without any.
 *
 * @example
 * ```ts
 * const final = await toolRunner(client, params);
 * console.log(textOf(final));
 * ```
 */
// Generic, so that a message param or a tool result written in place (`textOf({ role: 'user', content })`) is no excess
// property of the parameter's type; a runner, a promise or a string still share nothing with it, and do not compile.
export function textOf<M extends { content?: string | ReadonlyArray<{ type: string }> | undefined } | undefined>(message: M): string {
  const content = message?.content;
  if (content === undefined) return notAMessage(message);
  if (typeof content === 'string') return content;
  return content
    .filter((block): block is { type: 'text'; text: string } => block.type === 'text' && typeof (block as { text?: unknown }).text === 'string')
    .map((block) => block.text)
    .join('');
}

/** `''` for a message without content; a clear error for what is no message (a runner not awaited, a stream). */
function notAMessage(value: unknown): '' {
  if (typeof (value as { finalMessage?: unknown } | undefined)?.finalMessage === 'function') {
    throw new TypeError('textOf() was given a stream: pass it the message, textOf(await stream.finalMessage())');
  }
  if (isThenable(value)) {
    throw new TypeError('textOf() was given a promise (a runner not awaited?): await it first, textOf(await runner)');
  }
  return '';
}
