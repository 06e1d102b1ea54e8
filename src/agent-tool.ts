/**
 * Agents as tools: `agentTool()` is a tool whose run drives a nested runner (a sub-agent) and
 * answers with its final text, or its typed `output` as JSON. Nothing about the sub-agent escapes
 * the parent: the call's signal stops it (the parent's abort, the tool's timeout), its usage is
 * added to the parent's, its events reach the parent's listeners with a `path`, its approvals wait
 * in the parent (nested-approvals.ts) and its state goes into the parent's snapshot. Built on the
 * public runner; what the parent lends it comes through `AGENT_LINK` (agent-link.ts).
 */
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import { APIUserAbortError } from '@anthropic-ai/sdk';
import {
  AGENT_DURABLE,
  AGENT_LINK,
  AGENT_OPTIONS_CHECK,
  AGENT_RESUME,
  AGENT_RUNNING,
  type AgentLink,
  type AgentRunning,
  AgentPending,
  type AgentSteps,
  CONCURRENCY_NOT_DURABLE,
  LentFailed,
  StepFailed,
  TOOL_SOURCES_NOT_DURABLE,
  TOOLSETS_NOT_DURABLE,
  isAgentTool,
  notDurableOptionIn,
} from './agent-link.js';
import { described, jsonOr, misspeltField, nearNameOr, thrownLine, wrongValue } from './described.js';
import { type ClientLike, canSend } from './client.js';
import type { RunnerEvent } from './events.js';
import { givenClientOf, namedAs } from './fallback.js';
import { onAbort, tie } from './on-abort.js';
import type { ToolRunnerOptions } from './options.js';
import { checkSubOptions } from './agent-options.js';
import { forwarder, subOptions } from './agent-lent.js';
import { resumeToolRunner } from './resume.js';
import { ToolRunner } from './runner.js';
import type { AnySchema } from './schema.js';
import type { HeldCall } from './snapshot.js';
import { unfinishedReply } from './stop-reason.js';
import type { ExtraToolFields, NeedsApproval, RunnableTool, Runner, RunnerParams, ToolContext } from './surface.js';
import { textOf } from './text.js';
import { type InferInput, type Unguessed, tool } from './tool.js';
import { ToolError } from './tool-error.js';
import { isToolSource } from './tool-set.js';
import { isRunnableToolset } from './toolsets.js';
import type { BetaMessage, Promisable } from './types.js';
import { checkToolName } from './tool-name.js';
import { addedToolsHint, resumedTools, withAddedTools } from './agent-resume.js';
import { copySnapshot } from './snapshot-copy.js';
import { keepFailed, takeFailed } from './agent-retry.js';
import { lendTokens } from './agent-budget.js';
import { NO_USAGE, addUsage as sumUsage, usageSince } from './usage.js';

/** The input of an agent tool without `inputSchema`: the task, in words. */
export const AGENT_TASK_SCHEMA = {
  type: 'object',
  properties: { task: { type: 'string', description: 'The task for the agent, with everything it needs to know' } },
  required: ['task'],
  additionalProperties: false,
} as const;

/** The default nesting limit: four sub-agent levels run, a fifth is an `is_error` result. */
export const DEFAULT_MAX_DEPTH = 4;

/** The argument of {@link agentTool}. */
export type AgentToolOptions<S extends AnySchema = typeof AGENT_TASK_SCHEMA> = ExtraToolFields & {
  name: string;
  description: string;
  /** The tool's input (default `{ task: string }`). */
  inputSchema?: S | undefined;
  /** The sub-agent's params for one call: its model, its messages (sent exactly as given), its tools. */
  params: (input: Unguessed<InferInput<S>>, context: ToolContext) => Promisable<RunnerParams>;
  /** The sub-agent's client; the parent's by default. */
  client?: ClientLike | undefined;
  /** The sub-agent's own options (`output`, `budget`, `approve`, `onEvent`, ...); the parent's signal, listeners, approver and `openTelemetry.conversationId` are added. */
  options?: ToolRunnerOptions | undefined;
  /** The most sub-agent levels below the outermost run (default 4); a deeper call is an `is_error` result. */
  maxDepth?: number | undefined;
  needsApproval?: NeedsApproval<Unguessed<InferInput<S>>> | undefined;
  timeoutMs?: number | undefined;
};

/** How deep each sub-agent runs (the outermost run is not in it: depth 0). */
const depths = new WeakMap<object, number>();

