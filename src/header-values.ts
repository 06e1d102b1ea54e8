/**
 * fetch's error for a header it cannot send quotes the header's value (`Headers.append: "Bearer sk-ant-…⏎…" is an invalid
 * header value.`, thrown as the SDK builds its request): an API key with a line break in it (a key file of two lines read
 * whole) showed whole in the run's error: on the inspector's page, in its recorded file, on OpenTelemetry spans. The value
 * is left out of what those record.
 */
const QUOTED_VALUE = /"[^]*?" is an invalid header value/g;

/** `message` without the value of a header fetch refused. */
export function withoutHeaderValues(message: string): string {
  return message.includes('invalid header value') ? message.replace(QUOTED_VALUE, '(the value, not shown) is an invalid header value') : message;
}
