/**
 * The two kinds of DBOS steps of a durable run: a model request, and a tool call. A finished step
 * is never run again: on recovery DBOS hands back the result it recorded.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk';
import { DBOS, Error as DBOSErrors } from '@dbos-inc/dbos-sdk';
import { AGENT_DURABLE, type AgentSteps, StepFailed } from '../agent-link.js';
import { type ClientLike, type MessagesApi, messagesApi } from '../client.js';
import { stoppedText } from '../call-texts.js';
import { invalidResultKind, standInOfKind } from '../result-kind.js';
import { beforeFirstEvent, failedAfterFirstEvent, isFailedAfterFirstEvent } from '../fallback.js';
import { checkTimeoutMs, ownSignal, runWithGuards } from '../guards.js';
import { ORDERED_STARTS, stepStarted } from '../start-order.js';
import type { AnyTool, RunnableTool, Runner } from '../surface.js';
import { durableRunner, inToolStep } from './step-runner.js';
import { isRunnableTool } from '../tool.js';
import { ToolError, isToolError, thrownValueToContent } from '../tool-error.js';
import type { ToolResultContent } from '../types.js';
import type { LiveText } from './live-text.js';
import { missingOnReplay, offeredTools } from './offered-tools.js';
import { errorParts } from '../described.js';
import { markCancellation } from '../stop-reason.js';
import { skippedBlock, watchedFinalMessage } from '../stream.js';
import { isUnreadable, unreadable } from '../errors.js';

/**
 * A streamed reply as plain data, for DBOS to record: the stream's text blocks carry hidden getters
 * (`parsed`, which warns that it is deprecated each time it is read), and so would every replay.
 */
function asData(message: unknown): unknown {
  const { content } = message as { content: object[] };
  return { ...(message as object), content: content.map((block) => ({ ...block })) };
}

/**
 * A client whose `create` is a DBOS step (named `name`). With `stream`, the step streams the reply
 * (the request is a streamed one on the wire; a compaction's summary is not), its text to `text`
 * while it comes (when the run has listeners), and records the whole message. A request that fails
 * with an API or connection error records the failure, so that a replay throws the SDK's typed
 * error again and a run with fallbacks goes to the same fallback, whose step is recorded in turn.
 */
export function stepClient(given: ClientLike, stream: boolean, name = 'model request', text?: LiveText): ClientLike {
  // A step client's own client: a step inside a step would not be one DBOS records.
  const client = ownClientOf(given);
  const api = messagesApi(client);
  const streamed = (body: unknown, options: unknown): Promise<unknown> => {
    const reply = api.stream(body, options);
    if (text?.listening) reply.on('text', text.piece);
    let connected = false;
    let started = false;
    reply.on('connect', () => (connected = true));
    reply.on('streamEvent', () => (started = true));
    // Past its first event a stream's failure does not fall back (its text may have been shown), as in a run without durability.
    // Before it, a stream that broke (or ended) after its headers is a connection error, which falls back, as `withFirstEvent` makes it.
    const failed = (error: unknown) => (started ? (typeof error === 'object' && error !== null ? failedAfterFirstEvent(error) : error) : connected ? brokenBeforeFirstEvent(error) : error);
    // Its events watched as a run without durability watches them: a stream that skipped a block's start is a reply that
    // could not be read (the SDK's message of it lacks a call the server holds), not one recorded and kept.
    return watchedFinalMessage(reply).then(
      (message) => {
        const skipped = skippedBlock(reply);
        if (skipped) throw unreadable(new TypeError(skipped));
        return asData(message);
      },
      (error: unknown) => Promise.reject(failed(error)),
    );
  };
  // A compaction's summary goes without streaming (as in a run without durability): past its first event a failure still falls back.
  const request = (body: unknown, options: unknown): Promise<unknown> => (stream && !text?.summary ? streamed(body, options) : Promise.resolve(api.create(body, options)));
  const steps: MessagesApi = {
    create: async (body, options) => {
      let cancel: AbortSignal | undefined;
      // Whether the step ran here: not when DBOS hands back its record (a recovery, a fork).
      let ran = false;
      const recorded = await DBOS.runStep(
        async (): Promise<RequestStep> => {
          ran = true;
          cancel = DBOS.stepStatus?.cancelSignal;
          try {
            const signal = orCancelled((options as { signal?: AbortSignal } | undefined)?.signal);
            const reply = await request(body, signal ? { ...(options as object), signal } : options);
            const tools = offeredTools(body);
            return tools ? { reply, tools } : { reply };
          } catch (error) {
            // Recorded as such: a replay fails as the run did, the same words, not with DBOS's copy of a TypeError.
            if (isUnreadable(error)) return { unreadable: error.message };
            const failed = failureOf(error);
            if (failed) return { failed };
            throw error;
          }
        },
        { name },
      ).catch((error: unknown) => Promise.reject(requestStepFailed(error, cancel)));
      if ('failed' in recorded) throw errorOf(recorded.failed);
      if ('unreadable' in recorded) throw unreadable(new TypeError(recorded.unreadable));
      // Replayed on a worker that lacks a tool the reply calls: the run fails naming it (a sub-agent's too, as on DBOS's errors).
      const missing = ran ? undefined : missingOnReplay(recorded, body, DBOS.workflowID);
      if (missing) throw new StepFailed(missing, 'a model request');
      return recorded.reply;
    },
    stream: () => {
      throw new Error('tool-runner/dbos: a durable run streams inside its model request steps');
    },
  };
  // The run logs as the client would (its `logger` and `logLevel`, which the SDK reads from ANTHROPIC_LOG),
  // and a request it sends without streaming (a summary) waits as long as the client would (`timeout`).
  // Its middleware too, which the steps' requests go through (a request option of the caller's own reaches it).
  // And names its GenAI provider (a Vertex client's `gcp.vertex_ai`), which the run's events and spans report.
  // And traces as it does (its tracer, and its `openTelemetry` settings: what content the spans hold): the SDK runner's own
  // spans of the run (sdk-spans.ts), for its passes and calls, beside the client's own request spans its steps make.
  const { logger, logLevel, timeout, middleware, _genAIProviderName, _tracer, openTelemetry } = client as Record<string, unknown>;
  const made = Object.assign(
    { beta: { messages: steps } },
    logger !== undefined && { logger },
    logLevel !== undefined && { logLevel },
    timeout !== undefined && { timeout },
    middleware !== undefined && { middleware },
    _genAIProviderName !== undefined && { _genAIProviderName },
    _tracer != null && { _tracer, openTelemetry },
  );
  // Its runner starts each reply's tools in the model's order: DBOS numbers steps as they start.
  return Object.defineProperties(made, { [OWN_CLIENT]: { value: client }, [ORDERED_STARTS]: { value: true } });
}

