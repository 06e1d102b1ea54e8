/**
 * ToolRunner: the agentic loop. Each iteration answers the calls the history ends with, sends the
 * request, yields the assistant message (or its stream), lets the loop body look at it, then
 * appends the reply and the answers to its tool calls — unless the body took control of the
 * history — and goes on.
 */
import { APIUserAbortError, AnthropicError } from '@anthropic-ai/sdk';
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import type { ApprovalDecision, PendingApproval } from './approval.js';
import type { BetaCompactionConfig } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { type ClientLike, type RequestOptions, messagesApi } from './client.js';
import {
  type CompactionControl,
  CompactionTrigger,
  canCompact,
  compactedHistory,
  summaryRequestBody,
  summaryText,
  thresholdOf,
} from './compaction.js';
import { ReplyError } from './errors.js';
import { type RunnerEvent, emitter } from './events.js';
import { type CallOutcome, type ExecutionContext, approvalAsker, executeToolCall } from './execute.js';
import { Limiter } from './guards.js';
import { callHook } from './hooks.js';
import { answerDanglingCalls, copyHistory, cutOffText, errorResult, insertToolResults, toolUsesOf, uniqueToolUseIds } from './history.js';
import { type LeveledLogger, runnerLogger } from './log.js';
import { type ToolRunnerOptions, checkOptions } from './options.js';
import { type RunnerParams, type RunnerSettings, splitParams } from './params.js';
import { type RunnerSnapshot, SNAPSHOT_VERSION } from './snapshot.js';
import { withFields } from './copy.js';
import { startToolsEagerly } from './stream.js';
import { MessageThread, threadsAvailable } from './thread.js';
import { type ThreadRequest, createMessage, streamMessage } from './thread-requests.js';
import type { RunnableTool } from './tool.js';
import { ToolCalls } from './tool-calls.js';
import { ToolSet, isToolSource } from './tool-set.js';
import { NO_USAGE, type Usage, addUsage } from './usage.js';
import type { BetaMessage, BetaMessageParam, BetaToolUnion, BetaToolUseBlock, ToolResultMessage } from './types.js';

export type { ToolRunnerOptions } from './options.js';

/** What one iteration yields: the message, or its `MessageStream` when `stream: true`. */
export type RunnerItem<Stream extends boolean> = Stream extends true ? BetaMessageStream : BetaMessage;

/** What to do after a reply with this stop reason (SPEC §3). */
function nextStepFor(stopReason: string | null): 'run_tools' | 'resume' | 'stop' {
  switch (stopReason) {
    case 'tool_use':
      return 'run_tools';
    case 'pause_turn':
    case 'compaction':
      return 'resume';
    default:
      return 'stop';
  }
}

/** One iteration: the request sent and what the loop body has done since. */
interface Turn {
  message: Promise<BetaMessage>;
  stream: BetaMessageStream | undefined;
  /** The loop body called setMessagesParams / pushMessages. */
  tookControl: boolean;
  /** The answer to the calls of a message, by the ids it answers: mutating it changes what is sent. */
  response: { key: string; answer: Promise<Answer> } | undefined;
  /** This request was a server-side compaction (compactBeforeNextTurn). */
  compaction: boolean;
  /** The reply, once counted (what `message` resolves to). */
  reply: BetaMessage | undefined;
}

/** The user message of results, and the calls still waiting for approval (not in the message). */
interface Answer {
  message: ToolResultMessage;
  pending: PendingApproval[];
}

