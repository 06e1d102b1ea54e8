/**
 * The scope a run's requests and tool calls run in (scope.ts), one at a time so that no operation
 * gets two spans of one kind: a listener's that carries one (`tool-runner/otel`: its `invoke_agent`,
 * `chat` and `execute_tool` spans then stand in for the SDK runner's own, and the client's request
 * spans go under `chat`), else the SDK runner's own spans when the client traces (sdk-spans.ts),
 * else none: the per-turn path then reads one field and calls nothing.
 */
import type { RequestOptions } from './client.js';
import type { RunnerListener } from './events.js';
import type { LeveledLogger } from './log.js';
import type { RunScope } from './scope.js';
import { type PassEnd, SdkSpans } from './sdk-spans.js';

/** What the loop and the rooms use of a run's tracing. */
export interface Tracing {
  /** The scope of the pass of the loop in progress, or undefined. */
  readonly scope: RunScope | undefined;
  /** The scope of calls the caller runs with `generateToolResponse()`. */
  readonly callerScope: RunScope | undefined;
  begin(params: Record<string, unknown>, requests: { readonly requestOptions: RequestOptions }): void;
  end(how: PassEnd): void;
}

/** The tracing of a run that nothing traces: one shared object, nothing held per run. */
const NO_TRACING: Tracing = Object.freeze({ scope: undefined, callerScope: undefined, begin: () => {}, end: () => {} });

/** The tracing of a run: none (shared) unless a listener carries a scope or the client traces. */
export function runTracing(client: unknown, listeners: RunnerListener | RunnerListener[] | undefined, logger: LeveledLogger): Tracing {
  const traces = (client as { _tracer?: unknown })._tracer !== undefined && (client as { _tracer?: unknown })._tracer !== null;
  return traces || listenerScope(listeners) ? new RunTracing(client, listeners, logger) : NO_TRACING;
}

/** The scope a listener carries (`tool-runner/otel`'s), the first one given. */
export function listenerScope(listeners: RunnerListener | RunnerListener[] | undefined): RunScope | undefined {
  return Array.isArray(listeners) ? listeners.find((listener) => listener?.scope)?.scope : listeners?.scope;
}

export class RunTracing implements Tracing {
  /** The scope of the pass of the loop in progress, or undefined. */
  scope: RunScope | undefined;
  readonly #listener: RunScope | undefined;
  readonly #client: unknown;
  readonly #logger: LeveledLogger;
  #sdk: SdkSpans | undefined;

  constructor(client: unknown, listeners: RunnerListener | RunnerListener[] | undefined, logger: LeveledLogger) {
    this.#client = client;
    this.#logger = logger;
    this.#listener = listenerScope(listeners);
  }

  /** A pass of the loop starts, with the run's params and its requests' options. */
  begin(params: Record<string, unknown>, requests: { readonly requestOptions: RequestOptions }): void {
    if (this.#listener) {
      this.scope = this.#listener;
      return;
    }
    const sdk = (this.#sdk ??= SdkSpans.of(this.#client, this.#logger, requests));
    this.scope = sdk?.start(params) ? sdk : undefined;
  }

  /** The pass ended: with its last reply, an error, or the caller stopped iterating. */
  end(how: PassEnd): void {
    if (this.scope && this.scope === this.#sdk) this.#sdk.end(how);
    this.scope = undefined;
  }

  /** The scope of calls the caller runs with `generateToolResponse()`, in the loop body or outside it. */
  get callerScope(): RunScope | undefined {
    return this.scope ?? this.#listener ?? this.#sdk;
  }
}