/**
 * A tool that runs a sub-agent: the model calls it like any tool, and gets the sub-agent's final
 * text (or its `output` as JSON).
 *
 * @example
 * ```ts
 * const researcher = agentTool({
 *   name: 'researcher',
 *   description: 'Finds facts on a topic and reports them',
 *   params: ({ task }) => ({ model: 'claude-sonnet-5-5', max_tokens: 2048, messages: [{ role: 'user', content: task }], tools: [search] }),
 * });
 * const final = await toolRunner(client, { model, max_tokens: 1024, messages, tools: [researcher] });
 * ```
 */
export function agentTool<const S extends AnySchema = typeof AGENT_TASK_SCHEMA, const Name extends string = string>(
  options: AgentToolOptions<S> & { name: Name },
): RunnableTool<InferInput<S>> & { readonly name: Name } {
  if (typeof options !== 'object' || options === null) throw new TypeError('agentTool() takes an options object');
  const { name, params, client, options: runOptions, maxDepth = DEFAULT_MAX_DEPTH, inputSchema, ...rest } = options;
  if (typeof name !== 'string' || name.length === 0) throw new TypeError('agentTool(): `name` must be a non-empty string');
  checkToolName('agentTool()', name);
  if (typeof options.description !== 'string') throw new TypeError(`agentTool '${name}': \`description\` must be a string`);
  if (typeof params !== 'function') throw new TypeError(`agentTool '${name}': \`params\` must be a function (input, context) => params`);
  if (!Number.isInteger(maxDepth) || maxDepth < 1) throw wrongValue(maxDepth, `agentTool '${name}': \`maxDepth\` must be a positive integer`);
  // Checked now rather than at the first call, where the model would read the mistake as the tool's result.
  if (client !== undefined && !canSend(client)) throw new TypeError(`agentTool '${name}': \`client\` must be an Anthropic client (or Bedrock, Vertex, ...), got ${described(client)}`);
  if ('input_schema' in options) throw new TypeError(`agentTool '${name}': the input's schema is \`inputSchema\` (a zod, Standard Schema or JSON Schema object schema), not \`input_schema\``);
  if (runOptions !== undefined) checkSubOptions(name, runOptions, client);
  // The fields of tool() are checked by tool(); these are agentTool's own, which it would leave out silently.
  // One letter off the short names too (`option`, `clients`, `param`): the sub-agent's options would go unused.
  const slip = misspeltField(rest, ['params', 'client', 'options', 'maxDepth'], nearNameOr('params', 'client', 'options'));
  if (slip) throw new TypeError(`agentTool '${name}': unknown field \`${slip.key}\`. Did you mean \`${slip.meant}\`?`);
  const agent: Agent = { name, params: params as Agent['params'], client, options: runOptions ?? {}, maxDepth, steps: undefined };
  // Made by `tool()` (validated input), untyped here: the generic schema would make the compiler's work explode.
  const make = tool as (options: object) => RunnableTool;
  const agentToolOf = (of: Agent) => {
    const run = of.steps
      ? (input: unknown, context: ToolContext) => oneAtATime(context.runner, () => runAgent(of, input, context))
      : (input: unknown, context: ToolContext) => runAgent(of, input, context);
    const made = make({ ...rest, name, inputSchema: inputSchema ?? AGENT_TASK_SCHEMA, run });
    // On the parent's client (none of its own), an option of the caller's own is known to be one when the parent's run is made.
    if (!of.client && runOptions !== undefined) Object.defineProperty(made, AGENT_OPTIONS_CHECK, { value: (parent: unknown) => checkSubOptions(name, runOptions, parent) });
    // Not an API field: `tool-runner/dbos` asks for the durable form, whose sub-agent's steps are the workflow's.
    Object.defineProperty(made, AGENT_DURABLE, {
      value: (steps: AgentSteps) => {
        // What the run's own options may not hold, the sub-agent's may not either: a decision or an abort would be no step.
        const refused = notDurableOptionIn(of.options);
        if (refused) throw new TypeError(`agentTool '${of.name}': ${refused}`);
        return agentToolOf({ ...of, steps });
      },
    });
    return made;
  };
  return agentToolOf(agent) as RunnableTool<InferInput<S>> & { readonly name: Name };
}

