/**
 * Runs one tool call into a `tool_result` block: find the tool, validate the input, let the
 * hooks and the approval have their say, run it under its guards (abort, timeout, concurrency),
 * and turn any failure into an `is_error` result the model can act on.
 */
import { APIUserAbortError } from '@anthropic-ai/sdk';
import { AGENT_RESUME, AGENT_RUNNING, AgentPending, type AgentRunning, LentFailed, StepFailed, isAgentTool } from './agent-link.js';
import { type ApprovalDecision, type TimedOutDecision, deniedText, timedOutMsOf } from './approval.js';
import { ApprovalTimedOut } from './approver.js';
import { NEVER_ABORTED, type RunOutcome, STOPPED, StepTimedOut, ownSignal, runWithGuards, stepWithin, withOwnSignal } from './guards.js';
import { abortedText, abortedUnstartedText, approvalTimedOutText, stepTimedOutText, stoppedForLog, stoppedText } from './call-texts.js';
import { needsApproval } from './needs-approval.js';
import { type ToolCall, type ToolCallOverride, callHook, checkOverride } from './hooks.js';
import { abortedWaitingText, errorResult } from './history.js';
import { openApprovals } from './nested-approvals.js';
import { invalidResultKind } from './result-kind.js';
import { plainName, safeJson } from './described.js';
import { validateInput } from './tool-input.js';
import type { HeldCall } from './snapshot.js';
import type { CallOutcome, ExecutionContext } from './execution-context.js';
import { endsSeen, failed, finished, heldCall, invalid, thrownAfter, waiting } from './call-end.js';
import type { RunnableTool, ToolContext } from './surface.js';
import { isToolError, thrownForLog, thrownValueToContent } from './tool-error.js';
import type { BetaToolResultBlockParam, BetaToolUseBlock, ToolResultContent } from './types.js';
import { STEP_STARTED } from './start-order.js';

/**
 * Runs one call. `held` is a call that waited for approval: its input was validated and its
 * `onToolCall` hook called then, so only the decision is applied now.
 */
export function executeToolCall(toolUse: BetaToolUseBlock, context: ExecutionContext, held?: HeldCall, ran?: BetaToolResultBlockParam): Promise<CallOutcome> {
  const call: ToolCall = { id: toolUse.id, name: toolUse.name, input: toolUse.input, toolUse };
  context.emit?.({ type: 'tool.start', runner: context.runner, call });
  const tool = context.tools.get(toolUse.name);
  if (!tool) return context.emit || context.scope ? answeredWithoutRunning(() => notFound(call, context), call, context) : notFound(call, context);
  const { scope } = context;
  // The usual call: nothing traces, nothing listens, nothing to retry.
  if (!scope && !context.emit && !ran) return answerCall(tool, call, context, held);
  const answer = ran ? () => Promise.resolve(finished(ran, call, context)) : () => answerCall(tool, call, context, held);
  const seen = context.emit ? () => endsSeen(answer, call, context) : answer;
  if (!scope) return seen();
  const scoped = { runner: context.runner, call, tool, signal: context.signal, byCaller: context.byCaller };
  return scope.toolCall(scoped, seen);
}

/**
 * A call the run does not run (past a budget's limit, a loop guard's repeat, a limit's last answer):
 * its `is_error` result, seen by observers and the `onToolResult` hook as any call's.
 */
export async function refuseToolCall(toolUse: BetaToolUseBlock, content: string, context: ExecutionContext): Promise<CallOutcome> {
  const call: ToolCall = { id: toolUse.id, name: toolUse.name, input: toolUse.input, toolUse };
  if (!context.emit && !context.scope) return failed(content, call, context);
  context.emit?.({ type: 'tool.start', runner: context.runner, call });
  return answeredWithoutRunning(async () => failed(content, call, context), call, context);
}

/**
 * A call answered without running, its `tool.start` sent: its `onToolResult` hook runs inside the call's span (a span
 * it starts, a log line that reads the active one, goes with the call, not into a trace of its own), as a call's that ran.
 * An `onToolResult` hook that throws ends the call for the listeners too, as for a call that ran.
 */
function answeredWithoutRunning(answer: () => Promise<CallOutcome>, call: ToolCall, context: ExecutionContext): Promise<CallOutcome> {
  const seen = () => endsSeen(answer, call, context);
  const { scope } = context;
  return scope ? scope.toolCall({ runner: context.runner, call, tool: { name: call.name }, signal: context.signal, byCaller: context.byCaller, notRun: true }, seen) : seen();
}

