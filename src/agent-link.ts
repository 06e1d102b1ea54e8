/**
 * What a parent run lends the sub-agents its tools start (`agentTool`, agent-tool.ts), without
 * the core knowing about agents: its client, its listeners, its approver, its usage. And the two
 * signals between a sub-agent's tool and the parent's calls: a sub-agent stopped for approval
 * (`AgentPending`), what the parent lent it failed (`LentFailed`), and the state it goes on from
 * (`AGENT_RESUME` on the tool context).
 */
import type { Approver } from './approval.js';
import type { ClientLike } from './client.js';
import type { RunnerEvent, RunnerListener } from './events.js';
import type { FallbackEntry } from './fallback.js';
import type { Logger } from './log.js';
import type { RunScope } from './scope.js';
import type { RunnerSnapshot } from './snapshot.js';
import type { RunnableTool, Runner } from './surface.js';
import type { Usage } from './usage.js';

// The keys are registered symbols: a program that loads both the ESM and the CommonJS build (an ESM
// `agentTool` run by a CommonJS `tool-runner/dbos`, say) has two copies of this module, which must agree
// on them. `v1` names the shape of what they carry.

/** The key of a runner's link (a method, so a run without sub-agents makes nothing). */
export const AGENT_LINK: unique symbol = Symbol.for('tool-runner.agentLink.v1');

/** The key, on a tool's context, of the state of a sub-agent that waited for approval (or ran when a snapshot was taken) and now goes on. */
export const AGENT_RESUME: unique symbol = Symbol.for('tool-runner.agentResume.v1');

/**
 * The key, on an agent tool's context, of where its sub-agent tells the parent's call that it runs
 * (its state, read when the parent takes a snapshot) or no longer does (`undefined`): a snapshot taken
 * while it runs goes on inside it, its finished calls not run again.
 */
export const AGENT_RUNNING: unique symbol = Symbol.for('tool-runner.agentRunning.v2');

/**
 * Tells the parent's call that its sub-agent runs, with its state and the usage of it the parent has
 * counted (what it spent before it waited for approval, say), or that it no longer does.
 */
export type AgentRunning = (state: (() => { snapshot: RunnerSnapshot; counted: Usage }) | undefined) => void;

/**
 * The key of an agent tool's durable form (`tool-runner/dbos`): the same agent whose sub-agent's
 * requests and tool calls are steps of the parent's workflow, instead of one step for the whole call.
 */
export const AGENT_DURABLE: unique symbol = Symbol.for('tool-runner.agentDurable.v1');

/** An agent tool (`agentTool()`), which has a durable form. */
export function isAgentTool(entry: unknown): boolean {
  return typeof entry === 'object' && entry !== null && AGENT_DURABLE in entry;
}

/**
 * The key of an agent tool's check of its options against the client its sub-agent will run on, when it has none of its
 * own: made without a client, an option of the caller's own (for middleware) could not be told from a mistake.
 */
export const AGENT_OPTIONS_CHECK: unique symbol = Symbol.for('tool-runner.agentOptionsCheck.v1');

/** Checks the agent tools among `tools` against the run's client, when the run is made (the model would read the mistake at the call). */
export function checkAgentOptions(tools: unknown, client: unknown): void {
  if (!Array.isArray(tools)) return;
  for (const entry of tools) (entry as { [AGENT_OPTIONS_CHECK]?: (client: unknown) => void } | null)?.[AGENT_OPTIONS_CHECK]?.(client);
}

/** Why a durable run takes no toolset (`BetaRunnableToolset`), its own or a sub-agent's. */
export const TOOLSETS_NOT_DURABLE =
  'toolsets (BetaRunnableToolset) are not supported in durable runs yet: their calls would not be steps, and a recovery would run them again; pass their tools as plain tools';

/** Why a durable run takes no tool source (an MCP server's toolset), its own or a sub-agent's. */
// (How to pass their tools said in so many words: nothing else told a user holding an `mcpToolset()` how to get them.)
export const TOOL_SOURCES_NOT_DURABLE =
  'tool sources (MCP) are not supported in durable runs yet; pass their tools as plain tools, listed once when the worker starts: tools: await source.tools() (an MCP toolset calls the server its worker connected, in a recovery too)';

/**
 * Why a durable run takes no approver or abort signal (`options.approve`, `options.signal`, `options.requestOptions.signal`),
 * its own or a sub-agent's: the first of them `options` holds, or undefined.
 */
export function notDurableOptionIn(options: { approve?: unknown; signal?: unknown; requestOptions?: unknown }): string | undefined {
  for (const key of ['approve', 'signal'] as const) if (options[key] !== undefined) return notDurableOption(`options.${key}`, key);
  const request = options.requestOptions as { signal?: unknown } | null | undefined;
  // A request's own signal would abort the model request, a step: the workflow would fail for good.
  if (typeof request === 'object' && request !== null && request.signal != null) return notDurableOption('options.requestOptions.signal', 'signal');
  return undefined;
}

function notDurableOption(name: string, key: 'approve' | 'signal'): string {
  return `${name} is not available in a durable run; ${key === 'approve' ? 'decide calls with durableApprovals()' : 'cancel the run with DBOS.cancelWorkflow(id)'}`;
}

