/** Human in the loop: which calls need approval, and the decisions about them. */
import { quotingTypeError, wrongType } from './described.js';
import type { AnyCall, BetaToolUseBlock, Promisable } from './types.js';

/**
 * A tool call waiting for (or asking for) a decision: its `name`, the validated `input` the tool
 * would run with (typed by tool, a union by name, when `toolRunner` sees the tools), and its block.
 */
export type ApprovalRequest<Call extends AnyCall = AnyCall> = Call & {
  toolUse: BetaToolUseBlock;
  /** A sub-agent's call (`agentTool`): the agents' names, outermost first; none for the run's own calls. */
  path?: string[];
  /**
   * A sub-agent's call (waiting in `pendingApprovals`, or asked of `options.approve`): the `tool_use`
   * ids of the calls that started each agent of `path` (two calls of one agent are told apart by them).
   */
  callPath?: string[];
};

/**
 * The key, on a request the runner asks about, of the input an `onToolCall` hook gave in place of the model's (before the
 * schema's transforms): what an edit is validated as, so what an editor starts from (`tool-runner/inspect`'s does); absent
 * when the model's input stands. Registered: a sub-agent's runner may be the other build's copy.
 */
export const EDITABLE_INPUT: unique symbol = Symbol.for('tool-runner.editableInput.v1') as never;

/**
 * The key, on a request the runner asks about, of the runner whose run the call belongs to (a sub-agent's call: the
 * outermost run's). Not enumerable: an approver's `toEqual` or log line sees the request as before. Registered: a
 * sub-agent's runner may be the other build's copy. `tool-runner/inspect` reads it to tell apart two runs' calls of
 * one id (resumed from one snapshot).
 */
const ASKED_BY: unique symbol = Symbol.for('tool-runner.askedBy.v1') as never;

/** `request`, marked as asked by `runner`'s run. */
export function askedBy<T extends object>(request: T, runner: object): T {
  return Object.defineProperty(request, ASKED_BY, { value: runner, configurable: true });
}

/** The runner whose run asks about `request`, if it says. */
export function askingRunner(request: object): object | undefined {
  const runner = (request as { [ASKED_BY]?: unknown })[ASKED_BY];
  return typeof runner === 'object' && runner !== null ? runner : undefined;
}

/** A call the run stopped for: approve or deny it with `runner.approve(id)` / `runner.deny(id, reason)`. */
export interface PendingApproval extends ApprovalRequest {
  /** The tool_use id. */
  id: string;
}

/** What `options.approve` decides: run it, run it with edited input (validated again), or deny it. */
export type ApprovalDecision =
  | { decision: 'allow'; input?: unknown }
  | { decision: 'deny'; reason?: string | undefined };

/**
 * Not a user's decision: a denial because no decision came in time (a durable run's
 * `approvalTimeoutSeconds`). The model reads that the wait timed out, not that the user denied it.
 */
export interface TimedOutDecision {
  decision: 'deny';
  timedOutMs: number;
}

/** The wait a denial timed out after, when no decision came in time. */
export function timedOutMsOf(decision: ApprovalDecision): number | undefined {
  const { timedOutMs } = decision as Partial<TimedOutDecision>;
  return typeof timedOutMs === 'number' ? timedOutMs : undefined;
}

/** What an approver is told besides the call. */
export interface ApprovalContext {
  /**
   * The run's signal (`options.signal`): it aborts when the run is aborted. An approver that waits
   * for a person should stop waiting then; the call is answered as aborted whatever it decides.
   */
  signal: AbortSignal;
}

/** Asked for each call whose tool needs approval; without it, the run stops with `pendingApprovals`. */
export type Approver<Call extends AnyCall = AnyCall> = (call: ApprovalRequest<Call>, context: ApprovalContext) => Promisable<ApprovalDecision>;

/** The result text of a denied call: says "denied" and gives the reason. */
export function deniedText(name: string, reason: string | undefined): string {
  const given = asReason(reason)?.trim();
  return `Error: the call to '${name}' was denied by the user${given ? `: ${given}${/[.!?]$/.test(given) ? '' : '.'}` : '.'} It was not run.`;
}

/** A denial's reason as the model reads it: a string as it is, an Error or a number as it prints, a plain object as JSON (not "[object Object]"). */
export function asReason(reason: unknown): string | undefined {
  if (reason == null) return undefined;
  if (typeof reason !== 'object' || reason instanceof Error || Object.prototype.toString !== (reason as object).toString) return String(reason);
  try {
    return JSON.stringify(reason);
  } catch {
    return String(reason);
  }
}

/** The fields of a decision. */
const DECISION_FIELDS = new Set(['decision', 'input', 'reason']);

/**
 * Checks a decision returned by `options.approve`, so a typo fails clearly instead of running the tool (a misspelt
 * `inputs` would run the model's input, not the edit). Its callers stop the run with a `HookError` (`hook: 'approve'`)
 * made of it, as for an approver that throws and an `onToolCall` or `needsApproval` that answers what it may not. (Not
 * made here: `tool-runner/inspect` loads this module without the SDK, which `hooks.ts` imports.)
 */
export function checkDecision(value: unknown, name: string): ApprovalDecision {
  const decision = (value as { decision?: unknown } | null | undefined)?.decision;
  const unknown = decision === 'allow' || decision === 'deny' ? Object.keys(value as object).find((key) => !DECISION_FIELDS.has(key)) : undefined;
  if ((decision === 'allow' || decision === 'deny') && unknown === undefined) return value as ApprovalDecision;
  const said = (shown: string) =>
    `options.approve returned ${shown} for '${name}'${unknown === undefined ? '' : ` (a decision has no field '${unknown}')`}; return { decision: 'allow' }, { decision: 'allow', input } or { decision: 'deny', reason }`;
  // The value may hold an edited input or a reason (contents): spans and the inspector show it only when they capture contents.
  throw quotingTypeError(said, value);
}

/** The id `runner.approve` / `runner.deny` is given: a call's id (`call.id`), not the call. */
export function callIdArgument(id: unknown, method: 'approve' | 'deny'): string {
  if (typeof id === 'string') return id;
  const hint = typeof (id as { id?: unknown } | null)?.id === 'string' ? `: pass call.id, ${method}(call.id${method === 'deny' ? ', reason' : ''})` : '';
  throw wrongType(id, `${method}: the first argument is the id of a waiting call (runner.pendingApprovals[i].id)${hint}`);
}

/** `runner.deny(id, reason)`'s decision: the reason is what the model reads, a string (or nothing). */
export function denyDecision(reason: unknown): ApprovalDecision {
  if (reason != null && typeof reason !== 'string') throw wrongType(reason, "deny: the reason is a string, which the model reads (deny(id, 'why')), or nothing");
  return { decision: 'deny', reason: reason ?? undefined };
}

/**
 * `runner.approve(id, options)`'s decision. `approve(id, input)` for `approve(id, { input })` (or null) is said, never
 * taken as a plain approval that would run the model's input.
 */
export function approveDecision(options: unknown): ApprovalDecision {
  const what = "approve: the second argument is { input? } (the edited input, validated as the model's), or nothing";
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw wrongType(options, what);
  const other = Object.keys(options).find((key) => key !== 'input');
  if (other !== undefined) throw new TypeError(`${what}; got an object with '${other}': an edited input goes in { input: ... }`);
  const { input } = options as { input?: unknown };
  return input === undefined ? { decision: 'allow' } : { decision: 'allow', input };
}
