/**
 * ToolRunner: the agentic loop. Each iteration answers the calls the history ends with, sends the
 * request, yields the assistant message (or its stream), lets the loop body look at it, then
 * appends the reply and the answers to its tool calls — unless the body took control of the
 * history — and goes on.
 *
 * The loop reads top to bottom here; each step is a room of its own (docs/architecture.md):
 * the state a snapshot captures (run-state.ts), the turn's request (turn.ts), the answering of a
 * message's calls (call-answers.ts), compaction (compactions.ts), the completion (completion.ts).
 * What follows the loop body each turn (the reply kept, its calls answered) is after-body.ts; the
 * wiring of the rooms and the methods the loop body calls are in runner-controls.ts.
 */
import { AnthropicError } from '@anthropic-ai/sdk';
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import { type ClientLike, providerOf } from './client.js';
import { type Settleable, settleable } from './completion.js';
import { toolUsesOf } from './history.js';
import { placeAfterReply } from './late-change.js';
import type { ToolRunnerOptions } from './options.js';
import { RunnerAfterBody } from './after-body.js';
import { runSignal } from './run-context.js';
import type { RunnerSnapshot } from './snapshot.js';
import { type StoppedBy, stoppedByFailure } from './stop-reason.js';
import { AWAITED_IN_BODY, changedAfterEndText, noReplyReason, replyFailure } from './run-end.js';
import type { PassEnd } from './sdk-spans.js';
import type { RunnableTool, RunnerParams } from './surface.js';
import type { BetaMessage } from './types.js';

export type { ToolRunnerOptions } from './options.js';

/** What one iteration yields: the message, or its `MessageStream` when `stream: true`. */
export type RunnerItem<Stream extends boolean> = Stream extends true ? BetaMessageStream : BetaMessage;

/** The options of a run given none: one object for every such run, since a run only reads its options. */
const NO_OPTIONS: ToolRunnerOptions = Object.freeze({});

/**
 * The agentic loop: iterate it (each assistant message, or its stream with `stream: true`) or
 * `await` it (the last message). `Output` is the type of `runner.output` (`options.output`'s schema).
 */

export class ToolRunner<Stream extends boolean = false, Output = unknown> extends RunnerAfterBody implements AsyncIterable<RunnerItem<Stream>> {
  #consumed = false;
  #completion: Settleable<BetaMessage> | undefined;

