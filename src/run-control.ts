/**
 * Run control: the collaborator the loop asks whether to go on (SPEC §9.2). It holds the run's
 * output (output.ts), budget (budget.ts) and loop guard (loop-guard.ts), admits each tool call
 * (a call past a limit, or a repeat, is marked not to run), decides the stops they make, and shapes
 * the requests (the output format; `tool_choice: none` for the answer at a limit).
 * A run without any of these options makes one of these and asks it only what costs nothing.
 */
import { type BudgetJSON, RunBudget, perToolWarnings } from './budget.js';
import { TOOL_CHOICE_NONE } from './fallback.js';
import type { LeveledLogger } from './log.js';
import { LoopGuard, type LoopGuardJSON } from './loop-guard.js';
import { APIUserAbortError } from '@anthropic-ai/sdk';
import { OutputError } from './errors.js';
import { DEFAULT_OUTPUT_REPAIRS, RunOutput, namesOutputFormat } from './output.js';
import { type RunControlOptions, checkRunControlOptions } from './run-control-options.js';
import type { RunState } from './run-state.js';
import type { RunControlJSON } from './snapshot.js';
import { type LimitStop, type StoppedBy, isLimit } from './stop-reason.js';
import type { BetaMessage, BetaMessageParam, BetaToolUseBlock } from './types.js';

/** A final reply whose output was not read, and why the run would have ended on it. */
type Unread = { reply: BetaMessage; kept: BetaMessageParam; reason: 'model' | LimitStop };

export class RunControl {
  readonly #state: RunState;
  readonly #logger: LeveledLogger;
  readonly #output: RunOutput | undefined;
  readonly #budget: RunBudget | undefined;
  readonly #guard: LoopGuard | undefined;
  /** `onLimit: 'answer'`. */
  readonly #answers: boolean;
  /** Calls go through `admit` (a budget, a loop guard, or answers at a limit). */
  readonly admits: boolean;
  /** Requests go through `shapeRequest` (an output format, or answers at a limit). */
  readonly shapesRequests: boolean;
  /**
   * Calls wait for their reply's usage before they are admitted (`onLimit: 'answer'` with
   * `budget.maxTokens`: the reply that reaches it has its calls answered as not run), so none starts eagerly.
   */
  readonly admitsAfterUsage: boolean;
  /** A stop a call decided (a second call past a limit, a second repeat), made before the next request. */
  #pending: LimitStop | undefined;
  /** `onLimit: 'answer'`: the limit whose answer is asked for, and the last reply before that request. */
  #final: { reason: LimitStop; before: BetaMessage | undefined } | undefined;
  /** The calls admitted of the replies of one iteration (each call is admitted once). */
  #admitted: { iteration: number; ids: Set<string> } | undefined;
  /** A run that had ended on the model's answer (at a limit too): the answer, while the history still ends with it, and why it ended. */
  #answered: { message: BetaMessageParam | undefined; reason: 'model' | LimitStop } | undefined;
  /**
   * The final reply whose output was not read: the schema's own code threw (a lookup offline), or the run aborted while
   * it ran. Iterated again, the run reads it again, while the history still ends with it (it sent the history as it was,
   * ending on the answer: the model was asked to go on from its own answer).
   */
  #unread: Unread | undefined;
  /** The admissions before the first call of the streaming reply was admitted (`admitEagerly`): put back if the reply is not kept. */
  #beforeEager: Admissions | undefined;

