/**
 * Fallbacks (`options.fallback`): a request that still fails after the client's own retries with an
 * overload, a server error or a connection error goes to each entry in order — another client
 * (Bedrock, Vertex, a second key) and/or another model — with the whole history. Each request starts
 * at the primary again. How a request reaches one entry is the caller's (turn.ts); the order, what
 * falls back and what the logs say are here.
 */
import { APIConnectionError, APIError, APIUserAbortError, AnthropicError } from '@anthropic-ai/sdk';
import { errorName, safeString } from './described.js';
import type { ClientLike, OpenedStream } from './client.js';
import type { LeveledLogger } from './log.js';
import type { MessageCreateParamsBase } from './types.js';
import { cutText } from './cut.js';

/**
 * One entry of `options.fallback`: the client to send to (default: the run's), and params that
 * replace the run's for that entry only (`model`, `max_tokens`, `thinking`, `betas`, ...).
 */
export type FallbackEntry = { client?: ClientLike | undefined } & { [K in keyof EntryParams]?: EntryParams[K] | undefined };

/** The params an entry may replace; one given as `undefined` keeps the run's (`model: process.env.FALLBACK_MODEL`, unset). */
type EntryParams = Omit<MessageCreateParamsBase, NotOverridden>;

/** Params an entry may not replace: the runner sets them for each request. */
type NotOverridden = 'messages' | 'stream' | 'thread' | 'tools';

/** HTTP statuses that fall back (after the client's retries): rate limit, server errors, overload. */
const FALLBACK_STATUSES: ReadonlySet<number> = new Set([429, 500, 502, 503, 504, 529]);
/** The API's error types of the same failures, as an SSE `error` event names them (it has no status). */
const FALLBACK_TYPES: ReadonlySet<string> = new Set(['rate_limit_error', 'api_error', 'overloaded_error', 'timeout_error']);

/**
 * Marks an error of a stream that failed after its first event, read whole elsewhere (a durable
 * run's step): it does not fall back, as a stream the caller reads does not past its first event.
 * A registered symbol, so that every copy of the runner (the CommonJS build bundles each entry) reads it.
 */
const AFTER_FIRST_EVENT = Symbol.for('tool-runner.failedAfterFirstEvent.v1');

export function failedAfterFirstEvent<E extends object>(error: E): E {
  Object.defineProperty(error, AFTER_FIRST_EVENT, { value: true });
  return error;
}

export function isFailedAfterFirstEvent(error: unknown): boolean {
  return typeof error === 'object' && error !== null && AFTER_FIRST_EVENT in error;
}

/**
 * Whether the reply of fallback entry `index` (none: the primary's) is in a container of the entry's own: of its client
 * (another key, region or platform), or the one it names. The run's own requests never name it; one of an entry that
 * sends with the run's client (`runClient`: given none, given that very client, or a copy of it), in the container the
 * server chose, is the run's. A durable run's entries all hold step clients: the client the entry was given is the one they name.
 */
export function inContainerOfItsOwn(entries: readonly FallbackEntry[] | undefined, index: number | undefined, runClient: ClientLike): boolean {
  const entry = index === undefined ? undefined : entries?.[index];
  if (entry === undefined) return false;
  return entry.container !== undefined || sendsElsewhere(entry.client, runClient);
}

/** Whether an entry given `client` sends with a client of its own, not the run's (`runClient`, or a copy of it). */
function sendsElsewhere(client: ClientLike | undefined, runClient: ClientLike): boolean {
  const given = givenClientOf(client);
  return given !== undefined && given !== runClient && !sameAccount(given, givenClientOf(runClient) ?? runClient);
}

/**
 * Whether two clients send as one account: the same object, or one of a class sending with the same key (or token) to the
 * same base URL, as `client.withOptions({ maxRetries })` does (an entry's retries or timeout are its client's, which it
 * may not set). Such an entry reaches the run's container, and its files: sent none, the fallback's code ran without them.
 * Another key may be of the same account too, but nothing tells: its entry starts a container of its own.
 */
function sameAccount(a: ClientLike, b: ClientLike): boolean {
  if (a === b) return true;
  type Account = { constructor?: unknown; baseURL?: unknown; apiKey?: unknown; authToken?: unknown };
  const [one, other] = [a as Account, b as Account];
  const keyed = (typeof one.apiKey === 'string' && one.apiKey !== '') || (typeof one.authToken === 'string' && one.authToken !== '');
  return keyed && one.constructor === other.constructor && typeof one.baseURL === 'string' && one.baseURL === other.baseURL && one.apiKey === other.apiKey && one.authToken === other.authToken;
}

