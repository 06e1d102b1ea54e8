/**
 * The SDK runner's own spans, for a client that traces (its `openTelemetry` option, which gives it
 * a tracer: `client._tracer`), as the SDK's runner makes them: `anthropic.messages.tool_runner` for
 * each pass of the loop, and under it the requests (the client's own `anthropic.messages.create`
 * spans) and one span per call of a tool the run has (`anthropic.custom_tool_use {name}`, or
 * `anthropic.mcp_tool_use {name}` for the SDK's `mcpTool`); `gen_ai.conversation.id` on each from
 * the request options' `openTelemetry.conversationId`. A step of telemetry that throws never fails
 * the run: it is logged at debug and skipped, as the SDK does.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk';
import type { RequestOptions } from './client.js';
import { sdkHelperTag } from './helper-header.js';
import type { LeveledLogger } from './log.js';
import type { RunScope, ScopedCall, ScopedOutcome } from './scope.js';
import { setToolContentAttributes } from './sdk-span-content.js';
import type { Runner } from './surface.js';
import { isCancellation } from './stop-reason.js';
import {
  type ContextLike,
  SPAN_KIND_INTERNAL,
  STATUS_ERROR,
  STATUS_OK,
  type SpanLike,
  type TracerLike,
  activeContext,
  hasValidContext,
  inContext,
  withSpan,
} from './trace-context.js';

/** What the spans read of an `Anthropic` client (or a Bedrock, Vertex, Foundry one). */
interface TracingClient {
  _tracer?: TracerLike | undefined;
  _genAIProviderName?: string | undefined;
  openTelemetry?: { traces?: { contentMode?: string; maxContentBytes?: number } } | undefined;
}

/** How a pass of the loop ended: its last reply, an error, or the caller stopped iterating. */
export type PassEnd = 'completed' | 'closed' | { error: unknown };

const DEFAULT_MAX_CONTENT_BYTES = 750_000;

export class SdkSpans implements RunScope {
  readonly #client: TracingClient;
  readonly #tracer: TracerLike;
  readonly #logger: LeveledLogger;
  /** The run's current request options (`setRequestOptions` changes them). */
  readonly #requests: { readonly requestOptions: RequestOptions };
  #span: SpanLike | undefined;
  #context: ContextLike | undefined;

  /** The spans of `client`'s runs, or undefined when the client does not trace. */
  static of(client: unknown, logger: LeveledLogger, requests: { readonly requestOptions: RequestOptions }): SdkSpans | undefined {
    const tracer = (client as TracingClient)._tracer;
    return tracer ? new SdkSpans(client as TracingClient, tracer, logger, requests) : undefined;
  }

  private constructor(client: TracingClient, tracer: TracerLike, logger: LeveledLogger, requests: { readonly requestOptions: RequestOptions }) {
    this.#client = client;
    this.#tracer = tracer;
    this.#logger = logger;
    this.#requests = requests;
  }

