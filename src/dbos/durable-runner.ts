/**
 * A run as a DBOS workflow: each model request (a fallback's too) and each tool call is a step, so
 * after a crash any worker resumes the run from its last finished step, and no finished tool call
 * runs again.
 */
import { DBOS, type WorkflowHandle } from '@dbos-inc/dbos-sdk';
import { CONCURRENCY_NOT_DURABLE, StepFailed, TOOL_SOURCES_NOT_DURABLE, TOOLSETS_NOT_DURABLE, isAgentTool, notDurableOptionIn } from '../agent-link.js';
import { type ApprovalDecision, type TimedOutDecision, asReason } from '../approval.js';
import type { ClientLike } from '../client.js';
import { unknownOption, wrongType, wrongValue } from '../described.js';
import { namedAs } from '../fallback.js';
import { checkTimeoutMs } from '../guards.js';
import { type ToolRunnerOptions, checkOptions, checkedFor } from '../options.js';
import { checkRunControlOptions } from '../run-control-options.js';
import type { StoppedBy } from '../stop-reason.js';
import type { RunnerParams, ToolEntry } from '../surface.js';
import { ToolRunner } from '../runner.js';
import { isToolSource } from '../tool-set.js';
import { isRunnableToolset } from '../toolsets.js';
import type { BetaMessage, BetaMessageParam } from '../types.js';
import type { Usage } from '../usage.js';
import { PENDING_EVENT, type SentDecision, decisionTopic, sentTooLate } from './approvals.js';
import { LiveText } from './live-text.js';
import { durableRunner } from './step-runner.js';
import { durableTool, stepClient } from './steps.js';
import { ignore, isThenable } from '../completion.js';

/**
 * The runner options a durable run takes: all but `approve` and `signal` (decisions come as DBOS
 * messages). `output`, `budget`, `loopGuard` and `onLimit` work as in `toolRunner`; their decisions
 * are made again the same way on recovery, from the recorded steps.
 */
export type DurableRunnerOptions = Omit<ToolRunnerOptions, 'approve' | 'signal'>;

export interface DurableToolRunnerConfig {
  /** The workflow's name: the same in every worker, so any of them can recover the run. */
  name: string;
  /** The client of every model request, or a function that makes it (called once per run). */
  client: ClientLike | (() => ClientLike);
  /** The tools, defined in code that every worker loads. MCP tool sources are not supported yet. */
  tools?: ToolEntry[] | undefined;
  options?: DurableRunnerOptions | undefined;
  /**
   * How long the calls a run stops for may wait for their decisions, from when it stops: a call
   * still undecided then is answered as timed out waiting for approval, and not run. Default: 7 days.
   */
  approvalTimeoutSeconds?: number | undefined;
}

/** A run's params: those of `toolRunner` but `tools` (from the config) and `runToolsEagerly`. JSON only: DBOS stores them. */
export type DurableRunParams = Omit<RunnerParams, 'tools' | 'runToolsEagerly'>;

/** What a finished run returns (and DBOS stores). */
export interface DurableRunResult {
  /** The last message. */
  message: BetaMessage;
  /** The whole history, the last message included. */
  messages: BetaMessageParam[];
  usage: Usage;
  /** `runner.iteration` at the end: the turns sent (a turn that fell back counts once; a compaction's summary request does not count). */
  iterations: number;
  /** Why the run ended (`'model'`, `'max_iterations'`, `'budget'`, `'loop_guard'`, …: see `runner.stoppedBy`). */
  stoppedBy: StoppedBy;
  /** With `options.output`: the validated final answer, as DBOS stores it (its default serializer, SuperJSON, keeps a `Date` or a `BigInt`). */
  output?: unknown;
}

export interface DurableStartOptions {
  /** Run it through a DBOS queue (registered with `DBOS.registerQueue`), which sets how many run at once. */
  queueName?: string | undefined;
}

export interface DurableToolRunner {
  readonly name: string;
  /** Starts the run `workflowId` (or returns the handle of the one already started with that id). */
  start(workflowId: string, params: DurableRunParams, options?: DurableStartOptions): Promise<WorkflowHandle<DurableRunResult>>;
  /** Starts the run and resolves to its result. */
  run(workflowId: string, params: DurableRunParams, options?: DurableStartOptions): Promise<DurableRunResult>;
}

