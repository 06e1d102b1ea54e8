/**
 * The SDK's request options in the third argument of `toolRunner`, beside the runner's own keys
 * (SPEC §9.1): `toolRunner(client, params, { headers, timeout, signal, ... })` sends them with every
 * request, as `client.beta.messages.toolRunner(params, options)` does.
 */
import type { RequestOptions } from './client.js';
import { wrongType, wrongValue } from './described.js';

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
 * Throws a clear error for a request option the SDK would refuse only as a request goes (after the
 * run began, as a failure of the reply) or that would break it later: a `signal` that is no
 * AbortSignal (the SDK's retry timer then throws past the run, and the process ends), a `timeout`
 * that is no whole number of ms from 1, `maxRetries` that is no whole number of 0 or more, `headers`
 * or `query` that are no object.
 */
export function checkRequestOptionValues(options: Record<string, unknown>, where: string): void {
  const { signal, timeout, maxRetries, headers, query } = options;
  if (signal !== undefined && signal !== null && !isAbortSignal(signal)) throw wrongType(signal, `${where}.signal must be an AbortSignal (from an AbortController)`);
  // A timeout of 0 ends every request at once (the SDK takes it): no one means that.
  if (timeout !== undefined && !(typeof timeout === 'number' && Number.isInteger(timeout) && timeout >= 1)) throw wrongValue(timeout, `${where}.timeout must be a whole number of ms, 1 or more`);
  if (maxRetries !== undefined && !(typeof maxRetries === 'number' && Number.isInteger(maxRetries) && maxRetries >= 0)) throw wrongValue(maxRetries, `${where}.maxRetries must be a whole number of 0 or more`);
  for (const [name, value] of [['headers', headers], ['query', query]] as const) {
    if (value !== undefined && value !== null && typeof value !== 'object') throw wrongType(value, `${where}.${name} must be an object`);
  }
}

/** An AbortSignal, of this realm or another (a worker's, a test environment's): what the SDK and the runner call on it. */
function isAbortSignal(value: unknown): boolean {
  const signal = value as { aborted?: unknown; addEventListener?: unknown; removeEventListener?: unknown } | null;
  return typeof signal === 'object' && signal !== null && typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function' && typeof signal.removeEventListener === 'function';
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
