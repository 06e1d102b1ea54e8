/**
 * The runner's settings (keys of the params that configure the loop) and the params without their
 * tools: what a snapshot keeps. A low room: it imports only types that import nothing of the runner.
 */
import type { CompactionControl } from './compaction.js';
import type { BetaMessageParam, MessageCreateParamsBase } from './types.js';

/** Keys that configure the loop and are never sent to the API. */
export interface RunnerSettings {
  /** Stop after this many requests (a failed one counts too, as in the SDK); 0 or none: no limit. */
  max_iterations?: number | undefined;
  /** Yield the SDK's `MessageStream` for each iteration instead of the whole message. */
  stream?: boolean | undefined;
  /** Start each tool as soon as its `tool_use` block is complete in the stream (works without `stream: true` too). */
  runToolsEagerly?: boolean | undefined;
  /** Client-side compaction: summarise the conversation when a reply's tokens pass a threshold. */
  compactionControl?: CompactionControl | undefined;
  /**
   * `false`: send the whole history with every request. By default a run on an `Anthropic` client
   * goes over a message thread (the server holds the conversation; each request sends only the new
   * messages), as the SDK's runner does.
   */
  thread?: false | undefined;
}

/** The params without `tools`: the Messages create params, the runner's settings and the history. */
export type ParamsWithoutTools = Omit<MessageCreateParamsBase, 'tools' | 'stream' | 'thread' | 'messages' | 'compaction'> &
  RunnerSettings & {
    messages: BetaMessageParam[];
  };

/** The run's settings among the params (the rest is the request's body). */
export const SETTING_NAMES: ReadonlySet<string> = new Set(['max_iterations', 'stream', 'runToolsEagerly', 'compactionControl', 'thread']);