  /** Use `toolRunner()` or `resumeToolRunner()`; `snapshot` is for the latter. (`stream: true` in the params types the items as streams.) */
  constructor(client: ClientLike, params: RunnerParams & { stream?: Stream | undefined }, options: ToolRunnerOptions = NO_OPTIONS, snapshot?: RunnerSnapshot, supplied?: (name: string) => RunnableTool) {
    super(client, params, options, snapshot, supplied);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RunnerItem<Stream>> {
    if (this.#consumed) throw new AnthropicError('Cannot iterate over a consumed stream');
    this.#consumed = true;
    if (this.#completion?.settled) this.#completion = undefined;
    const { emit } = this.run;
    emit?.({ type: 'run.start', runner: this, model: this.state.apiParams['model'], provider: providerOf(this.run.client) });
    this.run.tracing.begin(this.state.apiParams, this.run);
    this.state.stoppedBy = undefined;
    // A repair turn goes first, or a final reply whose output was not read (the schema's code threw, the run aborted) is read again.
    const reading = this.control.resume(runSignal(this.run));
    let failed = false;
    /** Why the loop ended, when it ended by itself (not a `break`, not a failure). */
    let stop: StoppedBy | undefined;
    /** The last reply was an unfinished turn, which the next request resumes (a request that failed since too). */
    let resuming = this.state.lastMessage?.stop_reason === 'pause_turn' && this.state.messages.at(-1)?.role === 'assistant';
    /** A compaction scheduled before the run stopped goes out as its last request (again, when it failed: `compactions.endingOn`). */
    let lastCompaction = this.#stillEndingOn();
    if (lastCompaction) stop = this.compactions.endingOn;
    this.compactions.endingOn = undefined;
    /** The loop body left the loop (a `break`, or an error out of it) while the reply had failed. */
    let failedInBody: { error: unknown } | undefined;
    try {
      if (reading) await reading;
      for (;;) {
        // Over an SDK thread: a partial reply the thread sends the turn again without (a stream that broke) goes first.
        if (this.overSdkThread) this.dropPartialReply();
        // Calls the history ends with: a state the caller set, or a run stopped for approval.
        const answered = this.control.endsOnAnswer ? 'none' : this.answers.answerLastMessage(undefined);
        if (answered !== 'none' && (await answered) === 'pending') {
          stop = 'approval';
          break;
        }
        // Over an SDK thread: what the program added to it (in the loop body, or since the last run) goes out with this turn.
        this.takeThreadChanges();
        // A reply whose calls waited for approval (or failed to be answered) gets its compaction check now they are answered.
        if (this.compactions.owed) await this.compactions.afterAnswers(this.state.settings.compactionControl, this.control.maySummarise());
        // The compaction asked for after the last reply is a request too: none past the token budget (it stays asked for).
        const reached = lastCompaction ? this.control.tokensReached() : undefined;
        if (reached) {
          this.run.logger.info(`The compaction asked for (compactBeforeNextTurn) is not sent: ${reached}`);
          break;
        }
        const limit = lastCompaction ? undefined : this.control.beforeRequest();
        // At the limit after a failed request, the failure stands (as in the SDK's runner), its stop as the first time.
        if (limit === 'max_iterations' && this.requestFailure) throw this.requestFailure.error;
        if (limit) {
          stop = limit;
          // No request follows: the calls a history the caller set leaves unanswered are answered now, not at the next one.
          this.state.answerDanglingAtStop();
          break;
        }
        this.answers.beginTurn();
        // Appended late while the final answer came: not summarised by the compaction after it, but kept after its summary.
        if (lastCompaction) this.#holdLate();
        // Messages appended late went after the reply with its results, if it had calls (answered above): no longer late.
        this.state.late = undefined;
        // A compaction after the final reply goes without the tools added or removed meanwhile: they wait for the next turn (as in the SDK).
        if (!lastCompaction) this.#flushToolChanges(resuming);
        const sent = this.compactions.send(resuming, lastCompaction ? stop : undefined);
        const turn = sent instanceof Promise ? await sent : sent;
        this.turn = turn;
        turn.message.then(
          () => (this.requestFailure = undefined),
          (error: unknown) => (this.requestFailure = { error }),
        );
        try {
          const item = this.state.settings.stream ? turn.stream : await turn.message;
          // In the body only once it holds the item (a whole reply that failed never reached it).
          turn.inBody = true;
          yield item as RunnerItem<Stream>;
          turn.inBody = false;
          turn.afterBody = true;
          const next = await this.finishTurn(turn);
          // Appended late after a reply that asks for no tools (its results take them along: late-change.ts).
          if (this.state.late && next !== 'pending') placeAfterReply(this.state.messages, this.state.late);
          // The run stops on this reply: the calls it started while streaming end before the run does.
          const settling = next === 'stop' ? this.answers.settleEager() : undefined;
          if (settling) await settling;
          resuming = next === 'resume';
          if (lastCompaction) break;
          if (next === 'pending') stop = 'approval';
          else if (next === 'stop') stop = this.control.endedOnReply();
          if (next === 'stop' && this.compactions.beforeStop()) lastCompaction = true;
          else if (next === 'stop' || next === 'pending') break;
        } finally {
          this.#restoreLate();
          turn.stream?.abort();
          // The body left while reading a stream that broke (its error escaped the body): a failed request, not a `break`.
          if (turn.inBody && turn.reply === undefined) failedInBody = await replyFailure(turn.message, runSignal(this.run));
          // The body left after setting the history: it holds the reply it was given once, the rest as the body set it.
          if (turn.inBody && turn.tookControl) this.state.dropBodyRepeats(turn.historyBefore ?? [], turn.reply);
          // A reply not kept (the body left it, or it failed): the calls it started while streaming stop and end first.
          // Over an SDK thread, which may keep a reply the run failed on: the calls it started are answered there as not kept.
          if (this.overSdkThread && turn.reply === undefined) this.startedBeforeBreak = this.answers.startedBeforeBreak();
          const abandoned = turn.inBody || turn.reply === undefined ? this.answers.abandonEager() : undefined;
          if (abandoned) await abandoned;
          // Calls the body was told wait (`generateToolResponse()`) wait no more unless the history it left ends with them.
          if (turn.inBody) this.answers.endReplacedWaits();
          // The run's last request (the compaction after its final reply) failed: iterated again, it goes again and the run ends.
          const again = turn.compaction && lastCompaction && turn.reply === undefined && (!turn.inBody || failedInBody !== undefined);
          if (turn.compaction) this.compactions.abandon(again);
          if (again) this.compactions.endingOn = stop;
          this.turn = undefined;
        }
      }
    } catch (error) {
      failed = true;
      // (The compaction's request failed before it went: its `onRequest` threw.)
      this.#restoreLate();
      this.#failed(error);
      throw error;
    } finally {
      this.answers.eagerFollow(undefined);
      this.handBackHistory(failedInBody || (!failed && stop === undefined) ? 'left' : failed ? 'failed' : 'ended');
      // The SDK-style span ends as the SDK's does when the body leaves, with no status (the request's span has the error).
      if (failedInBody) this.#failed(failedInBody.error, undefined, 'closed');
      // A `break` in the loop body ends the run too: it resolves to the last reply.
      else if (!failed) {
        this.state.stoppedBy = stop ?? 'break';
        // Appended after the loop body while the final answer came: placed after it, but the run ends (as the SDK's does).
        if (stop === 'model' && this.state.late && !this.overSdkThread) this.run.logger.warn(changedAfterEndText(stop));
        this.#finish();
        // Closed by the loop body (`break`) before the loop ended: a cancellation, with no status.
        this.run.tracing.end(stop ? 'completed' : 'closed');
        emit?.({ type: 'run.end', runner: this, message: this.state.lastMessage });
      }
      // A run stopped for approval, or by a limit, goes on when iterated (or awaited) again.
      if (stop !== undefined && stop !== 'model') this.#consumed = false;
    }
  }

  /** The messages appended late after the final answer, out of the history while its compaction is asked for (not over an SDK thread, which keeps its own). */
  #holdLate(): void {
    const { late, messages } = this.state;
    if (late && late.count > 0 && !this.overSdkThread) this.state.heldLate = messages.splice(messages.length - late.count);
  }

  /** Those held go after the summary (or back where they were, the summary failed): still late, so the ended run says it sends them not. */
  #restoreLate(): void {
    const held = this.state.heldLate;
    if (!held) return;
    this.state.heldLate = undefined;
    this.state.messages.push(...held);
    this.state.late = { at: this.state.messages.length - held.length, count: held.length };
  }

  /** The run stopped on its final reply and its last compaction failed: the history still ends on that reply, and the compaction waits. */
  #stillEndingOn(): boolean {
    // (Before the messages appended late while the final answer came, which the compaction leaves out.)
    const last = this.state.messages.at(-1 - (this.state.late?.count ?? 0));
    return this.compactions.endingOn !== undefined && this.compactions.scheduled && last?.role === 'assistant' && toolUsesOf(last).length === 0;
  }