export class ToolRunner<Stream extends boolean = false> implements AsyncIterable<RunnerItem<Stream>> {
  readonly #client: ClientLike;
  readonly #options: ToolRunnerOptions;
  readonly #maxToolResultChars: number;
  readonly #limiter: Limiter | undefined;
  #askApproval: ExecutionContext['askApproval'] | undefined;
  readonly #emit: ((event: RunnerEvent) => void) | undefined;
  #requests = 0;
  #logger: LeveledLogger | undefined;
  #requestOptions: RequestOptions;
  #apiParams: Record<string, unknown>;
  #settings: RunnerSettings;
  #tools: ToolSet;
  #messages: BetaMessageParam[];
  /** The caller set the history since the last request: check it before sending. */
  #historySetByCaller = true;
  #turn: Turn | undefined;
  #lastMessage: BetaMessage | undefined;
  /** Tool calls never run, by id, with the error that answers them (cut off by max_tokens, repeated ids). */
  #notRun: Map<string, string> | undefined;
  /** The calls of the message being answered; made when the first tool call comes. */
  #callState: ToolCalls | undefined;
  #consumed = false;
  #iteration = 0;
  #usage: Usage = NO_USAGE;
  #completion: Settleable<BetaMessage> | undefined;
  /** When client-side compaction summarises the history. */
  readonly #compaction = new CompactionTrigger();
  /** A server-side compaction scheduled with compactBeforeNextTurn(). */
  #scheduledCompaction: BetaCompactionConfig | undefined;
  /** The message thread the requests go over (or not). */
  readonly #thread: MessageThread;