interface Agent {
  name: string;
  params: (input: unknown, context: ToolContext) => Promisable<RunnerParams>;
  client: ClientLike | undefined;
  options: ToolRunnerOptions;
  maxDepth: number;
  /** In a durable run: the sub-agent's requests and tool calls as steps of the workflow. */
  steps: AgentSteps | undefined;
}

/** The sub-agent a durable run's runner runs now (or last): the next one starts after it. */
const durableTurns = new WeakMap<Runner, Promise<unknown>>();

/**
 * In a durable run, the sub-agents one runner calls run one after another, in the order their
 * calls start: their requests and tools are steps of the workflow, numbered as they start, so
 * they must start in the same order when the workflow is recovered. Sub-agents run at once would
 * interleave their steps by timing.
 */
function oneAtATime<T>(runner: Runner, run: () => Promise<T>): Promise<T> {
  const result = (durableTurns.get(runner) ?? Promise.resolve()).then(run);
  durableTurns.set(runner, result.catch(() => undefined));
  return result;
}

/** One call: the sub-agent runs (or goes on from the state it waited for approval in) to its end. */
async function runAgent(agent: Agent, input: unknown, called: ToolContext | undefined): Promise<string> {
  // Run by another runner (the SDK's), or called directly: a context of its own, with no parent to borrow from.
  const context = called?.runner ? called : standaloneContext(called);
  const depth = (depths.get(context.runner) ?? 0) + 1;
  if (depth > agent.maxDepth) {
    throw new ToolError(`Error: the agent '${agent.name}' was not run: it would be sub-agent level ${depth}, past its maxDepth of ${agent.maxDepth}.`);
  }
  const link = linkOf(context.runner);
  const { steps } = agent;
  // The parent's client is already a durable run's step client; a client of the agent's own becomes one, named as that client
  // (a fallback entry given it sends with the sub-agent's client: its reply's container is the sub-agent's, as without durability).
  const client = agent.client ? (steps ? namedAs(steps.client(agent.client), agent.client) : agent.client) : link?.client;
  if (!client) throw new Error(`agentTool '${agent.name}': no client (give one, or run the tool in a tool runner)`);
  const given = await agent.params(input, context);
  // Nothing (a block body that forgot its `return`): the model read "Cannot read properties of undefined (reading 'tools')".
  if (typeof given !== 'object' || given === null) {
    throw new ToolError(`Error: the agent '${agent.name}' was not run: its params function returned ${described(given)}; it returns the sub-agent's params, ({ task }) => ({ model, max_tokens, messages })`);
  }
  // The call was aborted (or timed out) while its params were made: the sub-agent does not start.
  if (context.signal?.aborted) throw new APIUserAbortError();
  const params = steps ? durableParams(agent, given, steps) : given;
  const streaming = link?.streaming === true && link.emit !== undefined;
  const resumed = (context as { [AGENT_RESUME]?: HeldCall['agent'] })[AGENT_RESUME];
  const resume = resumed?.snapshot;
  // The run in which the parent's approver failed, in this process: iterated again, it uses what its calls did since.
  const failed = steps ? undefined : takeFailed(resume);
  const lentFailure: { error?: unknown } = failed?.lentFailure ?? {};
  delete lentFailure.error;
  // A signal of the sub-agent's own, tied to the call's and to the agent's `options.signal`: the listener the SDK adds
  // for each request is on it, not on the run's signal, which a dozen sub-agents at once would make Node warn about.
  // Untied when the call ends (never `AbortSignal.any`, which both signals would keep for as long as they live).
  const signals = [context.signal, agent.options.signal].filter((signal): signal is AbortSignal => signal != null);
  const own = failed?.own ?? new AbortController();
  // Streamed for the parent's listeners, a sub-agent resumed from a state that was not streamed too.
  let sub: ToolRunner<boolean>;
  if (failed) sub = failed.sub as ToolRunner<boolean>;
  else {
    const options = steps ? durableOptions(subOptions(agent, link, context, lentFailure), client, steps) : subOptions(agent, link, context, lentFailure);
    // A sub-agent the parent's budget has no tokens left for is not run.
    lendTokens(options, link, agent.name, resume && (resumed.counted ?? resume.usage));
    if (signals.length > 0) options.signal = own.signal;
    try {
      sub = resume
        ? resumeToolRunner(client, streaming && !resume.params.stream ? { ...resume, params: { ...resume.params, stream: true } } : resume, { tools: resumedTools(resume, params.tools ?? []), options })
        : new ToolRunner(client, streaming && !params.stream ? { ...params, stream: true } : params, options);
    } catch (error) {
      // Params the runner refuses: the call fails, naming the agent (the runner's error alone, "toolRunner: params.messages
      // must be an array", read as the parent's params, and the model was not told that the agent never ran).
      if (!resume) throw new ToolError(`Error: the agent '${agent.name}' was not run: the params its params function gave are refused: ${thrownLine(error)}`, { cause: error });
      throw new ToolError(`Error: the agent '${agent.name}' could not go on from where it stopped: ${thrownLine(error)}${addedToolsHint(resume, error)}`, { cause: error });
    }
    depths.set(sub, depth);
    // In a durable run: a tool added to it (by an onEvent listener: its tools' steps may not) is a step, as its own tools are.
    steps?.runner(sub, agent.options.toolTimeoutMs);
  }
  const unties = signals.map((signal) => tie(own, signal));
  // The sub-agent's usage goes to the parent when it ends, or at once when the parent stops waiting
  // for it (an abort, the call's timeout): the parent's usage then already holds what it spent. A
  // sub-agent that ran when the parent's snapshot was taken had told the parent only of `counted`.
  // (A snapshot's, as JSON: its optional fields filled in.)
  let counted = failed ? failed.counted() : resumed?.counted ? sumUsage(NO_USAGE, resumed.counted) : sub.usage;
  // A snapshot the parent takes while the sub-agent runs holds its state: resumed, it goes on inside it.
  const running = (context as { [AGENT_RUNNING]?: AgentRunning })[AGENT_RUNNING];
  running?.(() => ({ snapshot: withAddedTools(sub.toJSON(), sub[AGENT_LINK]().added()), counted }));
  const addUsage = () => {
    const now = sub.usage;
    link?.addUsage(usageSince(now, counted));
    counted = now;
  };
  // One listener on the run's signal however many sub-agents run at once (`onAbort`).
  const stopWaiting = context.signal ? onAbort(context.signal, addUsage) : undefined;
  let final: BetaMessage;
  try {
    final = streaming ? await streamed(sub, agent.name, { id: context.toolUse.id, runner: context.runner }, link!.emit!) : await sub.runUntilDone();
  } catch (error) {
    if (StepFailed.is(error)) throw error;
    if ('error' in lentFailure) {
      if (steps) throw new LentFailed(lentFailure.error, stateOf(sub));
      // The calls of its reply that run on are stopped by the parent's run's signal (the call's may be its timeout's, untied
      // once the call ends) and the agent's own, as the parent's own calls that run on are: tied until a retry takes the run.
      const kept = [link?.signal, agent.options.signal].flatMap((signal) => (signal ? [tie(own, signal)] : []));
      const untie = () => kept.forEach((untieOne) => untieOne());
      throw new LentFailed(lentFailure.error, keepFailed(stateOf(sub), { sub, own, lentFailure, counted: () => counted, untie }), () => ({ snapshot: stateOf(sub), counted }));
    }
    // The model reads why; the log has the failure with its stack (the ToolError's cause).
    throw new ToolError(`Error: the agent '${agent.name}' failed: ${thrownLine(error)}`, { cause: error });
  } finally {
    running?.(undefined);
    stopWaiting?.();
    for (const untie of unties) untie();
    addUsage();
  }
  if (sub.stoppedBy === 'approval') {
    // Run by another runner (the SDK's): nothing would ever ask about the call, the model is told why.
    if (!link) throw new ToolError(`Error: the agent '${agent.name}' stopped: a call of its own needs approval, and no tool-runner run is there to ask about it. Give the agent options.approve, or run it with toolRunner().`);
    throw new AgentPending(stateOf(sub));
  }
  // An output JSON cannot carry (a transform's BigInt, a cycle) goes as the answer's own text, which the schema took.
  if (sub.output !== undefined) return jsonOr(sub.output, () => textOf(final));
  // Stopped by a limit of its own while it still asked for tools (or had paused its turn), or its last
  // reply cut off or refused: it did not finish, and the model is told.
  const stoppedMidTask = final.stop_reason === 'tool_use' || (final.stop_reason === 'pause_turn' && sub.stoppedBy !== 'model');
  const unfinished = stoppedMidTask ? limitOf(sub.stoppedBy) : unfinishedWords(final.stop_reason);
  if (unfinished) throw new ToolError(unfinishedText(agent.name, unfinished, textOf(final)));
  return textOf(final);
}