/**
 * A stream that failed after its headers and before its first event, as a run without durability sees it (`withFirstEvent`):
 * the API's typed errors, an abort and a body that is not JSON as they are, anything else (the connection dropped, the
 * stream ended without an event) an `APIConnectionError`, which falls back and is recorded as one.
 */
function brokenBeforeFirstEvent(error: unknown): unknown {
  if (error instanceof APIError) return error;
  const cause = error instanceof Error ? error.cause : undefined;
  if (error instanceof SyntaxError || cause instanceof SyntaxError) return error;
  // (The stream's error wraps what its read threw, as `cause`; none when it ended.)
  return beforeFirstEvent(cause);
}

/**
 * `signal`, or the workflow's cancel: `DBOS.cancelWorkflow(id)` is a durable run's abort, and DBOS fires the running
 * step's `cancelSignal` (it polls, within about a second), so a tool or a request of the step stops as on an abort.
 */
function orCancelled(signal: AbortSignal | undefined): AbortSignal | undefined {
  const cancelled = DBOS.stepStatus?.cancelSignal;
  if (!cancelled) return signal;
  return signal ? AbortSignal.any([signal, cancelled]) : cancelled;
}

/**
 * Whether a step failed because the run was cancelled (`DBOS.cancelWorkflow`, a durable run's abort): DBOS's error for
 * it, or the lost ownership a cancel leaves when the step's end is recorded after it (its `cancel` signal fired). Such
 * an error is marked a cancellation, so that the spans of the request or call, and of the run, end with no error status,
 * as on an abort; it is still DBOS's (or wraps it), which the workflow throws back to DBOS.
 */
function cancelledStep(error: unknown, cancel: AbortSignal | undefined): error is object {
  return error instanceof DBOSErrors.DBOSWorkflowCancelledError || (error instanceof DBOSErrors.DBOSWorkflowConflictError && cancel?.aborted === true);
}

/**
 * What a model request's step that rejected throws: the request's own error as it is (one its step threw, or DBOS's copy
 * of it on a replay), DBOS's error (another step recorded in its place, a cancel, a lost ownership) as a `StepFailed`,
 * which fails the workflow: in a sub-agent, the agent tool's call passes it on rather than telling the parent's model,
 * which had read DBOS's words as the call's result and gone on with a history the run never had.
 */
function requestStepFailed(error: unknown, cancel: AbortSignal | undefined): unknown {
  if (cancelledStep(error, cancel)) return markCancellation(new StepFailed(markCancellation(error), 'a model request'));
  return error instanceof DBOSErrors.DBOSError ? new StepFailed(error, 'a model request') : error;
}

/** The key of a step client's own client (a sub-agent's fallback entry without a client of its own sends through it). */
const OWN_CLIENT = Symbol('tool-runner.dbos.ownClient');

