/**
 * The scope a run's requests and tool calls run in (scope.ts): a listener's that carries one
 * (`tool-runner/otel`), else none: the per-turn path then reads one field and calls nothing.
 */
import type { RequestOptions } from './client.js';
import type { RunnerListener } from './events.js';
import type { LeveledLogger } from './log.js';
import type { RunScope } from './scope.js';

/** How a pass of the loop ended: its last reply, an error, or the caller stopped iterating. */
export type PassEnd = 'completed' | 'closed' | { error: unknown };

export class RunTracing {
  /** The scope of the pass of the loop in progress, or undefined. */
  scope: RunScope | undefined;
  readonly #listener: RunScope | undefined;

  constructor(_client: unknown, listeners: RunnerListener | RunnerListener[] | undefined, _logger: LeveledLogger) {
    this.#listener = (Array.isArray(listeners) ? listeners : [listeners]).find((listener) => listener?.scope)?.scope;
  }

  /** A pass of the loop starts, with the run's params and its requests' options. */
  begin(_params: Record<string, unknown>, _requests: { readonly requestOptions: RequestOptions }): void {
    this.scope = this.#listener;
  }

  /** The pass ended: with its last reply, an error, or the caller stopped iterating. */
  end(_how: PassEnd): void {
    this.scope = undefined;
  }

  /** The scope of calls the caller runs with `generateToolResponse()`, in the loop body or outside it. */
  get callerScope(): RunScope | undefined {
    return this.scope ?? this.#listener;
  }
}
