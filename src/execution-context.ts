/**
 * What running one call needs from the runner (`ExecutionContext`), where its result is kept (`CallResults`), and
 * what it ends with (`CallOutcome`): the types execute.ts, call-end.ts and the answering of a message's calls share.
 */
import type { ApprovalDecision } from './approval.js';
import type { RunnerEvent } from './events.js';
import type { Limiter } from './guards.js';
import type { Hooks, ToolCall } from './hooks.js';
import type { LeveledLogger } from './log.js';
import type { RunScope } from './scope.js';
import type { HeldCall } from './snapshot.js';
import type { StartOrder } from './start-order.js';
import type { RunnableTool, Runner } from './surface.js';
import type { BetaToolResultBlockParam } from './types.js';

/** What running one call needs from the runner. */
export interface ExecutionContext {
  tools: ReadonlyMap<string, RunnableTool>;
  logger: LeveledLogger;
  signal: AbortSignal | undefined;
  iteration: number;
  runner: Runner;
  hooks: Hooks | undefined;
  /** Emits lifecycle events, when something listens. */
  emit: ((event: RunnerEvent) => void) | undefined;
  /** Asks the run's approver (`approvalAsker`: one question at a time, within `timeLimit` ms once asked; `given`: the onToolCall hook's input, what an edit starts from); none without one. */
  askApproval: ((call: ToolCall, signal: AbortSignal, timeLimit: number | undefined, given: { given: unknown } | undefined) => Promise<ApprovalDecision>) | undefined;
  /** Decisions taken with runner.approve / runner.deny, by tool_use id. */
  decisions: ReadonlyMap<string, ApprovalDecision>;
  toolTimeoutMs: number | undefined;
  maxToolResultChars: number;
  limiter: Limiter | undefined;
  /** Runs each call inside the context of its span, when something traces. */
  scope: RunScope | undefined;
  /** The calls are the caller's `generateToolResponse()`, not the loop's. */
  byCaller: boolean;
  /** Where a call's result is kept once known, before a hook or an observer sees it (a snapshot taken there holds it). */
  results: CallResults;
  /** In a durable run, the order the reply's calls start their tools in (the model's). */
  startOrder?: StartOrder | undefined;
}

/** The results of a message's calls as the snapshot keeps them (tool-calls.ts). */
export interface CallResults {
  /** The tool finished; the `onToolResult` hook has not (a resumed run runs only the hook again). */
  keepRan(id: string, result: BetaToolResultBlockParam): void;
  /** The call is done: its result as sent (never run again). */
  keepSettled(id: string, result: BetaToolResultBlockParam): void;
  /** The call waits for a decision: its state (a sub-agent's, with its finished calls) goes on from here. */
  keepHeld(call: HeldCall): void;
  /** The call's sub-agent runs (its state, as a snapshot would hold it), or no longer does. */
  keepRunning(id: string, state: (() => HeldCall) | undefined): void;
}

/** A call ends with its result, or waits for a decision (no `options.approve`). */
export type CallOutcome = { result: BetaToolResultBlockParam; /** Cut short by an abort (not a failure). */ cancelled?: boolean } | { pending: HeldCall };