  /** Use `toolRunner()` or `resumeToolRunner()`; `snapshot` is for the latter. */
  constructor(client: ClientLike, params: RunnerParams, options: ToolRunnerOptions = {}, snapshot?: RunnerSnapshot) {
    this.#client = client;
    ({ maxToolResultChars: this.#maxToolResultChars } = checkOptions(options));
    this.#options = options;
    this.#limiter = options.concurrency ? new Limiter(options.concurrency) : undefined;
    this.#emit = emitter(options.onEvent, () => this.#log());
    this.#requestOptions = options.requestOptions ? { ...options.requestOptions } : NO_OPTIONS;
    const { api, settings, messages, tools } = splitParams(params);
    this.#apiParams = api;
    this.#settings = settings;
    this.#tools = new ToolSet(tools);
    this.#messages = copyHistory(messages);
    this.#thread = MessageThread.of(threadsAvailable(client, settings.thread), snapshot?.thread);
    if (snapshot) {
      this.#iteration = snapshot.iteration;
      this.#usage = snapshot.usage;
      const notRun = Object.entries(snapshot.notRun);
      if (notRun.length > 0) this.#notRun = new Map(notRun);
      this.#calls().restore(snapshot.calls);
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RunnerItem<Stream>> {
    if (this.#consumed) throw new AnthropicError('Cannot iterate over a consumed tool runner');
    this.#consumed = true;
    if (this.#completion?.settled) this.#completion = undefined;
    this.#emit?.({ type: 'run.start', runner: this as ToolRunner<boolean>, model: this.#apiParams['model'] });
    let failed = false;
    let stoppedForApproval = false;
    try {
      for (;;) {
        // Calls the history ends with: a state the caller set, or a run stopped for approval.
        const answered = this.#answerLastMessage(undefined);
        if (answered !== 'none' && (await answered) === 'pending') {
          stoppedForApproval = true;
          break;
        }
        if (this.#reachedMaxIterations()) break;
        // A scheduled server-side compaction goes out as this iteration's request (not in the middle of a paused turn).
        const compaction = this.#messages.at(-1)?.role === 'assistant' ? undefined : this.#scheduledCompaction;
        this.#scheduledCompaction = undefined;
        const sent = this.#send(compaction);
        const turn = sent instanceof Promise ? await sent : sent;
        this.#turn = turn;
        try {
          yield (this.#settings.stream ? turn.stream : await turn.message) as RunnerItem<Stream>;
          const next = await this.#finishTurn(turn);
          stoppedForApproval = next === 'pending';
          if (next !== 'continue') break;
        } finally {
          turn.stream?.abort();
          this.#turn = undefined;
        }
      }
    } catch (error) {
      failed = true;
      // The state is what it was before the failed step: iterating again retries it.
      this.#consumed = false;
      this.#settle().reject(error);
      this.#completion = undefined;
      this.#emit?.({ type: 'run.end', runner: this as ToolRunner<boolean>, message: this.#lastMessage, error });
      throw error;
    } finally {
      // A `break` in the loop body ends the run too: it resolves to the last reply.
      if (!failed) {
        this.#finish();
        this.#emit?.({ type: 'run.end', runner: this as ToolRunner<boolean>, message: this.#lastMessage });
      }
      // A run stopped for approval goes on when iterated (or awaited) again.
      if (stoppedForApproval) this.#consumed = false;
    }
  }

  #finish(): void {
    if (this.#lastMessage) this.#settle().resolve(this.#lastMessage);
    else this.#settle().reject(new AnthropicError('The tool runner ended without a message from the model'));
  }

  /** The completion of the current attempt, made when first needed. */
  #settle(): Settleable<BetaMessage> {
    return (this.#completion ??= settleable());
  }

  #log(): LeveledLogger {
    return (this.#logger ??= runnerLogger(this.#client, this.#options.logger));
  }

  #reachedMaxIterations(): boolean {
    const max = this.#settings.max_iterations;
    return max !== undefined && this.#iteration >= max;
  }

  /**
   * Sends the current state; the reply is counted once it has fully arrived. A promise only when
   * tool sources refresh or an `onRequest` hook returns one.
   */
  #send(compaction?: BetaCompactionConfig): Turn | Promise<Turn> {
    return this.#tools.hasSources ? this.#tools.refresh().then(() => this.#sendBody(compaction)) : this.#sendBody(compaction);
  }

  #sendBody(compaction: BetaCompactionConfig | undefined): Turn | Promise<Turn> {
    // Whether the history changed only by the runner's own appends since the last request.
    const appendsOnly = !this.#historySetByCaller;
    if (this.#historySetByCaller) {
      // The runner's own appends keep the history valid; what the caller set is checked once.
      this.#messages = answerDanglingCalls(this.#messages, this.#notRun);
      this.#historySetByCaller = false;
    }
    const body: Record<string, unknown> = withFields(this.#apiParams, { messages: this.#messages });
    if (this.#tools.definitions) body['tools'] = this.#tools.definitions;
    // Eager starts need the stream; without `stream: true` the caller still gets whole messages.
    if (!this.#settings.stream && !this.#settings.runToolsEagerly) body['stream'] = false;
    if (compaction) {
      body['compaction'] = compaction;
      // A compaction request replays the whole conversation under a thread of its own.
      this.#thread.restart();
    }
    const hooked = callHook(this.#options.hooks, 'onRequest', body);
    return hooked ? hooked.then(() => this.#request(body, appendsOnly, compaction)) : this.#request(body, appendsOnly, compaction);
  }

  /** Sends `body` (as the `onRequest` hook left it) and makes the turn that waits for its reply. */
  #request(body: Record<string, unknown>, appendsOnly: boolean, compaction: BetaCompactionConfig | undefined): Turn {
    const streaming = this.#settings.stream || this.#settings.runToolsEagerly;
    const options = this.#requestOptionsWithSignal();
    const turn: Turn = { message: undefined!, stream: undefined, tookControl: false, response: undefined, compaction: compaction !== undefined, reply: undefined };
    let message: PromiseLike<BetaMessage>;
    const request: ThreadRequest = { client: this.#client, thread: this.#thread, appendsOnly, options, logger: this.#log() };
    if (streaming) {
      const stream = streamMessage(body, request);
      if (this.#settings.runToolsEagerly) {
        startToolsEagerly(stream, (toolUse) => void this.#startCall(toolUse, this.#executionContext(this.#options.signal)));
      }
      turn.stream = stream;
      message = stream.finalMessage();
    } else {
      message = createMessage(body, request);
    }
    const requestId = this.#started(body, 'turn');
    turn.message = Promise.resolve(
      message.then(
        (reply) => {
          this.#thread.received(reply);
          this.#emit?.({ type: 'request.end', runner: this as ToolRunner<boolean>, requestId, message: reply });
          const counted = this.#received(reply);
          if (!(counted instanceof Promise)) turn.reply = counted;
          return counted;
        },
        (failure: unknown) => {
          this.#thread.failed();
          const error = ReplyError.from(failure, streaming === true);
          this.#emit?.({ type: 'request.end', runner: this as ToolRunner<boolean>, requestId, error });
          throw error;
        },
      ),
    );
    // The error reaches the caller through the iteration; never as an unhandled rejection.
    turn.message.catch(ignore);
    return turn;
  }

  /** Numbers a request and tells the observers it left. */
  #started(body: Record<string, unknown>, purpose: 'turn' | 'compaction'): number {
    const requestId = ++this.#requests;
    this.#emit?.({ type: 'request.start', runner: this as ToolRunner<boolean>, requestId, purpose, body });
    return requestId;
  }

  /** The request options of the next request, with the run's signal. */
  #requestOptionsWithSignal(): RequestOptions {
    const signal = this.#options.signal;
    return signal ? withFields(this.#requestOptions, { signal }) : this.#requestOptions;
  }

  #received(reply: BetaMessage): BetaMessage | Promise<BetaMessage> {
    const hooked = callHook(this.#options.hooks, 'onMessage', reply);
    return hooked ? hooked.then(() => this.#count(reply)) : this.#count(reply);
  }

  #count(reply: BetaMessage): BetaMessage {
    this.#iteration++;
    this.#usage = addUsage(this.#usage, reply.usage);
    this.#lastMessage = reply;
    if (reply.stop_reason === 'max_tokens') {
      for (const use of toolUsesOf(reply)) (this.#notRun ??= new Map()).set(use.id, cutOffText(use.name));
    }
    const containerId = reply.container?.id;
    if (containerId) this.#adoptContainer(containerId);
    return reply;
  }

  /** Later requests run in the container the server chose, unless the caller named one. */
  #adoptContainer(id: string): void {
    const container = this.#apiParams['container'];
    if (container == null) this.#apiParams['container'] = id;
    else if (typeof container === 'object' && (container as { id?: unknown }).id == null) {
      this.#apiParams['container'] = { ...container, id };
    }
  }

  /** After the loop body: append the reply and its tool results (unless the body took control). */
  async #finishTurn(turn: Turn): Promise<'continue' | 'stop' | 'pending'> {
    if (turn.compaction && !turn.tookControl) return this.#adoptServerCompaction(await turn.message);
    if (!turn.tookControl) {
      const reply = turn.reply ?? (await turn.message);
      const { content, renamed } = uniqueToolUseIds(reply.content);
      for (const [id, text] of renamed) (this.#notRun ??= new Map()).set(id, text);
      this.#messages.push({ role: reply.role, content });
      const step = nextStepFor(reply.stop_reason);
      if (step === 'stop') return 'stop';
      if (step === 'resume') return 'continue';
    }
    const answered = await this.#answerLastMessage(turn);
    if (answered === 'none' && !turn.tookControl) return 'stop';
    if (answered === 'pending') return 'pending';
    const control = this.#settings.compactionControl;
    if (!turn.tookControl && control?.enabled) await this.#compactIfNeeded(control, await turn.message);
    return 'continue';
  }

  /**
   * Client-side compaction after a turn whose reply passed the threshold: ask for a summary (same
   * client, request options and hooks), go on from it.
   */
  async #compactIfNeeded(control: CompactionControl, reply: BetaMessage): Promise<void> {
    const total = this.#compaction.check(control, reply.usage, () => this.#log());
    if (total === undefined || !canCompact(this.#messages)) return;
    const body = summaryRequestBody(this.#apiParams, this.#messages, control, this.#tools.definitions);
    this.#log().info(`Compaction: ${total} tokens > ${thresholdOf(control)}; summarising ${this.#messages.length} messages`);
    await callHook(this.#options.hooks, 'onRequest', body);
    const options = this.#requestOptionsWithSignal();
    const requestId = this.#started(body, 'compaction');
    let summaryReply: BetaMessage;
    try {
      summaryReply = (await messagesApi(this.#client).create(body, options)) as BetaMessage;
    } catch (error) {
      this.#emit?.({ type: 'request.end', runner: this as ToolRunner<boolean>, requestId, error });
      throw error;
    }
    this.#emit?.({ type: 'request.end', runner: this as ToolRunner<boolean>, requestId, message: summaryReply });
    await callHook(this.#options.hooks, 'onMessage', summaryReply);
    this.#usage = addUsage(this.#usage, summaryReply.usage);
    const summary = summaryText(summaryReply.content);
    if (!summary) {
      this.#log().warn('Compaction: the summary request returned no text; the conversation is kept as it is');
      return;
    }
    this.#messages = compactedHistory(this.#messages, summary, control.keepTurns ?? 0);
    this.#historySetByCaller = true;
    this.#compaction.compacted();
  }

  /** After a server-side compaction request: the compaction block replaces the history. */
  async #adoptServerCompaction(reply: BetaMessage): Promise<'continue'> {
    const compacted = reply.content.some((block) => block.type === 'compaction' && block.content);
    if (compacted) {
      this.#messages = [{ role: 'assistant', content: reply.content }];
      this.#historySetByCaller = true;
    } else {
      this.#log().warn('Compaction produced no summary; keeping the conversation as it is.');
    }
    return 'continue';
  }

  /**
   * Schedules a server-side compaction (the `compact` beta): once the current turn is done, the
   * next request asks the API to compact (`compaction: config`, default `{ type: 'summarize' }`);
   * its reply is yielded like any other message and its compaction block replaces the history.
   *
   * @example
   * ```ts
   * for await (const message of runner) {
   *   if (message.usage.input_tokens > 100_000) runner.compactBeforeNextTurn();
   * }
   * ```
   */
  compactBeforeNextTurn(config: BetaCompactionConfig = { type: 'summarize' } as BetaCompactionConfig): void {
    this.#scheduledCompaction = config;
  }

  /**
   * Answers the calls of the history's last message, if it is an assistant message that makes
   * some: the results go right after it. With calls waiting for approval nothing is appended.
   * `'none'` at once (no promise) when it makes none.
   */
  #answerLastMessage(turn: Turn | undefined): 'none' | Promise<'answered' | 'pending'> {
    const uses = toolUsesOf(this.#messages.at(-1));
    return uses.length === 0 ? 'none' : this.#answerCalls(turn, uses);
  }

  async #answerCalls(turn: Turn | undefined, uses: BetaToolUseBlock[]): Promise<'answered' | 'pending'> {
    const answer = await this.#answer(turn, uses, this.#options.signal);
    if (answer.pending.length > 0) {
      this.#calls().hold(answer.pending);
      return 'pending';
    }
    insertToolResults(this.#messages, answer.message);
    this.#callState?.clear();
    // The results are in the history, so an aborted run stays valid and resumable.
    if (this.#options.signal?.aborted) throw new APIUserAbortError();
    return 'answered';
  }

  /** Runs (or reuses) the calls of one message; the answer is cached for the turn. */
  #answer(turn: Turn | undefined, uses: BetaToolUseBlock[], signal: AbortSignal | undefined): Promise<Answer> {
    const key = uses.map((use) => use.id).join('\n');
    if (turn?.response?.key === key) return turn.response.answer;
    const context = this.#executionContext(signal);
    // One call (the usual turn) without the bookkeeping of Promise.all.
    const started = uses.length === 1 ? this.#startCall(uses[0]!, context).then((outcome) => [outcome]) : Promise.all(uses.map((use) => this.#startCall(use, context)));
    const answer = started.then((outcomes) => {
      const pending: PendingApproval[] = [];
      for (const outcome of outcomes) if ('pending' in outcome) pending.push(outcome.pending);
      // An array of the exact size (one grown by push keeps spare room), since the history keeps it for the whole run.
      const results = pending.length === 0 ? outcomes : outcomes.filter((outcome) => 'result' in outcome);
      const message: ToolResultMessage = { role: 'user', content: results.map((outcome) => (outcome as { result: ToolResultMessage['content'][number] }).result) };
      return { message, pending };
    });
    if (turn) turn.response = { key, answer };
    return answer;
  }

  /** Starts a call once until its message is answered; a call cut off by max_tokens is answered without running. */
  #startCall(toolUse: BetaToolUseBlock, context: ExecutionContext): Promise<CallOutcome> {
    return this.#calls().start(toolUse, (held) => {
      const notRun = this.#notRun?.get(toolUse.id);
      return notRun !== undefined
        ? Promise.resolve({ result: errorResult(toolUse.id, notRun) })
        : executeToolCall(toolUse, context, held);
    });
  }

  #calls(): ToolCalls {
    return (this.#callState ??= new ToolCalls());
  }

  #executionContext(signal: AbortSignal | undefined): ExecutionContext {
    return {
      tools: this.#tools.runnable,
      logger: this.#log(),
      signal,
      iteration: this.#iteration,
      runner: this as ToolRunner<boolean>,
      hooks: this.#options.hooks,
      emit: this.#emit,
      askApproval: (this.#askApproval ??= approvalAsker(this.#options.approve)),
      decisions: this.#calls().decisions,
      toolTimeoutMs: this.#options.toolTimeoutMs,
      maxToolResultChars: this.#maxToolResultChars,
      limiter: this.#limiter,
    };
  }

  /**
   * Runs the tools of the current message (at most once per iteration) and returns the user
   * message of `tool_result` blocks, or null when there is nothing to run. Mutate the returned
   * message to change what is sent. Calls waiting for approval are not in it (see `pendingApprovals`).
   *
   * @example
   * ```ts
   * for await (const message of runner) {
   *   const response = await runner.generateToolResponse();
   *   if (response?.content.some((result) => result.is_error)) break;
   * }
   * ```
   */
  async generateToolResponse(signal: AbortSignal | undefined = this.#options.signal): Promise<ToolResultMessage | null> {
    const turn = this.#turn;
    const uses = toolUsesOf(turn ? await turn.message : this.#messages.at(-1));
    if (uses.length === 0) return null;
    return (await this.#answer(turn, uses, signal)).message;
  }

  /** The calls the run stopped for, waiting for `approve(id)` or `deny(id, reason)`. */
  get pendingApprovals(): PendingApproval[] {
    return (this.#callState?.pending ?? []).map((call) => ({ ...call }));
  }

  /**
   * Approves a waiting call (optionally with edited input, validated again); iterate or `await`
   * the runner again to go on.
   *
   * @example
   * ```ts
   * await runner; // stops with runner.pendingApprovals
   * for (const call of runner.pendingApprovals) runner.approve(call.id);
   * const final = await runner;
   * ```
   */
  approve(id: string, options: { input?: unknown } = {}): void {
    const decision: ApprovalDecision = options.input === undefined ? { decision: 'allow' } : { decision: 'allow', input: options.input };
    this.#calls().decide(id, decision);
  }

  /** Denies a waiting call: the model gets an `is_error` result saying it was denied, with the reason. */
  deny(id: string, reason?: string): void {
    this.#calls().decide(id, { decision: 'deny', reason });
  }

  /**
   * Replaces the params for the next request. Called in the loop body, it takes control of the
   * history: the runner does not append this iteration's reply nor its tool results.
   *
   * @example
   * ```ts
   * runner.setMessagesParams((params) => ({ ...params, max_tokens: 2048 }));
   * ```
   */
  setMessagesParams(params: RunnerParams | ((previous: RunnerParams) => RunnerParams)): void {
    const next = typeof params === 'function' ? params(this.params) : params;
    const { api, settings, messages, tools } = splitParams(next);
    this.#apiParams = api;
    this.#settings = settings;
    if (tools !== this.#tools.entries) this.#tools = new ToolSet(tools);
    this.#messages = [...messages];
    this.#historySetByCaller = true;
    if (this.#turn) {
      this.#turn.tookControl = true;
      this.#turn.response = undefined;
    }
  }

  /**
   * Appends messages to the history. Called in the loop body, it takes control of the history
   * (see {@link setMessagesParams}).
   *
   * @example
   * ```ts
   * runner.pushMessages({ role: 'user', content: 'Also check Berlin.' });
   * ```
   */
  pushMessages(...messages: BetaMessageParam[]): void {
    this.setMessagesParams((params) => ({ ...params, messages: [...params.messages, ...messages] }));
  }

  /** Changes the request options (headers, timeout, ...) of the next requests. */
  setRequestOptions(options: RequestOptions | ((previous: RequestOptions) => RequestOptions)): void {
    this.#requestOptions =
      typeof options === 'function' ? options(this.#requestOptions) : { ...this.#requestOptions, ...options };
  }

  /** A read-only copy of the current params. In the loop body it does not yet hold the message just yielded. */
  get params(): RunnerParams {
    return {
      ...this.#apiParams,
      ...this.#settings,
      ...(this.#tools.entries && { tools: this.#tools.entries }),
      messages: [...this.#messages],
    } as RunnerParams;
  }

  /** The number of requests that returned a reply. */
  get iteration(): number {
    return this.#iteration;
  }

  /** The summed usage of every reply. */
  get usage(): Usage {
    return structuredClone(this.#usage);
  }

  /**
   * A JSON snapshot of the run (params, history, calls waiting for approval and their finished
   * neighbours, iteration, usage) that `resumeToolRunner` continues, in this process or another.
   */
  toJSON(): RunnerSnapshot {
    const thread = this.#thread.toJSON();
    return structuredClone({
      version: SNAPSHOT_VERSION,
      params: { ...this.#apiParams, ...this.#settings, messages: this.#messages } as RunnerSnapshot['params'],
      tools: (this.#tools.entries ?? []).map((entry) => {
        if (isToolSource(entry)) return { source: true as const };
        return this.#tools.runnable.get((entry as { name?: string }).name ?? '') === entry
          ? { runnable: (entry as RunnableTool).name }
          : { definition: entry as BetaToolUnion };
      }),
      iteration: this.#iteration,
      usage: this.#usage,
      notRun: Object.fromEntries(this.#notRun ?? []),
      calls: this.#calls().toJSON(),
      ...(thread && { thread }),
    });
  }

  /** Resolves to the last message when the loop ends; does not drive it. */
  done(): Promise<BetaMessage> {
    return this.#settle().promise;
  }

  /** Drives the loop to its end (or to a stop for approval) and resolves to the last message. */
  async runUntilDone(): Promise<BetaMessage> {
    if (!this.#consumed) {
      for await (const _ of this) {
        // Each iteration's work happens in the runner.
      }
    }
    return this.done();
  }

  /** `await runner` is `runner.runUntilDone()`. */
  then<Result1 = BetaMessage, Result2 = never>(
    onfulfilled?: ((value: BetaMessage) => Result1 | PromiseLike<Result1>) | null,
    onrejected?: ((reason: unknown) => Result2 | PromiseLike<Result2>) | null,
  ): Promise<Result1 | Result2> {
    return this.runUntilDone().then(onfulfilled, onrejected);
  }
}

const NO_OPTIONS: RequestOptions = Object.freeze({});

/** One shared handler for rejections observed elsewhere (no closure per promise). */
const ignore = (): void => {};

interface Settleable<T> {
  promise: Promise<T>;
  settled: boolean;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

function settleable<T>(): Settleable<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(ignore);
  const handle: Settleable<T> = {
    promise,
    settled: false,
    resolve: (value) => {
      handle.settled = true;
      resolve(value);
    },
    reject: (reason) => {
      handle.settled = true;
      reject(reason);
    },
  };
  return handle;
}
