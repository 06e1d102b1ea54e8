/**
 * What a parent run lends its sub-agent (an `agentTool`'s run) through the sub-agent's options: its listeners (the
 * events forwarded with the agent's name in their path, each listener hearing each event once), its approver (whose
 * failures are the parent's), its fallback entries (client and model only) and its logger.
 */
import type { AgentLink } from './agent-link.js';
import { type Approver, askedBy, checkDecision } from './approval.js';
import { ApprovalTimedOut, lentApprover } from './approver.js';
import type { ClientLike } from './client.js';
import { type RunnerEvent, type RunnerListener, forwardedEvent } from './events.js';
import type { FallbackEntry } from './fallback.js';
import { HookError } from './hooks.js';
import type { ToolRunnerOptions } from './options.js';
import type { RunScope } from './scope.js';
import type { Runner, ToolContext } from './surface.js';

/** What the options lent depend on of the agent: its name, whether it has a client of its own, its own options. */
export interface LendingTo {
  name: string;
  client: ClientLike | undefined;
  options: ToolRunnerOptions;
}

/**
 * The parent's fallback entries as its sub-agent falls back on them: their clients and models only. An entry of
 * neither (the parent's `{ max_tokens }`, `{ speed }`) lends nothing: it would send the sub-agent's failed request
 * again, as it was, to the client that just failed it (its own retries again, in an outage).
 */
function lentEntries(entries: readonly FallbackEntry[]): FallbackEntry[] {
  const lent: FallbackEntry[] = [];
  for (const { client, model } of entries) if (client !== undefined || model !== undefined) lent.push({ ...(client !== undefined && { client }), ...(model !== undefined && { model }) });
  return lent;
}

/**
 * The sub-agent's options: its own (its signal left to the call), the parent's listeners (events get the
 * path), approver, conversation id (`requestOptions.openTelemetry`) and (on the parent's client) fallback. The approver failing (throwing, answering nonsense) goes in `lentFailure`: the
 * parent's failure, not the sub-agent's.
 */
export function subOptions(agent: LendingTo, link: AgentLink | undefined, { toolUse, runner }: ToolContext, lentFailure: { error?: unknown }): ToolRunnerOptions {
  const own = agent.options;
  // Its signal is set by the call (`runAgent`): the call's and the agent's own, tied.
  const { signal: _setByTheCall, ...options }: ToolRunnerOptions = own;
  if (link?.emit) {
    // A listener given to the parent and to the agent too (one `openTelemetry()`, one inspector) hears each event once, forwarded.
    const heard = heardBy(link.onEvent);
    options.onEvent = [forwarder(agent.name, { id: toolUse.id, runner }, link.emit, link.scope, heard), ...listeners(own.onEvent).filter((listener) => !heard.has(listener))];
  }
  // On the parent's client, it falls back to the parent's clients and models (an outage of the primary reaches it too), unless it
  // has a fallback of its own; the parent's other overrides (its system prompt, its tool_choice) are the parent's requests' own.
  if (!agent.client && own.fallback === undefined && link?.fallback) options.fallback = lentEntries(link.fallback);
  // Its failures (a tool's, with the stack) go to the run's logger, not to the console (the client's) the parent's logger replaced.
  if (own.logger === undefined && link?.logger) options.logger = link.logger;
  const conversation = lentConversation(own.requestOptions, runner);
  if (conversation) options.requestOptions = conversation;
  const approve = link?.approve;
  if (!own.approve && approve) options.approve = lentApprover((call, context) => failuresKept(approve, lentFailure)(askedBy({ ...call, path: [agent.name, ...(call.path ?? [])], callPath: [toolUse.id, ...(call.callPath ?? [])] }, runner), context));
  return options;
}

/**
 * The sub-agent's request options with the parent's `openTelemetry.conversationId` (as it is when the call starts), when it
 * has none of its own: its spans (its `invoke_agent`, `chat` and `execute_tool`, the client's own request spans) are of the
 * parent's conversation, as they are of its trace, as the SDK's session runner gives a session's threads the id it was
 * given. Without it, a backend that groups spans by `gen_ai.conversation.id` left the sub-agent's work out. Undefined: no change.
 */
function lentConversation(own: ToolRunnerOptions['requestOptions'], parent: Runner | undefined): ToolRunnerOptions['requestOptions'] | undefined {
  const id = parent?.requestOptions?.openTelemetry?.conversationId;
  if (typeof id !== 'string' || own?.openTelemetry?.conversationId !== undefined) return undefined;
  return { ...own, openTelemetry: { ...own?.openTelemetry, conversationId: id } };
}

/** `approve`, its failures (not a timeout or an abort: those answer the call) kept in `kept` as the parent reports them. */
function failuresKept(approve: Approver, kept: { error?: unknown }): Approver {
  return async (call, context) => {
    let decision: unknown;
    try {
      decision = await approve(call, context);
    } catch (error) {
      if (!ApprovalTimedOut.is(error) && !context.signal.aborted) kept.error ??= new HookError('approve', error);
      throw error;
    }
    try {
      return checkDecision(decision, call.name);
    } catch (error) {
      kept.error ??= new HookError('approve', error);
      throw error;
    }
  };
}

/**
 * The sub-agent's events, to the parent's listeners, with the agent's name in front of their path
 * (and the id of the call that started it in front of their `callPath`); with the scope they carry,
 * so that the sub-agent's requests and tools run inside their spans.
 */
export function forwarder(name: string, call: { id: string; runner: Runner }, emit: (event: RunnerEvent) => void, scope?: RunScope, heard?: ReadonlySet<RunnerListener>): RunnerListener {
  const forward: RunnerListener = (event) => emit(forwardedEvent(event, name, call.id, call.runner));
  if (heard) Object.defineProperty(forward, HEARD, { value: heard });
  return scope ? Object.assign(forward, { scope }) : forward;
}

/** The key, on a forwarder, of the listeners the events it forwards reach (registered: the ESM and CommonJS builds' copies agree on it, see agent-link.ts). */
const HEARD = Symbol.for('tool-runner.heard.v1');

/** Every listener that hears a run's events: its own, and those its forwarder (a sub-agent's, to its parent) reaches. */
function heardBy(onEvent: ToolRunnerOptions['onEvent']): ReadonlySet<RunnerListener> {
  const heard = new Set<RunnerListener>();
  for (const listener of listeners(onEvent)) {
    const reached = (listener as { [HEARD]?: ReadonlySet<RunnerListener> })[HEARD];
    if (reached) for (const other of reached) heard.add(other);
    else heard.add(listener);
  }
  return heard;
}

function listeners(onEvent: ToolRunnerOptions['onEvent']): RunnerListener[] {
  return onEvent === undefined ? [] : Array.isArray(onEvent) ? onEvent : [onEvent];
}