/**
 * The state a stopped sub-agent goes on from (its parent holds it): a copy, with the tools its run added kept beside
 * it, and those the sub-agents inside it added beside theirs (a retry or a decision goes on with them at any depth).
 */
function stateOf(sub: ToolRunner<boolean>) {
  return withAddedTools(copySnapshot(sub.toJSON()), sub[AGENT_LINK]().added());
}

/** Why a sub-agent's last reply is no finished answer, in words (`its reply was cut off at max_tokens`), if it is none. */
function unfinishedWords(stopReason: string | null): string | undefined {
  const unfinished = unfinishedReply(stopReason);
  return stopReason === 'refusal' ? 'the model refused' : unfinished && `its reply ${unfinished}`;
}

/** The limit of its own that stopped a sub-agent while it still asked for tools, in words. */
function limitOf(stoppedBy: string | undefined): string {
  return `it reached ${stoppedBy === 'loop_guard' ? 'its loop guard' : stoppedBy === 'budget' ? 'its budget' : 'its max_iterations'}`;
}

/** The context of a call no tool runner of ours makes: no parent, its own id, no signal. */
function standaloneContext(given: ToolContext | undefined): ToolContext {
  const toolUse = given?.toolUse ?? { type: 'tool_use', id: 'agent-call', name: 'agent', input: {} };
  return { ...given, toolUse } as ToolContext;
}

