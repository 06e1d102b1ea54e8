/**
 * `toolRunner(thread, settings, options)`: a run over an SDK `BetaMessageThread`, as the SDK's
 * `new BetaToolRunner(thread, settings)` / `thread.toolRunner(settings)` does. The thread holds the
 * conversation and sends each turn (create, continue, its own recovery); the runner sends it what is
 * new since its last turn, so afterwards `thread.messages` holds the whole run. The runner's params
 * are the thread's, with the settings.
 */
import { AnthropicError } from '@anthropic-ai/sdk';
import { notSent } from './errors.js';
import type { ClientLike, MessagesApi, RequestOptions } from './client.js';
import type { RunnerSettings } from './settings.js';
import type { RunnerParams } from './surface.js';
import { brokenOffText, copyHistory, extendsHistory, sameKeptMessage, toolUsesOf } from './history.js';
import { keepNotRun, notRunIn } from './thread-not-run.js';
import type { BetaMessageParam } from './types.js';
import { THREAD_HEADERS, endsWithPartialReply, ownHeadersOf, stateOf } from './thread-state.js';
import { type ThreadStream, eventsOf } from './thread-stream.js';
import { type RunHistory, addedWhileCallsWait, additionsTo, answeredAhead, goesOn, replacedPartial } from './thread-additions.js';

/** What the runner uses of a `BetaMessageThread` (its public methods; `_state` to replace a rewritten history). */
export interface MessageThreadLike {
  readonly messages: BetaMessageParam[];
  readonly params: Record<string, unknown>;
  readonly previousMessageId: string | null;
  send(messages: BetaMessageParam[], params: Record<string, unknown>, options: RequestOptions): PromiseLike<unknown>;
  stream(messages: BetaMessageParam[], params: Record<string, unknown>, options: RequestOptions): unknown;
  fork(): unknown;
  append(...messages: BetaMessageParam[]): void;
  update(params: Record<string, unknown>): void;
}

/**
 * Marks the client made over a thread: its replies follow the thread's rules (a refused turn is not
 * kept). Its value hands the run's history back to the thread when a run ends.
 */
export const OVER_MESSAGE_THREAD = Symbol('tool-runner.overMessageThread');

/** The key, on a client over a thread, of the client a run lends its sub-agents (the thread's own). */
const LENT_CLIENT = Symbol('tool-runner.lentClient');

/** The client a run on `client` lends its sub-agents: a thread's own client, not the thread. */
export function lendableClient(client: ClientLike): ClientLike {
  return (client as { [LENT_CLIENT]?: ClientLike })[LENT_CLIENT] ?? client;
}

/**
 * How a run ended, for what its thread keeps: `'ended'` by itself (the model's answer, a limit, a stop for approval),
 * `'failed'` (a request, a tool, an abort), or `'left'` by the loop body (a `break`, an error out of it).
 */
export type RunExit = 'ended' | 'failed' | 'left';

/**
 * What a client over a thread holds under `OVER_MESSAGE_THREAD`: gives the thread the run's history, and keeps beside
 * the thread the answers of the calls the run decided not to run (`notRun`).
 */
export type HandBack = (messages: BetaMessageParam[], exit: RunExit, notRun: ReadonlyMap<string, string> | undefined) => void;

/** The key, on a client over a thread, of the calls its runs decided not to run (thread-not-run.ts). */
const NOT_RUN = Symbol('tool-runner.threadNotRun');

/** The calls earlier runs over the client's thread decided not to run, with their answers; none off a thread. */
export function callsNotRunOn(client: ClientLike): ReadonlyMap<string, string> | undefined {
  return (client as { [NOT_RUN]?: () => ReadonlyMap<string, string> | undefined })[NOT_RUN]?.();
}

/** The key, on a client over a thread, of what tells, before the run's first turn, where a partial reply to drop stands. */
const BEFORE_TURN = Symbol('tool-runner.beforeThreadTurn');
type BeforeTurn = (messages: readonly BetaMessageParam[]) => number | undefined;

/**
 * Where, in the run's history (`messages`), the partial reply stands that the thread drops at the run's turn about to
 * go (a stream that broke, which the thread keeps in part: it sends the turn again without it). None off a thread.
 */
