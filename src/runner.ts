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
import { AnthropicError } from '@anthropic-ai/sdk';
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import type { ApprovalDecision, PendingApproval } from './approval.js';
import { CallAnswers } from './call-answers.js';
import type { ClientLike, RequestOptions } from './client.js';
import { Compactions } from './compactions.js';
import { type Settleable, settleable } from './completion.js';
import { emitter } from './events.js';
import { toolUsesOf, uniqueToolUseIds } from './history.js';
import { runnerLogger } from './log.js';
import { type ToolRunnerOptions, checkOptions } from './options.js';
import type { RunContext } from './run-context.js';
import { RunState } from './run-state.js';
import { RunTracing } from './run-tracing.js';
import type { RunnerSnapshot } from './snapshot.js';
import type { Runner, RunnerParams } from './surface.js';
import { MessageThread, threadsAvailable } from './thread.js';
import { Requests, type Turn, nextStepFor } from './turn.js';
import type { BetaCompactionConfig, BetaMessage, BetaMessageParam, ToolResultMessage } from './types.js';
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
    const tracing = new RunTracing(client, options.onEvent, logger);
    this.#run = { client, options, state, thread, logger, runner: this, emit, tracing };
    this.#state = state;
    this.#answers = new CallAnswers(this.#run, maxToolResultChars, snapshot?.calls);
    this.#requests = new Requests(this.#run, this.#answers.startEagerly);
    this.#compactions = new Compactions(this.#run, this.#requests);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RunnerItem<Stream>> {
    if (this.#consumed) throw new AnthropicError('Cannot iterate over a consumed tool runner');
    this.#consumed = true;
    if (this.#completion?.settled) this.#completion = undefined;
    const { emit } = this.#run;
    emit?.({ type: 'run.start', runner: this, model: this.#state.apiParams['model'] });
    this.#run.tracing.begin(this.#state.apiParams, this.#requests);
    let failed = false;
    let completed = false;
    let stoppedForApproval = false;
    try {
      for (;;) {
        // Calls the history ends with: a state the caller set, or a run stopped for approval.
        const answered = this.#answers.answerLastMessage(undefined);
        if (answered !== 'none' && (await answered) === 'pending') {
          stoppedForApproval = true;
          break;
        }
        if (this.#state.reachedMaxIterations()) break;
        const sent = this.#requests.send(this.#compactions.takeScheduled());
        const turn = sent instanceof Promise ? await sent : sent;
        this.#turn = turn;
        try {
          yield (this.#state.settings.stream ? turn.stream : await turn.message) as RunnerItem<Stream>;
          const next = await this.#finishTurn(turn);
          stoppedForApproval = next === 'pending';
          if (next !== 'continue') break;
        } finally {
          turn.stream?.abort();
          this.#turn = undefined;
        }
      }
      completed = true;
    } catch (error) {
      failed = true;
      this.#run.tracing.end({ error });
      // The state is what it was before the failed step: iterating again retries it.
      this.#consumed = false;
      this.#settle().reject(error);
      this.#completion = undefined;
      emit?.({ type: 'run.end', runner: this, message: this.#state.lastMessage, error });
      throw error;
    } finally {
      // A `break` in the loop body ends the run too: it resolves to the last reply.
      if (!failed) {
        this.#finish();
        // Closed by the loop body (`break`) before the loop ended: a cancellation, with no status.
        this.#run.tracing.end(completed ? 'completed' : 'closed');
        emit?.({ type: 'run.end', runner: this, message: this.#state.lastMessage });
      }
      // A run stopped for approval goes on when iterated (or awaited) again.
      if (stoppedForApproval) this.#consumed = false;
    }
  }

  /** After the loop body: append the reply and its tool results (unless the body took control). */
  async #finishTurn(turn: Turn): Promise<'continue' | 'stop' | 'pending'> {
    if (turn.compaction && !turn.tookControl) return this.#compactions.adoptServerCompaction(await turn.message);
    if (!turn.tookControl) {
      const reply = turn.reply ?? (await turn.message);
      const { content, renamed } = uniqueToolUseIds(reply.content);
      for (const [id, text] of renamed) this.#state.markNotRun(id, text);
      this.#state.messages.push({ role: reply.role, content });
      const step = nextStepFor(reply.stop_reason);
      if (step === 'stop') return 'stop';
      if (step === 'resume') return 'continue';
    }
    const answered = await this.#answers.answerLastMessage(turn);
    if (answered === 'none' && !turn.tookControl) return 'stop';
    if (answered === 'pending') return 'pending';
    const control = this.#state.settings.compactionControl;
    if (!turn.tookControl && control?.enabled) await this.#compactions.afterTurn(control, await turn.message);
    return 'continue';
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
  async generateToolResponse(signal: AbortSignal | undefined = this.#run.options.signal): Promise<ToolResultMessage | null> {
    const turn = this.#turn;
    const uses = toolUsesOf(turn ? await turn.message : this.#state.messages.at(-1));
    if (uses.length === 0) return null;
    return (await this.#answers.answer(turn, uses, signal, true)).message;
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
    this.#state.replace(typeof params === 'function' ? params(this.params) : params);
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
    const requests = this.#requests;
    requests.requestOptions = typeof options === 'function' ? options(requests.requestOptions) : { ...requests.requestOptions, ...options };
  }

  /** A read-only copy of the current params. In the loop body it does not yet hold the message just yielded. */
  get params(): RunnerParams {
    return this.#state.params;
  }

  /** The number of requests that returned a reply. */
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
