/**
 * ToolRunner: the agentic loop. Each iteration answers the calls the history ends with, sends the
 * request, yields the assistant message (or its stream), lets the loop body look at it, then
 * appends the reply and the answers to its tool calls — unless the body took control of the
 * history — and goes on.
 *
 * The loop reads top to bottom here; each step is a room of its own (docs/architecture.md):
 * the state a snapshot captures (run-state.ts), the turn's request (turn.ts), the answering of a
 * message's calls (call-answers.ts), compaction (compactions.ts), the completion (completion.ts).
 */
import { APIUserAbortError, AnthropicError } from '@anthropic-ai/sdk';
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import type { ApprovalDecision, PendingApproval } from './approval.js';
import { CallAnswers } from './call-answers.js';
import type { ClientLike, RequestOptions } from './client.js';
import { Compactions } from './compactions.js';
import { type Settleable, settleable } from './completion.js';
import { emitter } from './events.js';
import { helperTags } from './helper-header.js';
import { toolUsesOf, uniqueToolUseIds } from './history.js';
import { runnerLogger } from './log.js';
import { type ToolRunnerOptions, checkOptions } from './options.js';
import { type RunContext, runSignal } from './run-context.js';
import { initialRequestOptions } from './request-options.js';
import { RunState } from './run-state.js';
import { OVER_MESSAGE_THREAD } from './sdk-thread.js';
import type { RunnerSnapshot } from './snapshot.js';
import type { AnyTool, Runner, RunnerParams } from './surface.js';
import { MessageThread, threadsAvailable } from './thread.js';
import { Requests, type Turn, nextStepFor } from './turn.js';
import type { BetaCompactionConfig, BetaMessage, BetaMessageParam, BetaToolUseBlock, ToolResultMessage } from './types.js';
import type { Usage } from './usage.js';

export type { ToolRunnerOptions } from './options.js';

/** What one iteration yields: the message, or its `MessageStream` when `stream: true`. */
export type RunnerItem<Stream extends boolean> = Stream extends true ? BetaMessageStream : BetaMessage;

export class ToolRunner<Stream extends boolean = false> implements AsyncIterable<RunnerItem<Stream>>, Runner {
  readonly #run: RunContext;
  readonly #state: RunState;
  readonly #requests: Requests;
  readonly #answers: CallAnswers;
  readonly #compactions: Compactions;
  #turn: Turn | undefined;
  #consumed = false;
  #completion: Settleable<BetaMessage> | undefined;