function ownClientOf(client: ClientLike): ClientLike {
  return (client as { [OWN_CLIENT]?: ClientLike })[OWN_CLIENT] ?? client;
}

/**
 * What a model request step records: the reply and the names of the tools the request offered, how the request failed,
 * or why its streamed reply could not be read.
 */
type RequestStep = { reply: unknown; tools?: string[] } | { failed: RecordedFailure } | { unreadable: string };

/** An API or connection error, as JSON: enough to make the SDK's typed error again. */
interface RecordedFailure {
  status: number | undefined;
  body: unknown;
  message: string;
  headers: Record<string, string> | undefined;
  timeout: boolean;
  /** An SSE `error` event (no status): its error type, which decides whether the run falls back. */
  type?: string | null | undefined;
  /** The stream failed after its first event: the run does not fall back (a replay decides the same). */
  afterFirstEvent?: true;
  /**
   * A connection error's cause: from SDK 1.17 on, a reply the connection cut while it was read is an `APIConnectionError`
   * wrapping undici's `terminated`, by which the run tells a broken reply (a `ReplyError`, as without durability) from a
   * connection never made. Without it, the error made again said only 'Connection error.'.
   */
  cause?: { name: string; message: string };
  /** The request the error answered (SDK 1.17's `APIError.request`, whose path its message names): given to the error made again. */
  request?: { method: string; url: string };
}

function failureOf(error: unknown): RecordedFailure | undefined {
  if (!(error instanceof APIError) || error instanceof APIUserAbortError) return undefined;
  const event = error.status === undefined && !(error instanceof APIConnectionError);
  const cause = error instanceof APIConnectionError && error.cause instanceof Error ? errorParts(error.cause) : undefined;
  const { request } = error as { request?: { method: string; url: string } };
  return {
    status: error.status,
    body: error.error ?? null,
    message: error.message,
    headers: error.headers ? Object.fromEntries(error.headers) : undefined,
    timeout: error instanceof APIConnectionTimeoutError,
    ...(event && { type: error.type ?? null }),
    ...(isFailedAfterFirstEvent(error) && { afterFirstEvent: true }),
    ...(cause && { cause: { name: cause.name, message: cause.message } }),
    ...(request && { request: { method: request.method, url: request.url } }),
  };
}

function errorOf(failed: RecordedFailure): APIError {
  const error = typedErrorOf(failed);
  return failed.afterFirstEvent ? failedAfterFirstEvent(error) : error;
}

function typedErrorOf(failed: RecordedFailure): APIError {
  // The request, as SDK 1.17 takes it (an argument more; 1.14's constructor and `generate` take one fewer and leave it out).
  const options = { request: failed.request };
  const headers = new Headers(failed.headers ?? {});
  if (failed.type !== undefined) return new (APIError as unknown as new (...args: unknown[]) => APIError)(undefined, failed.body ?? undefined, failed.message, headers, failed.type, options);
  if (failed.status === undefined) return failed.timeout ? new APIConnectionTimeoutError({ message: failed.message }) : new APIConnectionError({ message: failed.message, ...(failed.cause && { cause: causeOf(failed.cause) }) });
  return (APIError.generate as (...args: unknown[]) => APIError)(failed.status, failed.body ?? undefined, failed.message, headers, options);
}

/** A recorded cause made again, of its class when it was a `TypeError` (undici's `terminated` is one). */
function causeOf({ name, message }: { name: string; message: string }): Error {
  const cause = name === 'TypeError' ? new TypeError(message) : new Error(message);
  cause.name = name;
  return cause;
}

/** What a tool step records: the tool's result, or the content of the error result (and what was thrown, unless a `ToolError`). */
type StepResult = { value: ToolResultContent } | { invalid: string } | { error: ToolResultContent; thrown?: ThrownRecord };

/** A thrown Error as JSON (its class is not kept), or any other thrown value as its text. */
type ThrownRecord = { name: string; message: string; stack?: string | undefined } | { text: string };

function thrownRecordOf(thrown: unknown): ThrownRecord | undefined {
  if (isToolError(thrown)) return undefined;
  if (thrown instanceof Error) return errorParts(thrown);
  // `Error: <the value as text>`, as thrownValueToContent writes it: the text read back gives the same.
  return { text: (thrownValueToContent(thrown) as string).slice('Error: '.length) };
}

/**
 * What a recovered run throws for a recorded failure: an Error of the same name and message (the
 * model reads the same `Name: message`, `onToolError` sees an error, not the model's business), or
 * the recorded `ToolError` content (a `ToolError`, a timeout, an older record).
 */
function thrownAgain(recorded: { error: ToolResultContent; thrown?: ThrownRecord }): unknown {
  const { thrown } = recorded;
  if (!thrown) return new ToolError(recorded.error);
  if ('text' in thrown) return thrown.text;
  const error = new Error(thrown.message);
  error.name = thrown.name;
  if (thrown.stack !== undefined) error.stack = thrown.stack;
  return error;
}

