/**
 * A turn of the loop: the request that sends the run's state, and the reply it waits for. Also
 * the one other request a run makes, a compaction summary, so that every request a run sends goes
 * through the same hooks, events and request options — and the same fallbacks (fallback.ts). A turn
 * rejected as too long is sent again after compacting (context-overflow.ts, docs/fallbacks.md).
 */
import type { APIError } from '@anthropic-ai/sdk';
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import { type OpenedStream, type RequestOptions, messagesApi, providerOf, withTimeout } from './client.js';
import { ContextOverflowError, OVERFLOW_ADVICE, type OverflowRecovery, beingRecovered, contextOverflow } from './context-overflow.js';
import { withFields } from './copy.js';
import { summaryBodyFor } from './compaction.js';
import { ReplyError, hadResponse, unreadable } from './errors.js';
import { FallbackChain, type FallbackTarget, bodyFor, inContainerOfItsOwn, withFirstEvent } from './fallback.js';
import { withHelperHeader } from './helper-header.js';
import type { RunnerEvent } from './events.js';
import type { RequestParams } from './hooks.js';
import { callRunHook } from './run-hooks.js';
import { type RunContext, runSignal } from './run-context.js';
import type { Runner } from './surface.js';
import { compactionRequestParams } from './server-compaction.js';
import { lendableClient } from './sdk-thread.js';
import { signalOfItsOwn } from './on-abort.js';
import { type EagerCalls, endsWhenAborted, skippedBlock, startToolsEagerly, watchedFinalMessage } from './stream.js';
import { type ThreadRequest, createMessage, openStream, streamMessage, streamVia } from './thread-requests.js';
import type { Turn } from './turn-state.js';
import { threadHeadersOf } from './thread-state.js';
import type { BetaCompactionConfig, BetaMessage, BetaToolUseBlock } from './types.js';
import { isMessage, shapeOf } from './reply-shape.js';
import { addUsage } from './usage.js';
import { receivedReply } from './reply-count.js';

/** A turn's `requestId` while none of its requests is in flight (between an overflow and its request sent again). */
const NO_REQUEST = 0;

/** A request in flight: its number in the events, and the fallback entry it went to last. */
type Sent = Pick<Turn, 'requestId' | 'fallback' | 'provider'>;

/** Sends a request's body to the primary (no target) or to a fallback entry; `last`: no entry follows. */
type Attempt<T> = (body: Record<string, unknown>, target: FallbackTarget | undefined, last: boolean) => PromiseLike<T>;

/** How a streamed reply's calls start before it ends (`runToolsEagerly`): call-answers.ts. */
export interface EagerStarts extends EagerCalls {
  /** The reply's `tool_use` blocks that finished streaming, in order: the yielded stream's `toolCalls`. */
  readonly toolCalls: BetaToolUseBlock[];
  /** Whether the call of this id has started. */
  started(id: string): boolean;
}

/** Sends the run's requests and counts their replies into the run's state. */
export class Requests {
  #sent = 0;

  readonly #run: RunContext;
  /** Starts each call of a streamed reply once it is complete (`runToolsEagerly`). */
  readonly #eager: EagerStarts;
  /** The `x-stainless-helper` tags of the run. */
  readonly #tags: string;
  /** The request options last sent, with the helper header, and the caller's they were made from. */
  #sentOptions: RequestOptions | undefined;
  #sentFrom: RequestOptions | undefined;
  /** Where a request goes when its client fails (`options.fallback`), if anywhere. */
  readonly #fallbacks: FallbackChain | undefined;
  /** Set once the run's compactions are made (they send through these requests): `recoverWith`. */
  #recovery: OverflowRecovery | undefined;

  /** `sent`: the requests a snapshot's run had sent (a resumed run numbers its next from there). */
  constructor(run: RunContext, eager: EagerStarts, tags: string, sent = 0) {
    this.#sent = sent;
    this.#run = run;
    this.#eager = eager;
    this.#tags = tags;
    // An entry without a client of its own sends with the run's (over an SDK thread: the thread's own client, not the thread).
    this.#fallbacks = FallbackChain.of(run.options.fallback, lendableClient(run.client), run.logger);
  }

  /** What compacts the run when a request overflows its context (the run's compactions). */
  recoverWith(recovery: OverflowRecovery): void {
    this.#recovery = recovery;
  }

