/**
 * CORS for the testing kit's server, so that a browser page (the SDK with `dangerouslyAllowBrowser`)
 * can use it: preflights are answered, the SDK's request headers allowed, `request-id` and
 * `retry-after` readable by the page.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The request headers a page may send: the API key, the API's and the SDK's own, and the body's type.
 * `user-agent` too: the SDK sets it, and Firefox (which lets a page set it) asks for it in the preflight.
 */
const ALLOWED = /^(x-api-key|anthropic-[a-z0-9-]+|x-stainless-[a-z0-9-]+|content-type|accept|authorization|idempotency-key|user-agent)$/;

/** Sets the headers every answer carries (before any `writeHead`, which keeps them). */
export function allowPages(res: ServerResponse): void {
  res.setHeader('access-control-allow-origin', '*');
  res.setHeader('access-control-expose-headers', 'request-id, retry-after');
}

/** Answers a preflight (true when `req` was one): 204 with the methods and the asked headers that are allowed. */
export function answerPreflight(req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== 'OPTIONS') return false;
  const asked = String(req.headers['access-control-request-headers'] ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => ALLOWED.test(name));
  res.writeHead(204, {
    'access-control-allow-methods': 'POST, GET, OPTIONS',
    'access-control-allow-headers': asked.length > 0 ? asked.join(', ') : 'x-api-key, content-type',
    'access-control-max-age': '600',
    'content-length': '0',
  });
  res.end();
  return true;
}
