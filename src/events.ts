/**
 * Typed lifecycle events of a run, for observers such as `tool-runner/otel`. The core emits them;
 * it never imports a telemetry library.
 */
import { isThenable } from './completion.js';
import type { ToolCall } from './hooks.js';
import type { Logger } from './log.js';
import type { RunScope } from './scope.js';
import type { Runner } from './surface.js';
import type { BetaMessage, BetaToolResultBlockParam } from './types.js';
import { thrownMessage } from './described.js';

export type RunnerEvent = (
  /** The runner starts (or resumes) iterating. `provider`: its client's GenAI provider (`anthropic`, `gcp.vertex_ai`, `aws.bedrock`). */
  | { type: 'run.start'; runner: Runner; model: unknown; provider?: string | undefined }
  /** The iteration ended: with the last message, or with the error the caller sees. */
  | { type: 'run.end'; runner: Runner; message: BetaMessage | undefined; error?: unknown }
  /** A request leaves: a turn of the loop, or a compaction summary. */
  | { type: 'request.start'; runner: Runner; requestId: number; purpose: 'turn' | 'compaction'; body: Record<string, unknown> }
  /** `fallback`: the index of the `options.fallback` entry that answered (or failed last); none for the primary. `provider`: that client's. */
  | { type: 'request.end'; runner: Runner; requestId: number; message?: BetaMessage; error?: unknown; fallback?: number | undefined; provider?: string | undefined }
  /** A piece of the reply's text as it streams (streamed requests only: `stream` or `runToolsEagerly`). */
  | { type: 'request.text'; runner: Runner; requestId: number; text: string }
  /** A tool call starts being handled (looked up, validated, approved, run). */
  | { type: 'tool.start'; runner: Runner; call: ToolCall }
  /**
   * The call's result (an error result too), or `pending` when it waits for approval, or the `error`
   * its handling threw (a hook, the approver, a validator of its own): the run fails with it.
   * `cancelled`: the error result says the call was cut short by an abort (the run's signal, or a
   * `break` that left the reply which started it), not that the tool failed. A call that waited
   * (`pending`) ends its wait with a second `tool.end`, `cancelled`, when it will not run (an abort, a
   * history set past it, a reply left); decided, it runs with a `tool.start` and a `tool.end` of its own.
   */
  | { type: 'tool.end'; runner: Runner; call: ToolCall; result?: BetaToolResultBlockParam; pending?: boolean; error?: unknown; cancelled?: true }
  /** A sub-agent's text as it streams (the parent streams: `stream: true`); always a sub-agent's, so it always has a `path`. */
  | { type: 'agent.text'; runner: Runner; text: string; path: string[]; callPath: string[] }
) & {
  /** A sub-agent's event (`agentTool`): the agents' names, outermost first; none for the run's own events. */
  path?: string[];
  /**
   * With `path`: the `tool_use` id of the call that started each of those sub-agents, in the same
   * order. It tells apart two calls of one agent tool running at once (parallel calls, or two runs).
   */
  callPath?: string[];
};

/**
 * A listener for `options.onEvent`. One with a `scope` (`tool-runner/otel`'s) also runs each
 * request and each tool call inside the context of the span it made for it (see scope.ts).
 */
export type RunnerListener = ((event: RunnerEvent) => void) & { readonly scope?: RunScope | undefined };

/**
 * Calls every listener; one that throws, or an async one whose promise rejects (never awaited), is logged and the run
 * goes on (observers never break a run, nor the process with an unhandled rejection).
 */
export function emitter(listeners: RunnerListener | RunnerListener[] | undefined, logger: Logger): ((event: RunnerEvent) => void) | undefined {
  if (!listeners) return undefined;
  const all = Array.isArray(listeners) ? listeners : [listeners];
  if (all.length === 0) return undefined;
  const failed = (event: RunnerEvent, error: unknown) => logger.warn(`An onEvent listener threw on ${event.type}: ${thrownMessage(error)}`);
  return (event) => {
    for (const listener of all) {
      try {
        const returned: unknown = listener(event);
        if (isThenable(returned)) returned.then(undefined, (error: unknown) => failed(event, error));
      } catch (error) {
        failed(event, error);
      }
    }
  };
}

/**
 * The key, on a sub-agent's event, of the runners whose calls started it, in the order of its `callPath`: a `tool_use` id
 * alone may be in two runs at once (two runs resumed from one snapshot). Registered: a sub-agent may run the other build's copy.
 */
const CALLERS = Symbol.for('tool-runner.callers.v1');

/** `event` of a sub-agent, as its parent's listeners get it: the agent's name, the id of the call that started it, and that call's runner in front. */
export function forwardedEvent(event: RunnerEvent, name: string, callId: string, caller: Runner): RunnerEvent {
  const callers = (event as { [CALLERS]?: Runner[] })[CALLERS] ?? [];
  const forwarded = { ...event, path: [name, ...(event.path ?? [])], callPath: [callId, ...(event.callPath ?? [])] };
  // Not enumerable: a listener's `toEqual`, a spread or a log line shows the event as it was.
  return Object.defineProperty(forwarded, CALLERS, { value: [caller, ...callers] });
}

/** The runners whose calls started a sub-agent's event, one for each id of its `callPath` (undefined when its forwarder did not say). */
export function callersOf(event: RunnerEvent): readonly Runner[] | undefined {
  const callers = (event as { [CALLERS]?: unknown })[CALLERS];
  return Array.isArray(callers) && callers.length === event.callPath?.length ? callers : undefined;
}
