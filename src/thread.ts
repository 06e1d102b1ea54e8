/**
 * Message threads (beta `message-threads-2026-08-12`): the server holds the conversation between
 * turns, so each request sends only the new messages. The runner keeps the whole history either
 * way; this decides, per request, whether it goes out as a `create` (the whole history), as a
 * `continue` from the last reply (only what the server lacks), or without a thread at all, and
 * how to recover when the server rejects a thread.
 */
import { APIError } from '@anthropic-ai/sdk';
import type { ClientLike } from './client.js';
import type { LeveledLogger } from './log.js';
import { withFields } from './copy.js';
import { withoutBlankText } from './history.js';
import type { BetaMessage, BetaMessageParam } from './types.js';

export const MESSAGE_THREADS_BETA = 'message-threads-2026-08-12';

/** Rejections a full replay under a new thread recovers from. */
const REPLAY_CODES = ['thread_not_found', 'thread_already_continued', 'thread_continue_in_flight', 'thread_fingerprint_mismatch'];

/** What the next request builds on: the reply it continues from, and what the server holds with it. */
interface Anchor {
  previousMessageId: string;
  /** How many messages of the history the server holds: those sent so far and the reply. */
  held: number;
  /**
   * The history array sent (the runner only appends to it; its first `held - 1` messages went
   * out), to check that a history the caller set still starts with them.
   */
  sent: readonly BetaMessageParam[] | undefined;
  /** The reply's content as received, to check the history holds it right after `sent`. */
  replyContent: unknown;
  system: unknown;
  tools: unknown;
  model: unknown;
  /** The reply is the first of a thread that replaced one the server had lost (`thread_not_found`). */
  replacesLost: boolean;
  /**
   * The reply is not in the history (it came empty, or of blank text only): the server holds it after the first `held`
   * messages, and a request continues from it only if it sends nothing new.
   */
  notKept?: true;
}

/** The part of a snapshot that lets a resumed run continue its thread. */
export interface ThreadSnapshot {
  previous_message_id: string;
  held: number;
  system?: unknown;
  tools?: unknown;
  model?: unknown;
}

/** Whether a run on this client with these params goes over a thread (the SDK's rule). */
export function threadsAvailable(client: ClientLike, thread: false | undefined): boolean {
  return thread !== false && (client as { _supportsMessageThreads?: boolean })._supportsMessageThreads === true;
}

/**
 * A run's thread state to start from: a snapshot's thread (if it held one) and history, and whether a
 * reply had arrived (the run a snapshot was taken of had one, or an SDK thread holds some).
 */
export interface Resumed {
  snapshot: ThreadSnapshot | undefined;
  messages: readonly BetaMessageParam[];
  replied: boolean;
  /**
   * Whether a message of the history is a reply the run received (`undefined`: the run knows none, resumed say): the
   * cache markers are left out up to the last one, as the SDK's thread does, not past an assistant message the caller wrote.
   */
  isReply?: ((message: BetaMessageParam) => boolean | undefined) | undefined;
}

export class MessageThread {
  /** `off`: no thread field; `on`: threading; `stopped`: the server cannot thread this run. */
  #mode: 'off' | 'on' | 'stopped';
  #anchor: Anchor | undefined;
  /** The request in flight (`body`, as given to `wireBody`): what the reply will be anchored on. */
  #pending: (Omit<Anchor, 'previousMessageId' | 'replyContent'> & { body: object }) | undefined;
  /**
   * The server lost the thread (`thread_not_found`): the next new thread replaces it. Lost again right after (its first
   * continue), the server may be unable to hold threads at all: the run goes on without one, as the SDK's runner does
   * (else every turn would be a rejected continue, then the whole history again).
   */
  #replayingLost = false;
  /**
   * A request failed since the last reply: the next one continues only if the history holds what the
   * server holds (the caller may have set the history before the failed request, whose retry the
   * runner prepares as if it had only appended).
   */
  #failedSinceReply = false;
  /**
   * The run was set to go over a thread (its own, or an SDK thread's): the cache markers of answered
   * messages are for the request that first sent them, and each request that sends the whole history
   * (a new thread, a fallback, a summary) leaves them out, as the SDK's thread does.
   */
  readonly #strips: boolean;
  /**
   * A run that strips, once a reply arrived in it (or in the run a snapshot was taken of): the markers
   * are left out up to the last reply, as the SDK's thread leaves out those of the replies it received;
   * a run's first request sends the caller's history as given.
   */
  #replied: boolean;
  /** The request options last given to `requestOptions`, and what it made of them. */
  #optionsIn: unknown;
  #optionsOut: unknown;