/**
 * The tool as a DBOS step. The step holds the whole call, timeout included, so a call that timed
 * out is recorded as timed out; its `context.idempotencyKey` is the workflow id and the tool_use
 * id. Plain definitions (server tools) are returned as they are.
 */
export function durableTool(entry: AnyTool, toolTimeoutMs: number | undefined): AnyTool {
  // One made durable already (the run's own tools, given again in setMessagesParams' params): as it is, not a step in a step.
  if (!isRunnableTool(entry) || DURABLE.has(entry)) return entry;
  const made = stepsOf(entry, toolTimeoutMs);
  DURABLE.add(made);
  return made;
}

/** The tools `durableTool` made. */
const DURABLE = new WeakSet<object>();

function stepsOf(entry: RunnableTool, toolTimeoutMs: number | undefined): AnyTool {
  // An agent tool is not one step: its sub-agent's requests and tool calls are steps of the workflow.
  const durableAgent = (entry as { [AGENT_DURABLE]?: (steps: AgentSteps) => AnyTool })[AGENT_DURABLE];
  if (durableAgent && entry.timeoutMs !== undefined) {
    // Its sub-agent's recorded steps replay at once on recovery: a timeout would not decide the same.
    throw new TypeError(`durableToolRunner: agent tool '${entry.name}': timeoutMs is not available in a durable run (its sub-agent's steps replay at once on recovery); bound its tools' time instead (options.toolTimeoutMs)`);
  }
  if (durableAgent) {
    return durableAgent({
      client: (client, name) => stepClient(client, false, name),
      tool: (inner, own) => durableTool(inner as AnyTool, own ?? toolTimeoutMs) as typeof inner,
      runner: (sub: Runner, own) => durableRunner(sub, (added) => durableTool(added, own ?? toolTimeoutMs)),
    });
  }
  const tool: RunnableTool = entry;
  // Taken off the tool before the runner sees it (the step holds the timeout): checked here, as the runner would.
  if (tool.timeoutMs !== undefined) checkTimeoutMs(tool.timeoutMs, `durableToolRunner: tool '${tool.name}': timeoutMs`);
  const timeoutMs = tool.timeoutMs ?? toolTimeoutMs;
  const run: RunnableTool['run'] = async (input, context) => {
    const idempotencyKey = `${DBOS.workflowID ?? 'no-workflow'}:${context.toolUse.id}`;
    // What the tool threw when the step runs in this process (not replayed): thrown again as it is.
    let original: { thrown: unknown } | undefined;
    let cancel: AbortSignal | undefined;
    const step = DBOS.runStep(
      async (): Promise<StepResult> => {
        cancel = DBOS.stepStatus?.cancelSignal;
        // Its changes to the run refused (step-runner.ts): a recovery hands back the step's result without running it.
        const outcome = await inToolStep(tool.name, () => runWithGuards((signal) => tool.run(input, { ...context, signal: ownSignal(signal), idempotencyKey }), orCancelled(context.signal), timeoutMs));
        if (outcome.ok) {
          // A value no tool may return is recorded by its kind: its JSON (a date's `toJSON`, say) would replay as a result the model never got.
          const kind = invalidResultKind(outcome.value);
          return kind === undefined ? { value: outcome.value as ToolResultContent } : { invalid: kind };
        }
        if (!('thrown' in outcome)) return { error: stoppedText(tool.name, outcome) };
        original = { thrown: outcome.thrown };
        const thrown = thrownRecordOf(outcome.thrown);
        return thrown ? { error: thrownValueToContent(outcome.thrown), thrown } : { error: thrownValueToContent(outcome.thrown) };
      },
      { name: `tool ${tool.name}` },
    );
    // DBOS numbered the step as it was called: the reply's next call may start its own (start-order.ts).
    stepStarted(context);
    // The step function never throws (the tool's failure is its outcome): a rejection is DBOS's, not the tool's.
    const recorded = await step.catch((error: unknown) => Promise.reject(cancelledStep(error, cancel) ? markCancellation(new StepFailed(markCancellation(error))) : new StepFailed(error)));
    if ('error' in recorded) throw original ? original.thrown : thrownAgain(recorded);
    // Refused by the runner as the value itself was.
    if ('invalid' in recorded) return standInOfKind(recorded.invalid) as ToolResultContent;
    return recorded.value;
  };
  const { timeoutMs: _ownTimeout, ...rest } = tool;
  // The copy keeps the tool's prototype: a class's methods (the SDK's `parse`, say) are not own fields.
  return Object.setPrototypeOf({ ...rest, run }, Object.getPrototypeOf(tool)) as RunnableTool;
}
