/**
 * Cutting text to a length without splitting a character: a cut between the two halves of a
 * surrogate pair (an emoji, say) leaves a lone surrogate, which the API refuses as invalid JSON
 * ("no low surrogate in string") in every later request of the history that holds it.
 */

/** The first `max` UTF-16 code units of `text`, one fewer when the cut would split a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = max > 0 && isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  return text.slice(0, end);
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** In unicode mode a pair is one character: only a half without its other half matches. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/gu;

/** `text` with each unpaired surrogate as U+FFFD: text from elsewhere (a toolset, an MCP server) may hold one. */
export function wellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}