/** Whether a failed request goes on to the next entry: an overload, a server or a connection error; never an abort, nor a stream past its first event. */
export function fallsBack(error: unknown): boolean {
  if (error instanceof APIUserAbortError) return false;
  if (isFailedAfterFirstEvent(error)) return false;
  if (error instanceof APIConnectionError) return true;
  if (!(error instanceof APIError)) return false;
  return error.status === undefined ? FALLBACK_TYPES.has(String(error.type)) : FALLBACK_STATUSES.has(error.status);
}

/** An entry as the chain sends to it: its client and the params it replaces. */
export interface FallbackTarget {
  readonly index: number;
  readonly client: ClientLike;
  /** The entry without `client`: params laid over the request's body. */
  readonly overrides: Readonly<Record<string, unknown>>;
  /** How the logs name it: `fallback 0 (AnthropicVertex, model 'claude-…')`. */
  readonly label: string;
  /** It sends with a client of its own (another key, region or platform), which cannot reach the run's container. */
  readonly elsewhere: boolean;
}

/**
 * The `tool_choice` of the requests the runner shapes itself (the answer at a limit, a compaction's
 * summary): this very object, so that an entry's own `tool_choice` does not replace it.
 */
export const TOOL_CHOICE_NONE = Object.freeze({ type: 'none' as const });

/**
 * The body an entry gets: the request's, with the entry's params laid over it. An entry's
 * `output_config` keeps the run's output format (`options.output`), which every request carries;
 * a request the runner asked to have no calls (`TOOL_CHOICE_NONE`) keeps it.
 */
export function bodyFor(target: FallbackTarget, body: Record<string, unknown>): Record<string, unknown> {
  const sent = { ...body, ...target.overrides };
  // The run's container (the one its replies chose, or one named in the params) is of the run's client: named to another
  // key or platform it is refused (a 4xx, which does not fall back), and the entry could not answer a run that ran code.
  // The entry's own requests start a container of theirs; a config without an id (`{ skills }`) goes as it is.
  if (target.elsewhere && !Object.hasOwn(target.overrides, 'container')) withoutContainerId(sent);
  if (body['tool_choice'] === TOOL_CHOICE_NONE) sent['tool_choice'] = TOOL_CHOICE_NONE;
  const format = (body['output_config'] as { format?: unknown } | undefined)?.format;
  const own = target.overrides['output_config'];
  // (`null`, in plain JavaScript, is no config of the entry's own: the format goes all the same.)
  if (format !== undefined && typeof own === 'object') sent['output_config'] = { ...own, format };
  return sent;
}

/** `body` without the id of the container it names: the container left out, or its config kept without the id. */
function withoutContainerId(body: Record<string, unknown>): void {
  const container = body['container'];
  if (container == null) return;
  if (typeof container !== 'object') {
    delete body['container'];
    return;
  }
  const { id: _id, ...config } = container as Record<string, unknown>;
  if (Object.keys(config).length > 0) body['container'] = config;
  else delete body['container'];
}

/**
 * The fallbacks of a run, in order. `send` tries the primary, then each entry while the failure
 * falls back; a signal that aborted, a failure that does not fall back, or the last entry's failure
 * ends the chain with that error.
 */
export class FallbackChain {
  readonly #targets: readonly FallbackTarget[];
  readonly #logger: LeveledLogger;

  /** `undefined` when there is no entry: the run sends to its client only. */
  static of(entries: readonly FallbackEntry[] | undefined, primary: ClientLike, logger: LeveledLogger): FallbackChain | undefined {
    return entries && entries.length > 0 ? new FallbackChain(entries, primary, logger) : undefined;
  }

