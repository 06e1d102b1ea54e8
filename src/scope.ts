/**
 * The seam between the loop and telemetry: a scope runs each request and each tool call inside the
 * context of its span, so that what they do (the SDK's own request spans, a span a tool starts)
 * lands under it. The core calls a scope only when a run has one; it never imports a telemetry
 * library. `tool-runner/otel`'s listener carries one (`RunnerListener.scope`); a client that traces
 * gives one of its own (sdk-spans.ts).
 */
import type { ToolCall } from './hooks.js';
import type { Runner } from './surface.js';
import type { BetaToolResultBlockParam } from './types.js';

/** A tool call as a scope sees it. */
export interface ScopedCall {
  runner: Runner;
  call: ToolCall;
  /** The tool that answers it (its `description`, and any marks the SDK's helpers put on it). */
  tool: { readonly name: string; readonly description?: string | undefined };
  /** The signal the call runs with: aborted before the call has a result (or with none), it is cancelled rather than failed. */
  signal: AbortSignal | undefined;
  /** Started by the caller's `generateToolResponse()` in the loop body, not by the loop. */
  byCaller: boolean;
  /** Answered without running (an unknown tool, a call past a limit): only its `onToolResult` hook runs in the scope. */
  notRun?: true | undefined;
}

/**
 * How a call ended: with its result, or without one (it waits for approval). `cancelled`: the error result of a call
 * cut short by an abort, not a failure (as its `tool.end` says).
 */
export type ScopedOutcome = { result: BetaToolResultBlockParam; cancelled?: boolean } | { pending: unknown };

export interface RunScope {
  /**
   * Calls `send`, which starts request `requestId` of `runner` (synchronously: the client starts
   * its own span for it there), inside the context of the request's span.
   */
  request<T>(runner: Runner, requestId: number, send: () => T): T;
  /** Handles one call (validated, approved, run) inside the context of its span. */
  toolCall<Outcome extends ScopedOutcome>(call: ScopedCall, run: () => Promise<Outcome>): Promise<Outcome>;
  /**
   * Calls a hook of `runner`'s own (`onRequest`, `onMessage`: in no request's span) inside the context of the run's span.
   * Optional: a scope without it (an older `tool-runner/otel`'s) leaves the hooks where they are called.
   */
  hook?<T>(runner: Runner, call: () => T): T;
}
