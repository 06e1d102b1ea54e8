/**
 * How one call ends: its result cut to size and shown to the `onToolResult` hook, then kept and told to observers
 * (`tool.end`); a failure as an `is_error` result; a call held while it waits for a decision.
 */
import { APIUserAbortError } from '@anthropic-ai/sdk';
import type { RunnerEvent } from './events.js';
import { type ToolCall, callHook } from './hooks.js';
import { copied, errorResult, textOnlyError } from './history.js';
import { setContentToSend } from './result-sent.js';
import { safeJson } from './described.js';
import { withoutRetryHint } from './schema.js';
import type { CallOutcome, ExecutionContext } from './execution-context.js';
import type { HeldCall } from './snapshot.js';
import type { RunnableTool } from './surface.js';
import type { BetaToolResultBlockParam, ToolResultContent } from './types.js';
import { cutText } from './cut.js';

/** The call's answer, whose failure (a hook, the approver, a validator threw) listeners see end the call too. */
export async function endsSeen(answer: () => Promise<CallOutcome>, call: ToolCall, context: ExecutionContext): Promise<CallOutcome> {
  try {
    return await answer();
  } catch (error) {
    context.emit?.({ type: 'tool.end', runner: context.runner, call, error });
    throw error;
  }
}

/** The results of calls whose tool had finished when a hook threw, by the error: a retry runs only the hooks. */
const resultsBefore = new WeakMap<object, BetaToolResultBlockParam>();

/** The result a call's tool produced before `error` (a hook's) was thrown; none if the tool had not finished. */
export function resultBeforeFailure(error: unknown): BetaToolResultBlockParam | undefined {
  return typeof error === 'object' && error !== null ? resultsBefore.get(error) : undefined;
}

export function thrownAfter(result: BetaToolResultBlockParam, error: unknown): unknown {
  if (typeof error === 'object' && error !== null) resultsBefore.set(error, result);
  return error;
}

/**
 * The call's result as it is sent: cut to size, shown to the `onToolResult` hook, then to observers
 * (once: a hook that throws ends the call with its error instead, `endsSeen`).
 */
export function finished(
  result: BetaToolResultBlockParam,
  call: ToolCall,
  context: ExecutionContext,
  // Cut short by an abort, or not, as the result came: a tool that failed before the run aborted (while a hook ran) failed.
  cancelled = result.is_error === true && context.signal?.aborted === true,
): CallOutcome | Promise<CallOutcome> {
  if (result.is_error && result.content !== undefined) result.content = textOnlyError(result.content);
  const uncut = setContentToSend(result, context.maxToolResultChars);
  if (context.logger.enabled('debug')) context.logger.debug(`Tool '${call.name}' (${call.id}) result: ${safeJson(result)}`);
  if (!context.hooks?.onToolResult) return ended(result, call, context, cancelled);
  // The result as the tool gave it, for a retry or a snapshot taken meanwhile: its blocks copied, as the hook may change
  // the ones it is given in place (a block it pushed, a text it marked) and then throw, and the retry would do it again.
  // Block by block: the list may be one `structuredClone` refuses (a store's reactive Proxy), which the run sends all the same.
  const ran = { ...result, content: Array.isArray(uncut) ? uncut.map(copied) : uncut } as BetaToolResultBlockParam;
  context.results.keepRan(call.id, ran);
  const observed = callHook(context.hooks, 'onToolResult', context.signal, result, call)!;
  return observed.then(
    () => ended(result, call, context, cancelled),
    // The run aborted while the hook ran: the call is answered with its result all the same (the run then
    // rejects). A hook that failed: a retry cuts it again, the result as the tool gave it.
    (error: unknown) => (error instanceof APIUserAbortError ? ended(result, call, context, cancelled) : Promise.reject(thrownAfter(ran, error))),
  );
}

function ended(result: BetaToolResultBlockParam, call: ToolCall, context: ExecutionContext, cancelled: boolean): CallOutcome {
  if (context.emit) {
    context.results.keepSettled(call.id, result);
    context.emit(toolEnd(call, result, context, cancelled));
  }
  return cancelled ? { result, cancelled } : { result };
}

/** The `tool.end` of a call with its result; `cancelled`: an error result made once the call's signal aborted. */
export function toolEnd(call: ToolCall, result: BetaToolResultBlockParam, context: ExecutionContext, cancelled: boolean): RunnerEvent {
  return cancelled
    ? { type: 'tool.end', runner: context.runner, call, result, cancelled: true }
    : { type: 'tool.end', runner: context.runner, call, result };
}

/** The issues an invalid input's message names, for the log: on one line, at most 300 characters. */
function issuesText(message: ToolResultContent): string {
  const whole = typeof message === 'string' ? message : message.map((block) => (block.type === 'text' ? block.text : '')).join(' ');
  // (Without the hint to the model, which means nothing in a log.)
  const text = withoutRetryHint(whole).replace(/\s+/g, ' ').trim();
  return text ? `: ${text.length > 300 ? `${cutText(text, 299)}…` : text}` : '';
}

export function failed(content: ToolResultContent, call: ToolCall, context: ExecutionContext): CallOutcome | Promise<CallOutcome> {
  return finished(errorResult(call.id, content), call, context);
}

/** `editor`: who replaced the model's input (the approver, a hook); the model is told the invalid input was not its own. */
export function invalid(message: ToolResultContent, call: ToolCall, context: ExecutionContext, editor?: string): CallOutcome | Promise<CallOutcome> {
  const issues = issuesText(message);
  if (!editor) {
    context.logger.warn(`Tool '${call.name}' (${call.id}) got invalid input${issues}`);
    return failed(message, call, context);
  }
  context.logger.warn(`Tool '${call.name}' (${call.id}): the input ${editor} gave is invalid (it is validated as the model's input is, before the schema's transforms: start from call.toolUse.input); the call was not run${issues}`);
  // Not "fix the input and call again": the model's own input was not the one rejected.
  const note = `Error: ${editor} replaced the input of this call with one that is not valid, so the call was not run.`;
  return failed(typeof message === 'string' ? `${note}\n${withoutRetryHint(message)}` : [{ type: 'text', text: note }, ...message], call, context);
}

/** The call as it is held while it waits: its input, the hook's (`given`), a sub-agent's state for an agent tool's call. */
export function heldCall(tool: RunnableTool, call: ToolCall, given: { given: unknown } | undefined, agent?: HeldCall['agent']): HeldCall {
  return { id: call.toolUse.id, name: tool.name, input: call.input, toolUse: call.toolUse, ...given, ...(agent && { agent }) };
}

export function waiting(pending: HeldCall, call: ToolCall, context: ExecutionContext): CallOutcome {
  // Kept at once: a snapshot taken before the reply's other calls end (in a listener, a hook) holds it.
  context.results.keepHeld(pending);
  context.emit?.({ type: 'tool.end', runner: context.runner, call, pending: true });
  return { pending };
}
