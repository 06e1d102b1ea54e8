/**
 * How a run asks `options.approve`: one question at a time (a person answers one after another),
 * each bounded by its tool's timeout from the moment it is asked (not from when it joined the line),
 * an approver's failure named. A run lends its approver to its sub-agents (`agentTool`), so their
 * questions wait in the run's line and are timed there.
 */
import { type ApprovalContext, type ApprovalDecision, type Approver, EDITABLE_INPUT, askedBy, checkDecision } from './approval.js';
import { ownSignal, runWithGuards } from './guards.js';
import { onAbort, tiedSignal } from './on-abort.js';
import { HookError, type ToolCall } from './hooks.js';

// Registered symbols: a sub-agent's runner may be the other build's copy of this module (see agent-link.ts).

/** The key, in the context a question is asked with, of its time limit (the tool's timeout). */
const TIME_LIMIT: unique symbol = Symbol.for('tool-runner.approvalTimeLimit.v1');

/** The mark of an approver lent by a parent run: already in the parent's line, and timed there. */
const LENT: unique symbol = Symbol.for('tool-runner.lentApprover.v1');

const TIMED_OUT_BRAND = Symbol.for('tool-runner.approvalTimedOut.v1');

type AskedContext = ApprovalContext & { [TIME_LIMIT]?: number | undefined };

/** No decision came within the call's time limit. */
export class ApprovalTimedOut extends Error {
  readonly [TIMED_OUT_BRAND] = true;

  constructor(readonly ms: number) {
    super(`No decision came within ${ms} ms`);
    this.name = 'ApprovalTimedOut';
  }

  /** By its brand, not `instanceof`: the thrower may be the other build's copy of this module. */
  static is(value: unknown): value is ApprovalTimedOut {
    return typeof value === 'object' && value !== null && (value as { [TIMED_OUT_BRAND]?: unknown })[TIMED_OUT_BRAND] === true;
  }
}

/** The run's approver: `approve` in a line of its own, each question timed once asked; a lent one as it is. */
export function runApprover(approve: Approver | undefined): Approver | undefined {
  if (!approve) return undefined;
  if ((approve as { [LENT]?: unknown })[LENT] === true) return approve;
  return oneQuestionAtATime(timed(approve));
}

/** `approve` as a parent lends it to a sub-agent: `ask` passes each question on, context included. */
export function lentApprover(ask: Approver): Approver {
  return Object.assign(ask, { [LENT]: true });
}

/**
 * Each question waits for the one before: until it is answered, or its wait ends (an abort, its
 * timeout), so that an approver that never answers an abandoned question does not hold the line.
 * A question whose run was aborted while it waited is not asked (it rejects with the signal's reason).
 */
function oneQuestionAtATime(approve: Approver): Approver {
  let queue: Promise<unknown> = Promise.resolve();
  return (call, context) => {
    const asked = queue.then(() => {
      context.signal.throwIfAborted();
      return approve(call, context);
    });
    // The line opens once the question ahead is done and this one is answered or abandoned.
    queue = queue.then(() => answeredOrAbandoned(asked, context.signal));
    return asked;
  };
}

/** Resolves once `asked` settles or `signal` aborts, whichever comes first (one listener on a signal however many wait: `onAbort`). */
function answeredOrAbandoned(asked: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const stop = onAbort(signal, resolve);
    asked.then(stop, stop).then(resolve);
  });
}

/** `approve` bounded by the question's time limit: past it, its signal aborts and `ApprovalTimedOut` is thrown. */
function timed(approve: Approver): Approver {
  return async (call, context) => {
    const limit = (context as AskedContext)[TIME_LIMIT];
    if (limit === undefined) {
      // A signal of the question's own, tied to the run's: the listener an approver adds to stop waiting for a person
      // (and never removes) goes with the question. On the run's signal, a server's shared one, they stayed for the
      // process's life, and Node warned of a leak at the eleventh question.
      const own = tiedSignal(context.signal);
      try {
        return await approve(call, { signal: own.signal });
      } finally {
        own.stop();
      }
    }
    const outcome = await runWithGuards((signal) => approve(call, { signal: ownSignal(signal) }), context.signal, limit);
    if (outcome.ok) return outcome.value as ApprovalDecision;
    if ('thrown' in outcome) throw outcome.thrown;
    if (outcome.timedOut !== undefined) throw new ApprovalTimedOut(outcome.timedOut);
    throw context.signal.reason;
  };
}

/**
 * Asks the run's approver about a call, within `timeLimit` ms once asked. Throws `ApprovalTimedOut`,
 * or a `HookError` when the approver failed. `runner`: the run's, which the request names (`askedBy`).
 */
export function approvalAsker(approve: Approver, runner: object): (call: ToolCall, signal: AbortSignal, timeLimit: number | undefined, given: { given: unknown } | undefined) => Promise<ApprovalDecision> {
  return async (call, signal, timeLimit, given) => {
    const context: AskedContext = { signal, [TIME_LIMIT]: timeLimit };
    const request = askedBy({ name: call.name, input: call.input, toolUse: call.toolUse, ...(given && { [EDITABLE_INPUT]: given.given }) }, runner);
    let decision: unknown;
    try {
      decision = await approve(request, context);
    } catch (error) {
      if (ApprovalTimedOut.is(error)) throw error;
      // Aborted meanwhile (an approver that stops waiting by throwing, or a question never asked):
      // not the approver's failure. Any decision will do: the caller answers the call as aborted.
      if (signal.aborted) return { decision: 'deny' };
      throw new HookError('approve', error);
    }
    try {
      return checkDecision(decision, call.name);
    } catch (error) {
      throw new HookError('approve', error);
    }
  };
}