export function partialReplyAt(client: ClientLike, messages: readonly BetaMessageParam[]): number | undefined {
  return (client as { [BEFORE_TURN]?: BeforeTurn })[BEFORE_TURN]?.(messages);
}

/** The key, on a client over a thread, of what tells what the program changed on the thread itself. */
const CHANGES = Symbol('tool-runner.threadChanges');

/** What the program changed on a thread itself since the run last had it: messages it added, request fields it set. */
export interface ThreadChanges {
  messages: BetaMessageParam[];
  fields: FieldChanges | undefined;
  /**
   * The thread's whole history, to take as the run's, when another run over the thread answered calls the run's
   * history leaves unanswered before other messages (`answeredAhead`), or got the reply in place of the partial one the
   * run's history ends with (`replacedPartial`); `messages` is then the part of it the run did not hold.
   */
  history?: BetaMessageParam[];
  /** With messages taken in: the answers of calls runs over the thread decided not to run (thread-not-run.ts). */
  notRun?: ReadonlyMap<string, string> | undefined;
}
/** Request fields set (`changed`) and removed (`removed`). */
export interface FieldChanges {
  changed: Record<string, unknown>;
  removed: string[];
}
type Changes = (history: RunHistory | undefined) => ThreadChanges;

/**
 * What the program changed on the thread itself (its `append()` and `update()`, another run over it) since the run last
 * had it, for the run to take in, as the SDK's runner, whose history and fields are the thread's, has it: the messages
 * past the run's `history` (none without it), the request fields. Nothing off a thread.
 */
export function threadChanges(client: ClientLike, history: RunHistory | undefined): ThreadChanges | undefined {
  return (client as { [CHANGES]?: Changes })[CHANGES]?.(history);
}

/** The key, on a client over a thread, of what gives the thread the request fields `setMessagesParams` changed. */
const SET_FIELDS = Symbol('tool-runner.setThreadFields');
type SetFields = (changes: FieldChanges) => void;

/**
 * Gives the thread a run's history when the run ends (the results of its last calls, when no request
 * followed them: a limit, an abort), so that `thread.messages` holds the whole run.
 */
export function handBackHistory(client: ClientLike, messages: BetaMessageParam[], exit: RunExit, notRun?: ReadonlyMap<string, string>): void {
  (client as { [OVER_MESSAGE_THREAD]?: HandBack })[OVER_MESSAGE_THREAD]?.(messages, exit, notRun);
}

/**
 * The request fields (not the tools) that `setMessagesParams` changed, `before` to `after`, become the thread's at
 * once, as the SDK's runner sets them; the thread's other fields (its own `update()`s, what a hook sent) stay.
 */
export function setThreadFields(client: ClientLike, before: Record<string, unknown>, after: Record<string, unknown>): void {
  const set = (client as { [SET_FIELDS]?: SetFields })[SET_FIELDS];
  const changes = set && fieldChanges(before, after);
  if (changes) set(changes);
}

/** The fields `after` sets anew or removes of `before`, compared by value; `undefined` when none. */
function fieldChanges(before: Record<string, unknown>, after: Record<string, unknown>): FieldChanges | undefined {
  const changed: Record<string, unknown> = {};
  const removed: string[] = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (before[key] === after[key] || JSON.stringify(before[key]) === JSON.stringify(after[key])) continue;
    if (after[key] === undefined) removed.push(key);
    else changed[key] = after[key];
  }
  return removed.length > 0 || Object.keys(changed).length > 0 ? { changed, removed } : undefined;
}

export function isMessageThread(value: unknown): value is MessageThreadLike {
  if (typeof value !== 'object' || value === null) return false;
  const thread = value as Record<string, unknown>;
  return typeof thread['send'] === 'function' && typeof thread['stream'] === 'function' && typeof thread['fork'] === 'function' && 'previousMessageId' in thread;
}