  /** Checks the options (clear errors at construction, before any request). */
  constructor(options: RunControlOptions, state: RunState, logger: LeveledLogger, snapshot?: RunControlJSON) {
    checkRunControlOptions(options);
    this.#state = state;
    this.#logger = logger;
    if (options.output !== undefined) {
      rejectTwoFormats(state.apiParams);
      this.#output = new RunOutput(options.output, options.outputRepairs ?? DEFAULT_OUTPUT_REPAIRS, snapshot?.output, state.messages.at(-1), state.lastMessage);
    }
    this.#answers = options.onLimit === 'answer';
    if (options.budget) {
      this.#budget = new RunBudget(options.budget, snapshot?.budget, this.#answers);
      // (Not checked when tool sources or toolsets name their tools only at run time.)
      if (!state.tools.hasSources) for (const warning of perToolWarnings(options.budget.maxCallsPerTool, state.tools.definitions)) logger.warn(warning);
    }
    if (options.loopGuard) this.#guard = new LoopGuard(options.loopGuard, snapshot?.loopGuard);
    this.admits = this.#budget !== undefined || this.#guard !== undefined || this.#answers;
    this.shapesRequests = this.#output !== undefined || this.#answers;
    this.admitsAfterUsage = this.#answers && options.budget?.maxTokens !== undefined;
    this.#pending = snapshot?.pending;
    // A finished run resumed: on the model's answer, or on the answer it gave at a limit (`onLimit: 'answer'`).
    const last = state.messages.at(-1);
    if (state.stoppedBy === 'model') this.#answered = { message: last, reason: 'model' };
    else if (snapshot?.answered && isLimit(state.stoppedBy)) this.#answered = { message: last, reason: state.stoppedBy };
    if (snapshot?.unread && last?.role === 'assistant' && state.lastMessage) this.#unread = { reply: state.lastMessage, kept: last, reason: snapshot.unread };
    if (snapshot?.admitted) this.#admitted = { iteration: snapshot.admitted.iteration, ids: new Set(snapshot.admitted.ids) };
  }

  /** The run's validated output, once it ended with one. */
  get output(): unknown {
    return this.#output?.value;
  }

  /** A finished run resumed (or awaited again) whose history still ends with its answer: it ends there, its cut-off calls not answered. */
  get endsOnAnswer(): boolean {
    return this.#answered !== undefined && this.#answered.message === this.#state.messages.at(-1);
  }

  /**
   * Before a request: the limit that stops the run here, if any. With `onLimit: 'answer'` a limit
   * hit while the model has not answered yet lets one more request go, for its answer. A resumed
   * run that had ended on the model's answer ends at once (`'model'`).
   */
  beforeRequest(): LimitStop | 'model' | undefined {
    const stop = this.#stopBeforeRequest();
    // A request goes: the run went on from the answer its output was read from (a question after it), which is no longer its answer.
    if (stop === undefined) this.#output?.wentOn();
    return stop;
  }

