/**
 * The tool calls of the assistant message being answered. They live until their results are in
 * the history — across iterations when the run stops for approval — so that no finished call
 * runs twice.
 */
import type { ApprovalDecision } from './approval.js';
import { resultBeforeFailure } from './call-end.js';
import type { CallOutcome, CallResults, ExecutionContext } from './execution-context.js';
import { decideInside, isAgentCall, openApprovals } from './nested-approvals.js';
import { canonicalJson } from './loop-guard.js';
import type { HeldCall, ToolCallsJSON } from './snapshot.js';
import type { BetaToolResultBlockParam, BetaToolUseBlock, ToolResultMessage } from './types.js';

const NONE_HELD: readonly HeldCall[] = Object.freeze([]);

export class ToolCalls implements CallResults {
  readonly #calls = new Map<string, Promise<CallOutcome>>();
  readonly #settled = new Map<string, BetaToolResultBlockParam>();
  readonly #held = new Map<string, HeldCall>();
  readonly #decisions = new Map<string, ApprovalDecision>();
  /** The ids of calls decided inside a sub-agent: deciding one again says so. */
  readonly #decidedInside = new Set<string>();
  #pending: HeldCall[] = [];
  /** How many decisions were made so far (a pass that ends with calls waiting goes again if one came meanwhile). */
  decisionsMade = 0;
  /** The results of calls whose tool finished before a hook threw: a retry runs only what failed after it. */
  readonly #ran = new Map<string, BetaToolResultBlockParam>();
  /** Calls that failed (a hook threw), kept until the failure has been seen (`forgetFailed`). */
  #failed: Set<string> | undefined;
  /** The answer failed and no answer awaits the calls now: one that fails meanwhile starts again when the run is retried. */
  #unawaited = false;
  /** Agent calls whose sub-agent runs: their state, as a snapshot taken now holds it (made only then). */
  #running: Map<string, () => HeldCall> | undefined;
  /** Calls asked of `options.approve` (or in its line): a snapshot taken meanwhile holds them as waiting, or as decided once answered. */
  #asking: Map<string, { call: HeldCall; decision?: ApprovalDecision }> | undefined;