async function notFound(call: ToolCall, context: ExecutionContext): Promise<CallOutcome> {
  context.logger.warn(`Tool '${call.name}' (${call.id}) not found`);
  return failed(`Error: Tool '${call.name}' not found${suggestion(call.name, context.tools)}`, call, context);
}

/** What the model is told was under way when a call's validation timed out. */
const VALIDATING = 'its input was validated';

/** The call of a tool the run has, from its input to its result. */
async function answerCall(tool: RunnableTool, call: ToolCall, context: ExecutionContext, held: HeldCall | undefined): Promise<CallOutcome> {
  const { logger } = context;
  const { toolUse } = call;
  // A call that waited for approval, undecided, never started. An agent's call did, whether its sub-agent ran when the
  // snapshot was taken or waits for a call of its own: told 'not run', the model would call it again, its finished calls too.
  const waited = held && !held.agent && !context.decisions.has(toolUse.id);
  const aborted = () => failed(waited ? abortedWaitingText(tool.name) : held?.agent ? abortedText(tool.name) : abortedUnstartedText(tool.name), call, context);
  // A step before the call runs (an async validator, a rule) ended by the run's signal, or by the tool's timeout.
  const notRun = (why: typeof STOPPED | StepTimedOut, step: string) => (why === STOPPED ? aborted() : failed(stepTimedOutText(tool.name, why.ms, step), call, context));
  const timeLimit = tool.timeoutMs ?? context.toolTimeoutMs;
  if (context.signal?.aborted) return aborted();

  let decision: ApprovalDecision | undefined;
  /** The input the onToolCall hook gave in place of the model's, kept with the call if it waits. */
  let given: { given: unknown } | undefined;
  if (held) {
    if ('given' in held) given = { given: held.given };
    // Validated again from what the model (or the onToolCall hook) gave: a snapshot holds the validated
    // input as JSON, which a transform's value (a Date, a Set) does not survive, and may have been changed.
    const checking = validateInput(tool, given ? given.given : toolUse.input);
    // An async validator (a refinement that looks something up) that hangs: the run's signal ends it, and so does the tool's timeout.
    const validated = checking instanceof Promise ? await stepWithin(checking, context.signal, timeLimit) : checking;
    if (validated === STOPPED || validated instanceof StepTimedOut) return notRun(validated, VALIDATING);
    if (!validated.ok) return invalid(validated.message, call, context);
    call.input = validated.value;
    decision = context.decisions.get(toolUse.id);
    // A resumed run with an approver asks it now; a sub-agent's calls are asked by the sub-agent, which borrows it.
    if (!decision && context.askApproval && !held.agent) decision = await askApprover(tool, call, context, given, timeLimit);
    // A sub-agent's call goes on (it asks, or stops for approval, itself) when this run lends it an approver, or when no
    // call inside it waits (it stopped because the approver failed): else it waits for the decisions inside it.
    if (!decision && !(held.agent && (context.askApproval || openApprovals([held]).length === 0))) return waiting(held, call, context);
  } else {
    const checking = validateInput(tool, toolUse.input);
    const validated = checking instanceof Promise ? await stepWithin(checking, context.signal, timeLimit) : checking;
    if (validated === STOPPED || validated instanceof StepTimedOut) return notRun(validated, VALIDATING);
    if (!validated.ok) return invalid(validated.message, call, context);
    call.input = validated.value;
    let override: ToolCallOverride | undefined;
    if (context.hooks?.onToolCall) {
      let returned: unknown;
      try {
        returned = await callHook(context.hooks, 'onToolCall', context.signal, { ...call });
      } catch (error) {
        // The run aborted while the hook ran: the call is answered as aborted, before it started.
        if (error instanceof APIUserAbortError) return failed(abortedUnstartedText(tool.name), call, context);
        throw error;
      }
      override = checkOverride(returned);
    }
    if (override && 'result' in override) {
      const result: BetaToolResultBlockParam = { type: 'tool_result', tool_use_id: toolUse.id, content: override.result };
      return finished(override.isError ? { ...result, is_error: true } : result, call, context);
    }
    if (override && 'input' in override) {
      const replaced = await stepWithin(Promise.resolve(validateInput(tool, override.input)), context.signal, timeLimit);
      if (replaced === STOPPED || replaced instanceof StepTimedOut) return notRun(replaced, VALIDATING);
      if (!replaced.ok) return invalid(replaced.message, call, context, 'the onToolCall hook');
      call.input = replaced.value;
      given = { given: override.input };
    }
    const needed = tool.needsApproval ? await needsApproval(tool, call.input, toolContextFor(toolUse, context, context.signal ?? NEVER_ABORTED), timeLimit) : false;
    if (needed === STOPPED || needed instanceof StepTimedOut) return notRun(needed, 'it was checked whether it needs approval');
    if (needed) {
      decision = context.decisions.get(toolUse.id) ?? (context.askApproval && (await askApprover(tool, call, context, given, timeLimit)));
      if (!decision) return waiting(heldCall(tool, call, given), call, context);
    }
  }
  // Aborted while a person was asked: answered as aborted (it never started), whatever the approver said.
  if (decision && context.signal?.aborted) return failed(abortedUnstartedText(tool.name), call, context);
  if (decision?.decision === 'deny') {
    const timedOut = timedOutMsOf(decision);
    if (timedOut !== undefined) {
      logger.info(`Tool '${tool.name}' (${toolUse.id}) was not run: no decision within ${timedOut} ms`);
      return failed(approvalTimedOutText(tool.name, timedOut), call, context);
    }
    logger.info(`Tool '${tool.name}' (${toolUse.id}) denied${decision.reason ? `: ${decision.reason}` : ''}`);
    return failed(deniedText(tool.name, decision.reason), call, context);
  }
  if (decision?.input !== undefined) {
    const edited = await stepWithin(Promise.resolve(validateInput(tool, decision.input)), context.signal, timeLimit);
    if (edited === STOPPED || edited instanceof StepTimedOut) return notRun(edited, VALIDATING);
    if (!edited.ok) return invalid(edited.message, call, context, 'the approver');
    call.input = edited.value;
  }

  if (context.startOrder) await context.startOrder.turnOf(toolUse.id);
  const outcome = context.limiter ? await context.limiter.run(() => runGuarded(tool, call, context, held, given)) : await runGuarded(tool, call, context, held, given);
  if (outcome.ok) {
    const { value } = outcome;
    // A string is sent as the content, which the API reads as one text block (as the SDK sends it);
    // nothing (a tool run for its side effect) is a result without content, as the SDK sends it too.
    if (typeof value === 'string' || value === undefined) {
      // An empty string is sent as it is, as the SDK sends it.
      return finished(value === undefined ? { type: 'tool_result', tool_use_id: toolUse.id } : { type: 'tool_result', tool_use_id: toolUse.id, content: value }, call, context);
    }
    const kind = invalidResultKind(value);
    if (kind === undefined) return finished({ type: 'tool_result', tool_use_id: toolUse.id, content: value as ToolResultContent }, call, context);
    logger.warn(`Tool '${tool.name}' (${toolUse.id}) returned ${kind} instead of a string or content blocks`);
    return failed(`Error: tool '${tool.name}' returned ${kind}; a tool must return a string (JSON.stringify structured data) or an array of content blocks`, call, context);
  }
  if ('thrown' in outcome) {
    const { thrown } = outcome;
    // A sub-agent (agentTool) stopped for approval: this call waits with it, holding its state.
    if (AgentPending.is(thrown)) return waiting(heldCall(tool, call, given, { snapshot: thrown.snapshot }), call, context);
    // The approver this run lent the sub-agent failed: this run's failure, as for a call of its own;
    // the call is held with the sub-agent's state, so that a retry goes on from it.
    // A durable run's step could not be taken: the run fails (the workflow), the model reads nothing of it.
    if (StepFailed.is(thrown)) throw thrown;
    if (LentFailed.is(thrown)) {
      context.results.keepHeld(heldCall(tool, call, given, { snapshot: thrown.snapshot }));
      // A snapshot taken before the retry holds the sub-agent as it is then: its calls that ran on since are not run again.
      const { now } = thrown;
      if (now) context.results.keepRunning(call.id, () => heldCall(tool, call, given, now()));
      throw thrown.error;
    }
    const cause = isToolError(thrown) ? (thrown as { cause?: unknown }).cause : undefined;
    if (isToolError(thrown) && !(cause instanceof Error)) {
      // The tool's own answer (an MCP `isError` result, say): no stack, nor its text (a result: logged only at debug).
      logger.info(`Tool '${tool.name}' (${toolUse.id}) answered with an error (a ToolError)`);
    } else {
      // A thrown error, or an answer that stands for a failure (a sub-agent's: its cause), with the stack.
      logger.warn(`Tool '${tool.name}' (${toolUse.id}) failed: ${thrownForLog(isToolError(thrown) ? cause : thrown)}`);
    }
    const thrownContent = thrownValueToContent(thrown);
    // A ToolError's content is checked as a result is: blocks of no kind a result holds are said, not sent.
    const badContent = typeof thrownContent === 'string' ? undefined : invalidResultKind(thrownContent);
    const content = badContent === undefined ? thrownContent : `Error: tool '${tool.name}' threw a ToolError whose content is ${badContent}`;
    const cancelled = context.signal?.aborted === true;
    // The tool has finished: a snapshot taken while the hook runs (in it, or by another call) does not run it again.
    if (context.hooks?.onToolError) context.results.keepRan(call.id, errorResult(call.id, content));
    const observed = callHook(context.hooks, 'onToolError', context.signal, thrown, call);
    // The run aborted while the hook ran: the call is answered with its error all the same (a failure, not a cancellation).
    if (observed) await observed.catch((error: unknown) => (error instanceof APIUserAbortError ? undefined : Promise.reject(thrownAfter(errorResult(call.id, content), error))));
    return finished(errorResult(call.id, content), call, context, cancelled);
  }
  logger.warn(`Tool '${tool.name}' (${toolUse.id}) ${stoppedForLog(outcome)}`);
  return failed(stoppedText(tool.name, outcome), call, context);
}

