/** The API's errors as the testing kit's server answers them: what a script asks for, and its HTTP answer. */
import type { ServerResponse } from 'node:http';
import { apiId } from './blocks.js';
import { exposing } from './cors.js';

/** An API error to answer with instead of a reply. */
export interface ScriptedError {
  /** HTTP status: 400, 401, 403, 404, 413, 429, 500, 529, ... */
  status: number;
  /** The API's error type; derived from the status when left out (`overloaded_error` for 529, ...). */
  type?: string | undefined;
  message?: string | undefined;
  /** Seconds, sent as the `retry-after` header (fractions allowed: the SDK honours them; 0 it reads as no header, and backs off as usual). */
  retryAfter?: number | undefined;
  /** For a streamed request: answer 200, send this many events (all, when the reply has fewer), then an SSE `error` event. */
  afterEvents?: number | undefined;
  /** The error's `details` (e.g. `{ error_code: 'thread_not_found' }`), as the API sends them. */
  details?: Record<string, unknown> | undefined;
  /** More headers of the error answer (not of a stream's `afterEvents` error, which comes after a 200): `x-should-retry: 'false'` (the SDK then does not retry it), `retry-after-ms`, ... */
  headers?: Record<string, string> | undefined;
}

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

/** The API's error body; `requestId` is the one the answer's `request-id` header carries. */
export function errorBody(error: ScriptedError, requestId: string) {
  const type = error.type ?? ERROR_TYPES[error.status] ?? 'api_error';
  return {
    type: 'error' as const,
    error: { type, message: error.message ?? `Mock ${type} (${error.status})`, ...(error.details && { details: error.details }) },
    request_id: requestId,
  };
}

/** The API's answer to a prompt longer than the context window, word for word. */
export function promptTooLong(tokens: number, limit: number): ScriptedError {
  return { status: 400, type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > ${limit} maximum` };
}

export function sendError(res: ServerResponse, error: ScriptedError): void {
  // One id per answer, in the header and the body, as the API sends it.
  const requestId = apiId('req');
  // Their names in lower case, as HTTP headers are one whatever their case: the answer's own two stay.
  const own = Object.entries(error.headers ?? {}).map(([name, value]) => [name.toLowerCase(), value]);
  const headers: Record<string, string> = { ...Object.fromEntries(own), 'content-type': 'application/json', 'request-id': requestId };
  if (own.length > 0) headers['access-control-expose-headers'] = exposing(own.map(([name]) => name!));
  if (error.retryAfter !== undefined) headers['retry-after'] = String(error.retryAfter);
  res.writeHead(error.status, headers);
  res.end(JSON.stringify(errorBody(error, requestId)));
}