  private constructor(entries: readonly FallbackEntry[], primary: ClientLike, logger: LeveledLogger) {
    this.#logger = logger;
    this.#targets = entries.map((entry, index) => {
      const { client, ...given } = entry;
      // A param given as undefined (`model: process.env.FALLBACK_MODEL`, unset) keeps the run's: laid over the body, it would remove it.
      const overrides = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
      return { index, client: client ?? primary, overrides, label: labelOf(index, client, overrides['model']), elsewhere: sendsElsewhere(client, primary) };
    });
  }

  /**
   * Sends with `attempt(undefined)` (the primary), then `attempt(target)` for each entry while the
   * failure falls back. `last` tells an attempt that no entry follows it.
   */
  async send<T>(attempt: (target: FallbackTarget | undefined, last: boolean) => PromiseLike<T>, signal: AbortSignal | null | undefined): Promise<T> {
    const targets = this.#targets;
    let target: FallbackTarget | undefined;
    for (;;) {
      const next = targets[target === undefined ? 0 : target.index + 1];
      try {
        return await attempt(target, next === undefined);
      } catch (error) {
        if (next === undefined || signal?.aborted || !fallsBack(error)) throw error;
        this.#logger.warn(
          `${target === undefined ? 'The request failed on the primary' : `The request failed on ${target.label}`} after the client's retries (${describe(error)}); sending it to ${next.label}`,
        );
        target = next;
      }
    }
  }
}

/**
 * Waits for a stream's first event before handing the stream on, so that a stream that fails
 * before it (the connection dropped after the headers, an `error` event, no event at all) fails
 * its attempt, and falls back, while the caller has seen nothing of it. Past the first event a
 * failure is the stream's, as without fallbacks (the caller may have shown its text).
 */
export async function withFirstEvent(opened: OpenedStream): Promise<OpenedStream> {
  const { data } = opened;
  const events = data[Symbol.asyncIterator]();
  let first: IteratorResult<unknown>;
  try {
    first = await events.next();
  } catch (error) {
    // An `error` event is the API's typed error; a body that is not JSON is not a dropped stream.
    if (error instanceof AnthropicError || error instanceof SyntaxError) throw error;
    throw beforeFirstEvent(error);
  }
  if (first.done) {
    if (data.controller.signal.aborted) throw new APIUserAbortError();
    throw beforeFirstEvent();
  }
  async function* replay(firstEvent: unknown): AsyncGenerator<unknown> {
    try {
      yield firstEvent;
      for (let next = await events.next(); !next.done; next = await events.next()) yield next.value;
    } finally {
      // A reader that stops early (an abort, a `break`) closes the response too.
      await events.return?.();
    }
  }
  return { response: opened.response, data: Object.assign(replay(first.value), { controller: data.controller }) };
}

/** A stream that broke (`broke`: what reading it threw) or ended before its first event: a connection error, which falls back. */
export function beforeFirstEvent(broke?: unknown): APIConnectionError {
  if (broke === undefined) return new APIConnectionError({ message: 'The stream ended before its first event.' });
  return new APIConnectionError({ message: 'The stream broke before its first event.', cause: broke instanceof Error ? broke : undefined });
}

/** The client an entry's logs name, when its client wraps another (a durable run's step client). */
const NAMED_AS = Symbol.for('tool-runner.fallbackNamedAs.v1');

/** `client`, named in the logs as the entry's own `named` (`undefined`: the entry gave none). */
export function namedAs<C extends ClientLike>(client: C, named: ClientLike | undefined): C {
  return Object.defineProperty(client, NAMED_AS, { value: named });
}

/** The client an entry was given, as the logs name it: the one `namedAs` names, else `client` itself. */
export function givenClientOf(client: ClientLike | undefined): ClientLike | undefined {
  return client && NAMED_AS in client ? (client as { [NAMED_AS]: ClientLike | undefined })[NAMED_AS] : client;
}

function labelOf(index: number, given: ClientLike | undefined, model: unknown): string {
  const client = givenClientOf(given);
  const parts: string[] = [];
  // The SDK's client classes by name (`AnthropicBedrock`, ...); a bundler's renamed copy (`Anthropic2`, `e`) is no name to show.
  const named = client?.constructor?.name;
  if (client) parts.push(named && /^Anthropic(?:[A-Z][a-z]+)?$/.test(named) ? `${named} client` : 'its own client');
  if (typeof model === 'string') parts.push(`model '${model}'`);
  return `fallback ${index}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
}

/** The error in a few words: its class, and for an API error its status, type and the API's message. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return safeString(error);
  const api = error instanceof APIError && error.apiMessage ? [error.status, error.type].filter((part) => part != null).join(' ') : undefined;
  const message = api === undefined ? error.message : `${api}: ${(error as APIError).apiMessage}`;
  return `${errorName(error)}: ${message.length > 200 ? `${cutText(message, 200)}…` : message}`;
}