/**
 * Asks the run's approver about a call. The run's signal ends the wait (in line too; the caller then
 * answers the call as aborted); the tool's timeout bounds a question once asked (approver.ts), past
 * it the call is denied as timed out, and the tool then gets its own time.
 */
async function askApprover(tool: RunnableTool, call: ToolCall, context: ExecutionContext, given: { given: unknown } | undefined, timeLimit: number | undefined): Promise<ApprovalDecision> {
  const asked = await runWithGuards((signal) => context.askApproval!(call, ownSignal(signal), timeLimit, given), context.signal, undefined);
  if ('thrown' in asked) {
    if (ApprovalTimedOut.is(asked.thrown)) return { decision: 'deny', timedOutMs: asked.thrown.ms } as TimedOutDecision;
    throw asked.thrown;
  }
  return asked.ok ? (asked.value as ApprovalDecision) : { decision: 'deny' };
}

/** ". Did you mean 'x'?" for a name that differs from a tool's only in case or separators. */
function suggestion(name: string, tools: ReadonlyMap<string, RunnableTool>): string {
  // (A block of a history the caller made may have no name, which the API would refuse: nothing to suggest.)
  if (typeof name !== 'string') return '';
  for (const known of tools.keys()) if (plainName(known) === plainName(name)) return `. Did you mean '${known}'?`;
  return '';
}

