/**
 * An `OutputError`'s message without the model's text (which its parse error may quote), and other errors' without the
 * contents they quote: for places that show contents only when asked (`captureContent`), the inspector's records and
 * spans. A module of its own, importing nothing: `tool-runner/inspect` loads without the SDK.
 */
function outputErrorWithoutContents(error: Error): string {
  const { issues, stopReason } = error as { issues?: Array<{ path?: unknown }>; stopReason?: unknown };
  const paths = Array.isArray(issues) ? issues.map((issue) => String(issue.path)).join(', ') : '';
  return `The final answer did not match options.output${paths ? ` (at ${paths})` : ''}; stop_reason ${String(stopReason)}. Its text is not shown: captureContent is off.`;
}

/**
 * The SDK's error for a streamed `tool_use` whose input is no JSON quotes that input (`… Error: SyntaxError: …. JSON: {…}`):
 * the model's tool arguments, which a `ReplyError` (or any error made from it) carries on in its own message.
 */
const TOOL_INPUT_PARSE_ERROR = 'Unable to parse tool parameter JSON from model.';

/** The message of the innermost error (`error`, or one it was made from: `cause`) that quotes a tool input the model sent as broken JSON. */
function toolInputParseMessage(error: unknown): string | undefined {
  let quoted: string | undefined;
  for (let at = error, depth = 0; at instanceof Error && depth < 5; at = (at as { cause?: unknown }).cause, depth++) {
    if (typeof at.message === 'string' && at.message.includes(TOOL_INPUT_PARSE_ERROR)) quoted = at.message;
  }
  return quoted;
}

/** `message` with the quoted tool input (and the parser's words about it, which may quote it too) left out. */
function withoutToolInput(message: string, quoted: string): string {
  const start = quoted.indexOf(TOOL_INPUT_PARSE_ERROR);
  const hidden = `${quoted.slice(0, start)}${TOOL_INPUT_PARSE_ERROR} Its text is not shown: captureContent is off.`;
  // The outer error holds the quoting message whole (a ReplyError's `(…)`); else only its own words stay.
  return message.includes(quoted) ? message.split(quoted).join(hidden) : message.slice(0, Math.max(0, message.indexOf(TOOL_INPUT_PARSE_ERROR))) + hidden;
}

/**
 * The message, without the value it quotes, of an error about a value a callback of the caller's returned (an approver's
 * decision, an `onToolCall` override): that value may hold a tool's input or result. A registered key: the inspector's
 * copy of this module may read an error the core's copy made.
 */
const WITHOUT_VALUE = Symbol.for('tool-runner.messageWithoutValue.v1');

/** Marks `error`, whose message quotes a value that may hold contents, with its message `without` that value. */
export function quotingValue<E extends Error>(error: E, without: string): E {
  Object.defineProperty(error, WITHOUT_VALUE, { value: without });
  return error;
}

/** `message` with the message of the innermost error (`error`, or one it was made from: `cause`) that quotes a value written without it. */
function withoutQuotedValue(error: Error): string | undefined {
  let quoting: Error | undefined;
  for (let at: unknown = error, depth = 0; at instanceof Error && depth < 5; at = (at as { cause?: unknown }).cause, depth++) {
    if (typeof (at as { [WITHOUT_VALUE]?: unknown })[WITHOUT_VALUE] === 'string') quoting = at;
  }
  if (quoting === undefined) return undefined;
  const without = (quoting as unknown as { [WITHOUT_VALUE]: string })[WITHOUT_VALUE];
  // The outer error (a HookError) quotes the message whole: only the value goes.
  return error.message.includes(quoting.message) ? error.message.split(quoting.message).join(without) : without;
}

/**
 * The message of `error` where contents show only when captured: an `OutputError`'s without the model's text, an error
 * about a callback's value without the value; `undefined` to show it as it is.
 */
export function hiddenMessage(error: Error, capture: boolean): string | undefined {
  if (capture) return undefined;
  if (error.name === 'OutputError') return outputErrorWithoutContents(error);
  const quoted = toolInputParseMessage(error);
  return quoted === undefined ? withoutQuotedValue(error) : withoutToolInput(error.message, quoted);
}
