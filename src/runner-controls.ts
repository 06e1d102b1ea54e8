/**
 * What a run offers its loop body, tools and observers (the `Runner` surface): the methods that read
 * and change the run's state between turns. It wires the run's rooms together; `ToolRunner`
 * (runner.ts) adds the loop itself on top.
 */
import type { BetaToolRunnerParams } from '@anthropic-ai/sdk/lib/tools/BetaToolRunner';
import { AGENT_LINK, type AgentLink, checkAgentOptions } from './agent-link.js';
import { type PendingApproval, approveDecision, callIdArgument, denyDecision } from './approval.js';
import { CallAnswers } from './call-answers.js';
import { type ClientLike, type RequestOptions, checkClient } from './client.js';
import { Compactions } from './compactions.js';
import { emitter } from './events.js';
import { helperTags } from './helper-header.js';
import { toolUsesOf } from './history.js';
import { holdBeforeCalls, lateWentOnPast } from './late-change.js';
import { runnerLogger } from './log.js';
import { checkParamsObject } from './params.js';
import { OWN_OPTION_KEYS, type ToolRunnerOptions, checkOptions, checkRequestOptionNames } from './options.js';
import { type RunContext, runSignal } from './run-context.js';
import { initialRequestOptions } from './request-options.js';
import { deferTooLate } from './defer-too-late.js';
import { described, droppedPromise, wrongType } from './described.js';
import { RunControl } from './run-control.js';
import { RunState } from './run-state.js';
import { runSnapshot } from './run-snapshot.js';
import { listenerScope, runTracing } from './run-tracing.js';
import { OVER_MESSAGE_THREAD, callsNotRunOn, handBackHistory, partialReplyAt, lendableClient, setThreadFields, threadChanges } from './sdk-thread.js';
import type { RunnerSnapshot } from './snapshot.js';
import type { AnyTool, RunnableTool, Runner, RunnerParams, RunnerParamsCopy, RunnerParamsRead } from './surface.js';
import { MessageThread, threadsAvailable } from './thread.js';
import type { StoppedBy } from './stop-reason.js';
import { Requests } from './turn.js';
import type { Turn } from './turn-state.js';
import type { BetaCompactionConfig, BetaMessage, BetaMessageParam, BetaToolUseBlock, ToolResultMessage } from './types.js';
import { type Usage, addUsage, copyUsage } from './usage.js';

export abstract class RunnerControls implements Runner {
  protected readonly run: RunContext;
  protected readonly state: RunState;
  protected readonly requests: Requests;
  protected readonly answers: CallAnswers;
  protected readonly compactions: Compactions;
  protected readonly control: RunControl;
  /** The run goes over an SDK thread (`toolRunner(thread, …)`), whose changes it takes in. */
  protected readonly overSdkThread: boolean;
  /** The turn whose reply the loop body is looking at. */
  protected turn: Turn | undefined;
  /**
   * The last request failed (as the SDK's runner keeps its last `#message`): a stop at `max_iterations` is that
   * failure, and `generateToolResponse()` throws it until the next request.
   */
  protected requestFailure: { error: unknown } | undefined;

  /** `supplied`: on resume, the runnable tools by name, for the tools `addTools` added. */
  constructor(client: ClientLike, params: RunnerParams, options: ToolRunnerOptions, snapshot: RunnerSnapshot | undefined, supplied?: (name: string) => RunnableTool) {
    checkClient(client);
    checkParamsObject(params);
    const { maxToolResultChars } = checkOptions(options, client, params.tools);
    const state = new RunState(params, snapshot);
    // Calls an earlier run over the same SDK thread decided not to run are answered so here too.
    state.markNotRunElsewhere(callsNotRunOn(client));
    const logger = runnerLogger(client, options.logger);
    const overSdkThread = OVER_MESSAGE_THREAD in client;
    // A reply had arrived: in the run a snapshot was taken of (not a refused one: the SDK's thread drops a refused turn), or in an SDK thread's history (its markers are left out up to it).
    const kept = snapshot?.lastMessage != null && snapshot.lastMessage.stop_reason !== 'refusal';
    const replied = snapshot ? kept || snapshot.thread != null : overSdkThread && state.messages.some((message) => message.role === 'assistant');
    const thread = MessageThread.of(threadsAvailable(client, state.settings.thread), { snapshot: snapshot?.thread, messages: state.threadView(), replied, isReply: (message) => state.isReply(message) }, overSdkThread);
    const emit = emitter(options.onEvent, logger);
    const requestOptions = initialRequestOptions(options as Record<string, unknown>, options.requestOptions, OWN_OPTION_KEYS);
    state.dropsRefusals = thread.used || OVER_MESSAGE_THREAD in client;
    const tracing = runTracing(client, options.onEvent, logger);
    const control = new RunControl(options, state, logger, snapshot?.control);
    this.run = { client, options, state, thread, logger, runner: this, emit, requestOptions, tracing, control };
    this.overSdkThread = overSdkThread;
    this.state = state;
    this.control = control;
    this.answers = new CallAnswers(this.run, maxToolResultChars, snapshot?.calls);
    if (snapshot?.toolChanges && supplied) this.answers.changes.restore(snapshot.toolChanges, supplied);
    this.requests = new Requests(this.run, this.answers, helperTags(params.tools, params.messages), snapshot?.requests);
    this.compactions = new Compactions(this.run, this.requests, this.answers.changes, snapshot?.compaction);
    this.requests.recoverWith(this.compactions);
  }