  /** Tool changes since the last request go out in a `system` message (a paused turn goes back first). */
  #flushToolChanges(resuming: boolean): void {
    if (resuming && this.state.lastMessage?.stop_reason === 'pause_turn') return;
    const message = this.answers.changes.takeMessage();
    if (message) this.state.messages.push(message);
  }

  /** A step failed: the state is what it was before it, so iterating (or awaiting) again retries it. */
  #failed(error: unknown, stoppedBy?: StoppedBy, traced: PassEnd = { error }): void {
    this.state.stoppedBy = stoppedBy ?? stoppedByFailure(error, runSignal(this.run));
    this.run.tracing.end(traced);
    this.#consumed = false;
    this.#settle().reject(error);
    this.#completion = undefined;
    this.run.emit?.({ type: 'run.end', runner: this, message: this.state.lastMessage, error });
  }

  #finish(): void {
    const last = this.state.lastMessage;
    if (last) this.#settle().resolve(last);
    else this.#settle().reject(new AnthropicError(`The tool runner ended without a message from the model${noReplyReason(this.state.stoppedBy)}`));
  }

  /** A `done()` taken from now on waits for the run that goes on, not the stop it settled on. */
  protected decided(): void {
    if (this.#completion?.settled && !this.#consumed) this.#completion = undefined;
  }

  protected changedAfterEnd(): void {
    // (Over an SDK thread the thread takes the change: a next run over it sends it.)
    if (this.#consumed && this.#completion?.settled && !this.overSdkThread) this.run.logger.warn(changedAfterEndText(this.state.stoppedBy));
  }

  /** The completion of the current attempt, made when first needed. */
  #settle(): Settleable<BetaMessage> {
    return (this.#completion ??= settleable());
  }

  /**
   * With `options.output`: the final answer, parsed and validated (typed from the schema);
   * `undefined` until the run has ended with one.
   */
  override get output(): Output | undefined {
    return super.output as Output | undefined;
  }

  /**
   * A JSON snapshot of the run that `resumeToolRunner` continues, with the same yield type: `RunnerSnapshot<Stream>`,
   * read off `this` (`Same` is this runner's `Stream`). Typed so, not `(): RunnerSnapshot<Stream>`: a plain return
   * would make `ToolRunner<boolean>` (made from params whose `stream` is not a literal, `{ ...runner.params }`)
   * unassignable to a variable of `ToolRunner<true>`, which the SDK's `BetaToolRunner` takes; a conditional return
   * (`Stream extends true ? true : false`) kept that but not generic code (`<S extends boolean>(r: ToolRunner<S>) =>
   * r.toJSON()` is a `RunnerSnapshot<S>`). `Same` is bounded by `boolean`, not `Stream`, so that a
   * `ToolRunner<true> | ToolRunner<false>` has one signature to call; the cost: `ReturnType<ToolRunner<true>['toJSON']>`
   * is `RunnerSnapshot<boolean>` (name `RunnerSnapshot<true>` instead).
   */
  override toJSON<Same extends boolean = Stream>(this: ToolRunner<Same, unknown>): RunnerSnapshot<Same> {
    return super.toJSON() as RunnerSnapshot<Same>;
  }

  /** Resolves to the last message when the loop ends; does not drive it. */
  done(): Promise<BetaMessage> {
    return this.#settle().promise;
  }

  /** Drives the loop to its end (or to a stop for approval) and resolves to the last message. */
  async runUntilDone(): Promise<BetaMessage> {
    // In its own loop body: the run settles once the loop ends, which waits for this body (as on the SDK's runner).
    if (this.turn?.inBody) this.run.logger.warn(AWAITED_IN_BODY);
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
    // `any`, as `PromiseLike` types it: a handler typed `(error: APIError) => …` compiles, as on the SDK's runner.
    onrejected?: ((reason: any) => Result2 | PromiseLike<Result2>) | null,
  ): Promise<Result1 | Result2> {
    return this.runUntilDone().then(onfulfilled, onrejected);
  }
}
