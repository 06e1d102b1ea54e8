/**
 * An `OutputError`'s message without the model's text (which its parse error may quote): for places
 * that show contents only when asked (`captureContent`), the inspector's records and spans. A module
 * of its own, importing nothing: `tool-runner/inspect` loads without the SDK.
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

/** The message of `error` where contents show only when captured: an `OutputError`'s without the model's text; `undefined` to show it as it is. */
export function hiddenMessage(error: Error, capture: boolean): string | undefined {
  if (capture) return undefined;
  if (error.name === 'OutputError') return outputErrorWithoutContents(error);
  const quoted = toolInputParseMessage(error);
  return quoted === undefined ? undefined : withoutToolInput(error.message, quoted);
}
