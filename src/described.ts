import { isThenable } from './completion.js';
import { cutText } from './cut.js';
import { quotingValue } from './output-error-text.js';

/** `message` (a number is wanted), then what was given: a RangeError for a number out of range, a TypeError for anything else. */
export function wrongValue(value: unknown, message: string): RangeError | TypeError {
  const Kind = typeof value === 'number' ? RangeError : TypeError;
  return new Kind(`${message}, got ${described(value)}`);
}

/** `message` (something other than a number is wanted: an object, a function, a string), then what was given: a TypeError, a number given too. */
export function wrongType(value: unknown, message: string): TypeError {
  return new TypeError(`${message}, got ${described(value)}`);
}

/**
 * Whether `value` is a promise (an async callback's answer where the value itself is taken at once), its rejection then
 * caught: dropped, it would be unhandled.
 */
export function droppedPromise(value: unknown): boolean {
  // (Read safely: a Proxy whose `then` throws is no promise.)
  if (readSafely(() => isThenable(value)) !== true) return false;
  Promise.resolve(value).catch(() => {});
  return true;
}

/** A value as an error message shows it: strings quoted, so that '5' does not read as 5. */
export function described(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (Object.is(value, -0)) return '-0';
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

/**
 * An error's kind as messages and spans name it: its `name` (which the SDK's errors and ours set, and
 * a bundler does not rename), else its class's name (a subclass that does not set `name`).
 */
export function errorName(error: Error): string {
  return error.name && error.name !== 'Error' ? error.name : error.constructor.name || 'Error';
}

/** A name as a "did you mean" compares it: without its case, separators and spaces. */
export function plainName(name: string): string {
  return name.toLowerCase().replace(/[-_\s]/g, '');
}

/** The name of `names` that `key` misspells: the same but for case and separators, or `near` it (compared so). */
export function misspeltName(key: string, names: Iterable<string>, near: (key: string, name: string) => boolean): string | undefined {
  const plainKey = plainName(key);
  for (const name of names) {
    const plain = plainName(name);
    if (plainKey === plain || near(plainKey, plain)) return name;
  }
  return undefined;
}

/**
 * The first field of `fields` that misspells one of `names`, and the name meant: a field that is one of `names`, or one
 * of `besides` (fields taken as they are), misspells none.
 */
export function misspeltField(
  fields: object,
  names: readonly string[],
  near: (key: string, name: string) => boolean,
  besides?: ReadonlySet<string>,
): { key: string; meant: string } | undefined {
  for (const key of Object.keys(fields)) {
    if (names.includes(key) || besides?.has(key)) continue;
    const meant = misspeltName(key, names, near);
    if (meant !== undefined) return { key, meant };
  }
  return undefined;
}

/** Whether `a` is one slip (a letter added, removed, changed, or two swapped) from `b`, a name long enough (8 letters) to guess from one. */
export function nearLongName(a: string, b: string): boolean {
  return b.length >= 8 && (oneEditApart(a, b) || oneSwapApart(a, b));
}

/** `nearLongName`, and one slip off for these shorter names too (`steps`, `content`, `tracer`; `recrod` for `record`). */
export function nearNameOr(...shortNames: string[]): (a: string, b: string) => boolean {
  return (a, b) => nearLongName(a, b) || (shortNames.includes(b) && (oneEditApart(a, b) || oneSwapApart(a, b)));
}

/**
 * `${label}: unknown option 'x'; the options are ...`, with ". Did you mean 'y'?" when `key` is one letter (or, for
 * a long name, two letters side by side) off one of them, the same but for case and separators, or the name without
 * its unit (`timeout` for `timeoutMs`).
 */
export function unknownOption(label: string, key: string, known: readonly string[]): TypeError {
  const meant = misspeltName(key, known, (a, b) => nearNameOr(...known)(a, b) || withoutUnit(a, b));
  return new TypeError(`${label}: unknown option '${key}'; the options are ${known.join(', ')}${meantSaid(meant)}`);
}

/** ". Did you mean 'x'?" after an error's words, for the name `meant` (nothing without one). */
export function meantSaid(meant: string | undefined): string {
  return meant === undefined ? '' : `. Did you mean '${meant}'?`;
}

/** Whether `a` is `b` without its last one or two letters (a unit: `ms`, `s`), at least four letters long. */
export function withoutUnit(a: string, b: string): boolean {
  return a.length >= 4 && b.length - a.length <= 2 && b.length > a.length && b.startsWith(a);
}

/** Whether `a` becomes `b` by one letter added, removed or changed. */
export function oneEditApart(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  if (a.length === b.length) return a.slice(i + 1) === b.slice(i + 1);
  return a.length > b.length ? a.slice(i + 1) === b.slice(i) : a.slice(i) === b.slice(i + 1);
}

/**
 * Whether `a` (a name given) and `b` (a known one) are one word with other endings (`approval` for `approve`, `maxretry`
 * for `maxretries`, `tooltimeout` for `tooltimeoutms`): the same first six letters or more, and at most three others each.
 * Not `b` whole with a word added (`concurrencykey`, `loggertag`): a name of its own (a request option for middleware).
 */
export function sameStem(a: string, b: string): boolean {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i >= 6 && i < b.length && a.length - i <= 3 && b.length - i <= 3;
}

/** Whether `a` becomes `b` by swapping two letters side by side (`timeuot`, `timeout`). */
export function oneSwapApart(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return i < a.length - 1 && a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
}

/**
 * A value as text, even one `String()` cannot convert (an object without a prototype, a `toString`
 * that throws): those are named by their kind (`[object Object]`).
 */
export function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    // (A revoked Proxy refuses even this.)
    return readSafely(() => Object.prototype.toString.call(value)) ?? '[object Unreadable]';
  }
}

