/**
 * The SDK's `x-stainless-helper` telemetry header, as its runner sends it: the runner's tag, the tags
 * of the SDK helpers that made the run's tools and messages (`mcpTool`, the toolsets, ...), and
 * `message-thread` when the run may go over a thread. This runner's tag is `tool-runner`: it is not
 * the SDK's `BetaToolRunner`, and says so.
 */
import type { RequestOptions } from './client.js';

const HEADER = 'x-stainless-helper';
const RUNNER_TAG = 'tool-runner';
/** The description of the symbol the SDK marks what its helpers make with (a symbol it does not export). */
const HELPER_MARK = 'anthropic.sdk.stainlessHelper';
/** The SDK's merged-headers object carries this registered brand. */
const NULLABLE_HEADERS = Symbol.for('brand.privateNullableHeaders');

/** The run's tags, from its tools and messages as given (and their blocks, and tools a `tool_addition` defines). */
export function helperTags(tools: readonly unknown[] | undefined, messages: readonly unknown[]): string {
  const tags = new Set<string>([RUNNER_TAG]);
  const mark = (value: unknown) => {
    const tag = sdkHelperTag(value);
    if (tag !== undefined) tags.add(tag);
  };
  for (const tool of tools ?? []) mark(tool);
  for (const message of messages) {
    mark(message);
    const content = (message as { content?: unknown }).content;
    if (!Array.isArray(content)) continue;
    for (const block of content) {
      mark(block);
      mark((block as { tool?: { definition?: unknown } } | null)?.tool?.definition);
    }
  }
  return [...tags].join(', ');
}

/** The name of the SDK helper that made `value` (`'mcpTool'`, `'browser-toolset'`, ...), from the SDK's mark on it. */
export function sdkHelperTag(value: unknown): string | undefined {
  const mark = sdkHelperMark(value);
  const tag = mark && (value as Record<symbol, unknown>)[mark];
  return typeof tag === 'string' ? tag : undefined;
}

/** The SDK's helper mark on `value` (a symbol the SDK does not export, found by its description). */
export function sdkHelperMark(value: unknown): symbol | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return Object.getOwnPropertySymbols(value).find((key) => key.description === HELPER_MARK);
}

type HeaderValue = string | null;

/**
 * The request options of a request: the caller's, with the helper header around theirs, as one plain
 * object (the SDK's stream helper spreads the headers it is given, so they must be an object).
 */
export function withHelperHeader(options: RequestOptions, tags: string, threaded: boolean): RequestOptions {
  // Most runs give no request options: those share one frozen object per set of tags (nothing held per run).
  if (isEmpty(options)) {
    const key = `${tags}|${threaded}`;
    let shared = SHARED.get(key);
    if (!shared) SHARED.set(key, (shared = Object.freeze(withHeader(options, tags, threaded))));
    return shared;
  }
  return withHeader(options, tags, threaded);
}

const SHARED = new Map<string, RequestOptions>();

function isEmpty(options: RequestOptions): boolean {
  for (const _ in options) return false;
  return true;
}

function withHeader(options: RequestOptions, tags: string, threaded: boolean): RequestOptions {
  const headers: Record<string, HeaderValue> = {};
  /** The name each header has in `headers`, by its lower-case name. */
  const names = new Map<string, string>();
  const helper: string[] = [tags];
  for (const [name, value, replaces] of headerRows(options.headers)) {
    const lower = name.toLowerCase();
    const given = names.get(lower);
    if (lower === HEADER) {
      // A null removes the header, as in the SDK (the runner's tags with it; a thread's mark comes after).
      if (value !== null) helper.push(value);
      else helper.length = 0;
    } else if (given !== undefined && !replaces && value !== null && headers[given] != null) {
      // A header given several values (an array, repeated rows) has them all, as the SDK sends it.
      headers[given] = `${headers[given]}, ${value}`;
    } else {
      if (given !== undefined) delete headers[given];
      headers[name] = value;
      names.set(lower, name);
    }
  }
  if (threaded) helper.push('message-thread');
  // Nothing left (a null without a thread): null, which the SDK reads as no such header.
  headers[HEADER] = [...new Set(helper.join(',').split(',').map((tag) => tag.trim()).filter(Boolean))].join(', ') || null;
  return { ...options, headers };
}

/**
 * The caller's headers as rows, whatever form they take (object, `Headers`, rows, the SDK's merged headers). `replaces`:
 * the row replaces the values given before under that name, as an object's key does in the SDK (its array's other values,
 * and repeated rows, add to it).
 */
function headerRows(headers: unknown): Array<[string, HeaderValue, boolean]> {
  if (headers == null || typeof headers !== 'object') return [];
  if (NULLABLE_HEADERS in headers) {
    const { values, nulls } = headers as unknown as { values: Headers; nulls: Set<string> };
    return [...[...values.entries()].map(replacing), ...[...nulls].map((name): [string, HeaderValue, boolean] => [name, null, true])];
  }
  if (headers instanceof Headers) return [...headers.entries()].map(replacing);
  const byKey = !Array.isArray(headers);
  const entries: Array<[string, unknown]> = byKey ? Object.entries(headers) : (headers as Array<[string, unknown]>);
  const rows: Array<[string, HeaderValue, boolean]> = [];
  for (const [name, value] of entries) {
    let first = byKey;
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one === undefined) continue;
      rows.push([name, one === null ? null : String(one), first]);
      first = false;
    }
  }
  return rows;
}

const replacing = ([name, value]: [string, string]): [string, HeaderValue, boolean] => [name, value, true];