  #stopBeforeRequest(): LimitStop | 'model' | undefined {
    if (this.#answered) {
      // A finished run, resumed (or awaited again): it ends at once on its answer, unless the caller went on from it.
      const { message, reason } = this.#answered;
      if (message === this.#state.messages.at(-1)) return reason;
      this.#answered = undefined;
    }
    const final = this.#final;
    if (final) {
      // The answer came (with calls, which were not run): the run stops; else its request goes (again).
      if (this.#state.lastMessage === final.before) return undefined;
      this.#final = undefined;
      return final.reason;
    }
    const reason = this.#pending ?? this.#limitReached();
    if (reason === undefined) return undefined;
    this.#pending = undefined;
    if (this.#answers && reason !== 'loop_guard' && this.#state.messages.at(-1)?.role !== 'assistant') {
      this.#logger.info(`Run control: ${reason} reached; asking the model for its answer (tool_choice: none)`);
      this.#final = { reason, before: this.#state.lastMessage };
      return undefined;
    }
    this.#logger.info(`Run control: the run stops (${reason})`);
    return reason;
  }

  /** The request body as sent: the output format, and `tool_choice: none` for the answer at a limit. */
  shapeRequest(body: Record<string, unknown>, compaction: boolean): void {
    if (compaction) return;
    // A format the caller set since (`setMessagesParams`) would be replaced in silence, or sent beside it (refused).
    if (this.#output) rejectTwoFormats(body, 'setMessagesParams');
    if (this.#output) body['output_config'] = this.#output.requestConfig(body['output_config']);
    if (this.#final) body['tool_choice'] = TOOL_CHOICE_NONE;
  }

  /**
   * A call of the reply being answered, in the model's order (each once): a repeat, or a call past
   * a limit, is marked not to run (`state.notRun`), with the text of its result.
   */
  admit(use: BetaToolUseBlock): void {
    const state = this.#state;
    const iteration = state.iteration;
    const admitted = (this.#admitted ??= { iteration, ids: new Set() });
    if (admitted.iteration !== iteration) {
      admitted.iteration = iteration;
      admitted.ids.clear();
    }
    if (admitted.ids.has(use.id) || state.notRun?.has(use.id)) return;
    admitted.ids.add(use.id);
    const text = this.#verdict(use, iteration);
    if (text === undefined) return;
    this.#logger.info(`Run control: tool call '${use.name}' (${use.id}) not run: ${text.replace(/^Error: [^:]*: /, '')}`);
    state.markNotRun(use.id, text);
  }

  /**
   * A call whose result the model does not get (it started while its reply streamed, which was then cut off or paused):
   * the loop guard forgets it (the budget keeps it counted: it ran).
   */
  resultNotKept(use: BetaToolUseBlock): void {
    this.#guard?.forget(use);
  }

  /** A compaction's summary took the place of the calls `gone`: the loop guard counts them no more (loop-guard.ts); the budget does, they ran. */
  summarisedAway(gone: readonly BetaToolUseBlock[], left: readonly BetaToolUseBlock[]): void {
    this.#guard?.summarised(gone, left);
  }

  /**
   * A call admitted as its block completes while the reply streams (`runToolsEagerly`): counted now,
   * and taken back with `dropEager` if the reply is not kept (a retried turn makes the call anew).
   */
  admitEagerly(use: BetaToolUseBlock): void {
    this.#beforeEager ??= this.#admissions();
    this.admit(use);
  }

  /** The streamed reply is answered, or a new one starts: its calls admitted while it streamed stay counted. */
  keepEager(): void {
    this.#beforeEager = undefined;
  }

  /** The streamed reply is not kept (a `break`, a broken stream, dropped by the loop body): its calls admitted while it streamed are not counted. */
  dropEager(): void {
    const before = this.#beforeEager;
    if (!before) return;
    this.#beforeEager = undefined;
    if (before.budget) this.#budget!.restore(before.budget);
    if (before.guard) this.#guard!.restore(before.guard);
    this.#pending = before.pending;
    this.#admitted = before.admitted;
  }

  #admissions(): Admissions {
    const admitted = this.#admitted && { iteration: this.#admitted.iteration, ids: new Set(this.#admitted.ids) };
    return { budget: this.#budget?.toJSON(), guard: this.#guard?.toJSON(), pending: this.#pending, admitted };
  }

  #verdict(use: BetaToolUseBlock, iteration: number): string | undefined {
    const guard = this.#guard;
    const toolset = (use as { toolset_name?: unknown }).toolset_name;
    const repeat = guard?.admit(use.name, use.input, typeof toolset === 'string' ? toolset : undefined);
    if (repeat !== undefined) {
      if (guard!.repeats >= 2) this.#pending ??= 'loop_guard';
      return repeat;
    }
    if (this.#answers) {
      const reason = this.#final?.reason ?? this.#limitReached();
      if (reason !== undefined) return this.#limitText(use.name, reason);
    }
    const over = this.#budget?.admit(use.name, iteration);
    if (over?.again) this.#pending ??= 'budget';
    return over?.text;
  }

  #limitText(name: string, reason: LimitStop): string {
    const state = this.#state;
    if (reason === 'budget' && this.#budget?.tokensReached(state.usage)) return this.#budget.tokensText(name, state.usage);
    if (reason === 'max_iterations') {
      return `Error: the call to '${name}' was not run: the run reached its limit of ${state.settings.max_iterations} requests (max_iterations). Answer with what you have.`;
    }
    return `Error: the call to '${name}' was not run: the run reached its limit (${reason}). Answer with what you have.`;
  }

  /** `max_iterations` or the token budget is reached. */
  #limitReached(): 'max_iterations' | 'budget' | undefined {
    if (this.#state.reachedMaxIterations()) return 'max_iterations';
    return this.#budget?.tokensReached(this.#state.usage) ? 'budget' : undefined;
  }

  /** `budget.maxTokens` reached, in words (`budget.maxTokens reached: 5015 of 1000 tokens`); else `undefined`. */
  tokensReached(): string | undefined {
    const budget = this.#budget;
    return budget?.tokensReached(this.#state.usage) ? budget.tokensReachedText(this.#state.usage) : undefined;
  }

  /**
   * With `budget.maxTokens`: the tokens the run has left, which a sub-agent it starts may spend (its usage is the run's),
   * and what a call is answered once none are left.
   */
  tokensLeft(): { left: number; notRun: (name: string) => string } | undefined {
    const budget = this.#budget;
    const left = budget?.tokensLeft(this.#state.usage);
    return left === undefined ? undefined : { left, notRun: (name) => budget!.tokensText(name, this.#state.usage) };
  }

  /** Whether a compaction summary may be asked for now (no stop coming: no limit reached, tokens left). */
  maySummarise(): boolean {
    return this.#pending === undefined && this.#final === undefined && this.#limitReached() === undefined;
  }

  /**
   * The run is about to end on `reply` (the model asked for no tool): with `options.output`, its
   * output is read; an invalid one gets a repair turn (pushed to the history: `'repair'`) while the
   * run may send a request, else an `OutputError` is thrown.
   */
  async settle(reply: BetaMessage, kept: BetaMessageParam | undefined, signal: AbortSignal | undefined): Promise<'stop' | 'repair'> {
    const output = this.#output;
    if (!output) return 'stop';
    let repair: BetaMessageParam | undefined;
    try {
      repair = await output.settle(reply, kept, this.#final?.reason ?? this.#limitReached(), signal);
    } catch (error) {
      if (kept && !(error instanceof OutputError)) this.#unread = { reply, kept, reason: this.#final?.reason ?? 'model' };
      // The answer asked for at a limit is no valid output (an OutputError): iterating again sends the
      // repair, as after any reply, instead of stopping at once on the limit.
      this.#final = undefined;
      throw error;
    }
    if (!repair) return 'stop';
    this.#logger.info('Run control: the final reply is not valid output; asking the model to repair it');
    this.#state.messages.push(repair);
    return 'repair';
  }

  /** Whether the model's final reply ends the run at once, as `'model'`: no output to check, no limit's answer asked for. */
  endsOnReplyAtOnce(): boolean {
    return !this.#output && this.#final === undefined;
  }

  /** The loop body went on after the model's reply with messages of its own: a later final answer gets its own repair turns. */
  bodyWentOn(): void {
    this.#output?.newAnswer();
  }

  /** Why a run that ended on the model's reply stopped: `'model'`, or the limit whose answer it was. */
  endedOnReply(): StoppedBy {
    const final = this.#final;
    this.#final = undefined;
    if (!final) return 'model';
    // Iterated again, the run ends at once on this answer, as on any answer (a call limit would not stop it again);
    // an answer not kept (empty, or refused on a thread) leaves the run to go on once the limit is raised.
    const last = this.#state.messages.at(-1);
    if (last?.role === 'assistant') this.#answered = { message: last, reason: final.reason };
    return final.reason;
  }

  /** A compaction replaced the history that ended with `before`: a run that had ended on that answer ends on the new history's last message. */
  historyReplaced(before: BetaMessageParam | undefined): void {
    const answered = this.#answered;
    if (answered && answered.message === before) this.#answered = { ...answered, message: this.#state.messages.at(-1) };
  }

  /**
   * The run is iterated again: after an `OutputError`, the repair message goes first; a final reply whose output was not
   * read is read again (a promise), and the run ends on it (or sends its repair turn) as it would have.
   */
  resume(signal: AbortSignal | undefined): Promise<unknown> | undefined {
    const unread = this.#unread;
    this.#unread = undefined;
    if (unread && unread.kept === this.#state.messages.at(-1)) return this.#readAgain(unread, signal);
    const repair = this.#output?.retry(this.#state.messages.at(-1));
    if (repair) this.#state.messages.push(repair);
    return undefined;
  }

  async #readAgain(unread: Unread, signal: AbortSignal | undefined): Promise<void> {
    // Iterated again on the signal that aborted it: the run stops at once, as its request would, the answer still unread
    // (the check, which runs to its end once the signal aborted before it, would hang the run for a check that hangs).
    if (signal?.aborted) {
      this.#unread = unread;
      throw new APIUserAbortError();
    }
    const { reply, kept, reason } = unread;
    // Read: the run ends at once on it, as a finished run awaited again does (its repair turn, if invalid, goes instead).
    if ((await this.settle(reply, kept, signal)) === 'stop') this.#answered = { message: kept, reason };
  }

  /**
   * `replyHeld`: the snapshot holds the reply streaming now; if not, the calls it admitted while it
   * streamed (`runToolsEagerly`) are not counted in it, as a reply that is not kept has them taken back.
   */
  toJSON(replyHeld = true): RunControlJSON | undefined {
    // Ended on its answer at a limit, while the history still ends with it.
    const answered = this.#answered !== undefined && this.#answered.reason !== 'model' && this.#answered.message === this.#state.messages.at(-1);
    const before = replyHeld ? undefined : this.#beforeEager;
    // A limit whose answer (`onLimit: 'answer'`) was asked for and has not come (its request failed, say): still to ask.
    // Taken in the loop body of that answer (not yet settled, so not held: `replyHeld` false), it is still to ask too.
    const unanswered = this.#final && (!replyHeld || this.#state.lastMessage === this.#final.before) ? this.#final.reason : undefined;
    const pending = before ? before.pending : (this.#pending ?? unanswered);
    if (!this.#output && !this.#budget && !this.#guard && pending === undefined && !answered) return undefined;
    const json: RunControlJSON = {};
    if (answered) json.answered = true;
    if (this.#unread && this.#unread.kept === this.#state.messages.at(-1)) json.unread = this.#unread.reason;
    if (this.#output) json.output = this.#output.toJSON(this.#state.messages.at(-1));
    if (this.#budget) json.budget = before?.budget ?? this.#budget.toJSON();
    if (this.#guard) json.loopGuard = before?.guard ?? this.#guard.toJSON();
    if (pending !== undefined) json.pending = pending;
    const admitted = before ? before.admitted : this.#admitted;
    if (admitted) json.admitted = { iteration: admitted.iteration, ids: [...admitted.ids] };
    return json;
  }
}

/** What the calls admitted so far have counted: the budget's calls, the guard's calls seen, a stop they decided. */
interface Admissions {
  budget: BudgetJSON | undefined;
  guard: LoopGuardJSON | undefined;
  pending: LimitStop | undefined;
  admitted: { iteration: number; ids: Set<string> } | undefined;
}

/** `options.output` and a format in the params: one would silently replace the other. */
function rejectTwoFormats(apiParams: Record<string, unknown>, where = 'toolRunner'): void {
  if (namesOutputFormat(apiParams)) {
    throw new TypeError(
      `${where}: options.output and a format in the params (output_config.format or output_format) were both given; keep one: options.output is sent as output_config.format and parsed into runner.output`,
    );
  }
}