  /**
   * Starts a call once: a call that started (or finished) is not run again. `run` gets the call's
   * state if it waited for approval, and its result if its tool finished before a hook threw.
   */
  start(toolUse: BetaToolUseBlock, run: (held: HeldCall | undefined, ran: BetaToolResultBlockParam | undefined) => Promise<CallOutcome>): Promise<CallOutcome> {
    const id = toolUse.id;
    // An answer starts (a retry's, after one failed): it awaits the calls, so a call that fails from now on fails it.
    this.#unawaited = false;
    let call = this.#calls.get(id);
    if (!call) {
      call = run(this.#held.get(id), this.#ran.get(id));
      this.#calls.set(id, call);
      call.then(
        (outcome) => {
          if (this.#ran.size > 0) this.#ran.delete(id);
          if ('result' in outcome) this.#settled.set(id, outcome.result);
        },
        (error: unknown) => {
          const ran = resultBeforeFailure(error);
          if (ran) this.#ran.set(id, ran);
          // A call of an answer that already failed (another call's hook threw first): nothing awaits its failure, so a
          // retry runs it again (only its hook, if its tool finished), as it does a call that failed with the first. Kept,
          // a retry failed at once with this stale error, running nothing.
          if (this.#unawaited && this.#calls.get(id) === call) this.#calls.delete(id);
          else (this.#failed ??= new Set()).add(id);
        },
      );
    }
    return call;
  }

  /**
   * The answer failed, and its caller has the error: the calls that failed start again when the run
   * is retried. (Until then a failed call keeps its rejection: a call started while the reply streamed
   * fails the answer with its own error, instead of running again in silence.)
   */
  forgetFailed(): void {
    this.#unawaited = true;
    if (!this.#failed) return;
    for (const id of this.#failed) this.#calls.delete(id);
    this.#failed = undefined;
  }

  /** The result of the call of this id, once it has one. */
  settledResult(id: string): BetaToolResultBlockParam | undefined {
    return this.#settled.get(id);
  }

  /** The calls of a reply that was not kept (or of a history replaced): a reply that makes them again runs them anew. */
  forget(ids: readonly string[]): void {
    if (this.#pending.length > 0) this.#pending = this.#pending.filter((call) => !ids.includes(call.id));
    for (const id of ids) {
      this.#decisions.delete(id);
      this.#calls.delete(id);
      this.#settled.delete(id);
      this.#ran.delete(id);
      this.#failed?.delete(id);
      this.#running?.delete(id);
      this.#asking?.delete(id);
      this.#held.delete(id);
    }
  }

  /** Forgets the calls that waited for approval and are not among `uses` (a history set in their place); returns them. */
  forgetHeldBesides(uses: readonly BetaToolUseBlock[]): readonly HeldCall[] {
    if (this.#held.size === 0) return NONE_HELD;
    // The same call: its id, and what the model asked for (a history may make another call under a held call's id).
    const same = (call: HeldCall, use: BetaToolUseBlock) => use.id === call.id && use.name === call.toolUse.name && canonicalJson(use.input) === canonicalJson(call.toolUse.input);
    const replaced = this.held.filter((call) => !uses.some((use) => same(call, use)));
    if (replaced.length > 0) this.forget(replaced.map((call) => call.id));
    return replaced;
  }

  /** Kept before the `onToolResult` hook runs: a snapshot taken in it runs only the hook again (as a retry does). */
  keepRan(id: string, result: BetaToolResultBlockParam): void {
    this.#ran.set(id, result);
  }

  /** Kept before observers see the call end: a snapshot taken then never runs it again. */
  keepSettled(id: string, result: BetaToolResultBlockParam): void {
    if (this.#ran.size > 0) this.#ran.delete(id);
    this.#settled.set(id, result);
  }

  /** Kept before observers see the call wait: a snapshot taken then goes on from its state (a sub-agent's finished calls not run again). */
  keepHeld(call: HeldCall): void {
    this.#held.set(call.id, call);
  }

  /** An agent call's sub-agent runs (`state`), or no longer does: a snapshot taken while it runs goes on inside it. */
  keepRunning(id: string, state: (() => HeldCall) | undefined): void {
    if (state) (this.#running ??= new Map()).set(id, state);
    else this.#running?.delete(id);
  }

  /**
   * `ask` (the run's approver), the calls it is asked about kept until they end: a snapshot taken while a person
   * decides (a process that shuts down meanwhile) lists them as waiting, so a resumed runner has them in
   * `pendingApprovals`; one taken once the approver answered holds its decision (the person is not asked again).
   */
  whileAsked(ask: NonNullable<ExecutionContext['askApproval']>): ExecutionContext['askApproval'] {
    return async (call, signal, timeLimit, given) => {
      const asking = (this.#asking ??= new Map());
      const entry: { call: HeldCall; decision?: ApprovalDecision } = { call: { id: call.id, name: call.name, input: call.input, toolUse: call.toolUse, ...given } };
      asking.set(call.id, entry);
      try {
        const decision = await ask(call, signal, timeLimit, given);
        // (Asked as the run aborted, the answer is none of the approver's: the call is answered as aborted.)
        if (!signal.aborted) entry.decision = decision;
        else asking.delete(call.id);
        return decision;
      } catch (error) {
        asking.delete(call.id);
        throw error;
      }
    };
  }

  /** The call of this id, if it started (or finished) and its message is not answered yet. */
  started(id: string): Promise<CallOutcome> | undefined {
    return this.#calls.get(id);
  }

  get pending(): readonly HeldCall[] {
    return this.#pending;
  }

  /** Every call that waited for approval, decided or not, and has not run (a decided one may have since). */
  get held(): readonly HeldCall[] {
    return this.#held.size > 0 ? [...this.#held.values()].filter((call) => !this.#settled.has(call.id)) : NONE_HELD;
  }

  get decisions(): ReadonlyMap<string, ApprovalDecision> {
    return this.#decisions;
  }

  /**
   * The run stops with these calls waiting for a decision. `given`: the results of the others as the loop body was given
   * them (`generateToolResponse()`), which it may have replaced: they go as it left them once the run goes on.
   */
  hold(pending: HeldCall[], given: ToolResultMessage): void {
    this.#pending = pending;
    for (const call of pending) {
      this.#held.set(call.id, call);
      this.#calls.delete(call.id);
    }
    for (const block of given.content) {
      const id = block.type === 'tool_result' ? block.tool_use_id : undefined;
      if (id === undefined || !this.#settled.has(id) || this.#settled.get(id) === block) continue;
      this.#settled.set(id, block as BetaToolResultBlockParam);
      this.#calls.set(id, Promise.resolve({ result: block as BetaToolResultBlockParam }));
    }
  }

  /** Records a decision about a waiting call; throws for an id that is not waiting. */
  decide(id: string, decision: ApprovalDecision): void {
    this.#decide(id, decision);
    this.decisionsMade++;
  }

  #decide(id: string, decision: ApprovalDecision): void {
    const index = this.#pending.findIndex((call) => call.id === id && !isAgentCall(call));
    if (index === -1) {
      if (this.#decideInside(id, decision)) return;
      // Waiting, but not listed yet (decided from its `tool.end` pending, or a hook, while the reply's other calls run).
      const held = this.#held.get(id);
      if (held && !isAgentCall(held) && !this.#settled.has(id) && !this.#decisions.has(id)) throw new Error(heldNotListedText(id));
      const state = this.#decisions.has(id) || this.#decidedInside.has(id) ? 'was already decided' : 'is not waiting for approval';
      const waiting = openApprovals(this.#pending).map((call) => `${call.id} (${call.name})`).join(', ') || 'none';
      throw new Error(`Tool call '${id}' ${state}. Calls waiting for approval: ${waiting}`);
    }
    this.#decisions.set(id, decision);
    this.#pending = this.#pending.filter((_, i) => i !== index);
  }

  /** A decision about a call waiting inside a sub-agent: once none waits there, the sub-agent's call goes on. */
  #decideInside(id: string, decision: ApprovalDecision): boolean {
    for (const call of this.#pending) {
      if (!isAgentCall(call)) continue;
      const inside = decideInside(call, id, decision);
      if (inside === 'not-found') continue;
      this.#decidedInside.add(id);
      if (inside === 'decided') {
        // Allowed already with an edited input (`approve(id, { input })` before its sub-agent stopped): it goes on with it.
        const allowed = this.#decisions.get(call.id);
        this.#decisions.set(call.id, allowed?.decision === 'allow' ? allowed : { decision: 'allow' });
        this.#pending = this.#pending.filter((pending) => pending !== call);
      }
      return true;
    }
    return false;
  }

  /** The message is answered: forget its calls. */
  clear(): void {
    // Once per turn: a map is cleared only when it holds something (clearing allocates its table anew).
    if (this.#calls.size > 0) this.#calls.clear();
    if (this.#settled.size > 0) this.#settled.clear();
    if (this.#held.size > 0) this.#held.clear();
    if (this.#decisions.size > 0) this.#decisions.clear();
    if (this.#pending.length > 0) this.#pending = [];
    if (this.#ran.size > 0) this.#ran.clear();
    this.#failed = undefined;
    this.#unawaited = false;
    this.#running = undefined;
    this.#asking = undefined;
  }

  toJSON(): ToolCallsJSON {
    return {
      settled: Object.fromEntries(this.#settled),
      // A tool that finished before a hook threw: a resumed run runs only the hook again, as a retry does.
      ...(this.#ran.size > 0 && { ran: Object.fromEntries(this.#ran) }),
      held: this.#heldNow(),
      pending: this.#pendingNow().map((call) => call.id),
      decisions: { ...this.#answered(), ...Object.fromEntries(this.#decisions) },
    };
  }

  /** The approver's decisions about calls that have not ended. */
  #answered(): Record<string, ApprovalDecision> {
    const answered: Record<string, ApprovalDecision> = {};
    for (const [id, { decision }] of this.#asking ?? []) if (decision && !this.#settled.has(id)) answered[id] = decision;
    return answered;
  }

  /**
   * The calls waiting for a decision; before the run stops for them (a snapshot taken while the reply's other calls
   * run), those that wait already, undecided, so that a resumed runner lists them before it is iterated: a sub-agent
   * still running (its other calls run) with a call of its own waiting, too.
   */
  #pendingNow(): readonly HeldCall[] {
    if (this.#pending.length > 0 || (this.#held.size === 0 && !this.#running && !this.#asking?.size)) return this.#pending;
    const waits = (call: HeldCall) => !isAgentCall(call) || openApprovals([call]).length > 0; // (not a sub-agent whose lent approver failed)
    const waiting = this.#heldNow().filter((call) => !this.#settled.has(call.id) && !this.#decisions.has(call.id) && !this.#asking?.get(call.id)?.decision && waits(call));
    // In the model's order, in which its calls started (`#heldNow` puts the running sub-agents first).
    const order = new Map([...this.#calls.keys()].map((id, index) => [id, index]));
    const at = (call: HeldCall) => order.get(call.id) ?? order.size;
    return waiting.sort((a, b) => at(a) - at(b));
  }

  /**
   * The held calls as a snapshot keeps them: an agent call running now with its sub-agent's state as
   * it is (not as it was when it waited for approval, before it went on), then the calls that wait, then those the approver is asked about.
   */
  #heldNow(): HeldCall[] {
    // (Not one whose sub-agent runs now: it is held above with its sub-agent's state.)
    const asked = this.#asking?.size ? [...this.#asking.values()].flatMap(({ call }) => (this.#held.has(call.id) || this.#settled.has(call.id) || this.#running?.has(call.id) ? [] : [call])) : [];
    if (!this.#running) return [...this.#held.values(), ...asked];
    const held: HeldCall[] = [];
    for (const [id, state] of this.#running) if (!this.#settled.has(id)) held.push(state());
    for (const [id, call] of this.#held) if (!this.#running.has(id)) held.push(call);
    return [...held, ...asked];
  }

  /** Restores the calls of a snapshot: finished ones keep their results and are not run again. */
  restore(json: ToolCallsJSON): void {
    for (const [id, result] of Object.entries(json.settled)) {
      this.#settled.set(id, result);
      this.#calls.set(id, Promise.resolve({ result }));
    }
    for (const [id, decision] of Object.entries(json.decisions)) this.#decisions.set(id, decision);
    for (const [id, result] of Object.entries(json.ran ?? {})) this.#ran.set(id, result);
    for (const call of json.held) this.#held.set(call.id, call);
    // In the order they were waiting in (the model's), as `pendingApprovals` gave them before the snapshot.
    const held = new Map(json.held.map((call) => [call.id, call]));
    this.#pending = json.pending.flatMap((id) => held.get(id) ?? []);
  }
}

const heldNotListedText = (id: string) =>
  `Tool call '${id}' waits for approval, but is listed and decided only once its reply's other calls have ended: in runner.pendingApprovals after generateToolResponse() returns, or when the run stops for approval (options.approve decides as the call starts waiting)`;
