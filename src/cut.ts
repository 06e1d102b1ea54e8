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

/**
 * `text` cut to `max` characters for a message or a log line, saying how many it left out and where they are (`rest`):
 * an error quoting 300 kB puts what to do out of a log line's reach. (The cut keeps a surrogate pair whole, one
 * character short of `max`: the count says what it left out.)
 */
export function cutSaying(text: string, max: number, rest: string): string {
  if (text.length <= max) return text;
  const kept = cutText(text, max);
  return `${kept}… (${text.length - kept.length} more characters: ${rest})`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/** In unicode mode a pair is one character: only a half without its other half matches. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/gu;
const HAS_LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** ES2024's string methods (lib is ES2023): Node 20, Bun, Deno, workerd and the browsers of 2023 on have them. */
type WellFormedString = { isWellFormed(): boolean; toWellFormed(): string };
/** Native, the check is one scan in the engine (a string of one-byte characters, JSON or base64, is answered at once). */
const NATIVE = typeof (String.prototype as Partial<WellFormedString>).isWellFormed === 'function';

function isWellFormed(text: string): boolean {
  return NATIVE ? (text as unknown as WellFormedString).isWellFormed() : !HAS_LONE_SURROGATE.test(text);
}

/** `text` with each unpaired surrogate as U+FFFD: text from elsewhere (a tool, a toolset, an MCP server) may hold one. */
export function wellFormed(text: string): string {
  if (isWellFormed(text)) return text;
  return NATIVE ? (text as unknown as WellFormedString).toWellFormed() : text.replace(LONE_SURROGATE, '\uFFFD');
}

/** Deeper than any block of a result goes (a document's source's text blocks' citations): past it, left as it is. */
const DEPTH = 8;

/**
 * `value` with every string in it well formed (`wellFormed`): the very value when none needed it (the usual case,
 * one check of each string), else copies of the arrays and plain objects on the way to those that changed. Another
 * object (a class's instance: a Date, a Buffer) is left as it is: JSON has a way of its own with it.
 */
export function wellFormedDeep<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return wellFormed(value) as T;
  if (typeof value !== 'object' || value === null || depth > DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item: unknown, i) => {
      const made = wellFormedDeep(item, depth + 1);
      if (made !== item) (copy ??= [...value])[i] = made;
    });
    return (copy ?? value) as T;
  }
  const prototype = Object.getPrototypeOf(value) as unknown;
  if (prototype !== Object.prototype && prototype !== null) return value;
  const fields = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(fields)) {
    const made = wellFormedDeep(item, depth + 1);
    if (made !== item) (copy ??= { ...fields })[key] = made;
  }
  return (copy ?? value) as T;
}