  abstract done(): Promise<BetaMessage>;
  abstract runUntilDone(): Promise<BetaMessage>;

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
    this.compactions.schedule(config);
  }

  /**
   * Runs the tools of the current message (at most once per iteration) and returns the user
   * message of `tool_result` blocks, or null when there is nothing to run (no calls, or every call
   * waits for approval). Mutate the returned message to change what is sent. Calls waiting for
   * approval are not in it (see `pendingApprovals`). After a request failed, it throws that failure
   * until the next request, as the SDK's runner does.
   *
   * @example
   * ```ts
   * for await (const message of runner) if ((await runner.generateToolResponse())?.content.some((result) => result.is_error)) break;
   * ```
   */
  generateToolResponse(signal: AbortSignal | null | undefined = runSignal(this.run)): Promise<ToolResultMessage | null> {
    const response = this.#toolResponse(this.turn, signal);
    // Its calls ran, even when the loop body sets a history without their results before they end (runner.ts).
    if (this.turn) this.turn.inFlight = response;
    return response;
  }

  async #toolResponse(turn: Turn | undefined, signal: AbortSignal | null | undefined): Promise<ToolResultMessage | null> {
    if (!turn && this.requestFailure) throw this.requestFailure.error;
    const uses = toolUsesOf(turn ? await turn.message : this.state.messages.at(-1));
    if (uses.length === 0) return null;
    const answer = await this.answers.answerCaller(turn, uses, signal ?? undefined);
    // Every call waits for approval: nothing to send yet (a user message with no content is no answer).
    return answer.message.content.length > 0 ? answer.message : null;
  }

  /**
   * Gives the model more tools without changing `params.tools` (which would miss the prompt cache):
   * each goes to the model in a `tool_addition` block with the next request, and a runnable one runs
   * under its name at once. A plain definition is only sent, and stops a runnable tool of that name.
   * A toolset can't be added (`ToolsetContractError`). Needs the `inline-tools-2026-09-15` beta.
   *
   * @example
   * ```ts
   * runner.addTools(queryDatabase);
   * ```
   */
  addTools(...tools: AnyTool[]): void {
    this.answers.changes.add(tools, this.answers.toolsetFamilies, this.run.client);
  }

  /**
   * Takes tools away from the model without changing `params.tools`: a call to one of them is
   * answered "not found" at once, and the model is told in a `tool_removal` block with the next
   * request. A toolset can't be removed (`ToolsetContractError`). Needs the `inline-tools-2026-09-15` beta.
   */
  removeTools(...tools: Array<AnyTool | string>): void {
    this.answers.changes.remove(tools, this.answers.toolsetFamilies);
  }

  /**
   * With `runToolsEagerly`: holds a call of the current reply (its `tool_use` block, or its id) until
   * the loop body is done with the reply, instead of starting it while the reply streams. Does
   * nothing for a call that started, or without `runToolsEagerly`.
   *
   * @example
   * ```ts
   * for await (const stream of runner) {
   *   stream.on('contentBlock', (block) => {
   *     if (block.type === 'tool_use' && block.name === 'delete_file') runner.deferToolCall(block);
   *   });
   *   await stream.finalMessage();
   *   if (runner.deferredToolCalls.length > 0 && !(await confirm(runner.deferredToolCalls))) break;
   * }
   * ```
   */
  deferToolCall(toolUse: BetaToolUseBlock | string): void {
    if (!this.turn || !this.state.settings.runToolsEagerly) return;
    const id = typeof toolUse === 'string' ? toolUse : toolUse.id;
    if (this.answers.started(id)) this.run.logger.warn(deferTooLate(toolUse, this.state.settings.stream === true));
    else this.answers.defer(id);
  }

  /** The calls of the current reply `deferToolCall()` holds, in the model's order (empty without `runToolsEagerly`, and once its iteration is over). */
  get deferredToolCalls(): BetaToolUseBlock[] {
    return this.turn ? this.answers.deferredCalls : [];
  }

  /** The calls the run stopped for, waiting for `approve(id)` or `deny(id, reason)`. */
  get pendingApprovals(): PendingApproval[] {
    return this.answers.pending;
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
    this.answers.decide(callIdArgument(id, 'approve'), approveDecision(options));
    this.decided();
  }

  /** Denies a waiting call: the model gets an `is_error` result saying it was denied, with the reason. */
  deny(id: string, reason?: string): void {
    this.answers.decide(callIdArgument(id, 'deny'), denyDecision(reason));
    this.decided();
  }

  /** A waiting call was decided: the run stopped for approval goes on when iterated again. */
  protected abstract decided(): void;
  /** The history or params were set outside the loop body: a run that ended for good says they go nowhere. */
  protected abstract changedAfterEnd(): void;

  /**
   * Replaces the params for the next request. Called in the loop body, it takes control of the
   * history: the runner does not append this iteration's reply nor its tool results.
   *
   * @example
   * ```ts
   * runner.setMessagesParams((params) => ({ ...params, max_tokens: 2048 }));
   * ```
   */
  setMessagesParams(params: RunnerParams | ((previous: RunnerParamsCopy) => RunnerParams)): void;
  /** A function typed with the SDK's params type, as a program written for the SDK's runner has it. */
  setMessagesParams(mutate: (previous: BetaToolRunnerParams) => BetaToolRunnerParams): void;
  setMessagesParams(params: RunnerParams | ((previous: never) => RunnerParams | BetaToolRunnerParams)): void {
    // (What the program changed on an SDK thread first, so that what these params change is told from it.)
    if (typeof params !== 'function') this.takeThreadChanges();
    const next = (typeof params === 'function' ? params(this.params as never) : params) as RunnerParams;
    // A function that changes the copy it is given and forgets to return it: the run failed with "Cannot read properties
    // of undefined (reading 'messages')", from deep inside. An async one's promise read as params without messages.
    const promised = droppedPromise(next);
    if (typeof next !== 'object' || next === null || Array.isArray(next) || promised) {
      const what = typeof params === 'function' ? 'the function must return the new params, (params) => ({ ...params, messages })' : 'the params must be an object, or a function that returns them';
      throw new TypeError(`setMessagesParams: ${what}, got ${promised ? 'a promise: await what they need first, then set them' : described(next)}`);
    }
    this.compactions.checkNewParams(next as unknown as Record<string, unknown>, next.messages ?? []);
    checkAgentOptions(next.tools, this.run.client); // An agent tool's options, against the run's client: as at construction, in addTools().
    const before = this.state.apiParams;
    const history = this.state.messages;
    this.state.replace(next);
    setThreadFields(this.run.client, before, this.state.apiParams);
    // In the `onRequest` hook of a request sent again after an overflow: a change before a request, as in any `onRequest`.
    const turn = this.turn?.sendingAgain ? undefined : this.turn;
    // After the loop body, the reply still coming: the turn places the reply, then what was appended (late-change.ts).
    if (turn?.afterBody && !turn.tookControl) turn.sentHistory ??= history;
    else if (!turn) {
      this.changedAfterEnd();
      this.state.dropRepeatedReplies(history);
      this.state.takeRepliesAsParams();
      // Over an SDK thread, the thread holds the new history at once, as the SDK's runner sets it.
      handBackHistory(this.run.client, this.state.messages, 'ended', this.state.notRun);
    } else {
      // What the history held when the body got the reply: once the body is done, what repeats the reply is left out.
      if (!turn.tookControl) turn.historyBefore = history;
      // Calls the body was given results for ran: a history it sets without those results gets them, not "not run".
      const given = turn.response?.given;
      if (given) this.state.keepRan(given.message);
      turn.tookControl = true;
      turn.response = undefined;
    }
    const { answering } = this.state;
    if (answering && !this.overSdkThread) this.state.late = holdBeforeCalls(this.state.messages, history, answering, this.state.late);
    // Appended to while the run stopped (for approval, on a failure) with messages still waiting before the reply: past it.
    else if (!turn) this.state.late = lateWentOnPast(this.state.messages, history, this.state.late);
  }

  /**
   * Appends messages to the history (`runner.pushMessages({ role: 'user', content: 'Also check Berlin.' })`). Called in the
   * loop body, it takes control of the history (see {@link setMessagesParams}).
   */
  pushMessages(...messages: BetaMessageParam[]): void {
    this.setMessagesParams((params) => ({ ...params, messages: [...params.messages, ...messages] }));
  }

  /**
   * Changes the request options (headers, timeout, signal, ...) of the next requests; a `signal`
   * set here aborts the run's tools too.
   */
  setRequestOptions(options: RequestOptions | ((previous: RequestOptions) => RequestOptions)): void {
    const run = this.run;
    const next = typeof options === 'function' ? options(run.requestOptions) : { ...run.requestOptions, ...options };
    // A promise (an async function's) was taken, and its options dropped in silence: the requests went without them.
    if (droppedPromise(typeof options === 'function' ? next : options)) throw new TypeError('setRequestOptions: got a promise; pass the request options, or a function that returns them at once: await what they need first');
    if (typeof next !== 'object' || next === null || Array.isArray(next)) throw wrongType(next, 'setRequestOptions: the request options must be an object');
    checkRequestOptionNames(next as Record<string, unknown>, run.client, 'setRequestOptions', 'setRequestOptions: options');
    run.requestOptions = next;
    // The calls the reply started while it streamed follow the new signal too, as the calls still to start do.
    if (this.turn) this.answers.eagerFollow(runSignal(run));
  }

  /** The request options the next requests go with (`options.requestOptions`, as `setRequestOptions` left them). */
  get requestOptions(): Readonly<RequestOptions> {
    return this.run.requestOptions;
  }

  /** A read-only copy of the current params. In the loop body it does not yet hold the message just yielded. */
  get params(): RunnerParamsRead {
    this.takeThreadChanges();
    return this.state.params as RunnerParamsRead;
  }

  /**
   * Over an SDK thread: what the program changed on the thread itself (its `append()` and `update()`, another run over
   * it) is the run's too, as in the SDK's runner, whose history and fields are the thread's. Messages it added join the
   * history outside the loop body (in it, once the body is done); they are returned.
   */
  protected takeThreadChanges(afterBody = false): readonly BetaMessageParam[] {
    if (!this.overSdkThread) return NOTHING_ADDED;
    const state = this.state;
    const messages = state.messages;
    // Calls the history ends with may still run: the body is just done with them, or they wait for approval (not those
    // never to run: cut off by max_tokens, say).
    const callsOpen = afterBody || toolUsesOf(messages.at(-1)).some((use) => !state.notRun?.has(use.id));
    const changes = threadChanges(this.run.client, this.turn && !afterBody ? undefined : { messages, callsOpen });
    if (!changes) return NOTHING_ADDED;
    if (changes.fields) {
      const { changed, removed } = changes.fields;
      const fields = { ...state.apiParams, ...changed };
      for (const key of removed) delete fields[key];
      state.apiParams = fields;
    }
    const added = changes.messages;
    state.markNotRunElsewhere(changes.notRun);
    // Another run answered calls the history left unanswered: the thread's history, with those answers, is the run's.
    if (changes.history) state.messages.splice(0, state.messages.length, ...changes.history);
    else if (added.length === 0) return NOTHING_ADDED;
    else state.messages.push(...added);
    state.historySetByCaller = true;
    return added;
  }

  /** Over an SDK thread, before the first turn: a partial reply the thread sends the turn again without goes (sdk-thread.ts). */
  protected dropPartialReply(): void {
    const at = partialReplyAt(this.run.client, this.state.messages);
    if (at === undefined) return;
    this.state.messages.splice(at, 1);
    this.state.historySetByCaller = true;
  }

  /** The number of requests sent (a failed one too), as the SDK counts them. */
  get iteration(): number {
    return this.state.iteration;
  }

  /** The summed usage of every reply. */
  get usage(): Usage {
    return copyUsage(this.state.usage);
  }

  /** Why the run stopped, once it has (see {@link StoppedBy}); `undefined` while it runs. */
  get stoppedBy(): StoppedBy | undefined {
    return this.state.stoppedBy;
  }

  /**
   * With `options.output`: the final answer, parsed and validated (typed from the schema);
   * `undefined` until the run has ended with one.
   */
  get output(): unknown {
    return this.control.output;
  }

  /** What this run lends the sub-agents its tools start (`agentTool`). */
  [AGENT_LINK](): AgentLink {
    const { run, state } = this;
    return {
      client: lendableClient(run.client),
      emit: run.emit,
      onEvent: run.options.onEvent,
      scope: listenerScope(run.options.onEvent),
      approve: this.answers.approver,
      signal: runSignal(run),
      streaming: state.settings.stream === true,
      fallback: run.options.fallback,
      logger: run.options.logger,
      addUsage: (usage) => void (state.usage = addUsage(state.usage, usage)),
      tokensLeft: () => this.control.tokensLeft(),
      added: () => this.answers.changes.added,
    };
  }

  /**
   * A JSON snapshot of the run (params, history, calls waiting for approval and their finished
   * neighbours, iteration, usage) that `resumeToolRunner` continues, in this process or another.
   */
  toJSON(): RunnerSnapshot {
    const { run, state, turn, answers, control, compactions } = this;
    return runSnapshot({ run, state, turn, answers, control, compactions, requestsSent: this.requests.sent });
  }
}

const NOTHING_ADDED: readonly BetaMessageParam[] = Object.freeze([]);
