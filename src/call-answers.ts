/**
 * Answering the calls of an assistant message: each call runs once (validated, approved, guarded:
 * execute.ts), the results go right after the message, in the model's order; calls waiting for
 * approval hold the run until they are decided.
 */
import { APIUserAbortError } from '@anthropic-ai/sdk';
import type { ApprovalDecision, Approver, PendingApproval } from './approval.js';
import { approvalAsker, runApprover } from './approver.js';
import { executeToolCall, refuseToolCall } from './execute.js';
import type { CallOutcome, ExecutionContext } from './execution-context.js';
import { type EagerStarts, eagerStarts, notKept, tieEager } from './eager-starts.js';
import { Limiter } from './guards.js';
import { errorResult, startedBeforeBreak, toolUsesOf } from './history.js';
import { insertResultsAfterLate } from './late-change.js';
import { type RunContext, runSignal } from './run-context.js';
import type { HeldCall, ToolCallsJSON } from './snapshot.js';
import { ToolCalls } from './tool-calls.js';
import { openApprovals } from './nested-approvals.js';
import { abortedWaits, endWaits, wentOnPast } from './waits-ended.js';
import type { Answer, Turn } from './turn-state.js';
import type { BetaRunnableToolset } from '@anthropic-ai/sdk/lib/tools/BetaRunnableToolset';
import { ToolChanges } from './tool-changes.js';
import type { ToolSet } from './tool-set.js';
import { ToolsetSequences, familyOf, isMalformedToolsetCall, someToolsetCall, toolsetsOf } from './toolsets.js';
import { StartOrder } from './start-order.js';
import { runToolsetMember } from './toolset-call.js';
import type { BetaMessageParam, BetaToolResultBlockParam, BetaToolUseBlock, ToolResultMessage } from './types.js';

export class CallAnswers {
  readonly #run: RunContext;
  readonly #maxToolResultChars: number;
  readonly #limiter: Limiter | undefined;
  /** `options.approve`, one question at a time: the run's calls and its sub-agents' wait in one line. */
  readonly approver: Approver | undefined;
  readonly #askApproval: ExecutionContext['askApproval'];
  /** The calls of the message being answered; made when the first tool call comes. */
  #calls: ToolCalls | undefined;
  /** `addTools()` / `removeTools()`, and the tool changes the history makes. */
  readonly changes = new ToolChanges();
  /** The run's toolsets by family, and the tools they were found in. */
  #toolsets: ReadonlyMap<string, BetaRunnableToolset> | undefined;
  #toolsetsOf: ToolSet | undefined;
  /** Calls of the current reply held by `deferToolCall()` (eager starts only). */
  #deferred: Set<string> | undefined;
  /** The toolsets with an eager call of the current reply: running, or waiting for the reply to be answered. */
  #eagerFamilies: Map<string, 'running' | 'waiting'> | undefined;
  /** The `tool_use` blocks of the current reply that have finished streaming, in the model's order (eager starts). */
  #toolCalls: BetaToolUseBlock[] | undefined;
  /** The calls the current reply started while it streamed: their own abort (the reply may not be kept), and their outcomes. */
  #eager: EagerStarts | undefined;

  constructor(run: RunContext, maxToolResultChars: number, snapshot?: ToolCallsJSON) {
    this.#run = run;
    this.#maxToolResultChars = maxToolResultChars;
    const { concurrency } = run.options;
    this.#limiter = concurrency ? new Limiter(concurrency) : undefined;
    this.approver = runApprover(run.options.approve);
    this.#askApproval = this.approver && approvalAsker(this.approver, run.runner);
    if (snapshot) this.#callsNow().restore(snapshot);
  }