/**
 * A sub-agent's params in a durable run: its tools are steps, and it neither streams nor starts tools
 * eagerly (each of its requests is one step, read whole, as the parent's).
 */
function durableParams(agent: Agent, given: RunnerParams, steps: AgentSteps): RunnerParams {
  const { stream: _stream, runToolsEagerly: _eager, ...params } = given as RunnerParams & { runToolsEagerly?: unknown };
  if (!given.tools) return params;
  if (given.tools.some(isRunnableToolset)) throw new TypeError(`agentTool '${agent.name}': ${TOOLSETS_NOT_DURABLE}`);
  if (given.tools.some(isToolSource)) throw new TypeError(`agentTool '${agent.name}': ${TOOL_SOURCES_NOT_DURABLE}`);
  if (agent.options.concurrency !== undefined && given.tools.some(isAgentTool)) throw new TypeError(`agentTool '${agent.name}': ${CONCURRENCY_NOT_DURABLE}`);
  return { ...params, tools: given.tools.map((entry) => steps.tool(entry, agent.options.toolTimeoutMs)) };
}

/**
 * A sub-agent's options in a durable run: its fallback entries' requests are steps (each named for
 * its entry, as the parent's), and its tools' timeout is in their steps (`durableParams`), not around them.
 */
function durableOptions(options: ToolRunnerOptions, client: ClientLike, steps: AgentSteps): ToolRunnerOptions {
  const { toolTimeoutMs: _inTheSteps, fallback, ...rest } = options;
  if (!fallback) return rest;
  // An entry lent by a durable parent holds its step client: named in the logs as the parent names it.
  return { ...rest, fallback: fallback.map((entry, i) => ({ ...entry, client: namedAs(steps.client(entry.client ?? client, `model request (fallback ${i})`), givenClientOf(entry.client)) })) };
}

/** The result of a sub-agent that stopped before it answered: why, and its last text. */
function unfinishedText(name: string, why: string, lastText: string): string {
  return `Error: the agent '${name}' stopped before it finished its task: ${why}.${lastText ? ` Its last text: ${lastText}` : ''}`;
}

/** Drives a streamed sub-agent, its text deltas reaching the parent's listeners as `agent.text` events. */
async function streamed(sub: ToolRunner<boolean>, name: string, call: { id: string; runner: Runner }, emit: (event: RunnerEvent) => void): Promise<BetaMessage> {
  const forward = forwarder(name, call, emit);
  for await (const item of sub) {
    (item as BetaMessageStream).on('text', (text) => forward({ type: 'agent.text', runner: sub, text, path: [], callPath: [] }));
  }
  return sub.done();
}

function linkOf(runner: Runner | undefined): AgentLink | undefined {
  const lend = (runner as { [AGENT_LINK]?: () => AgentLink } | undefined)?.[AGENT_LINK];
  return typeof lend === 'function' ? lend.call(runner) : undefined;
}
