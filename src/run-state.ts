/**
 * The state of a run that a snapshot captures: the params split into what is sent and what
 * configures the loop, the tools, the history, and what the replies so far added up to.
 */
import { answerDanglingCalls, copyHistory, cutOffText, pausedText, startedBeforeCutOffText, startedBeforePauseText, toolUsesOf, asRequestHistory, asMessageParams } from './history.js';
import { splitParams } from './params.js';
import { withoutRepeatedReplies } from './repeated-replies.js';
import { type LateAdditions, lateAfterReply } from './late-change.js';
import { keepBesideCalls } from './snapshot-copy.js';
import { type RunControlJSON, SNAPSHOT_VERSION, type RunnerSnapshot, type ToolCallsJSON, type ToolChangesJSON } from './snapshot.js';
import type { RunnerSettings } from './settings.js';
import type { StoppedBy } from './stop-reason.js';
import type { RunnableTool, RunnerParams } from './surface.js';
import type { ThreadSnapshot } from './thread.js';
import { ToolSet, isToolSource } from './tool-set.js';
import { withToolDefinitions } from './tool-changes.js';
import { isRunnableToolset, toolsetFamily } from './toolsets.js';
import type { BetaMessage, BetaMessageParam, BetaToolResultBlockParam, BetaToolUnion, BetaToolUseBlock, ToolResultMessage } from './types.js';
import { NO_USAGE, type Usage, addUsage } from './usage.js';
import { sameItems } from './lists.js';
import { forgetInJSON } from './loop-guard.js';

/** The tools of a run given none, as `runner.params` reads them. */
const NO_TOOLS: readonly never[] = [];

export class RunState {
  /** The params sent to the API, without messages and tools. */
  apiParams: Record<string, unknown>;
  settings: RunnerSettings;
  tools: ToolSet;
  messages: BetaMessageParam[];
  /** The caller (or a compaction) set the history since the last request: check it before sending. */
  historySetByCaller = true;
  /** Requests sent (a failed one too; a server-side compaction's not), as the SDK counts them. */
  iteration = 0;
  /** A turn's request counted in `iteration` is in flight (no reply, no failure yet): a snapshot taken now sends it again. */
  requestInFlight = false;
  usage: Usage = NO_USAGE;
  lastMessage: BetaMessage | undefined;
  /** Tool calls never run, by id, with the error that answers them (cut off by max_tokens, repeated ids, limits). */
  notRun: Map<string, string> | undefined;
  /** Results the loop body was given (`generateToolResponse`) for calls that ran: a history it set without them gets them. */
  #ran: Map<string, BetaToolResultBlockParam> | undefined;
  #stoppedBy: StoppedBy | undefined;
  /** The history's last message when the run stopped: a caller's message after it goes on from the end (`toJSON`). */
  #endedOn: BetaMessageParam | undefined;
  /** The model's replies in this run, by their content (as received and as kept): their ids (repeated-replies.ts); made with the first. */
  #replies: WeakMap<object, string> | undefined;
  /** Messages the caller appended after the loop body while the reply came, before it until its calls are answered (late-change.ts). */
  late: LateAdditions | undefined;
  /** Messages appended late after the final answer, out of the history while its compaction is asked for (a snapshot holds them). */
  heldLate: BetaMessageParam[] | undefined;
  /** The message whose calls run now (until their results are in): a message appended meanwhile is late too (late-change.ts). */
  answering: BetaMessageParam | undefined;

  constructor(params: RunnerParams, snapshot?: RunnerSnapshot) {
    const { api, settings, messages, tools } = splitParams(params);
    this.apiParams = api;
    this.settings = settings;
    this.tools = new ToolSet(tools);
    this.messages = copyHistory(withToolDefinitions(messages));
    if (snapshot) {
      this.iteration = snapshot.iteration;
      // Fields a snapshot may leave out count as 0.
      this.usage = addUsage(NO_USAGE, snapshot.usage);
      const notRun = Object.entries(snapshot.notRun);
      if (notRun.length > 0) this.notRun = new Map(notRun);
      // Calls that ran (finished, or their tool done before a hook threw) in a message the history no longer ends with: answered
      // with their results, not as never run (the model would call them again). A snapshot taken in a loop body that set the
      // history and ran them with generateToolResponse(), or one an earlier release wrote with a message appended while they ran placed
      // after their reply. (The last message's calls are answered as ever: a hook that threw runs again. A call of a reply cut off,
      // in notRun, is answered so: its input may be cut too, and its result is not kept.)
      const ran = [...Object.values(snapshot.calls.ran ?? {}), ...Object.values(snapshot.calls.settled)];
      this.keepRanResults(ran.filter((result) => !this.notRun?.has(result.tool_use_id)));
      // Appended late before a reply whose calls were unanswered: they go after its results once they are (late-change.ts).
      const late = snapshot.late && this.messages[snapshot.late.at + snapshot.late.count];
      if (late?.role === 'assistant') this.late = { ...snapshot.late!, reply: late };
      this.stoppedBy = snapshot.stoppedBy;
      this.lastMessage = snapshot.lastMessage;
    }
  }