  /**
   * Answers the calls of the history's last message, if it is an assistant message that makes
   * some: the results go right after it. With calls waiting for approval nothing is appended.
   * `'none'` at once (no promise) when it makes none.
   */
  answerLastMessage(turn: Turn | undefined): 'none' | Promise<'answered' | 'pending'> {
    const uses = this.endReplacedWaits();
    if (uses.length === 0) return (this.#calls?.clear(), 'none');
    const { state } = this.#run;
    // While they run, a message the caller appends waits before them, then goes after their results (late-change.ts).
    state.answering = state.messages.at(-1);
    return this.#answerCalls(turn, uses).finally(() => (state.answering = undefined));
  }

  /**
   * The history went on past calls that waited for approval (a message pushed, other calls in their place, a reply the
   * loop body left with `break`): their waits end. Returns the calls of the history's last message.
   */
  endReplacedWaits(): BetaToolUseBlock[] {
    const uses = toolUsesOf(this.#run.state.messages.at(-1));
    const replaced = this.#calls?.forgetHeldBesides(uses);
    if (replaced?.length) wentOnPast(this.#run, replaced, uses, (id) => this.#calls!.settledResult(id));
    return uses;
  }

  async #answerCalls(turn: Turn | undefined, uses: BetaToolUseBlock[]): Promise<'answered' | 'pending'> {
    const { state } = this.#run;
    const signal = runSignal(this.#run);
    // Calls the loop body was told wait (`generateToolResponse()`): a decision it made since counts.
    let made = turn?.response?.decisionsWhenGiven ?? this.#calls?.decisionsMade ?? 0;
    let answer = await this.answer(turn, uses, signal);
    // Decided while the others ran (a call listed at the last stop): it goes now, not after another stop.
    while (answer.pending.length > 0 && !signal?.aborted && (this.#calls?.decisionsMade ?? 0) > made) {
      made = this.#calls!.decisionsMade;
      this.#callsNow().hold(answer.pending, answer.message);
      answer = await this.answer(undefined, uses, signal);
    }
    // Aborted while calls waited for approval (the others ran on): an abort, each waiting call answered as aborted.
    if (answer.pending.length > 0 && !signal?.aborted) {
      this.#callsNow().hold(answer.pending, answer.message);
      return 'pending';
    }
    // The waits end first: a `tool.end` listener may push a message, and the results go in the history as it is then.
    const results = answer.pending.length > 0 ? abortedWaits(this.#run, answer.message, uses, answer.pending) : answer.message;
    insertResultsAfterLate(state.messages, results, state.late);
    state.late = undefined;
    this.#calls?.clear();
    // The results are in the history, so an aborted run stays valid and resumable.
    if (signal?.aborted) throw new APIUserAbortError();
    return 'answered';
  }

  /**
   * Runs (or reuses) the calls of one message; the answer is cached for the turn. `byCaller`: the
   * caller's `generateToolResponse()` asks, not the loop.
   */
  answer(turn: Turn | undefined, uses: BetaToolUseBlock[], signal: AbortSignal | undefined, byCaller = false): Promise<Answer> {
    const { tools } = this.#run.state;
    // Calls answered before any request (a resumed run, a history that ends with calls): the tool sources give their tools first.
    if (!tools.listed) return tools.refresh(signal).then(() => this.answer(turn, uses, signal, byCaller));
    const key = uses.map((use) => use.id).join('\n');
    if (turn?.response?.key === key) return turn.response.answer;
    const { control } = this.#run;
    // In the model's order, before any starts: a call past a limit, or a repeat, is not run.
    if (control.admits) {
      // Answered: the calls admitted while the reply streamed count for good.
      control.keepEager();
      for (const use of uses) control.admit(use);
    }
    const context = this.#executionContext(signal, byCaller);
    // In a durable run, the calls reach their tools in the model's order (start-order.ts).
    const order = (context.startOrder = StartOrder.of(this.#run.client, uses));
    const toolsets = this.#toolsetsNow();
    const sequences = toolsets.size > 0 || someToolsetCall(uses) ? new ToolsetSequences(() => context.signal?.aborted === true) : undefined;
    const start = (use: BetaToolUseBlock) => (sequences ? this.#startInSequence(use, context, toolsets, sequences) : this.#startCall(use, context));
    // One call (the usual turn) without the bookkeeping of Promise.all.
    const started =
      uses.length === 1 && !sequences
        ? this.#startCall(uses[0]!, context).then((outcome) => [outcome])
        : Promise.all(uses.map((use) => (order ? order.settles(use.id, start(use)) : start(use))));
    const answer = started.then(
      (outcomes) => {
        const pending: HeldCall[] = [];
        for (const outcome of outcomes) if ('pending' in outcome) pending.push(outcome.pending);
        // An array of the exact size (one grown by push keeps spare room), since the history keeps it for the whole run.
        const results = pending.length === 0 ? outcomes : outcomes.filter((outcome) => 'result' in outcome);
        const message: ToolResultMessage = { role: 'user', content: results.map((outcome) => (outcome as { result: ToolResultMessage['content'][number] }).result) };
        return { message, pending };
      },
      (error: unknown) => {
        // The caller has the error: the calls that failed start again when the run is retried.
        this.#calls?.forgetFailed();
        throw error;
      },
    );
    if (turn) turn.response = { key, answer };
    return answer;
  }

  /**
   * Starts a call whose `tool_use` block is complete in the stream (a method: no closure per run or turn),
   * unless `deferToolCall()` holds it. A toolset's call starts only while the toolset is idle; once
   * one of its calls waits or fails, its later calls wait for the reply.
   */
  startEagerly(toolUse: BetaToolUseBlock): void {
    const { control } = this.#run;
    if (control.admitsAfterUsage) return;
    // Admitted as it completes, held or not, so that calls are admitted in the model's order.
    if (control.admits) control.admitEagerly(toolUse);
    if (this.#deferred?.has(toolUse.id)) {
      // A held toolset call: the toolset's later calls of the reply wait for it (one at a time, in the model's order).
      if (familyOf(toolUse) !== undefined) (this.#eagerFamilies ??= new Map()).set(familyOf(toolUse)!, 'waiting');
      return;
    }
    const eager = this.#eagerNow();
    const context = this.#executionContext(eager.controller.signal, false);
    const toolsets = this.#toolsetsNow();
    const malformed = isMalformedToolsetCall(toolUse, toolsets, context.tools);
    const family = malformed ? toolUse.name : familyOf(toolUse);
    if (family === undefined) {
      eager.started.push(this.#startCall(toolUse, context));
      eager.ids.push(toolUse.id);
      return;
    }
    const families = (this.#eagerFamilies ??= new Map());
    if (malformed || families.has(family) || this.#calls?.started(toolUse.id)) {
      families.set(family, 'waiting');
      return;
    }
    families.set(family, 'running');
    const started = this.#callsNow().start(toolUse, () => runToolsetMember(toolsets.get(family), family, toolUse, context, this.#run.state.notRun?.get(toolUse.id)));
    eager.started.push(started);
    eager.ids.push(toolUse.id);
    // Once it ends the toolset is idle again, unless it failed or a later call of it came meanwhile (that one waits).
    const ended = (failed: boolean) => (failed || families.get(family) === 'waiting' ? families.set(family, 'waiting') : families.delete(family));
    started.then((outcome) => ended('result' in outcome && outcome.result.is_error === true), () => ended(true));
  }

  /** Whether the call of this id has started (and its message is not answered yet). */
  started(id: string): boolean {
    return this.#calls?.started(id) !== undefined;
  }

  /** A `tool_use` block finished streaming (eager starts list them in `toolCalls`). */
  closedInStream(toolUse: BetaToolUseBlock): void {
    this.toolCalls.push(toolUse);
  }

  /** The `tool_use` blocks of the current reply that finished streaming (the yielded stream's `toolCalls`). */
  get toolCalls(): BetaToolUseBlock[] {
    return (this.#toolCalls ??= []);
  }

  /** A new reply: its calls start afresh (the eager state of the last one goes). */
  beginTurn(): void {
    if (this.#run.control.admits) this.#run.control.keepEager();
    if (this.#deferred) this.#deferred = undefined;
    if (this.#eagerFamilies) this.#eagerFamilies = undefined;
    if (this.#toolCalls) this.#toolCalls = undefined;
    this.#eager?.untie?.();
    this.#eager = undefined;
  }

  /**
   * The reply is not kept (the loop body left it, or it failed): the calls it started while it
   * streamed are aborted, and settle (their `tool.end` sent) before the run goes on or ends.
   * Undefined when it started none.
   */
  abandonEager(): Promise<void> | undefined {
    // Its calls admitted while it streamed no longer count against the budget or the loop guard.
    if (this.#run.control.admits) this.#run.control.dropEager();
    const eager = this.#eager;
    if (!eager) return undefined;
    // The calls that had finished: kept if the history still makes them last (the body kept the reply, or part of it).
    const finished = new Set(eager.ids.filter((id) => this.#calls?.settledResult(id)));
    eager.controller.abort(notKept(eager));
    eager.untie?.();
    this.#eager = undefined;
    // Once they end, the others are forgotten: a retried reply that makes them again (the same ids) runs them anew.
    return Promise.allSettled(eager.started).then((outcomes) => {
      const ended = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
      // Calls that waited for approval will not run: their wait ends for the listeners too.
      endWaits(this.#run, ended.flatMap((outcome) => ('pending' in outcome ? [outcome.pending] : [])));
      this.#run.state.keepEagerResults(ended.flatMap((outcome) => ('result' in outcome ? [outcome.result] : [])));
      const made = new Set(toolUsesOf(this.#run.state.messages.at(-1)).map((use) => use.id));
      this.#calls?.forget(eager.ids.filter((id) => !(made.has(id) && finished.has(id))));
    });
  }

  /** The calls the current reply started while it streamed, each with the answer it gets should the reply break off. */
  startedBeforeBreak(): Map<string, string> {
    return startedBeforeBreak(this.toolCalls, this.#eager?.ids);
  }

  /**
   * The loop body took control of the reply: if `last` (the history's last message) does not make
   * every call the reply started while it streamed, they are abandoned (`abandonEager`).
   */
  abandonEagerIfDropped(last: BetaMessageParam | undefined): Promise<void> | undefined {
    if (!this.#eager) return undefined;
    const made = new Set(toolUsesOf(last).map((use) => use.id));
    return this.toolCalls.every((use) => made.has(use.id)) ? undefined : this.abandonEager();
  }

  /** The calls the reply started while it streamed follow the run's `signal`: a new one (`setRequestOptions`), none once the run ended. */
  eagerFollow(signal: AbortSignal | undefined): void {
    if (this.#eager) tieEager(this.#eager, signal);
  }

  /** The run stops on the reply (cut off by `max_tokens`, say): the calls it started end before the run does. */
  settleEager(): Promise<void> | undefined {
    return this.#eager && Promise.allSettled(this.#eager.started).then(() => undefined);
  }

  /** This reply's eager state: made at its first eager start, its signal aborted by the run's too. */
  #eagerNow(): EagerStarts {
    return (this.#eager ??= eagerStarts(runSignal(this.#run)));
  }

  /** `deferToolCall()`: holds a call of the current reply that has not started until the reply is answered. */
  defer(id: string): void {
    if (!this.#calls?.started(id)) (this.#deferred ??= new Set()).add(id);
  }

  /** The calls `deferToolCall()` holds, in the model's order, once their blocks finished streaming. */
  get deferredCalls(): BetaToolUseBlock[] {
    const deferred = this.#deferred;
    return deferred && this.#toolCalls ? this.#toolCalls.filter((toolUse) => deferred.has(toolUse.id) && !this.#calls?.started(toolUse.id)) : [];
  }

  /** A call of one message where the message has toolset calls: a toolset's calls run one at a time, in order. */
  #startInSequence(use: BetaToolUseBlock, context: ExecutionContext, toolsets: ReadonlyMap<string, BetaRunnableToolset>, sequences: ToolsetSequences): Promise<CallOutcome> {
    const family = familyOf(use);
    const calls = this.#callsNow();
    if (family === undefined) {
      // A call named after a toolset, without `toolset_name`: a toolset call with malformed actions.
      if (!isMalformedToolsetCall(use, toolsets, context.tools)) return this.#startCall(use, context);
      return calls.start(use, () => Promise.resolve({ result: sequences.malformed(use.name, use) }));
    }
    const started = calls.started(use.id);
    const result = sequences.add(family, toolsets.has(family), use, started?.then(resultOf), () =>
      calls.start(use, () => runToolsetMember(toolsets.get(family), family, use, context, this.#run.state.notRun?.get(use.id))).then(resultOf),
    );
    return result.then((block) => ({ result: block }));
  }

  #toolsetsNow(): ReadonlyMap<string, BetaRunnableToolset> {
    const tools = this.#run.state.tools;
    if (this.#toolsetsOf !== tools || !this.#toolsets) {
      this.#toolsets = toolsetsOf(tools.entries);
      this.#toolsetsOf = tools;
    }
    return this.#toolsets;
  }

  /** The families of the run's toolsets (addTools / removeTools may not touch them). */
  get toolsetFamilies(): ReadonlySet<string> {
    return new Set(this.#toolsetsNow().keys());
  }

  /** Starts a call once until its message is answered; a call never to run is answered without running. */
  #startCall(toolUse: BetaToolUseBlock, context: ExecutionContext): Promise<CallOutcome> {
    const calls = this.#callsNow();
    const started = calls.started(toolUse.id);
    const notRun = started && this.#run.state.notRun?.get(toolUse.id);
    // Started while its reply streamed, which was then cut off or paused: its result is not kept; the model reads why.
    if (started && notRun !== undefined) return started.then((outcome) => ('result' in outcome && outcome.result.content === notRun ? outcome : { result: errorResult(toolUse.id, notRun) }));
    return calls.start(toolUse, (held, ran) => {
      const refused = this.#run.state.notRun?.get(toolUse.id);
      return refused !== undefined ? refuseToolCall(toolUse, refused, context) : executeToolCall(toolUse, context, held, ran);
    });
  }

  #callsNow(): ToolCalls {
    return (this.#calls ??= new ToolCalls());
  }

  #executionContext(signal: AbortSignal | undefined, byCaller: boolean): ExecutionContext {
    const run = this.#run;
    return {
      tools: this.changes.runnable(run.state.tools.runnable, run.state.messages),
      logger: run.logger,
      signal,
      iteration: run.state.iteration,
      runner: run.runner,
      hooks: run.options.hooks,
      emit: run.emit,
      askApproval: this.#askApproval && this.#callsNow().whileAsked(this.#askApproval),
      decisions: this.#callsNow().decisions,
      toolTimeoutMs: run.options.toolTimeoutMs,
      maxToolResultChars: this.#maxToolResultChars,
      limiter: this.#limiter,
      scope: byCaller ? run.tracing.callerScope : run.tracing.scope,
      byCaller,
      results: this.#callsNow(),
    };
  }

  /**
   * `generateToolResponse()`'s answer. Calls that wait for approval are in `pendingApprovals` at once: decided in the body,
   * they run in this pass (the run does not stop for them), and asked again, it answers them.
   */
  async answerCaller(turn: Turn | undefined, uses: BetaToolUseBlock[], signal: AbortSignal | undefined): Promise<Answer> {
    const answered = this.answer(turn, uses, signal, true);
    let answer = await answered;
    const response = turn?.response?.answer === answered ? turn.response : undefined;
    const calls = this.#callsNow();
    const since = response?.decisionsWhenGiven;
    if (answer.pending.length > 0 && since !== undefined && calls.decisionsMade > since) {
      // Decided since the body was told they wait: answered again, the others as the body left them.
      calls.hold(answer.pending, (response!.given ?? answer).message);
      answer = await this.answer(undefined, uses, signal, true);
      response!.answer = Promise.resolve(answer);
    }
    if (response) response.given = answer;
    if (answer.pending.length > 0) {
      calls.hold(answer.pending, answer.message);
      if (response) response.decisionsWhenGiven = calls.decisionsMade;
    }
    return answer;
  }

  /** The calls the run stopped for, as copies. */
  get pending(): PendingApproval[] {
    return openApprovals(this.#calls?.pending ?? []);
  }

  /** A decision about a waiting call; throws for an id that is not waiting. */
  decide(id: string, decision: ApprovalDecision): void {
    this.#callsNow().decide(id, decision);
  }

  toJSON(): ToolCallsJSON {
    return this.#callsNow().toJSON();
  }
}

const resultOf = (outcome: CallOutcome): BetaToolResultBlockParam => (outcome as { result: BetaToolResultBlockParam }).result;

