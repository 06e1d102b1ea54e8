/**
 * The SDK's request options in the third argument of `toolRunner`, beside the runner's own keys
 * (SPEC §9.1): `toolRunner(client, params, { headers, timeout, signal, ... })` sends them with every
 * request, as `client.beta.messages.toolRunner(params, options)` does.
 */
import type { RequestOptions } from './client.js';

/** Keys of the SDK's request options that the runner sets itself for each request: never the caller's. */
const SET_BY_THE_RUNNER = ['method', 'path', 'body', 'stream', '__binaryResponse', '__streamClass'] as const;

/** The SDK's request options a caller may give for every request of a run. */
export type RunRequestOptions = Omit<RequestOptions, (typeof SET_BY_THE_RUNNER)[number]>;

/** The request option keys the third argument takes at its top level. */
export const REQUEST_OPTION_KEYS: ReadonlySet<string> = new Set([
  'headers',
  'signal',
  'timeout',
  'maxRetries',
  'query',
  'fetchOptions',
  'middleware',
  'fallbackState',
  'idempotencyKey',
  'defaultBaseURL',
  'openTelemetry',
]);

/** Throws a clear error for a request option the runner sets itself. */
export function checkRequestOptionKey(key: string, where: string): void {
  if ((SET_BY_THE_RUNNER as readonly string[]).includes(key)) {
    throw new TypeError(`${where}: the request option '${key}' is set by the runner for each request; leave it out`);
  }
}

/**
 * The request options of every request: `options.requestOptions`, with the SDK's request options
 * given at the top level of `options` over them (every key but the runner's `own`, checked before:
 * the SDK's, and the caller's own that middleware reads).
 */
export function initialRequestOptions(options: Record<string, unknown>, nested: RequestOptions | undefined, own: ReadonlySet<string>): RequestOptions {
  let merged: Record<string, unknown> | undefined = nested ? { ...nested } : undefined;
  for (const key in options) {
    if (own.has(key) || options[key] === undefined) continue;
    (merged ??= {})[key] = options[key];
  }
  if (merged) for (const key in merged) checkRequestOptionKey(key, 'toolRunner: options.requestOptions');
  return (merged as RequestOptions | undefined) ?? NO_OPTIONS;
}

const NO_OPTIONS: RequestOptions = Object.freeze({});
