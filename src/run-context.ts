/** What the rooms of a run share: made once by the runner, read by each collaborator. */
import type { ClientLike, RequestOptions } from './client.js';
import type { RunnerEvent } from './events.js';
import type { LeveledLogger } from './log.js';
import type { ToolRunnerOptions } from './options.js';
import type { RunControl } from './run-control.js';
import type { RunState } from './run-state.js';
import type { Tracing } from './run-tracing.js';
import type { Runner } from './surface.js';
import type { MessageThread } from './thread.js';

export interface RunContext {
  readonly client: ClientLike;
  readonly options: ToolRunnerOptions;
  readonly state: RunState;
  /** The message thread the requests go over (or not). */
  readonly thread: MessageThread;
  readonly logger: LeveledLogger;
  /** The runner, as events and tools see it. */
  readonly runner: Runner;
  /** Emits lifecycle events, when something listens. */
  readonly emit: ((event: RunnerEvent) => void) | undefined;
  /** The request options of the next requests; their `signal` is the run's (it reaches the tools too). */
  requestOptions: RequestOptions;
  /** The scope requests and tool calls run in (a span's context), when something traces. */
  readonly tracing: Tracing;
  /** Output, budget and loop guard: admits the calls, shapes the requests, decides the stops they make. */
  readonly control: RunControl;
}

/** The run's signal: the one in the current request options. */
export function runSignal(run: RunContext): AbortSignal | undefined {
  return run.requestOptions.signal ?? undefined;
}