  /**
   * Starts the span of a pass of the loop, as a child of the active span. False when it neither
   * records nor carries a trace (no tracer provider registered): the pass then runs without spans.
   */
  start(params: Record<string, unknown>): boolean {
    const conversationId = this.#conversationId();
    const output = params['output_config'] as { format?: { type?: unknown } } | undefined;
    const legacy = params['output_format'] as { type?: unknown } | undefined;
    const span = this.#guard(() =>
      this.#tracer.startSpan('anthropic.messages.tool_runner', {
        kind: SPAN_KIND_INTERNAL,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.provider.name': this.#client._genAIProviderName,
          'gen_ai.request.model': params['model'],
          ...((output?.format?.type === 'json_schema' || legacy?.type === 'json_schema') && { 'gen_ai.output.type': 'json' }),
          ...(conversationId != null && { 'gen_ai.conversation.id': conversationId }),
        },
      }),
    );
    if (!span || (!span.isRecording() && !hasValidContext(span))) return false;
    this.#span = span;
    this.#context = withSpan(activeContext(), span);
    return true;
  }

  /** Ends the pass's span: OK with a last reply, failed with an error (not an abort), no status when closed early. */
  end(how: PassEnd): void {
    const span = this.#span;
    if (!span) return;
    this.#span = undefined;
    this.#context = undefined;
    this.#guard(() => {
      if (how === 'completed') span.setStatus({ code: STATUS_OK });
      else if (how !== 'closed') failed(span, how.error);
      span.end();
    });
  }

  request<T>(_runner: Runner, _requestId: number, send: () => T): T {
    return this.#context ? inContext(this.#context, send) : send();
  }

  /** The run's `onRequest` and `onMessage` hooks run in the pass's context, as its requests do. */
  hook<T>(_runner: Runner, call: () => T): T {
    return this.#context ? inContext(this.#context, call) : call();
  }

  /**
   * Runs a call inside its span: OK with a result, `tool_error` with an error result, no status
   * when it was cancelled (its signal aborted) or waits for approval. A call started by the
   * caller's `generateToolResponse()` is a child of the caller's span, as in the SDK.
   */
  async toolCall<Outcome extends ScopedOutcome>(scoped: ScopedCall, run: () => Promise<Outcome>): Promise<Outcome> {
    // The SDK's runner makes no span for a call it does not run (an unknown tool's); its onToolResult hook runs in the
    // pass's context, as a call's that ran (a span it starts goes with the run, not into a trace of its own).
    if (scoped.notRun) return scoped.byCaller || !this.#context ? run() : inContext(this.#context, run);
    const parent = scoped.byCaller || !this.#context ? activeContext() : this.#context;
    const { call, tool } = scoped;
    const toolset = (call.toolUse as { toolset_name?: unknown }).toolset_name;
    const conversationId = this.#conversationId();
    const attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.provider.name': this.#client._genAIProviderName,
      'gen_ai.tool.name': call.name,
      ...(typeof toolset === 'string' && { 'anthropic.toolset.name': toolset }),
      ...(tool.description && { 'gen_ai.tool.description': tool.description }),
      'gen_ai.tool.call.id': call.id,
      'gen_ai.tool.type': 'function',
      ...(conversationId != null && { 'gen_ai.conversation.id': conversationId }),
    };
    const operation = isSdkMcpTool(tool) ? 'anthropic.mcp_tool_use' : 'anthropic.custom_tool_use';
    const span = this.#guard(() => this.#tracer.startSpan(`${operation} ${call.name}`, { kind: SPAN_KIND_INTERNAL, attributes }, parent));
    if (!span) return run();
    let outcome: Outcome | undefined;
    try {
      outcome = await inContext(withSpan(parent, span), run);
      return outcome;
    } finally {
      const result = outcome && 'result' in outcome ? outcome.result : undefined;
      const succeeded = result !== undefined && result.is_error !== true;
      // A result says itself whether it was cut short (a tool that failed before the run aborted failed); else the signal does.
      const cancelled = !succeeded && (result !== undefined ? (outcome as { cancelled?: boolean }).cancelled === true : scoped.signal?.aborted === true || outcome !== undefined);
      const traces = this.#client.openTelemetry?.traces;
      if (traces?.contentMode === 'content' && span.isRecording()) {
        this.#guard(() => setToolContentAttributes(span, call.toolUse.input, cancelled ? undefined : result, traces.maxContentBytes ?? DEFAULT_MAX_CONTENT_BYTES));
      }
      this.#guard(() => {
        if (succeeded) span.setStatus({ code: STATUS_OK });
        else if (!cancelled) failed(span, undefined, 'tool_error');
        span.end();
      });
    }
  }

  #conversationId(): unknown {
    return this.#requests.requestOptions.openTelemetry?.conversationId;
  }

  #guard<T>(step: () => T): T | undefined {
    try {
      return step();
    } catch (problem) {
      this.#logger.debug('could not record telemetry', problem);
      return undefined;
    }
  }
}

/** A tool made by the SDK's `mcpTool()`, which marks it with its helper symbol. */
function isSdkMcpTool(tool: object): boolean {
  return sdkHelperTag(tool) === 'mcpTool';
}

/** The status of a failed operation: an abort is a cancellation, and sets none. */
function failed(span: SpanLike, error: unknown, type?: string): void {
  if (isCancellation(error)) return;
  span.setStatus({ code: STATUS_ERROR });
  span.setAttribute('error.type', type ?? errorType(error));
}


/** `error.type` as the SDK names it: the API's error type, else the status, else the kind of failure. */
function errorType(error: unknown): string {
  if (error instanceof APIConnectionTimeoutError) return 'client_timeout_error';
  if (error instanceof APIConnectionError) return 'connection_error';
  if (error instanceof APIError) {
    if (error.type) return error.type;
    if (error.status !== undefined) return String(error.status);
  }
  return 'client_error';
}
