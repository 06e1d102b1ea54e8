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

/** The message of `error` where contents show only when captured: an `OutputError`'s without the model's text; `undefined` to show it as it is. */
export function hiddenMessage(error: Error, capture: boolean): string | undefined {
  return !capture && error.name === 'OutputError' ? outputErrorWithoutContents(error) : undefined;
}