  readonly #isReply: Resumed['isReply'];

  /** Without threads every method returns at once (or writes only `undefined`), so one instance serves all runs. */
  static readonly #unthreaded = new MessageThread(false);

  /**
   * The thread of a run: the shared, stateless one for every run that sends the whole history. A
   * resumed run (`snapshot`, its `messages`) continues the thread from the reply the history holds.
   */
  static of(enabled: boolean, resumed: Resumed | undefined, overSdkThread = false): MessageThread {
    if (enabled) return new MessageThread(true, resumed);
    // Over an SDK thread (`toolRunner(thread, ...)`) the thread sends the turns; the requests it does not (fallbacks, summaries) strip.
    return overSdkThread ? new MessageThread(false, resumed, true) : MessageThread.#unthreaded;
  }

  private constructor(enabled: boolean, resumed?: Resumed, overSdkThread = false) {
    this.#mode = enabled ? 'on' : 'off';
    this.#strips = enabled || overSdkThread;
    this.#replied = this.#strips && resumed?.replied === true;
    this.#isReply = resumed?.isReply;
    const snapshot = resumed?.snapshot;
    const messages = resumed?.messages;
    if (!enabled || !snapshot) return;
    const { previous_message_id, held, system, tools, model } = snapshot;
    const reply = messages?.[held - 1];
    // The history as the snapshot holds it is what the server holds up to the reply: later changes are checked against it.
    if (reply?.role === 'assistant') this.#anchor = { previousMessageId: previous_message_id, held, sent: messages, replyContent: reply.content, system, tools, model, replacesLost: false };
  }

  get threading(): boolean {
    return this.#mode === 'on';
  }

  /** Whether the run was to go over a thread (it may have stopped threading since). */
  get used(): boolean {
    return this.#mode !== 'off';
  }

  /** Forget the thread: the next request replays the whole history under a new one. */
  restart(): void {
    this.#anchor = undefined;
  }

  /**
   * `reply` came empty (or of blank text only) and the history does not keep it. A request that sends the history as it
   * was, a paused turn sent again, continues from it with no new message, as on the SDK's thread (which keeps the reply):
   * the server goes on with its paused work. Anything added after it replays the history (the server would hold the
   * empty reply before it, which the API refuses).
   */
  notKept(reply: BetaMessage): void {
    const anchor = this.#anchor;
    if (anchor?.previousMessageId !== reply.id) return this.restart();
    this.#anchor = { ...anchor, held: anchor.held - 1, replyContent: undefined, notKept: true };
  }