  /** Why the run stopped; `undefined` while it runs. */
  get stoppedBy(): StoppedBy | undefined {
    return this.#stoppedBy;
  }

  set stoppedBy(stoppedBy: StoppedBy | undefined) {
    this.#stoppedBy = stoppedBy;
    // The reply the run ended on, before the messages appended late that were placed after it (or, for a reply not
    // kept, the message before them).
    const late = this.late;
    this.#endedOn = late ? (late.reply ?? this.messages[late.at - 1]) : this.messages.at(-1);
  }

  /**
   * Why the run stopped, as a snapshot holds it: a run that ended on the model's answer, whose history the caller took on
   * since with a message of its own (pushed once the run had ended), has not ended there: resumed, it sends the message.
   */
  #stoppedByToKeep(messages: readonly BetaMessageParam[]): StoppedBy | undefined {
    const last = messages.at(-1);
    return this.#stoppedBy === 'model' && last !== this.#endedOn && last?.role === 'user' ? undefined : this.#stoppedBy;
  }

  /** The caller's new params (`setMessagesParams`): the history is theirs, checked before the next request. */
  replace(params: RunnerParams): void {
    const { api, settings, messages, tools } = splitParams(params);
    this.apiParams = api;
    // `thread` chooses threading when the runner is made: a later value (or none) changes nothing, as in the SDK.
    const { thread: _later, ...others } = settings;
    this.settings = this.settings.thread === undefined ? others : { ...others, thread: this.settings.thread };
    // The same entries (the params' copy handed back as it was, `[]` for a run given none) keep the run's tools.
    const kept = this.tools.entries ? sameItems(tools, this.tools.entries) : tools === undefined || tools.length === 0;
    if (!kept) this.tools = new ToolSet(tools);
    this.replaceHistory([...messages]);
  }

  /** Whether `message` is a reply this run received (its content is one's); `undefined` while it knows none. */
  isReply(message: BetaMessageParam): boolean | undefined {
    if (!this.#replies) return undefined;
    return typeof message.content === 'object' && this.#replies.has(message.content);
  }

  /** `reply` is in the history (as `kept`): a message repeating it is left out of a history the caller sets. */
  recordReply(reply: BetaMessage, kept?: BetaMessageParam): void {
    const replies = (this.#replies ??= new WeakMap());
    replies.set(reply.content, reply.id);
    if (kept && typeof kept.content === 'object') replies.set(kept.content, reply.id);
  }

  /** The history the caller set, without what repeats the model's last reply, as the SDK's runner keeps it; `base`: the history it replaced. */
  dropRepeatedReplies(base: readonly BetaMessageParam[]): void {
    this.messages = withoutRepeatedReplies(this.messages, base, this.#replies) ?? this.messages;
  }

  /** A history the runner did not build by appending (the caller's, or a compacted one). */
  replaceHistory(messages: BetaMessageParam[]): void {
    this.messages = messages;
    this.historySetByCaller = true;
  }

  /**
   * The replies the caller placed in the history as the API returned them become message params (role and
   * content), as the SDK's thread takes them: at once outside the loop body, once the body is done in it.
   */
  takeRepliesAsParams(): void {
    this.messages = asMessageParams(this.messages);
  }

  /** The history the loop body set, once the body is done: without what repeats the reply it was given, and its replies as params. */
  takeBodyHistory(before: readonly BetaMessageParam[], reply: BetaMessage | undefined): void {
    this.dropBodyRepeats(before, reply);
    this.takeRepliesAsParams();
  }

  /** The history the loop body set without what repeats the reply it was given (`reply`, which followed `before`). */
  dropBodyRepeats(before: readonly BetaMessageParam[], reply: BetaMessage | undefined): void {
    this.messages = this.bodyHistory(before, reply);
  }

  /** What `dropBodyRepeats` leaves of the history (the same array when nothing repeats); the history is not changed. */
  bodyHistory(before: readonly BetaMessageParam[], reply: BetaMessage | undefined): BetaMessageParam[] {
    const kept = reply !== undefined && !(reply.stop_reason === 'refusal' && this.dropsRefusals);
    if (kept) this.recordReply(reply);
    return withoutRepeatedReplies(this.messages, kept ? [...before, reply] : before, this.#replies) ?? this.messages;
  }

  /**
   * Before a request: a history the caller set gets its dangling calls answered, its replies as
   * params (role and content) and blank text left out of its assistant messages as of the runner's
   * own replies (once; the runner's own appends keep it valid). Returns whether only the runner
   * appended since the last request.
   */
  prepareHistory(): boolean {
    if (!this.historySetByCaller) return true;
    this.messages = asRequestHistory(answerDanglingCalls(withToolDefinitions(this.messages), this.notRun, this.#ran));
    this.#ran = undefined;
    this.historySetByCaller = false;
    return false;
  }

  /**
   * At a stop before a request (a limit): a history the caller set gets its dangling calls answered now, as that request
   * would have had them (and blank text left out of its assistant messages), so the history the run holds can be sent as
   * it is (SPEC §6); the SDK's runner leaves them. The next request prepares it again, finding nothing to do. Not while
   * messages appended late wait (their place is counted in the history).
   */
  answerDanglingAtStop(): void {
    if (this.historySetByCaller && !this.late) this.messages = asRequestHistory(answerDanglingCalls(this.messages, this.notRun, this.#ran));
  }

  /**
   * The history changed while a hook ran before the request (`pushMessages` in `onRequest`; `held`: the one before): the
   * request's `body` goes with it, prepared as any history the caller set; when the hook gave it messages of its own, with
   * those and, after them, the messages it appended. Returns whether the history is still only the runner's appends.
   */
  takeChangeDuringHook(body: Record<string, unknown>, held: BetaMessageParam[]): boolean {
    if (this.messages === held) return true;
    const appendsOnly = this.prepareHistory();
    const own = body['messages'];
    if (own === held) body['messages'] = this.messages;
    // Messages of its own and messages pushed: the pushed go too, after its own. The history holds them before this
    // request's reply, which is then said to have followed them: sent with the next request only, they were out of place.
    else if (Array.isArray(own) && held.every((message, at) => this.messages[at] === message)) {
      body['messages'] = [...own, ...this.messages.slice(held.length).filter((message) => !own.includes(message))];
    }
    return appendsOnly;
  }

  /** The results the loop body was given for calls that ran: they answer those calls if the history it sets leaves them unanswered. */
  keepRan(results: ToolResultMessage): void {
    this.keepRanResults(results.content);
  }

  /** The results of calls that ran, kept to answer them if the history leaves them unanswered. */
  get ranResults(): ReadonlyMap<string, BetaToolResultBlockParam> | undefined {
    return this.#ran;
  }

  /** Results of calls that ran: they answer those calls if the history the caller set leaves them unanswered. */
  keepRanResults(results: ToolResultMessage['content']): void {
    for (const block of results) if (block.type === 'tool_result') (this.#ran ??= new Map()).set(block.tool_use_id, block);
  }

  /**
   * How the calls a reply started while it streamed ended, the reply not kept as the run's (the loop body placed it
   * before other messages): those calls are answered by it, their result or the abort's (a call that had started may
   * have had its effects), not as never run. A call marked not run (cut off by max_tokens) keeps its own answer.
   */
  keepEagerResults(results: readonly BetaToolResultBlockParam[]): void {
    if (results.length === 0) return;
    const placed = new Set(this.messages.slice(0, -1).flatMap((message) => toolUsesOf(message).map((use) => use.id)));
    this.keepRanResults(results.filter(({ tool_use_id: id }) => placed.has(id) && !this.notRun?.has(id)));
  }

  /** A call that is answered with `text` instead of running. */
  markNotRun(id: string, text: string): void {
    (this.notRun ??= new Map()).set(id, text);
  }

  /** Calls other runs over the same SDK thread decided not to run, with their answers: marked so here, unless already marked. */
  markNotRunElsewhere(answers: ReadonlyMap<string, string> | undefined): void {
    for (const [id, text] of answers ?? []) if (!this.notRun?.has(id)) this.markNotRun(id, text);
  }

  reachedMaxIterations(): boolean {
    const max = this.settings.max_iterations;
    return max !== undefined && max > 0 && this.iteration >= max;
  }

  /**
   * On a message thread a refused reply is not kept, nor is the container it names (the SDK's thread drops the turn).
   * Set once, when the run knows whether it goes over a thread.
   */
  dropsRefusals = false;

  /** A reply arrived: add its usage; calls cut off by max_tokens never run. `elsewhere`: a fallback's reply. Returns the calls that started whose results are not kept. */
  count(reply: BetaMessage, started?: StartedEagerly, elsewhere = false): BetaToolUseBlock[] {
    return countReply(this, this.apiParams, reply, this.dropsRefusals, started, elsewhere);
  }

  notRunText(id: string): string | undefined {
    return this.notRun?.get(id);
  }

  /** A read-only copy of the current params (without `thread`, as the SDK's: they could then go to `create()` as they are). */
  get params(): RunnerParams {
    const { thread: _chosenAtStart, ...settings } = this.settings;
    return {
      ...this.apiParams,
      ...settings,
      // A copy: a program that pushes a tool into it and hands it back (setMessagesParams) gets that tool registered. A list
      // for a run given none too, as `runner.params` is typed (as the SDK's): `[...params.tools, lookup]` threw there.
      tools: [...(this.tools.entries ?? NO_TOOLS)],
      messages: [...this.messages],
    } as RunnerParams;
  }

  /**
   * The JSON snapshot of the run, with the calls, the thread, the tool changes and the run control that live beside this state.
   * `uncounted`: a reply that arrived but is not counted yet (its `onMessage` hook runs), counted into the snapshot as `count` does
   * (`controlHoldsIt`: `control` counts the calls it started while it streamed, not the counts from before them).
   */
  toJSON(calls: ToolCallsJSON, thread: ThreadSnapshot | undefined, toolChanges: ToolChangesJSON | undefined, control: RunControlJSON | undefined, uncounted?: BetaMessage, messages = this.messages, started?: StartedEagerly, uncountedElsewhere = false, controlHoldsIt = true): RunnerSnapshot {
    const snapshot = this.#json(calls, thread, toolChanges, control, messages);
    if (uncounted) {
      // Counted as `count` counts it, into the snapshot.
      const reply = structuredClone(uncounted);
      const counted: Counted = { usage: snapshot.usage, lastMessage: snapshot.lastMessage, notRunText: (id) => snapshot.notRun[id], markNotRun: (id, text) => (snapshot.notRun[id] = text) };
      const dropped = countReply(counted, snapshot.params as unknown as Record<string, unknown>, reply, this.dropsRefusals, started, uncountedElsewhere);
      // Its calls whose results the model never gets (cut off by max_tokens): no earlier calls for the guard (reply-count.ts).
      const guard = controlHoldsIt ? snapshot.control?.loopGuard : undefined;
      if (guard) for (const use of dropped) forgetInJSON(guard, use);
      snapshot.usage = counted.usage;
      snapshot.lastMessage = reply;
    }
    return snapshot;
  }

  #json(calls: ToolCallsJSON, thread: ThreadSnapshot | undefined, toolChanges: ToolChangesJSON | undefined, control: RunControlJSON | undefined, messages: BetaMessageParam[]): RunnerSnapshot {
    const stoppedBy = this.#stoppedByToKeep(messages);
    const snapshot: RunnerSnapshot = structuredClone<RunnerSnapshot>({
      version: SNAPSHOT_VERSION,
      // Calls the loop body was given results for, left unanswered by the history it set, go with those results.
      params: { ...this.apiParams, ...this.settings, messages: this.#ran ? answerDanglingCalls(messages, this.notRun, this.#ran) : messages } as RunnerSnapshot['params'],
      tools: (this.tools.entries ?? []).map((entry) => {
        if (isToolSource(entry)) return { source: true as const };
        if (isRunnableToolset(entry)) return { toolset: toolsetFamily(entry) };
        return this.tools.runnable.get((entry as { name?: string }).name ?? '') === entry
          ? { runnable: (entry as RunnableTool).name }
          : { definition: entry as BetaToolUnion };
      }),
      // The request in flight is not the snapshot's: the resumed run sends it again, and counts it then.
      iteration: this.requestInFlight ? this.iteration - 1 : this.iteration,
      usage: this.usage,
      notRun: Object.fromEntries(this.notRun ?? []),
      calls,
      ...(thread && { thread }),
      ...(toolChanges && { toolChanges }),
      ...(stoppedBy && { stoppedBy }),
      ...(this.lastMessage && { lastMessage: this.lastMessage }),
      ...(control && { control }),
      ...(this.#lateBeforeReply(messages) && { late: { at: this.late!.at, count: this.late!.count } }),
    });
    // A sub-agent's state held in it keeps the tools its run added, as the state copied had them (snapshot-copy.ts).
    keepBesideCalls(calls, snapshot.calls);
    return snapshot;
  }

  /** The history as the server's thread holds it: messages appended late that wait before the reply go after it (late-change.ts). */
  threadView(messages: readonly BetaMessageParam[] = this.messages): readonly BetaMessageParam[] {
    return this.#lateBeforeReply(messages) ? lateAfterReply(messages, this.late!) : messages;
  }

  /** Messages appended late still wait before the reply, whose calls are unanswered, in the history the snapshot holds. */
  #lateBeforeReply(messages: readonly BetaMessageParam[]): boolean {
    const late = this.late;
    if (!late?.reply || late.count === 0 || this.messages[late.at + late.count] !== late.reply) return false;
    return messages.length === this.messages.length && toolUsesOf(late.reply).length > 0;
  }
}

/** Where a reply is counted: the run's state, or a snapshot of it. */
interface Counted {
  usage: Usage;
  lastMessage: BetaMessage | undefined;
  /** The answer of a call never run, if it has one (a call the run control refused keeps its own). */
  notRunText(id: string): string | undefined;
  markNotRun(id: string, text: string): void;
}

/** Whether the call of this id started while its reply streamed (`runToolsEagerly`). */
export type StartedEagerly = (id: string) => boolean;

/**
 * Counts a reply: its usage added, it is the last message, calls cut off (max_tokens, the context window) or in a paused turn never run
 * (one that `started` while the reply streamed is told so, unless the run control refused it), its container adopted.
 */
function countReply(into: Counted, params: Record<string, unknown>, reply: BetaMessage, dropsRefusals: boolean, started: StartedEagerly | undefined, elsewhere: boolean): BetaToolUseBlock[] {
  const dropped: BetaToolUseBlock[] = [];
  into.usage = addUsage(into.usage, reply.usage);
  into.lastMessage = reply;
  const stop = reply.stop_reason;
  // Cut off at the model's context window as at max_tokens: the reply stopped where it was, its last call's input maybe with it.
  const cutOff = stop === 'max_tokens' || stop === 'model_context_window_exceeded';
  const notRun = cutOff ? cutOffText : stop === 'pause_turn' || stop === 'compaction' ? pausedText : undefined;
  for (const use of notRun ? toolUsesOf(reply) : []) {
    if (!started?.(use.id)) into.markNotRun(use.id, notRun!(use.name, stop!));
    // (A call the run control refused keeps its own answer.)
    else if (into.notRunText(use.id) === undefined) {
      into.markNotRun(use.id, (cutOff ? startedBeforeCutOffText : startedBeforePauseText)(use.name, stop!));
      dropped.push(use);
    }
  }
  const containerId = reply.container?.id;
  // A fallback's container is of its client (another key, region or platform): the run's own requests never name it.
  if (containerId && !elsewhere && !(dropsRefusals && reply.stop_reason === 'refusal')) adoptContainer(params, containerId);
  return dropped;
}

/** Later requests run in the container the server chose, unless the caller named one. */
function adoptContainer(params: Record<string, unknown>, id: string): void {
  const container = params['container'];
  if (container == null) params['container'] = id;
  else if (typeof container === 'object' && (container as { id?: unknown }).id == null) {
    params['container'] = { ...container, id };
  }
}