/** The runner of a durable run: it can also end a call's wait for a decision. */
class DurableRun extends ToolRunner<boolean> {
  /** With `text` (a streamed run), its steps' streamed text goes to the run's listeners, when it has some; `text` follows its requests. */
  constructor(
    client: ClientLike,
    params: RunnerParams,
    options: DurableRunnerOptions,
    text: LiveText | undefined,
    toolTimeoutMs: number | undefined,
  ) {
    const listeners = options.onEvent === undefined ? [] : Array.isArray(options.onEvent) ? options.onEvent : [options.onEvent];
    super(client, params, text ? { ...options, onEvent: [...listeners, text.follow] } : options);
    text?.attach(this.run.emit, listeners.length > 0);
    // Its changes refused in its tools' steps; a tool added (by an `onEvent` listener) is a step too, as the agent's own tools are.
    durableRunner(this, (added) => durableTool(added, toolTimeoutMs));
  }

  /** No decision came within `ms`: the model reads that the wait timed out (not that the user denied it). */
  timeOut(id: string, ms: number): void {
    const timedOut: TimedOutDecision = { decision: 'deny', timedOutMs: ms };
    this.answers.decide(id, timedOut);
  }
}

/** The params of the runner built to check the agent's tools and options when it is registered. */
const CHECK_PARAMS: DurableRunParams = { model: 'check', max_tokens: 1, messages: [{ role: 'user', content: 'check' }] };

const DEFAULT_APPROVAL_TIMEOUT_SECONDS = 7 * 24 * 60 * 60;

/**
 * The client of a runner built only to check a run's params: never called. It says it has middleware, as
 * the worker's client may: a request option of the caller's own is checked by the run, on that client.
 */
const NO_CLIENT: ClientLike = Object.assign(
  {
    beta: {
      messages: {
        create: () => Promise.reject(new Error('tool-runner/dbos: a check runner sends nothing')),
        stream: () => {
          throw new Error('tool-runner/dbos: a check runner sends nothing');
        },
      },
    },
  },
  { middleware: [(request: unknown, next: (request: unknown) => unknown) => next(request)] },
);

/**
 * Registers a durable agent: call it at module level in every worker, before `DBOS.launch()`.
 *
 * @example
 * ```ts
 * const agent = durableToolRunner({ name: 'refunds', client: () => new Anthropic(), tools: [refund] });
 * DBOS.setConfig({ name: 'support', systemDatabaseUrl: process.env.DBOS_SYSTEM_DATABASE_URL });
 * await DBOS.launch(); // recovers the runs a crashed worker left
 * const result = await agent.run('refund-42', { model, max_tokens: 1024, messages });
 * ```
 */