/** Why a durable run with agent tools takes no `options.concurrency`, its own or a sub-agent's. */
export const CONCURRENCY_NOT_DURABLE =
  'options.concurrency with agent tools is not available in a durable run (a call waiting for its turn would start its step at a moment recovery cannot replay)';

/** How a durable run makes a sub-agent's requests and tools steps. */
export interface AgentSteps {
  /** `client` (a step client's own client, if it is one) with its requests as steps named `name` (`model request` unless given). */
  client(client: ClientLike, name?: string): ClientLike;
  /** `tool` with its calls as steps, each bounded by the tool's own `timeoutMs`, else by `toolTimeoutMs` (the sub-agent's), else by the run's. */
  tool<T>(tool: T, toolTimeoutMs?: number): T;
  /** The sub-agent's runner: its changes refused in its tools' steps, the tools added to it (by a listener) steps. */
  runner(sub: Runner, toolTimeoutMs?: number): void;
}

/** What a parent run lends its sub-agents. */
export interface AgentLink {
  readonly client: ClientLike;
  /** The parent's listeners (its own `onEvent`), when something listens. */
  readonly emit: ((event: RunnerEvent) => void) | undefined;
  /** The parent's `onEvent` as given (a sub-agent's own listeners that already hear the parent are not added twice). */
  readonly onEvent?: RunnerListener | RunnerListener[] | undefined;
  /** The scope the parent's listeners carry (`tool-runner/otel`'s): the sub-agent's requests and tools run in it too. */
  readonly scope: RunScope | undefined;
  /** The parent's `options.approve`, as the parent asks it: one question at a time, timed (approver.ts). */
  readonly approve: Approver | undefined;
  /** The parent's run's signal now (a call's may be its timeout's): it stops a sub-agent's calls that run on after the approver failed. */
  readonly signal?: AbortSignal | undefined;
  /** The parent yields streams (`stream: true`). */
  readonly streaming: boolean;
  /** The parent's `options.fallback`: a sub-agent on the parent's client, with none of its own, falls back as the parent does. */
  readonly fallback: FallbackEntry[] | undefined;
  /** The parent's `options.logger`: a sub-agent with none of its own logs where the run does. */
  readonly logger?: Logger | undefined;
  /** Adds a sub-agent's usage to the parent's `runner.usage`. */
  addUsage(usage: Usage): void;
  /** With the parent's `budget.maxTokens`: the tokens its run has left (a sub-agent's usage is the run's), and a call's answer once none are. */
  tokensLeft?(): { left: number; notRun: (name: string) => string } | undefined;
  /** The runnable tools this run added with `addTools()` (a sub-agent resumed in this process is given them again). */
  added(): RunnableTool[];
}

const PENDING_BRAND = Symbol.for('tool-runner.agentPending.v1');

/** Thrown by a sub-agent's tool when the sub-agent stopped for approval: the parent's call waits with it. */
export class AgentPending extends Error {
  readonly [PENDING_BRAND] = true;

  constructor(readonly snapshot: RunnerSnapshot) {
    super('The sub-agent waits for approval');
    this.name = 'AgentPending';
  }

  /** By its brand, not `instanceof`: the thrower may be the other build's copy of this module (see above). */
  static is(value: unknown): value is AgentPending {
    return hasBrand(value, PENDING_BRAND);
  }
}

const STEP_FAILED_BRAND = Symbol.for('tool-runner.durableStepFailed.v1');

/**
 * Thrown by a durable run's tool or model request when its step could not be taken (DBOS found another step recorded
 * in its place, the workflow was cancelled or is run elsewhere, its record could not be written): no result of the
 * tool's or reply of the model's, the run's failure with `error` (a sub-agent's too, up to the workflow), never a
 * result the model reads.
 */
export class StepFailed extends Error {
  readonly [STEP_FAILED_BRAND] = true;

  constructor(
    readonly error: unknown,
    what = 'a tool call',
  ) {
    super(`The step of ${what} could not be taken`);
    this.name = 'StepFailed';
  }

  /** By its brand, not `instanceof`: the thrower may be the other build's copy of this module. */
  static is(value: unknown): value is StepFailed {
    return hasBrand(value, STEP_FAILED_BRAND);
  }
}

const LENT_FAILED_BRAND = Symbol.for('tool-runner.agentLentFailed.v1');

/**
 * Thrown by a sub-agent's tool when what the parent lent it failed (the parent's approver threw, or
 * answered nonsense): the parent's run fails with `error`, as it does for a call of its own.
 */
export class LentFailed extends Error {
  readonly [LENT_FAILED_BRAND] = true;

  /**
   * `snapshot`: the sub-agent as it stopped, which a retry of the parent's call goes on from (its finished calls not run again).
   * `now`: its state as it is when the parent's snapshot is taken (the calls of its reply run on after the failure), with
   * the usage of it the parent's holds.
   */
  constructor(
    readonly error: unknown,
    readonly snapshot: RunnerSnapshot,
    readonly now?: () => { snapshot: RunnerSnapshot; counted: Usage },
  ) {
    super("The parent's approver failed");
    this.name = 'LentFailed';
  }

  /** By its brand, not `instanceof`: the thrower may be the other build's copy of this module (see above). */
  static is(value: unknown): value is LentFailed {
    return hasBrand(value, LENT_FAILED_BRAND);
  }
}

/** Whether `value` carries `brand` (set by a class of this module, in either build's copy). */
function hasBrand(value: unknown, brand: symbol): boolean {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}
