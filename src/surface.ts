/**
 * The types every room shares, in the lowest room that needs them all: a tool, its context, the
 * runner's params and the runner's public surface refer to one another, so they live together
 * here. This file imports only rooms that import nothing of the runner (no import cycle).
 */
import type { BetaTool } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { BetaToolRunnerParams } from '@anthropic-ai/sdk/lib/tools/BetaToolRunner';
import type { PendingApproval } from './approval.js';
import type { RequestOptions } from './client.js';
import type { JsonObjectSchema, ValidationResult } from './schema.js';
import type { ParamsWithoutTools } from './settings.js';
import type { RunnerSnapshot } from './snapshot.js';
import type { StoppedBy } from './stop-reason.js';
import type { BetaCompactionConfig, BetaMessage, BetaMessageParam, BetaToolUnion, BetaToolUseBlock, Promisable, ToolResultContent, ToolResultMessage } from './types.js';
import type { Usage } from './usage.js';

/** What a tool's `run` receives besides its input. */
export interface ToolContext {
  /** The model's `tool_use` block being answered. */
  toolUse: BetaToolUseBlock;
  /** @deprecated The SDK's older name for `toolUse`, kept so SDK-made tools run unchanged. */
  toolUseBlock: BetaToolUseBlock;
  /** Aborts when the runner is aborted or the tool's timeout passes. Pass it to fetch, child processes, ... */
  signal: AbortSignal;
  /** The number of requests sent so far (the request whose reply asked for this call included). */
  iteration: number;
  /** The runner running the tool. */
  runner: Runner;
  /**
   * A key that names this call and stays the same if the call runs again: pass it to payment
   * APIs and the like. The tool_use id here; the workflow id and the tool_use id in a durable
   * run (`tool-runner/dbos`), whatever worker runs it.
   */
  idempotencyKey: string;
}

/** Decides whether a call needs a human's approval (see the approval docs). */
export type NeedsApproval<Input> = boolean | ((input: Input, context: ToolContext) => Promisable<boolean>);

/** The API's tool fields other than those `tool()` sets itself (cache_control, strict, input_examples, ...). */
export type ExtraToolFields = Omit<BetaTool, 'name' | 'description' | 'input_schema' | 'type'>;

/** A tool the runner can execute: the API definition plus `run`. */
export type RunnableTool<Input = any> = ExtraToolFields & {
  /** `'custom'` or none, as the API's custom tool (typed, so that `tools.map((t) => t.type)` reads as with the SDK's). */
  type?: 'custom' | null;
  name: string;
  description?: string;
  input_schema: JsonObjectSchema;
  run: (input: Input, context: ToolContext) => Promisable<ToolResultContent>;
  /** Run-time validation of the model's input (tools made by `tool()`). */
  validateInput?: (input: unknown) => ValidationResult<Input> | Promise<ValidationResult<Input>>;
  /** Parsing of the model's input, as the SDK's helpers (`betaZodTool`, `betaTool`) provide it. */
  parse?: (input: unknown) => Input;
  needsApproval?: NeedsApproval<Input>;
  timeoutMs?: number;
};

/** Anything `tools` may hold: runnable tools (ours or the SDK's) and plain API tool definitions. */
export type AnyTool = RunnableTool<any> | BetaToolUnion;

/** A `tools` entry whose tools may change during a run (see `tool-runner/mcp`). */
export interface ToolSource {
  readonly kind: 'tool-source';
  /** None: a source is no tool of the API (typed, so that `tools.map((t) => t.type)` reads as with the SDK's). */
  readonly type?: undefined;
  /**
   * The tools now. Called before each request: return the same array while nothing changed. `signal`
   * is the run's (when it has one): a slow source may stop when it aborts; the run does not wait for
   * it either way.
   */
  tools(options?: { signal?: AbortSignal }): AnyTool[] | Promise<AnyTool[]>;
}

/** Anything `tools` may hold. */
export type ToolEntry = AnyTool | ToolSource;

/** `toolRunner`'s params: what `messages.create` takes, with runnable tools, plus the runner's settings. */
export type RunnerParams = ParamsWithoutTools & {
  /** Runnable tools (`tool()`, `betaZodTool`, ...), plain tool definitions (server tools, ...) and tool sources (MCP). */
  tools?: ToolEntry[] | undefined;
};

/**
 * `runner.params` as it reads: a read-only copy, as the SDK's runner types it. `tools` is typed as
 * always there, as the SDK types it (so a program typed against the SDK compiles), though it is
 * `undefined` when the run has no tools.
 */
export type RunnerParamsRead = Readonly<RunnerParamsCopy>;

/** The copy of the params a `setMessagesParams` function is given: its own, to change in place and return (as a program written for the SDK's runner does). */
export type RunnerParamsCopy = Omit<RunnerParams, 'tools'> & { tools: ToolEntry[] };

/**
 * The public surface of a run, as tools (`context.runner`), hooks and observers (`RunnerEvent.runner`)
 * see it. `ToolRunner` implements it; see its methods for the details and examples.
 */
export interface Runner {
  /** A read-only copy of the current params. In the loop body it does not yet hold the message just yielded. */
  readonly params: RunnerParamsRead;
  /** The number of requests sent (a failed one too), as the SDK counts them. */
  readonly iteration: number;
  /** The summed usage of every reply. */
  readonly usage: Usage;
  /** The calls the run stopped for, waiting for `approve(id)` or `deny(id, reason)`. */
  readonly pendingApprovals: PendingApproval[];
  /** Why the run stopped, once it has; `undefined` while it runs. */
  readonly stoppedBy: StoppedBy | undefined;
  /** With `options.output`: the validated final answer, once the run has ended with one. */
  readonly output: unknown;
  approve(id: string, options?: { input?: unknown }): void;
  deny(id: string, reason?: string): void;
  setMessagesParams(params: RunnerParams | ((previous: RunnerParamsCopy) => RunnerParams)): void;
  /** A function typed with the SDK's params type, as a program written for the SDK's runner has it. */
  setMessagesParams(mutate: (previous: BetaToolRunnerParams) => BetaToolRunnerParams): void;
  pushMessages(...messages: BetaMessageParam[]): void;
  setRequestOptions(options: RequestOptions | ((previous: RequestOptions) => RequestOptions)): void;
  /** The request options the next requests go with (`options.requestOptions`, as `setRequestOptions` left them). */
  readonly requestOptions: Readonly<RequestOptions>;
  generateToolResponse(signal?: AbortSignal | null): Promise<ToolResultMessage | null>;
  compactBeforeNextTurn(config?: BetaCompactionConfig): void;
  addTools(...tools: AnyTool[]): void;
  removeTools(...tools: Array<AnyTool | string>): void;
  deferToolCall(toolUse: BetaToolUseBlock | string): void;
  readonly deferredToolCalls: BetaToolUseBlock[];
  toJSON(): RunnerSnapshot;
  done(): Promise<BetaMessage>;
  runUntilDone(): Promise<BetaMessage>;
}