/** The client and params of a run over `thread`. */
export function overMessageThread(thread: MessageThreadLike, settings: RunnerSettings): { client: ClientLike; params: RunnerParams } {
  if (typeof settings !== 'object' || settings === null) throw new TypeError('toolRunner(thread, settings): settings must be an object');
  if ((settings as { thread?: unknown }).thread !== undefined) {
    throw new TypeError('toolRunner(thread, settings): `thread` cannot be set here. The message thread sets it for each request itself.');
  }
  const { unsupportedRequestBehavior: _behavior, messages, ...fields } = thread.params;
  const history = messages as BetaMessageParam[];
  // A reply whose stream broke, which the thread keeps in part: the run's history holds it too, as the SDK's runner's
  // params do, until the thread has it no more (`beforeTurn`, `changes`).
  let partial = endsWithPartialReply(thread, history) ? { at: history.length - 1, message: history.at(-1)! } : undefined;
  const params = { ...fields, messages: [...history], ...settings } as RunnerParams;
  // A server-side compaction (compactBeforeNextTurn) goes beside the thread, on a fork of it (the whole history, a
  // thread of its own), as the SDK's runner sends it; the run then gives the thread the compacted history, or not.
  let fork: MessageThreadLike | undefined;
  // A fork the server could not thread (`continue_unthreaded`) stops the thread's threading too, as in the SDK's runner:
  // settled before the thread's next request, or when the run ends.
  const settleFork = () => {
    if (fork && stateOf(fork)?.threading === false) stateOf(thread)?.stopThreading?.();
    fork = undefined;
  };
  // Where the reply of the run's last turn on the thread goes (or went): a reply there is the run's own.
  let ownReplyAt: number | undefined;
  const on = (body: Record<string, unknown>) => {
    settleFork();
    if (body['compaction'] !== undefined) return (fork = compactionFork(thread, body));
    ownReplyAt = (body['messages'] as unknown[]).length;
    return thread;
  };
  // A turn on the thread: the partial reply the run dropped before it (`beforeTurn`), the thread drops itself.
  const turn = (thread: MessageThreadLike, body: Record<string, unknown>) => {
    const partialLeft = dropped;
    dropped = undefined;
    return turnOf(thread, body, partialLeft);
  };
  const api: MessagesApi = {
    // A streamed `create` (a turn that may fall back, or go again after an overflow): the thread's stream, which is
    // its events as `create({ stream: true }).withResponse()` gives them.
    create: (body, options) =>
      keepingTools(on(body), (thread) => {
        if (body['stream'] !== true) return thread.send(...turn(thread, body), options);
        const stream = thread.stream(...turn(thread, body), options) as unknown as ThreadStream;
        const data = eventsOf(stream);
        const opened = stream.withResponse().then(({ response }) => ({ response, data }));
        // Read through `withResponse()`: the promise itself may never be awaited.
        const whole = opened.then(() => data);
        whole.catch(() => undefined);
        return Object.assign(whole, { withResponse: () => opened });
      }),
    stream: (body, options) => keepingTools(on(body), (thread) => thread.stream(...turn(thread, body), options)) as ReturnType<MessagesApi['stream']>,
  };
  // The run's history goes to the thread (handBackTo); the answers of its calls not to run, beside their replies there.
  const handBack: HandBack = (messages, exit, notRun) => {
    settleFork();
    handBackTo(thread, messages, exit);
    if (notRun && notRun.size > 0) keepNotRun(thread.messages, notRun);
  };
  // Sub-agents get the thread's own client: they are conversations of their own, never the thread's.
  const lent = (thread as { _client?: ClientLike & { logger?: unknown; logLevel?: unknown; middleware?: unknown } })._client;
  // The run logs as the thread's client does (its `logger` and `logLevel`), as a run on that client would.
  // The thread's request fields as the run last had them: a field that differs from them since, the program set.
  let known = fieldsOf(thread.params);
  const setFields: SetFields = ({ changed, removed }) => {
    if (removed.length === 0) thread.update(changed);
    else replaceFields(thread, changed, removed);
    known = fieldsOf(thread.params);
  };
  const changes: Changes = (history) => {
    // (Read once: the thread copies its history on each read.)
    const { messages, ...params } = thread.params;
    const now = fieldsOf(params);
    const fields = fieldChanges(known, now);
    known = now;
    if (!history) return { messages: [], fields };
    const held = messages as BetaMessageParam[];
    // Another run over the thread sent the turn again: the thread holds its reply (and what followed) in the partial one's place.
    const replaced = partial ? replacedPartial(held, history.messages, partial) : undefined;
    if (replaced !== undefined) partial = undefined;
    const added = replaced === undefined ? additionsTo(held, history, ownReplyAt) : [];
    const from = replaced ?? (added.length === 0 ? answeredAhead(held, history.messages) : undefined);
    // What came in may hold calls another run decided not to run: their answers come with it.
    const notRun = from !== undefined || added.length > 0 ? notRunIn(held) : undefined;
    if (from === undefined) return { messages: added, fields, notRun };
    const whole = copyHistory(held);
    return { messages: whole.slice(from), fields, history: whole, notRun };
  };
  // Before the run's first turn: when nothing follows the partial reply, in the run's history or on the thread, the
  // thread drops it and sends the turn again (the SDK's runner then ends with the new reply); the run drops it too, and
  // says where it stood.
  let dropped: BetaMessageParam | undefined;
  const beforeTurn: BeforeTurn = (messages) => {
    const stood = partial;
    if (!stood) return undefined;
    const held = thread.messages;
    // Another run over the thread got the reply in its place: taken in next (`changes`).
    if (replacedPartial(held, messages, stood) !== undefined) return undefined;
    partial = undefined;
    const alone = messages.length === stood.at + 1 && held.length === stood.at + 1;
    if (!alone || !sameKeptMessage(messages[stood.at]!, stood.message) || !sameKeptMessage(held[stood.at]!, stood.message)) return undefined;
    // Where the turn's reply goes: the partial one the thread holds until then is no addition of the program's.
    ownReplyAt = stood.at;
    // The thread drops it itself at the turn (nothing is staged): its history stays the one it holds.
    dropped = stood.message;
    return stood.at;
  };
  // The answers of calls earlier runs decided not to run, and of those of a partial reply (they may run nowhere).
  const notRunAtStart = () => {
    const kept = new Map(notRunIn(thread.messages));
    if (partial) for (const use of toolUsesOf(partial.message)) kept.set(use.id, brokenOffText(use.name));
    return kept;
  };
  // Its middleware too: the thread's requests go through it (a request option of the caller's own reaches it).
  const client = { beta: { messages: api }, logger: lent?.logger, logLevel: lent?.logLevel, middleware: lent?.middleware, [OVER_MESSAGE_THREAD]: handBack, [BEFORE_TURN]: beforeTurn, [SET_FIELDS]: setFields, [CHANGES]: changes, [NOT_RUN]: notRunAtStart, [LENT_CLIENT]: lent, [THREAD_HEADERS]: () => ownHeadersOf(thread) };
  return { client: client as ClientLike, params };
}

