/**
 * Answering the calls of an assistant message: each call runs once (validated, approved, guarded:
 * execute.ts), the results go right after the message, in the model's order; calls waiting for
 * approval hold the run until they are decided.
 */
import { APIUserAbortError } from '@anthropic-ai/sdk';
import type { ApprovalDecision, PendingApproval } from './approval.js';
import { type CallOutcome, type ExecutionContext, approvalAsker, executeToolCall } from './execute.js';
import { Limiter } from './guards.js';
import { errorResult, insertToolResults, toolUsesOf } from './history.js';
import type { RunContext } from './run-context.js';
import type { ToolCallsJSON } from './snapshot.js';
import { ToolCalls } from './tool-calls.js';
import type { Answer, Turn } from './turn.js';
import type { BetaToolUseBlock, ToolResultMessage } from './types.js';

export class CallAnswers {
  readonly #run: RunContext;
  readonly #maxToolResultChars: number;
  readonly #limiter: Limiter | undefined;
  #askApproval: ExecutionContext['askApproval'] | undefined;
  /** The calls of the message being answered; made when the first tool call comes. */
  #calls: ToolCalls | undefined;

  constructor(run: RunContext, maxToolResultChars: number, snapshot?: ToolCallsJSON) {
    this.#run = run;
    this.#maxToolResultChars = maxToolResultChars;
    const { concurrency } = run.options;
    this.#limiter = concurrency ? new Limiter(concurrency) : undefined;
    if (snapshot) this.#callsNow().restore(snapshot);
  }

  /**
   * Answers the calls of the history's last message, if it is an assistant message that makes
   * some: the results go right after it. With calls waiting for approval nothing is appended.
   * `'none'` at once (no promise) when it makes none.
   */
  answerLastMessage(turn: Turn | undefined): 'none' | Promise<'answered' | 'pending'> {
    const uses = toolUsesOf(this.#run.state.messages.at(-1));
    return uses.length === 0 ? 'none' : this.#answerCalls(turn, uses);
  }

  async #answerCalls(turn: Turn | undefined, uses: BetaToolUseBlock[]): Promise<'answered' | 'pending'> {
    const { state, options } = this.#run;
    const answer = await this.answer(turn, uses, options.signal);
    if (answer.pending.length > 0) {
      this.#callsNow().hold(answer.pending);
      return 'pending';
    }
    insertToolResults(state.messages, answer.message);
    this.#calls?.clear();
    // The results are in the history, so an aborted run stays valid and resumable.
    if (options.signal?.aborted) throw new APIUserAbortError();
    return 'answered';
  }

  /**
   * Runs (or reuses) the calls of one message; the answer is cached for the turn. `byCaller`: the
   * caller's `generateToolResponse()` asks, not the loop.
   */
  answer(turn: Turn | undefined, uses: BetaToolUseBlock[], signal: AbortSignal | undefined, byCaller = false): Promise<Answer> {
    const key = uses.map((use) => use.id).join('\n');
    if (turn?.response?.key === key) return turn.response.answer;
    const context = this.#executionContext(signal, byCaller);
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

  /** Starts a call whose `tool_use` block is complete in the stream (made once: no closure per turn). */
  readonly startEagerly = (toolUse: BetaToolUseBlock): void => {
    void this.#startCall(toolUse, this.#executionContext(this.#run.options.signal, false));
  };

  /** Starts a call once until its message is answered; a call never to run is answered without running. */
  #startCall(toolUse: BetaToolUseBlock, context: ExecutionContext): Promise<CallOutcome> {
    return this.#callsNow().start(toolUse, (held) => {
      const notRun = this.#run.state.notRun?.get(toolUse.id);
      return notRun !== undefined
        ? Promise.resolve({ result: errorResult(toolUse.id, notRun) })
        : executeToolCall(toolUse, context, held);
    });
  }

  #callsNow(): ToolCalls {
    return (this.#calls ??= new ToolCalls());
  }

  #executionContext(signal: AbortSignal | undefined, byCaller: boolean): ExecutionContext {
    const run = this.#run;
    return {
      tools: run.state.tools.runnable,
      logger: run.logger,
      signal,
      iteration: run.state.iteration,
      runner: run.runner,
      hooks: run.options.hooks,
      emit: run.emit,
      askApproval: (this.#askApproval ??= approvalAsker(run.options.approve)),
      decisions: this.#callsNow().decisions,
      toolTimeoutMs: run.options.toolTimeoutMs,
      maxToolResultChars: this.#maxToolResultChars,
      limiter: this.#limiter,
      scope: byCaller ? run.tracing.callerScope : run.tracing.scope,
      byCaller,
    };
  }

  /** The calls the run stopped for, as copies. */
  get pending(): PendingApproval[] {
    return (this.#calls?.pending ?? []).map((call) => ({ ...call }));
  }

  /** A decision about a waiting call; throws for an id that is not waiting. */
  decide(id: string, decision: ApprovalDecision): void {
    this.#callsNow().decide(id, decision);
  }

  toJSON(): ToolCallsJSON {
    return this.#callsNow().toJSON();
  }
}
