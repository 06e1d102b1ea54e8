/**
 * CORS for the testing kit's server, so that a browser page (the SDK with `dangerouslyAllowBrowser`)
 * can use it: preflights are answered, the request headers a page asks for allowed, `request-id`,
 * `retry-after` and the rest the SDK reads readable by the page.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** A header name (an HTTP token): what a preflight may ask for, and the answer may repeat. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/** The answer's headers a page may read: those the SDK reads (its retries among them). */
const EXPOSED = ['request-id', 'retry-after', 'retry-after-ms', 'x-should-retry'];

/** Sets the headers every answer carries (before any `writeHead`, which keeps them). */
export function allowPages(res: ServerResponse): void {
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-expose-headers', EXPOSED.join(', '));
}

/**
 * The `access-control-expose-headers` of an answer that carries headers of the script's own (a
 * scripted error's `headers`): those too, so that the SDK in a page reads what it reads in Node.
 */
export function exposing(names: readonly string[]): string {
  return [...new Set([...EXPOSED, ...names])].join(', ');
}

/**
 * Answers a preflight (true when `req` was one): 204 with the methods and every header asked for.
 * A local test server allows them all: besides the SDK's own (`x-api-key`, `anthropic-*`,
 * `x-stainless-*`, `content-type`, `user-agent`), a page sends the trace context the SDK adds when
 * tracing (`traceparent`, `tracestate`, `baggage`, a propagator's own) and the caller's `headers`.
 */
export function answerPreflight(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== 'OPTIONS') return false;
  const asked = String(req.headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => HEADER_NAME.test(name));
  res.writeHead(204, {
    'access-control-allow-methods': 'POST, GET, OPTIONS',
    'access-control-allow-headers': asked.length > 0 ? asked.join(', ') : 'x-api-key, content-type',
    'access-control-max-age': '600',
    'content-length': '0',
  });
  res.end();
  return true;
}