export function durableToolRunner(config: DurableToolRunnerConfig): DurableToolRunner {
  const { name, approvalTimeoutSeconds = DEFAULT_APPROVAL_TIMEOUT_SECONDS } = config;
  checkConfig(config, approvalTimeoutSeconds);
  const { toolTimeoutMs, ...options } = config.options ?? {};
  const tools = (config.tools ?? []).map((entry) => durableTool(entry as Exclude<ToolEntry, { kind: 'tool-source' }>, toolTimeoutMs));
  const client = () => {
    if (typeof config.client !== 'function') return config.client;
    const made: unknown = config.client();
    // (An async factory: the run failed with "the client has neither `beta.messages` nor `messages`", naming no promise.)
    if (isThenable(made)) {
      // Its rejection (no API key, say) is this run's failure, said below: left unhandled, Node would end the worker.
      Promise.resolve(made).catch(ignore);
      throw new TypeError(`durableToolRunner '${name}': \`client\` returned a promise; the function must return the client itself, made at once (() => new Anthropic())`);
    }
    return made as ClientLike;
  };
  const runnerFor = (params: DurableRunParams, runClient: ClientLike) => {
    // Here, not only in start(): a run a DBOSClient enqueues by name (docs/scaling.md) comes with params nothing checked.
    checkParams(params);
    if ((params as { runToolsEagerly?: unknown }).runToolsEagerly) {
      throw new TypeError('durableToolRunner: runToolsEagerly is not available in a durable run (each model request is one step, read whole)');
    }
    const { stream, ...rest } = params;
    const text = stream === true ? new LiveText() : undefined;
    // A fallback's client is a step client too: the fallback that answered is recorded like any request.
    // An entry without a client sends through the run's, in a step named for its entry all the same.
    const fallback = options.fallback?.map((entry, i) => ({ ...entry, client: namedAs(stepClient(entry.client ?? runClient, stream === true, `model request (fallback ${i})`, text), entry.client) }));
    // Named as the run's client, so that an entry given that very client is known as sending with the run's (its container the run's).
    return new DurableRun(namedAs(stepClient(runClient, stream === true, 'model request', text), runClient), { ...rest, tools }, fallback ? { ...options, fallback } : options, text, toolTimeoutMs);
  };
  // What the runner checks when it is made (the tools, an `output` that is no schema): refused when the agent is registered,
  // with the other options' checks, not at each start() and in each worker that recovers a run.
  checkedFor('durableToolRunner: ', () => runnerFor(CHECK_PARAMS, NO_CLIENT));

  const workflow = DBOS.registerWorkflow(
    async (params: DurableRunParams): Promise<DurableRunResult> => {
      const runner = runnerFor(params, client());
      for (;;) {
        let message: BetaMessage | undefined;
        try {
          message = await runner.runUntilDone();
        } catch (error) {
          // A tool's step DBOS could not take: its own error (a cancel or a lost ownership parks the run, as DBOS expects).
          if (StepFailed.is(error)) throw error.error;
          // Stopped for approval before any reply (the history ends with calls that need it): it waits as any stop does.
          if (runner.stoppedBy !== 'approval' || runner.pendingApprovals.length === 0) throw error;
        }
        const pending = runner.pendingApprovals;
        if (pending.length === 0 && message) {
          const result: DurableRunResult = { message, messages: runner.params.messages, usage: runner.usage, iterations: runner.iteration, stoppedBy: runner.stoppedBy ?? 'model' };
          if (runner.output !== undefined) result.output = runner.output;
          return result;
        }
        // The calls of one stop share one deadline (DBOS.now() is recorded: a recovery keeps it). Stamped before the calls
        // are shown as waiting: a worker that stops once they are shown leaves a deadline a recovery keeps, not one it makes later.
        const deadline = (await DBOS.now()) + approvalTimeoutSeconds * 1000;
        await DBOS.setEvent(PENDING_EVENT, pending);
        let waiting = pending;
        for (const call of pending) {
          const left = Math.max(0, deadline - (await DBOS.now()));
          let decision = await DBOS.recv<SentDecision>(decisionTopic(call.id), { timeoutSeconds: left / 1000 });
          // Sent after the deadline while no worker was alive to time the call out (recv takes a stored message
          // before it looks at its timeout): too late, timed out as a live worker answers it. One sent in time is
          // taken, however late the run reads it (a recovery, or the calls before it decided first); one read in
          // time is taken too, whatever the sender's clock said (clocks differ).
          if (decision && sentTooLate(decision, deadline) && (await DBOS.now()) > deadline) decision = null;
          if (decision?.decision === 'allow') runner.approve(call.id, decision.input === undefined ? {} : { input: decision.input });
          // (A reason from an untyped sender that is no string: the model reads it as text, and the call is denied.)
          else if (decision) runner.deny(call.id, asReason(decision.reason));
          else runner.timeOut(call.id, approvalTimeoutSeconds * 1000);
          // `pending()` lists only the calls still waiting.
          waiting = waiting.filter((other) => other !== call);
          await DBOS.setEvent(PENDING_EVENT, waiting);
        }
      }
    },
    { name },
  );

  // Bad input rejects the promise `start()` returns, as `run()`'s does (no throw in the caller's `.then` chain).
  const start = async (workflowId: string, params: DurableRunParams, startOptions: DurableStartOptions = {}) => {
    if (typeof workflowId !== 'string' || workflowId === '') throw new TypeError('durableToolRunner: the workflow id must be a non-empty string');
    // Bad params fail here, in the caller's process, not in a worker; that process may have no
    // model client (or key), and building a runner sends nothing.
    runnerFor(params, NO_CLIENT);
    const { queueName } = checkStart(startOptions);
    return DBOS.startWorkflow(workflow, queueName === undefined ? { workflowID: workflowId } : { workflowID: workflowId, queueName })(params);
  };
  return {
    name,
    start,
    run: async (workflowId, params, options) => (await start(workflowId, params, options)).getResult(),
  };
}