/** `value instanceof Error`, false for a value whose prototype cannot be read (a revoked Proxy). Never throws. */
function isError(value: unknown): value is Error {
  return readSafely(() => value instanceof Error) === true;
}

/** An error's name, message and stack, whatever getters it has: one that throws reads as none. */
export function errorParts(error: Error): { name: string; message: string; stack: string | undefined } {
  const name = readSafely(() => error.name);
  const message = readSafely(() => error.message);
  const stack = readSafely(() => error.stack);
  return { name: name == null ? 'Error' : safeString(name), message: message == null ? '' : safeString(message), stack: typeof stack === 'string' ? stack : undefined };
}

/**
 * A thrown value as the runner can read it: one it cannot (a revoked Proxy, a Proxy whose traps throw), which every
 * `instanceof` and property read would throw again, becomes an Error saying so. Never throws.
 */
export function readableThrown(value: unknown): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return value;
  try {
    // What reading a thrown value takes: its prototype (`instanceof`), a property (a brand), `in` (a ToolError's `content`).
    void (value instanceof Error);
    void (value as Record<symbol, unknown>)[Symbol.for('tool-runner.readable')];
    void ('content' in value);
    return value;
  } catch (error) {
    const why = readSafely(() => thrownText(error)) ?? 'it threw when read';
    return new Error(`a thrown value that cannot be read (${why})`);
  }
}

/** A thrown value in a few words: an Error as `${name}: ${message}`, anything else as text. Never throws. */
export function thrownText(value: unknown): string {
  if (!isError(value)) return safeString(value);
  const { name, message } = errorParts(value);
  return `${name}: ${message}`;
}

/** A thrown value as the model reads it: an Error as `${name}: ${message}`, anything else as `Error: <its text>`. Never throws. */
export function thrownLine(value: unknown): string {
  return isError(value) ? thrownText(value) : `Error: ${safeString(value)}`;
}