/**
 * The run's history, as the SDK's runner leaves it on its thread: what the thread lacks, or in place of what the loop
 * body changed (a reply it replaced or dropped). The SDK's thread takes the body's changes once the body is done, so a
 * run the body left keeps the thread as it is; one that failed once a reply came holds less: the thread keeps the reply.
 */
function handBackTo(thread: MessageThreadLike, messages: BetaMessageParam[], exit: RunExit): void {
  if (exit === 'left' || (exit === 'failed' && goesOn(thread.messages, messages))) return;
  // A history whose calls wait (for approval) leaves the thread what the program added to it meanwhile: the run takes
  // it in once the calls are answered. (One cut back to calls the thread holds answers for is the thread's.)
  if (exit !== 'failed' && addedWhileCallsWait(thread.messages, messages)) return;
  stage(thread, messages);
}

/** A thread's request fields, of its `params`: not the history, the tools (it keeps the runnable ones), its own setting. */
function fieldsOf(params: Record<string, unknown>): Record<string, unknown> {
  const { messages: _messages, tools: _tools, unsupportedRequestBehavior: _setting, ...fields } = params;
  return fields;
}

/**
 * A fork of `thread` for a compaction request, its fields the request's (as the SDK's runner forks it), so that what
 * the request leaves out (`stop_sequences`, a forced `tool_choice`, …) is not sent from the thread's own fields.
 */