  /** Use `toolRunner()` or `resumeToolRunner()`; `snapshot` is for the latter. */
  constructor(client: ClientLike, params: RunnerParams, options: ToolRunnerOptions = {}, snapshot?: RunnerSnapshot) {
    const { maxToolResultChars } = checkOptions(options);
    const state = new RunState(params, snapshot);
    const logger = runnerLogger(client, options.logger);
    const thread = MessageThread.of(threadsAvailable(client, state.settings.thread), snapshot?.thread);
    const emit = emitter(options.onEvent, logger);
    const requestOptions = initialRequestOptions(options as Record<string, unknown>, options.requestOptions);
    const dropsRefusals = thread.used || OVER_MESSAGE_THREAD in client;
    this.#run = { client, options, state, thread, logger, runner: this, emit, requestOptions, dropsRefusals };
    this.#state = state;
    this.#answers = new CallAnswers(this.#run, maxToolResultChars, snapshot?.calls);
    this.#requests = new Requests(this.#run, this.#answers, helperTags(params.tools, params.messages));
    this.#compactions = new Compactions(this.#run, this.#requests);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RunnerItem<Stream>> {
    if (this.#consumed) throw new AnthropicError('Cannot iterate over a consumed stream');
    this.#consumed = true;
    if (this.#completion?.settled) this.#completion = undefined;
    const { emit } = this.#run;
    emit?.({ type: 'run.start', runner: this, model: this.#state.apiParams['model'] });
    let failed = false;
    let stoppedForApproval = false;
    /** The last reply was an unfinished turn, which the next request resumes. */
    let resuming = false;
    /** A compaction scheduled before the run stopped goes out as its last request. */
    let lastCompaction = false;
    /** The loop body left the loop (a `break`, or an error out of it) while the reply had failed. */
    let failedInBody: { error: unknown } | undefined;
    try {
      for (;;) {
        // Calls the history ends with: a state the caller set, or a run stopped for approval.
        const answered = this.#answers.answerLastMessage(undefined);
        if (answered !== 'none' && (await answered) === 'pending') {
          stoppedForApproval = true;
          break;
        }
        if (!lastCompaction && this.#state.reachedMaxIterations()) break;
        this.#answers.beginTurn();
        this.#flushToolChanges(resuming);
        const sent = this.#requests.send(this.#compactions.takeScheduled(resuming));
        const turn = sent instanceof Promise ? await sent : sent;
        this.#turn = turn;
        let inBody = true;
        try {
          yield (this.#state.settings.stream ? turn.stream : await turn.message) as RunnerItem<Stream>;
          inBody = false;
          const next = await this.#finishTurn(turn);
          stoppedForApproval = next === 'pending';
          resuming = next === 'resume';
          if (lastCompaction) break;
          if (next === 'stop' && this.#compactions.beforeStop()) lastCompaction = true;
          else if (next === 'stop' || next === 'pending') break;
        } finally {
          turn.stream?.abort();
          // The body left while reading a stream that broke (its error escaped the body): a failed request, not a `break`.
          if (inBody && turn.reply === undefined) failedInBody = await replyFailure(turn.message);
          if (turn.compaction) this.#compactions.abandon();
          this.#turn = undefined;
        }
      }
    } catch (error) {
      failed = true;
      this.#failed(error);
      throw error;
    } finally {
      if (failedInBody) this.#failed(failedInBody.error);
      // A `break` in the loop body ends the run too: it resolves to the last reply.
      else if (!failed) {
        this.#finish();
        emit?.({ type: 'run.end', runner: this, message: this.#state.lastMessage });
      }
      // A run stopped for approval goes on when iterated (or awaited) again.
      if (stoppedForApproval) this.#consumed = false;
    }
  }

  /** After the loop body: append the reply and its tool results (unless the body took control). */
  async #finishTurn(turn: Turn): Promise<'continue' | 'resume' | 'stop' | 'pending'> {
    if (turn.compaction) {
      this.#compactions.adoptServerCompaction(await turn.message);
      return 'continue';
    }
    if (!turn.tookControl) {
      const reply = turn.reply ?? (await turn.message);
      // On a message thread a refused turn is not kept: the next request replays without it (the SDK's rule).
      if (reply.stop_reason === 'refusal' && this.#run.dropsRefusals) return 'stop';
      const { content, renamed } = uniqueToolUseIds(reply.content);
      for (const [id, text] of renamed) this.#state.markNotRun(id, text);
      this.#state.messages.push({ role: reply.role, content });
      const step = nextStepFor(reply.stop_reason);
      if (step !== 'run_tools') return step;
    }
    const answered = await this.#answers.answerLastMessage(turn);
    if (answered === 'none' && !turn.tookControl) return 'stop';
    if (answered === 'pending') return 'pending';
    const control = this.#state.settings.compactionControl;
    if (!turn.tookControl && control?.enabled) await this.#compactions.afterTurn(control, await turn.message);
    return 'continue';
  }

  /** Tool changes since the last request go out in a `system` message (a paused turn goes back first). */
  #flushToolChanges(resuming: boolean): void {
    if (resuming && this.#state.lastMessage?.stop_reason === 'pause_turn') return;
    const message = this.#answers.changes.takeMessage();
    if (message) this.#state.messages.push(message);
  }

  /** A step failed: the state is what it was before it, so iterating (or awaiting) again retries it. */
  #failed(error: unknown): void {
    this.#consumed = false;
    this.#settle().reject(error);
    this.#completion = undefined;
    this.#run.emit?.({ type: 'run.end', runner: this, message: this.#state.lastMessage, error });
  }

  #finish(): void {
    const last = this.#state.lastMessage;
    if (last) this.#settle().resolve(last);
    else this.#settle().reject(new AnthropicError('The tool runner ended without a message from the model'));
  }

  /** The completion of the current attempt, made when first needed. */
  #settle(): Settleable<BetaMessage> {
    return (this.#completion ??= settleable());
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
    this.#compactions.schedule(config);
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
  async generateToolResponse(signal: AbortSignal | null | undefined = runSignal(this.#run)): Promise<ToolResultMessage | null> {
    const turn = this.#turn;
    const uses = toolUsesOf(turn ? await turn.message : this.#state.messages.at(-1));
    if (uses.length === 0) return null;
    return (await this.#answers.answer(turn, uses, signal ?? undefined)).message;
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
    this.#answers.changes.add(tools, this.#answers.toolsetFamilies);
  }

  /**
   * Takes tools away from the model without changing `params.tools`: a call to one of them is
   * answered "not found" at once, and the model is told in a `tool_removal` block with the next
   * request. A toolset can't be removed (`ToolsetContractError`). Needs the `inline-tools-2026-09-15` beta.
   *
   * @example
   * ```ts
   * runner.removeTools('query_database');
   * ```
   */
  removeTools(...tools: Array<AnyTool | string>): void {
    this.#answers.changes.remove(tools, this.#answers.toolsetFamilies);
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
    if (this.#turn && this.#state.settings.runToolsEagerly) this.#answers.defer(typeof toolUse === 'string' ? toolUse : toolUse.id);
  }

  /** The calls of the current reply `deferToolCall()` holds, in the model's order (empty without `runToolsEagerly`). */
  get deferredToolCalls(): BetaToolUseBlock[] {
    return this.#answers.deferredCalls;
  }

  /** The calls the run stopped for, waiting for `approve(id)` or `deny(id, reason)`. */
  get pendingApprovals(): PendingApproval[] {
    return this.#answers.pending;
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
    this.#answers.decide(id, decision);
  }

  /** Denies a waiting call: the model gets an `is_error` result saying it was denied, with the reason. */
  deny(id: string, reason?: string): void {
    this.#answers.decide(id, { decision: 'deny', reason });
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
    this.#compactions.checkNewParams(next as unknown as Record<string, unknown>, next.messages ?? []);
    this.#state.replace(next);
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

  /**
   * Changes the request options (headers, timeout, signal, ...) of the next requests; a `signal`
   * set here aborts the run's tools too.
   */
  setRequestOptions(options: RequestOptions | ((previous: RequestOptions) => RequestOptions)): void {
    const run = this.#run;
    run.requestOptions = typeof options === 'function' ? options(run.requestOptions) : { ...run.requestOptions, ...options };
  }

  /** A read-only copy of the current params. In the loop body it does not yet hold the message just yielded. */
  get params(): RunnerParams {
    return this.#state.params;
  }

  /** The number of requests sent (a failed one too), as the SDK counts them. */
  get iteration(): number {
    return this.#state.iteration;
  }

  /** The summed usage of every reply. */
  get usage(): Usage {
    return structuredClone(this.#state.usage);
  }

  /**
   * A JSON snapshot of the run (params, history, calls waiting for approval and their finished
   * neighbours, iteration, usage) that `resumeToolRunner` continues, in this process or another.
   */
  toJSON(): RunnerSnapshot {
    return this.#state.toJSON(this.#answers.toJSON(), this.#run.thread.toJSON());
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

/** How a turn's reply failed, once it settled; none when it arrived, or when the runner aborted it (a `break`). */
async function replyFailure(message: Promise<BetaMessage>): Promise<{ error: unknown } | undefined> {
  try {
    await message;
    return undefined;
  } catch (error) {
    return error instanceof APIUserAbortError || (error as { cause?: unknown }).cause instanceof APIUserAbortError ? undefined : { error };
  }
}
