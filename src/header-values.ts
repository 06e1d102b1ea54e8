/**
 * fetch's error for a header it cannot send quotes the header's value (`Headers.append: "Bearer sk-ant-…⏎…" is an invalid
 * header value.`, thrown as the SDK builds its request): an API key with a line break in it (a key file of two lines read
 * whole) showed whole in the run's error: on the inspector's page, in its recorded file, on OpenTelemetry spans. The value
 * is left out of what those record.
 */
const AFTER_VALUE = '" is an invalid header value';
const LEFT_OUT = '(the value, not shown) is an invalid header value';

/**
 * `message` without the value of a header fetch refused: from the first quote to the words after the value (the value may
 * hold quotes), as `/"[^]*?" is an invalid header value/g` would, in one pass. That pattern looked from each quote to the
 * end for the words: a message of a long JSON after them (a hook's error quoting a result of 400 kB) took 20 s, the
 * process that ran the run blocked.
 */
export function withoutHeaderValues(message: string): string {
  if (!message.includes('invalid header value')) return message;
  let shown = '';
  let from = 0;
  for (;;) {
    const open = message.indexOf('"', from);
    const close = open < 0 ? -1 : message.indexOf(AFTER_VALUE, open + 1);
    if (close < 0) return shown + message.slice(from);
    shown += message.slice(from, open) + LEFT_OUT;
    from = close + AFTER_VALUE.length;
  }
}