/** A thrown value's message: an Error's `message`, anything else as text. Never throws. */
export function thrownMessage(value: unknown): string {
  return isError(value) ? errorParts(value).message : safeString(value);
}

function readSafely<T>(get: () => T): T | undefined {
  try {
    return get();
  } catch {
    return undefined;
  }
}

/** A mark in `shownValue`'s JSON: what is written bare in its place, the `i`th of its list. */
const SHOWN_BARE = /"@@tool-runner\/(\d+)@@"/g;

/**
 * A value your callback returned, as an error message quotes it: JSON, with what JSON leaves out, refuses or writes as
 * `{}` shown (a field left undefined, a BigInt, an object inside itself: a cycle, an Error, a Map, a Set, a function, a
 * symbol), cut to 200 characters. An approver's decision holding a document of 5 MB was quoted whole, one holding a cycle
 * or a BigInt failed with JSON's own words instead, and an Error returned rather than thrown read as `returned {}`.
 */
export function shownValue(value: unknown): string {
  // The objects from the top down to the one whose field is being written (JSON's `this`): a cycle is an object among
  // them. An object merely met twice (`{ input: edit, original: edit }`) is written twice, as JSON carries it: it read as
  // `[Circular]`, a cycle there was not.
  const ancestors: unknown[] = [];
  const bare: string[] = [];
  const mark = (text: string) => `@@tool-runner/${bare.push(text) - 1}@@`;
  let shown: string;
  try {
    shown =
      JSON.stringify(value, function (this: unknown, _key, inner: unknown) {
        const at = ancestors.lastIndexOf(this);
        if (at === -1) ancestors.push(this);
        else ancestors.length = at + 1;
        if (inner === undefined) return mark('undefined');
        if (typeof inner === 'bigint') return mark(`${inner}n`);
        if (typeof inner === 'function') return mark('[function]');
        if (typeof inner === 'symbol') return mark(String(inner));
        if (typeof inner === 'object' && inner !== null) {
          if (ancestors.includes(inner)) return mark('[Circular]');
          if (inner instanceof Error) return mark(`[${thrownText(inner)}]`);
          if (inner instanceof Map || inner instanceof Set) return mark(`[${inner instanceof Map ? 'Map' : 'Set'}(${inner.size})]`);
        }
        return inner;
      })?.replace(SHOWN_BARE, (_mark, i: string) => bare[Number(i)]!) ?? safeString(value);
  } catch {
    // (A `toJSON` or a getter that throws.)
    shown = safeString(value);
  }
  return shown.length > 200 ? `${cutText(shown, 200)}…` : shown;
}

/** `value` as JSON for a log line, or as a string when it is none (a BigInt, a cycle). */
export function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** `value` as JSON, or `instead()` when JSON cannot carry it (a BigInt, a cycle). */
export function jsonOr(value: unknown, instead: () => string): string {
  try {
    return JSON.stringify(value);
  } catch {
    return instead();
  }
}

/**
 * A TypeError about a value a callback of the caller's returned, quoting it (`said(shown)`, `shownValue` unless given), and
 * marked with its words without the value (`quotingValue`): the value may hold a tool's input or result, which spans and
 * the inspector's records show only when they capture contents. `kind`: what stands in the value's place there.
 */
export function quotingTypeError(said: (shown: string) => string, value: unknown, shown = shownValue(value), kind = 'a value'): TypeError {
  const error = new TypeError(said(shown));
  return holdsNoContents(value) ? error : quotingValue(error, said(`${kind} (not shown: captureContent is off)`));
}

/**
 * A value that holds nothing of a call (no input, no result), shown wherever its error is: nothing (a callback that forgot
 * its `return`), a boolean, or a decision's word in place of the decision (`'allow'`). Hidden, the commonest mistakes read
 * "returned a value (not shown)" on a span. A number is not among them: it may be an amount or an id from the input.
 */
function holdsNoContents(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'boolean' || value === 'allow' || value === 'deny';
}
