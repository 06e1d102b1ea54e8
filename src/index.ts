/**
 * tool-runner: the agentic loop around the Anthropic Messages API.
 *
 * @example
 * ```ts
 * const runner = toolRunner(new Anthropic(), { model, max_tokens: 1024, messages, tools: [getWeather] });
 * for await (const message of runner) console.log(message.content);
 * ```
 */
import type { ClientLike } from './client.js';
import type { RunnerParams, ToolEntry } from './surface.js';
import type { CallOf } from './tool.js';
import type { ToolRunnerOptions } from './options.js';
import type { OutputOf, OutputSchema } from './output.js';
import type { AnyCall } from './types.js';
import type { BetaMessageThread } from '@anthropic-ai/sdk/lib/threads/BetaMessageThread';
import { ToolRunner } from './runner.js';
import { isMessageThread, overMessageThread } from './sdk-thread.js';
import type { RunnerSettings } from './settings.js';

/**
 * Starts the agentic loop: a `ToolRunner` to iterate (each assistant message, or its stream with
 * `stream: true`) or to `await` (the last message). Nothing is sent until you do either. The first
 * argument may also be an SDK `BetaMessageThread`, with the runner's settings as the second (the
 * SDK's `new BetaToolRunner(thread, settings)`): the run goes over that thread.
 *
 * @example
 * ```ts
 * const final = await toolRunner(client, { model: 'claude-sonnet-5-5', max_tokens: 1024, messages, tools });
 * ```
 */
export function toolRunner<const Output extends OutputSchema | undefined = undefined>(
  thread: BetaMessageThread<any>,
  settings: ThreadSettings & { stream: true },
  options?: ToolRunnerOptions<AnyCall, Output>,
): ToolRunner<true, OutputOf<Output>>;
export function toolRunner<const Output extends OutputSchema | undefined = undefined>(
  thread: BetaMessageThread<any>,
  settings?: ThreadSettings & { stream?: false | undefined },
  options?: ToolRunnerOptions<AnyCall, Output>,
): ToolRunner<false, OutputOf<Output>>;
export function toolRunner<const Output extends OutputSchema | undefined = undefined>(
  thread: BetaMessageThread<any>,
  settings?: ThreadSettings,
  options?: ToolRunnerOptions<AnyCall, Output>,
): ToolRunner<boolean, OutputOf<Output>>;
// The client forms last: `Parameters<typeof toolRunner>` takes the last overload.
export function toolRunner<Tools extends ToolEntry[] = ToolEntry[], const Output extends OutputSchema | undefined = undefined>(
  client: ClientLike,
  params: RunnerParams & { tools?: Tools | undefined; stream: true },
  options?: ToolRunnerOptions<CallOf<Tools>, Output>,
): ToolRunner<true, OutputOf<Output>>;
export function toolRunner<Tools extends ToolEntry[] = ToolEntry[], const Output extends OutputSchema | undefined = undefined>(
  client: ClientLike,
  params: RunnerParams & { tools?: Tools | undefined; stream?: false | undefined },
  options?: ToolRunnerOptions<CallOf<Tools>, Output>,
): ToolRunner<false, OutputOf<Output>>;
export function toolRunner<Tools extends ToolEntry[] = ToolEntry[], const Output extends OutputSchema | undefined = undefined>(
  client: ClientLike,
  params: RunnerParams & { tools?: Tools | undefined },
  options?: ToolRunnerOptions<CallOf<Tools>, Output>,
): ToolRunner<boolean, OutputOf<Output>>;
export function toolRunner(
  clientOrThread: ClientLike | BetaMessageThread<any>,
  paramsOrSettings: RunnerParams | ThreadSettings = {},
  options?: ToolRunnerOptions<any, any>,
): ToolRunner<boolean, unknown> {
  if (isMessageThread(clientOrThread)) {
    const { client, params } = overMessageThread(clientOrThread, paramsOrSettings as ThreadSettings);
    return new ToolRunner(client, params, options);
  }
  return new ToolRunner(clientOrThread as ClientLike, paramsOrSettings as RunnerParams, options);
}

/** The settings of a run over an SDK `BetaMessageThread` (its params are the thread's). */
export type ThreadSettings = Omit<RunnerSettings, 'thread'>;

export { ToolRunner } from './runner.js';
export type { RunnerItem } from './runner.js';
export type { ToolRunnerOptions } from './options.js';
export { resumeToolRunner } from './resume.js';
export type { RunnerSnapshot } from './snapshot.js';
export type { ThreadSnapshot } from './thread.js';
export type { ApprovalContext, ApprovalDecision, ApprovalRequest, Approver, PendingApproval } from './approval.js';
export { HookError } from './hooks.js';
export { OutputError, ReplyError, ValidatorError } from './errors.js';
export { ContextOverflowError } from './context-overflow.js';
export type { FallbackEntry } from './fallback.js';
export type { OutputOf, OutputSchema } from './output.js';
export type { Budget, LoopGuardOptions, OnLimit, RunControlOptions } from './run-control-options.js';
export type { StoppedBy } from './stop-reason.js';
export type { RunnerEvent, RunnerListener } from './events.js';
export type { RunScope, ScopedCall, ScopedOutcome } from './scope.js';
export type { Hooks, RequestParams, ToolCall, ToolCallOverride } from './hooks.js';
export { tool, isRunnableTool } from './tool.js';
export { agentTool } from './agent-tool.js';
export type { AgentToolOptions } from './agent-tool.js';
export type { CallOf, InferInput, ToolInput, ToolOptions } from './tool.js';
export type { AnyTool, ExtraToolFields, NeedsApproval, RunnableTool, Runner, RunnerParams, RunnerParamsCopy, RunnerParamsRead, ToolContext, ToolEntry, ToolSource } from './surface.js';
export { ToolError } from './tool-error.js';
export { historyProblems } from './history-problems.js';
export { textOf } from './text.js';
export type { RunnerSettings } from './settings.js';
export type { CompactionControl } from './compaction.js';
export type { ClientLike, MessagesApi, RequestOptions } from './client.js';
export type { Logger, LogLevel } from './log.js';
export type { Usage } from './usage.js';
export type { JsonObjectSchema, ValidationIssue } from './schema.js';
export type { AnyCall, Promisable, ToolResultContent, ToolResultContentBlock, ToolResultMessage } from './types.js';