  /**
   * Sends the current state; the reply is counted once it has fully arrived. A promise only when
   * tool sources refresh or an `onRequest` hook returns one.
   */
  send(compaction?: BetaCompactionConfig): Turn | Promise<Turn> {
    const tools = this.#run.state.tools;
    return tools.hasSources ? tools.refresh(runSignal(this.#run)).then(() => this.#sendBody(compaction)) : this.#sendBody(compaction);
  }

  #sendBody(compaction: BetaCompactionConfig | undefined): Turn | Promise<Turn> {
    const { state } = this.#run;
    // Whether the history changed only by the runner's own appends since the last request.
    const appendsOnly = state.prepareHistory();
    const body = this.#body(compaction);
    const held = state.messages;
    const hooked = callRunHook(this.#run, 'onRequest', runSignal(this.#run), body as RequestParams);
    return hooked ? hooked.then(() => this.#request(body, state.takeChangeDuringHook(body, held) && appendsOnly, compaction)) : this.#request(body, appendsOnly, compaction);
  }

  /** The request's body: the params, the history (prepared), the tools. */
  #body(compaction: BetaCompactionConfig | undefined): Record<string, unknown> {
    const { state, control } = this.#run;
    const apiParams = compaction ? compactionRequestParams(state.apiParams) : state.apiParams;
    const body: Record<string, unknown> = withFields(apiParams, { messages: state.messages });
    const tools = state.tools.definitionsNow();
    if (tools) body['tools'] = tools;
    // Eager starts need the stream; without `stream: true` the caller still gets whole messages.
    if (!state.settings.stream && !state.settings.runToolsEagerly) body['stream'] = false;
    if (control.shapesRequests) control.shapeRequest(body, compaction !== undefined);
    // A compaction request replays the whole conversation under a thread of its own (thread.ts).
    if (compaction) body['compaction'] = compaction;
    return body;
  }

  /** Sends `body` (as the `onRequest` hook left it) and makes the turn that waits for its reply. */
  #request(body: Record<string, unknown>, appendsOnly: boolean, compaction: BetaCompactionConfig | undefined): Turn {
    const run = this.#run;
    const settings = run.state.settings;
    const streaming = settings.stream || settings.runToolsEagerly;
    const turn: Turn = {
      message: undefined!,
      stream: undefined,
      inBody: false,
      tookControl: false,
      historyBefore: undefined,
      afterBody: false,
      sentHistory: undefined,
      response: undefined,
      compaction: compaction !== undefined,
      reply: undefined,
      uncounted: undefined,
      requestId: 0,
      sendingAgain: false,
      fallback: undefined,
      provider: undefined,
    };
    let message: PromiseLike<BetaMessage>;
    const sending = signalOfItsOwn(this.#options());
    const request: ThreadRequest = { client: run.client, thread: run.thread, appendsOnly, options: sending.options, logger: run.logger };
    if (!compaction) {
      run.state.iteration++;
      run.state.requestInFlight = true;
    }
    const requestId = (turn.requestId = this.#started(body, 'turn'));
    // In the context of the request's span, when something traces (the client starts its own span there).
    const scope = run.tracing.scope;
    const fallbacks = this.#fallbacks;
    if (streaming) {
      let stream: BetaMessageStream;
      // A stream that may go elsewhere, or again after an overflow, stays the stream the caller holds: its request is ours.
      if (fallbacks || this.#recovers(turn)) {
        // Each attempt with the stream's options: its signal (`stream.abort()`, a `break`) stops the request on any entry.
        stream = streamVia(body, request.options, (streamOptions) => {
          const streamed = withFields(request, { options: streamOptions });
          return this.#resilient(turn, body, streamed, (sent, target, last) => this.#openStream(sent, target, last, streamed));
        });
      } else {
        stream = scope ? scope.request(run.runner, requestId, () => streamMessage(body, request)) : streamMessage(body, request);
      }
      if (settings.runToolsEagerly) {
        const eager = this.#eager;
        startToolsEagerly(stream, eager);
        // As the SDK's runner stream: the calls that finished streaming, in the model's order.
        Object.assign(stream, { toolCalls: eager.toolCalls });
      }
      if (run.emit) emitStreamedText(stream, run.emit, run.runner, turn);
      turn.stream = stream;
      message = watchedFinalMessage(stream);
      endsWhenAborted(stream);
    } else if (fallbacks) {
      message = this.#resilient(turn, body, request, (sent, target) => this.#create(sent, target, request));
    } else {
      message = scope ? scope.request(run.runner, requestId, () => createMessage(body, request)) : createMessage(body, request);
    }
    turn.message = Promise.resolve(
      message.then(
        // A body of another shape (a proxy's error envelope answered with 200), a stream that skipped a block's start: a reply that could not be read.
        (reply) => (isMessage(reply) && !skippedBlock(turn.stream) ? this.#replied(turn, reply) : this.#failed(turn, body, request, unreadable(new TypeError(skippedBlock(turn.stream) ?? `the body is no message: ${shapeOf(reply)}`)))),
        (failure: unknown) => this.#failed(turn, body, request, failure),
      ),
    );
    // The error reaches the caller through the iteration; never as an unhandled rejection. Settled, the request's signal is untied.
    turn.message.then(sending.release, sending.release);
    return turn;
  }

  /** A turn's reply arrived: the thread and the observers are told, and it is counted. */
  #replied(turn: Turn, reply: BetaMessage): BetaMessage | Promise<BetaMessage> {
    const run = this.#run;
    run.state.requestInFlight = false;
    // A reply from a fallback: the thread's server holds nothing of it, the next request starts a new thread.
    if (turn.fallback === undefined) run.thread.received(reply);
    else run.thread.answeredElsewhere(turn.compaction);
    // Uncounted while the observers and the `onMessage` hook have it (a snapshot taken in a `request.end` listener or in
    // the hook counts it), counted once the hook is done (a hook that throws leaves it unset: the reply failed).
    turn.uncounted = reply;
    run.emit?.({ type: 'request.end', runner: run.runner, requestId: turn.requestId, message: reply, fallback: turn.fallback, provider: turn.provider });
    const counted = receivedReply(run, this.#eager, reply, inContainerOfItsOwn(run.options.fallback, turn.fallback, lendableClient(run.client)));
    if (counted instanceof Promise) {
      counted.then(
        (kept) => {
          turn.reply = kept;
          turn.uncounted = undefined;
        },
        () => (turn.uncounted = undefined),
      );
    } else {
      turn.reply = counted;
      turn.uncounted = undefined;
    }
    return counted;
  }

  /** A turn's request failed (`retried`: it is the request sent again after an overflow). */
  async #failed(turn: Turn, body: Record<string, unknown>, request: ThreadRequest, failure: unknown, retried?: true): Promise<BetaMessage> {
    const run = this.#run;
    // Streamed when it was sent (a turn's stream is set at once).
    const streaming = turn.stream !== undefined;
    // A whole reply without fallbacks: an overflow is recovered from here, off the path of the replies that arrive.
    if (!retried && !streaming && !this.#fallbacks && this.#recovers(turn, failure)) {
      const again = this.#sendAgain(turn, request, failure, (sent) => this.#attempts(turn, sent, (sentBody) => this.#create(sentBody, undefined, request), undefined));
      return again.then(
        (reply) => this.#replied(turn, reply),
        (error: unknown) => this.#failed(turn, body, request, error, true),
      );
    }
    run.state.requestInFlight = false;
    const complete = turn.stream !== undefined && turn.stream.receivedMessages.length > 0;
    // A stream broken mid-reply was paid for as far as it went: the usage its events said counts (runner.usage, budget.maxTokens);
    // one broken after its message was whole (`message_stop`), the whole message's.
    const partial = streaming ? (complete ? turn.stream?.receivedMessages[0]?.usage : turn.stream?.currentMessage?.usage) : undefined;
    if (partial) run.state.usage = addUsage(run.state.usage, partial);
    run.thread.failed(body, complete);
    // A reply was being read: a stream that had connected, or a body read (a request that never went fails as it failed).
    const read = streaming ? turn.stream?.response !== undefined : await hadResponse(request.sent, failure);
    const error = ReplyError.from(ContextOverflowError.from(failure), streaming, read, complete);
    if (turn.requestId !== NO_REQUEST) run.emit?.({ type: 'request.end', runner: run.runner, requestId: turn.requestId, error, fallback: turn.fallback, provider: turn.provider });
    throw error;
  }

  /** Whether a turn's request may go again after an overflow (`failure`, when given, is one): compaction is on, and it is no compaction request. */
  #recovers(turn: Turn, failure?: unknown): boolean {
    if (turn.compaction || this.#run.state.settings.compactionControl?.enabled !== true) return false;
    return failure === undefined || contextOverflow(failure) !== undefined;
  }

  /**
   * Sends a turn's request to the primary, then to each fallback while the failure falls back.
   * Rejected as too long, with `compactionControl` enabled, the run compacts at once and the
   * request (its body made again from the compacted history) goes again, once.
   */
  async #resilient<T>(turn: Turn, body: Record<string, unknown>, request: ThreadRequest, send: Attempt<T>): Promise<T> {
    const signal = request.options.signal;
    try {
      return await this.#attempts(turn, body, send, signal);
    } catch (error) {
      if (!this.#recovers(turn, error)) throw ContextOverflowError.from(error);
      return this.#sendAgain(turn, request, error, (again) => this.#attempts(turn, again, send, signal));
    }
  }

  /**
   * After an overflow: compacts (a summary request that fails for being too long is an overflow too),
   * tells the observers the rejected request ended, and sends the body made again from the compacted
   * history (its own `onRequest`, its own request id). Not compacted, or rejected again: a ContextOverflowError.
   */
  async #sendAgain<T>(turn: Turn, request: ThreadRequest, overflowed: unknown, send: (body: Record<string, unknown>) => PromiseLike<T>): Promise<T> {
    const run = this.#run;
    // The rejected request ended: told before the compaction's own request starts.
    run.emit?.({ type: 'request.end', runner: run.runner, requestId: turn.requestId, error: beingRecovered(overflowed), fallback: turn.fallback, provider: turn.provider });
    // No request of this turn is in flight until the next starts (ids start at 1): a failure now is not told twice.
    turn.requestId = NO_REQUEST;
    // Until it is sent again, the turn is between requests: a change of the history in a hook (the summary's `onRequest`, the
    // request's) goes with what is sent next, as before any request; not as the loop body taking control.
    turn.sendingAgain = true;
    /** What failed, for the error's advice: compaction is on, so turning it on is no advice. */
    let stage: keyof typeof OVERFLOW_ADVICE | 'budget' = 'summary';
    try {
      const overflow = contextOverflow(overflowed)!;
      // The turn's signal (a stream's: `stream.abort()`, a `break`) stops the summary and the request sent again too.
      const signal = request.options.signal;
      stage = (await this.#recovery?.afterOverflow(overflow, signal)) ? 'sentAgain' : 'notCompacted';
      if (stage === 'notCompacted') throw overflowed;
      // The summary's tokens count: past `budget.maxTokens` no request goes, this one's either.
      const reached = run.control.tokensReached();
      if (reached) {
        stage = 'budget';
        throw new ContextOverflowError((overflowed instanceof ContextOverflowError ? overflowed.cause : overflowed) as APIError, overflow, `The history was compacted, but the request was not sent again (${reached}). Iterate again to stop the run with 'budget', or raise the budget to go on.`);
      }
      const appendsOnly = run.state.prepareHistory();
      const body = this.#body(undefined);
      const held = run.state.messages;
      await callRunHook(run, 'onRequest', signal, body as RequestParams);
      // What the hook pushed goes with this request, as with any (`#sendBody`).
      request.appendsOnly = run.state.takeChangeDuringHook(body, held) && appendsOnly;
      turn.sendingAgain = false;
      turn.requestId = this.#started(body, 'turn');
      return await send(body);
    } catch (error) {
      const overflow = error instanceof ContextOverflowError ? error : contextOverflow(error);
      if (!overflow || stage === 'budget') throw error;
      // Not compacted for the token budget: the budget says why.
      const budget = stage === 'notCompacted' ? run.control.tokensReached() : undefined;
      throw new ContextOverflowError((error instanceof ContextOverflowError ? error.cause : error) as APIError, overflow, budget ? `compactionControl is on, but the history was not compacted (${budget}). Nothing was appended: raise the budget, or shorten the history (runner.setMessagesParams), then iterate again.` : OVERFLOW_ADVICE[stage]);
    } finally {
      turn.sendingAgain = false;
    }
  }

  /** A whole reply from the primary (over its thread) or from a fallback. */
  #create(body: Record<string, unknown>, target: FallbackTarget | undefined, request: ThreadRequest): PromiseLike<BetaMessage> {
    return target ? (request.sent = messagesApi(target.client).create(bodyFor(target, this.#run.thread.outsideThread(body)), request.options) as PromiseLike<BetaMessage>) : createMessage(body, request);
  }

  /** One request to the primary, then to its fallbacks (if any), each in the request's scope. */
  #attempts<T>(turn: Sent, body: Record<string, unknown>, send: Attempt<T>, signal: AbortSignal | null | undefined): PromiseLike<T> {
    const run = this.#run;
    const scope = run.tracing.scope;
    const attempt = (target: FallbackTarget | undefined, last: boolean): PromiseLike<T> => {
      turn.fallback = target?.index;
      turn.provider = providerOf(target?.client ?? run.client);
      return scope ? scope.request(run.runner, turn.requestId, () => send(body, target, last)) : send(body, target, last);
    };
    return this.#fallbacks ? this.#fallbacks.send(attempt, signal) : attempt(undefined, true);
  }

  /** A streamed request to the primary (over its thread) or to a fallback; with a fallback after it, once its first event came. */
  #openStream(body: Record<string, unknown>, target: FallbackTarget | undefined, last: boolean, request: ThreadRequest): Promise<OpenedStream> {
    type Streamed = { withResponse(): Promise<OpenedStream> };
    const opened = target
      ? (messagesApi(target.client).create(withFields(bodyFor(target, this.#run.thread.outsideThread(body)), { stream: true }), request.options) as unknown as Streamed).withResponse()
      : openStream(body, request, request.options);
    return last ? opened : opened.then(withFirstEvent);
  }

  /**
   * Sends a compaction's summary request (same client, request options and hooks) and returns what `take` made of its
   * reply; its usage counts, but it is not a turn (the iteration does not change). `take` takes the reply in before
   * `onMessage` (a snapshot taken there held the history before it: resumed, it asked for the summary again).
   */
  async summary<T>(body: Record<string, unknown>, signal: AbortSignal | null | undefined, take: (reply: BetaMessage) => T): Promise<T> {
    const run = this.#run;
    await callRunHook(run, 'onRequest', signal ?? runSignal(run), body as RequestParams);
    // Asked for by a turn (after an overflow): with the turn's signal, which the run's aborts too.
    const { options, release } = signalOfItsOwn(signal ? { ...this.#options(), signal } : this.#options());
    const sent: Sent = { requestId: this.#started(body, 'compaction'), fallback: undefined, provider: undefined };
    let reply: BetaMessage;
    try {
      reply = await this.#attempts(sent, body, (summary, target) => {
        // Over an SDK thread, beside it (its own client): a summary is no turn of the thread.
        const client = target?.client ?? lendableClient(run.client);
        const sent = run.thread.outsideThread(summary);
        return messagesApi(client).create(target ? summaryBodyFor(target, sent) : sent, withTimeout(options, client));
      }, options.signal);
    } catch (error) {
      run.emit?.({ type: 'request.end', runner: run.runner, requestId: sent.requestId, error, fallback: sent.fallback, provider: sent.provider });
      throw error;
    } finally {
      release();
    }
    run.emit?.({ type: 'request.end', runner: run.runner, requestId: sent.requestId, message: reply, fallback: sent.fallback, provider: sent.provider });
    // Paid for, adopted or not: counted before `onMessage` (a snapshot taken there holds it); `runner.usage` in a
    // `request.end` listener is without it, as without a turn's reply.
    run.state.usage = addUsage(run.state.usage, reply.usage);
    const taken = take(reply);
    await callRunHook(run, 'onMessage', runSignal(run), reply);
    return taken;
  }

  /** The requests sent so far, each numbered (`requestId` in events) in order. */
  get sent(): number {
    return this.#sent;
  }

  /** Numbers a request and tells the observers it left. */
  #started(body: Record<string, unknown>, purpose: 'turn' | 'compaction'): number {
    const requestId = ++this.#sent;
    this.#run.emit?.({ type: 'request.start', runner: this.#run.runner, requestId, purpose, body });
    return requestId;
  }

  /** The caller's request options with the helper header, made again only when they changed. */
  #options(): RequestOptions {
    const given = this.#run.requestOptions;
    // Over an SDK thread, a run with no headers of its own sends the thread's (as they are now), as the SDK's runner does.
    const threadHeaders = given.headers === undefined ? threadHeadersOf(this.#run.client) : undefined;
    const from = threadHeaders === undefined ? given : { ...given, headers: threadHeaders as RequestOptions['headers'] };
    if (this.#sentFrom !== from || !this.#sentOptions) {
      this.#sentOptions = withHelperHeader(from, this.#tags, this.#run.thread.used);
      this.#sentFrom = from;
    }
    return this.#sentOptions;
  }
}

/** The streamed text as `request.text` events, under the turn's request id of the moment (an overflow's request sent again has its own). */
function emitStreamedText(stream: BetaMessageStream, emit: (event: RunnerEvent) => void, runner: Runner, turn: Sent): void {
  stream.on('text', (text) => emit({ type: 'request.text', runner, requestId: turn.requestId, text }));
}