function compactionFork(thread: MessageThreadLike, body: Record<string, unknown>): MessageThreadLike {
  const { messages, stream: _stream, ...fields } = body;
  // The thread holds the history the compaction summarises (the last calls' results), as the SDK's runner gives it
  // them before it forks: a run the loop body leaves while the compaction is out keeps them.
  stage(thread, messages as BetaMessageParam[]);
  const fork = thread.fork() as MessageThreadLike & { _state?: unknown };
  const state = stateOf(thread);
  if (typeof state?.fork === 'function') fork._state = state.fork(fields);
  return fork;
}

/**
 * Sends a turn, then gives the thread its runnable tools back: a thread takes the `tools` of the turn
 * that creates it (the API's definitions) as its own, and a later run over it needs the runnable ones.
 */
function keepingTools<T>(thread: MessageThreadLike, send: (thread: MessageThreadLike) => T): T {
  const { tools } = thread.params;
  let sent: T;
  try {
    sent = send(thread);
  } catch (error) {
    // The thread refused the turn (a `system` the program changed on it, say): nothing was sent, no reply failed.
    throw notSent(error);
  }
  if (tools !== undefined) thread.update({ tools });
  return sent;
}

/**
 * Stages on the thread what it does not hold yet of a request body; returns what its turn sends with
 * them: no messages of its own, and the fields that
 * differ from its own (the tools always, as the API's definitions: the thread keeps the runnable ones).
 * A history the caller rewrote replaces the thread's, which starts a new thread.
 */
function turnOf(thread: MessageThreadLike, body: Record<string, unknown>, partialLeft?: BetaMessageParam): [BetaMessageParam[], Record<string, unknown>] {
  const { messages, stream: _stream, ...fields } = body as { messages: BetaMessageParam[]; stream?: unknown } & Record<string, unknown>;
  // A history that is the thread's but for the partial reply it ends with: nothing staged, so that the thread drops
  // it and sends the turn again as it does for the SDK's runner (keeping what it knows of the history it holds).
  const held = partialLeft && thread.messages;
  if (!held || held.at(-1) !== partialLeft || !goesOn(held, messages) || held.length !== messages.length + 1) stage(thread, messages);
  const own = thread.params;
  const changed: Record<string, unknown> = {};
  for (const key in fields) {
    if (key === 'tools' || JSON.stringify(fields[key]) !== JSON.stringify(own[key])) changed[key] = fields[key];
  }
  // A turn the thread refuses (a `system` the program changed on it) is refused here, before anything is sent, as the
  // SDK's runner has it refused: its error is the thread's, not a reply's.
  stateOf(thread)?.checkNextTurn?.(changed);
  return [[], changed];
}

/** Gives the thread the history `messages`: what it lacks of it is staged, a rewritten one replaces its own. */
function stage(thread: MessageThreadLike, messages: BetaMessageParam[]): void {
  const held = thread.messages;
  if (extendsHistory(messages, held)) {
    // Staged on the thread, not given to the turn: a turn takes its own messages back when no reply to them is kept (a refusal).
    const fresh = messages.slice(held.length);
    if (fresh.length > 0) thread.append(...fresh);
    return;
  }
  const state = stateOf(thread);
  if (typeof state?.setMessages !== 'function') throw new AnthropicError("toolRunner(thread): this thread's history can't be replaced; only append to it");
  state.setMessages(messages);
}

/** A field removed from the params (`update()` only sets): the thread's fields are set anew, as the SDK's runner sets them. */
function replaceFields(thread: MessageThreadLike, changed: Record<string, unknown>, removed: string[]): void {
  const state = stateOf(thread);
  if (typeof state?.setParams !== 'function') throw new AnthropicError("toolRunner(thread): this thread's params can't be replaced");
  // (`unsupportedRequestBehavior` is the thread's own setting, beside its fields.)
  const { messages, unsupportedRequestBehavior: _setting, ...fields } = thread.params;
  for (const key of removed) delete fields[key];
  state.setParams({ ...fields, ...changed, messages });
}