  /**
   * The wire body for `body` (the whole history in `body.messages`): unchanged without threads,
   * else with `thread`, the beta, and on a `continue` only the messages the server lacks (no
   * `system` or `tools`: the server keeps those of the thread). `appendsOnly` says the runner made
   * every change to the history since the last request itself.
   */
  wireBody(body: Record<string, unknown>, appendsOnly: boolean): Record<string, unknown> {
    if (this.#mode !== 'on') return this.unthreaded(body);
    const messages = body['messages'] as BetaMessageParam[];
    const anchor = this.#anchor;
    // A server-side compaction's reply anchors nothing: the run goes on from the compacted history (a new thread), or
    // without a summary from the thread held before, as the SDK's runner, which sends it beside the thread.
    this.#pending = body['compaction'] === undefined ? { held: messages.length, sent: messages, system: body['system'], tools: body['tools'], model: body['model'], body, replacesLost: this.#replayingLost } : undefined;
    const betas = withBeta(body['betas']);
    if (anchor && this.#continues(anchor, body, messages, appendsOnly)) {
      if (this.#pending) this.#pending.replacesLost = false;
      // The server keeps `system` and `tools` of the thread: copied without them.
      const wire: Record<string, unknown> = {};
      for (const key in body) if (key !== 'system' && key !== 'tools') wire[key] = body[key];
      wire['messages'] = messages.slice(anchor.held);
      wire['betas'] = betas;
      wire['thread'] = { type: 'continue', previous_message_id: anchor.previousMessageId };
      return wire;
    }
    const wire = withFields(body, { betas, thread: { type: 'create' } });
    if (this.#replied) wire['messages'] = withoutAnsweredCacheControl(messages, this.#isReply);
    return wire;
  }

  /** The body of a turn sent without a thread: as given, or (the server stopped threading the run) as outside a thread. */
  unthreaded(body: Record<string, unknown>): Record<string, unknown> {
    return this.#mode === 'stopped' ? this.outsideThread(body) : body;
  }

  /**
   * The body of a request that carries the whole history outside the thread (to a fallback entry, a
   * compaction's summary, a turn the server no longer threads): in a run set to go over a thread,
   * the cache markers of answered messages are left out, as on a new thread.
   */
  outsideThread(body: Record<string, unknown>): Record<string, unknown> {
    if (!this.#replied) return body;
    return withFields(body, { messages: withoutAnsweredCacheControl(body['messages'] as BetaMessageParam[], this.#isReply) });
  }

  /** Whether the history is what the server holds plus new messages, with the thread's system, tools and model. */
  #continues(anchor: Anchor, body: Record<string, unknown>, messages: BetaMessageParam[], appendsOnly: boolean): boolean {
    // A server-side compaction request (compactBeforeNextTurn) replays the conversation under a thread of
    // its own; failed, the thread held before goes on (its reply anchors the next, as on the SDK's thread).
    if (messages.length < anchor.held || body['compaction'] !== undefined || (anchor.notKept && messages.length > anchor.held)) return false;
    if (!same(body['system'], anchor.system) || !same(body['tools'], anchor.tools) || !same(body['model'], anchor.model)) return false;
    // Appends only to the very array the server's messages went in: an `onRequest` hook that gave a request messages of
    // its own (`params.messages = [...]`) sent another array, which the run's history does not extend (the messages after
    // its length were taken as held, and a tool's result never went); that, or the history after it, is checked.
    return (appendsOnly && !this.#failedSinceReply && anchor.sent === messages) || holds(anchor, messages);
  }

  /**
   * The request options of an attempt: over a thread, an `anthropic-beta` header the caller set
   * (it replaces the one the SDK builds from `betas`) also names the threads beta.
   */
  requestOptions<O extends { headers?: unknown }>(options: O): O {
    if (this.#mode !== 'on') return options;
    // The same options come every turn: their headers are read once.
    if (this.#optionsIn !== options) {
      this.#optionsOut = withThreadsBetaHeader(options);
      this.#optionsIn = options;
    }
    return this.#optionsOut as O;
  }

  /**
   * The reply arrived whole: the next request continues from it. A refusal, or a reply a fallback
   * model wrote, is not held by the server, and a reply without an id cannot be named: the next request replays the history.
   */
  received(reply: BetaMessage): void {
    // A refusal is not kept, as the SDK's thread drops a refused turn. (The shared thread of the runs that send the whole history keeps nothing.)
    if (this.#strips && reply.stop_reason !== 'refusal') this.#replied = true;
    const pending = this.#pending;
    this.#pending = undefined;
    if (this.#mode !== 'on' || !pending) return;
    this.#anchor = anchorOn(pending, reply);
    if (!this.#anchor) return;
    this.#failedSinceReply = false;
    this.#replayingLost = false;
  }

  /**
   * A fallback answered (another client or model): the server holds nothing of it; the next request starts a new thread.
   * A compaction's reply anchors nothing wherever it came from: without a summary the thread held before goes on.
   */
  answeredElsewhere(compaction: boolean): void {
    if (this.#strips) this.#replied = true;
    this.#pending = undefined;
    if (!compaction) this.#anchor = undefined;
  }

  /**
   * The request of `body` failed without a reply (a broken stream included): the next one continues
   * from the same reply, if the history still holds it. If the server did hold a reply after all, it
   * answers `thread_already_continued`, and the history is replayed. `complete`: the stream broke after
   * the whole message (`message_stop`), which the server holds, so the next request replays at once.
   * (A stream the loop body left fails once the next request may be on its way: that one's stays in flight.)
   */
  failed(body: object, complete = false): void {
    const current = this.#pending?.body === body;
    if (current) this.#pending = undefined;
    this.#failedSinceReply = true;
    if (complete && current) this.#anchor = undefined;
  }

  /**
   * Whether `error` is a thread rejection the next attempt recovers from: a replay of the whole
   * history under a new thread, or no thread for the rest of the run.
   */
  recovers(error: unknown, logger: LeveledLogger): boolean {
    if (this.#mode !== 'on' || !(error instanceof APIError)) return false;
    const details = (error.error as { error?: { details?: { error_code?: unknown; unsupported?: unknown } } } | undefined)?.error?.details;
    const code = details?.error_code;
    if (typeof code !== 'string') return false;
    if (code === 'thread_unsupported_request') {
      const unsupported = Array.isArray(details?.unsupported) ? details.unsupported.join(',') : 'unknown';
      logger.info(`The server cannot thread this run (unsupported: ${unsupported}); sending the whole history from now on`);
      this.#mode = 'stopped';
      this.#anchor = undefined;
      return true;
    }
    if (!REPLAY_CODES.includes(code) || !this.#anchor) return false;
    if (code === 'thread_not_found' && this.#anchor.replacesLost) {
      logger.info(`The server lost the thread again right after a replay (previous_message_id ${this.#anchor.previousMessageId}); sending the whole history without a thread from now on`);
      this.#mode = 'stopped';
      this.#anchor = undefined;
      return true;
    }
    this.#replayingLost = code === 'thread_not_found';
    logger.info(`Thread rejected (${code}, previous_message_id ${this.#anchor.previousMessageId}); replaying the history under a new thread`);
    this.#anchor = undefined;
    return true;
  }

  /**
   * The thread a resumed run continues, if `messages` (the history now) still holds what the server
   * holds: a reply the loop body dropped or replaced (a `break`, taking control) is not continued from.
   */
  toJSON(messages: readonly BetaMessageParam[], added?: BetaMessageParam, arriving?: Arriving): ThreadSnapshot | undefined {
    const pending = this.#pending;
    // A reply still streaming: the thread as it will be once it is received (or answered elsewhere: none to go on from).
    const anchor = !arriving || !pending ? this.#anchor : arriving.elsewhere ? undefined : anchorOn(pending, arriving.reply);
    // A reply the history does not keep: a snapshot cannot say where the server holds it; the resumed run replays.
    if (this.#mode !== 'on' || !anchor || anchor.notKept || !holds(anchor, messages, added)) return undefined;
    return { previous_message_id: anchor.previousMessageId, held: anchor.held, system: anchor.system, tools: anchor.tools, model: anchor.model };
  }
}

/**
 * A streamed reply whose message came, its stream not ended (a snapshot at its `message` event): the server holds it, and
 * refuses a continue from the reply before as continued already. `elsewhere`: a fallback entry wrote it (none held).
 */
export interface Arriving {
  reply: BetaMessage;
  elsewhere: boolean;
}

/**
 * The anchor a reply to the request `pending` gives: none for a refusal, or a reply a fallback model wrote, which the
 * server does not hold. The reply as the history keeps it (without blank text), to know it again in a history the caller set.
 */
function anchorOn(pending: Omit<Anchor, 'previousMessageId' | 'replyContent'>, reply: BetaMessage): Anchor | undefined {
  const fallback = (reply.usage as { iterations?: Array<{ type?: string }> | null }).iterations?.some((it) => it.type === 'fallback_message');
  // A reply without an id (a gateway's) names nothing to continue from: a continue would be refused, a snapshot not resumed.
  if (reply.stop_reason === 'refusal' || fallback || typeof reply.id !== 'string') return undefined;
  const { held, sent, system, tools, model, replacesLost } = pending;
  return { previousMessageId: reply.id, held: held + 1, sent, replyContent: withoutBlankText(reply.content), system, tools, model, replacesLost };
}

/** Whether `messages` (then `added`, if given) start with the messages the anchor's request sent, then its reply. */
function holds(anchor: Anchor, messages: readonly BetaMessageParam[], added?: BetaMessageParam): boolean {
  const { sent } = anchor;
  // A reply the history does not keep: the history must be what was sent, no more (a snapshot cannot say so).
  if (anchor.notKept) return sent !== undefined && !added && messages.length === anchor.held && (sent === messages || messages.every((message, i) => same(message, sent[i])));
  const replyIndex = anchor.held - 1;
  if (!sent || messages.length + (added ? 1 : 0) <= replyIndex) return false;
  // The array the request sent (the runner only appends to it): its first messages are those sent.
  if (sent !== messages) for (let i = 0; i < replyIndex; i++) if (!same(i < messages.length ? messages[i] : added, sent[i])) return false;
  const reply = replyIndex < messages.length ? messages[replyIndex] : added;
  return reply?.role === 'assistant' && same(reply.content, anchor.replyContent);
}

/** `options` with the threads beta added to an `anthropic-beta` header it sets. */
function withThreadsBetaHeader<O extends { headers?: unknown }>(options: O): O {
  const headers = options.headers;
  if (headers === undefined || headers === null || typeof headers !== 'object') return options;
  const entries: Array<[string, unknown]> =
    headers instanceof Headers ? [...headers.entries()] : Array.isArray(headers) ? (headers as Array<[string, unknown]>) : Object.entries(headers);
  const beta = entries.find(([name]) => name.toLowerCase() === 'anthropic-beta');
  if (!beta || typeof beta[1] !== 'string' || beta[1].split(',').map((value) => value.trim()).includes(MESSAGE_THREADS_BETA)) return options;
  const merged = entries.filter(([name]) => name.toLowerCase() !== 'anthropic-beta');
  merged.push(['anthropic-beta', `${beta[1]}, ${MESSAGE_THREADS_BETA}`]);
  return withFields(options, { headers: Object.fromEntries(merged) }) as unknown as O;
}

function withBeta(betas: unknown): unknown {
  if (!Array.isArray(betas)) return [MESSAGE_THREADS_BETA];
  return betas.includes(MESSAGE_THREADS_BETA) ? betas : [...betas, MESSAGE_THREADS_BETA];
}

/** The same object, or equal as JSON. */
function same(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/**
 * A request over a new thread (or beside it) sends every message; the cache markers of messages
 * already answered were meant for the request that first sent them, and all of them at once can
 * exceed what a request may hold (four). Messages after the last reply go as given; the markers
 * in tool additions' definitions go too, as in the SDK's thread.
 */
function withoutAnsweredCacheControl(messages: BetaMessageParam[], isReply: Resumed['isReply']): BetaMessageParam[] {
  let lastReply = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    // The last reply received; with none known, the last assistant message.
    if (messages[i]!.role === 'assistant' && isReply?.(messages[i]!) !== false) {
      lastReply = i;
      break;
    }
  }
  return messages.map((message, i) => (i <= lastReply ? withoutCacheControl(message) : message));
}

function withoutCacheControl<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const { cache_control: _marker, ...copy } = value as Record<string, unknown>;
  for (const key of ['content', 'source', 'tool', 'definition', 'tool_references']) {
    const nested = copy[key];
    if (Array.isArray(nested)) copy[key] = nested.map(withoutCacheControl);
    else if (typeof nested === 'object' && nested !== null) copy[key] = withoutCacheControl(nested);
  }
  return copy as T;
}