/** Runs the tool with its signal: aborted by the runner, or by its timeout (which starts now). */
function runGuarded(tool: RunnableTool, call: ToolCall, context: ExecutionContext, held: HeldCall | undefined, given: { given: unknown } | undefined): Promise<RunOutcome> {
  if (context.logger.enabled('debug')) {
    context.logger.debug(`Running tool '${call.name}' (${call.id}) with input ${safeJson(call.input)}`);
  }
  const timeoutMs = tool.timeoutMs ?? context.toolTimeoutMs;
  // An agent tool, or one that holds a sub-agent's state (an agent tool spread into another object, or wrapped).
  if (!isAgentTool(tool) && !held?.agent) return runWithGuards((signal) => tool.run(call.input, toolContextFor(call.toolUse, context, signal)), context.signal, timeoutMs);
  // A sub-agent ends as soon as its signal aborts: stopped once it runs, it is let end, so that its events come before
  // its call's end (stopped before, while its params are made say, there is nothing to wait for).
  let runs = false;
  const run = (signal: AbortSignal) =>
    tool.run(call.input, Object.assign(toolContextFor(call.toolUse, context, signal), agentContext(tool, call, context, held, given, (now) => (runs = now))));
  return runWithGuards(run, context.signal, timeoutMs, () => runs);
}

/** An agent tool's context: the state its sub-agent goes on from, and where it tells that it runs (agent-link.ts). */
function agentContext(tool: RunnableTool, call: ToolCall, context: ExecutionContext, held: HeldCall | undefined, given: { given: unknown } | undefined, runs: (now: boolean) => void) {
  const running: AgentRunning = (state) => {
    runs(state !== undefined);
    context.results.keepRunning(call.id, state && (() => heldCall(tool, call, given, state())));
  };
  return { [AGENT_RESUME]: held?.agent, [AGENT_RUNNING]: running };
}

function toolContextFor(toolUse: BetaToolUseBlock, context: ExecutionContext, signal: AbortSignal): ToolContext {
  const made = withOwnSignal<ToolContext>({ toolUse, toolUseBlock: toolUse, signal, iteration: context.iteration, runner: context.runner, idempotencyKey: toolUse.id });
  const order = context.startOrder;
  return order ? Object.assign(made, { [STEP_STARTED]: () => order.pass(toolUse.id) }) : made;
}