const CONFIG_KEYS = ['name', 'client', 'tools', 'options', 'approvalTimeoutSeconds'];

const START_KEYS = ['queueName'];

/** A run's params: an object, without tools of its own (the agent's are the run's: a run's own would be dropped). */
function checkParams(params: DurableRunParams): void {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) throw wrongType(params, 'durableToolRunner: params must be an object');
  if ((params as { tools?: unknown }).tools !== undefined) {
    throw new TypeError("durableToolRunner: params.tools is not taken: a durable run's tools are the agent's (durableToolRunner({ tools })), the same in every worker");
  }
}

/** What `start()` / `run()` are given beside the id and the params: known options (a slip, `queue`, would start the run outside its queue and its limit). */
function checkStart(options: DurableStartOptions): DurableStartOptions {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw wrongType(options, 'durableToolRunner: the start options must be an object ({ queueName })');
  for (const key of Object.keys(options)) if (!START_KEYS.includes(key)) throw unknownOption('durableToolRunner: start', key, START_KEYS);
  if (options.queueName !== undefined && (typeof options.queueName !== 'string' || options.queueName === '')) throw wrongType(options.queueName, 'durableToolRunner: queueName must be a non-empty string');
  return options;
}

function checkConfig(config: DurableToolRunnerConfig, approvalTimeoutSeconds: number): void {
  if (typeof config !== 'object' || config === null) throw new TypeError('durableToolRunner: pass { name, client, tools }');
  // A slip (`tool`, `approvalTimeout`) would leave the run without its tools, or waiting the default 7 days.
  for (const key of Object.keys(config)) if (!CONFIG_KEYS.includes(key)) throw unknownOption('durableToolRunner', key, CONFIG_KEYS);
  if (typeof config.name !== 'string' || config.name === '') throw new TypeError('durableToolRunner: `name` must be a non-empty string (the workflow name)');
  if (typeof config.client !== 'function' && (typeof config.client !== 'object' || config.client === null)) {
    throw new TypeError('durableToolRunner: `client` must be an Anthropic client or a function that returns one');
  }
  if (config.tools !== undefined && !Array.isArray(config.tools)) throw new TypeError('durableToolRunner: `tools` must be an array');
  if (config.tools?.some(isToolSource)) {
    throw new TypeError(`durableToolRunner: ${TOOL_SOURCES_NOT_DURABLE}`);
  }
  if (typeof approvalTimeoutSeconds !== 'number' || !(approvalTimeoutSeconds > 0)) throw wrongValue(approvalTimeoutSeconds, 'durableToolRunner: approvalTimeoutSeconds must be a positive number');
  if (config.options !== undefined) checkRunOptions(config.options, config.client);
  if (config.tools?.some(isRunnableToolset)) throw new TypeError(`durableToolRunner: ${TOOLSETS_NOT_DURABLE}`);
  if (config.options?.concurrency !== undefined && config.tools?.some(isAgentTool)) throw new TypeError(`durableToolRunner: ${CONCURRENCY_NOT_DURABLE}`);
  if (DBOS.isInitialized()) {
    throw new Error(`durableToolRunner: register '${config.name}' before DBOS.launch(), at module level in every worker`);
  }
}

/** The run's options, checked when the agent is registered (as `toolRunner` checks them when a run starts), not at its first run. */
function checkRunOptions(options: DurableToolRunnerConfig['options'], client: DurableToolRunnerConfig['client']): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw wrongType(options, 'durableToolRunner: options must be an object');
  const refused = notDurableOptionIn(options);
  if (refused) throw new TypeError(`durableToolRunner: ${refused}`);
  // Taken out of the options before the runner sees them (each call's step holds its own timeout): checked here.
  const { toolTimeoutMs, ...rest } = options;
  if (toolTimeoutMs !== undefined) checkTimeoutMs(toolTimeoutMs, 'durableToolRunner: options.toolTimeoutMs');
  checkedFor('durableToolRunner: ', () => {
    // A client made by a function is not known yet: options of its own middleware are let through, as toolRunner does for such a client.
    checkOptions(rest, typeof client === 'function' ? undefined : client);
    checkRunControlOptions(rest);
  });
}
