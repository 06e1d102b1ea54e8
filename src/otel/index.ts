/**
 * tool-runner/otel: OpenTelemetry spans for a run, each request and each tool call, following the
 * GenAI semantic conventions. It listens to the runner's lifecycle events (`options.onEvent`), and
 * its scope runs each request and each tool call inside its span's context (and the run's `onRequest` and
 * `onMessage` hooks inside the run's), so the core never imports `@opentelemetry/api`.
 */
import { type Context, type Span, SpanKind, SpanStatusCode, type Tracer, context, trace } from '@opentelemetry/api';
import { described, errorName, thrownMessage, unknownOption, wrongType, wrongValue } from '../described.js';
import { hiddenMessage } from '../output-error-text.js';
import { type RunnerEvent, type RunnerListener, callersOf } from '../events.js';
import type { RunScope } from '../scope.js';
import { isCancellation } from '../stop-reason.js';
import type { Runner } from '../surface.js';
import { utf8Length, withoutLeftOutFields } from '../sdk-span-content.js';
import { type ContentList, fitContent, replyContent, requestContent } from './content.js';
import { cutText } from '../cut.js';
import { withoutHeaderValues } from '../header-values.js';

export interface OpenTelemetryOptions {
  /** Default: `trace.getTracer('tool-runner')` from the global provider. */
  tracer?: Tracer | undefined;
  /**
   * Record message contents, tool arguments and results on the spans (off by default: they may hold
   * personal data), in the GenAI conventions' shape (`[{ role, parts: [{ type: 'text', content }] }]`).
   */
  captureContent?: boolean | undefined;
  /**
   * With `captureContent`: the most bytes (UTF-8) of content one span holds, 750 000 by default (as
   * the SDK's spans). A chat span leaves out whole parts, oldest first; a tool span its arguments or
   * result whole; either then has `tool_runner.content.truncated`.
   */
  maxContentBytes?: number | undefined;
  /** The agent's name, in the run span's name and `gen_ai.agent.name`. */
  agentName?: string | undefined;
}

const OPTIONS = ['tracer', 'captureContent', 'maxContentBytes', 'agentName'];

/**
 * An option left unread would be left out silently (no content captured, no spans at all, the default
 * name): any other key, or a value of another kind, is a clear error instead.
 */
function checkOptions(options: OpenTelemetryOptions): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new TypeError('openTelemetry: options must be an object');
  for (const key of Object.keys(options)) {
    if (OPTIONS.includes(key)) continue;
    // The run's, not the listener's: one listener serves many runs, each of its own conversation.
    if (key === 'conversationId') {
      throw new TypeError("openTelemetry: conversationId is given for each run, in the runner's options: requestOptions: { openTelemetry: { conversationId } }");
    }
    if (key === 'tracerProvider') throw new TypeError("openTelemetry: unknown option 'tracerProvider'; pass a tracer from it: { tracer: provider.getTracer('my-agent') }");
    throw unknownOption('openTelemetry', key, OPTIONS);
  }
  const { tracer, captureContent, agentName, maxContentBytes } = options;
  if (tracer !== undefined && typeof (tracer as Partial<Tracer> | null)?.startSpan !== 'function') {
    const provider = typeof (tracer as { getTracer?: unknown } | null)?.getTracer === 'function';
    throw new TypeError(`openTelemetry: tracer must be a Tracer (with startSpan), got ${provider ? "a TracerProvider: pass provider.getTracer('my-agent')" : described(tracer)}`);
  }
  if (captureContent !== undefined && typeof captureContent !== 'boolean') throw wrongType(captureContent, 'openTelemetry: captureContent must be true or false');
  if (agentName !== undefined && (typeof agentName !== 'string' || agentName === '')) throw wrongType(agentName, 'openTelemetry: agentName must be a non-empty string');
  if (maxContentBytes !== undefined && !(typeof maxContentBytes === 'number' && maxContentBytes >= 0)) {
    throw wrongValue(maxContentBytes, 'openTelemetry: maxContentBytes must be a number of bytes (0 or more)');
  }
}

/**
 * A listener for `options.onEvent` that records spans: `invoke_agent` for the run, `chat {model}`
 * for each request, `execute_tool {name}` for each tool call (error status when it fails), each with
 * `gen_ai.conversation.id` from the run's `requestOptions.openTelemetry.conversationId`. Each
 * request is sent, and each tool call handled, with its span active: a span the tool starts is a
 * child of its `execute_tool` span, and the client's own `anthropic.messages.create` span (when
 * the client traces) a child of `chat`. With it, the run makes none of the SDK runner's own spans
 * (`anthropic.messages.tool_runner`, `anthropic.custom_tool_use …`): these stand in for them.
 *
 * @example
 * ```ts
 * const runner = toolRunner(client, params, { onEvent: openTelemetry({ agentName: 'support-bot' }) });
 * ```
 */
export function openTelemetry(options: OpenTelemetryOptions = {}): RunnerListener & { readonly scope: RunScope } {
  checkOptions(options);
  const tracer = options.tracer ?? trace.getTracer('tool-runner');
  const capture = options.captureContent === true;
  const agent = options.agentName ?? 'tool-runner';
  const limit = options.maxContentBytes ?? DEFAULT_MAX_CONTENT_BYTES;
  /** With `captureContent`: the content of each request in flight, which its reply's content must fit beside. */
  const contents = new Map<string, ContentList[]>();
  /** Each run's span, and its GenAI provider (its client's): a request's span has it until the client that answered says another. */
  const runs = new WeakMap<Runner, { span: Span; context: Context; provider: string }>();
  const requests = new Map<string, Span>();
  const tools = new Map<string, Span>();
  /**
   * The open `execute_tool` spans by `tool_use` id: the parent of the sub-agent a call starts (its events' `callPath` ends with
   * the id), for events that do not name the call's runner (a runner of an older version).
   */
  const toolsByCall = new Map<string, Span>();
  const parent = (runner: Runner) => runs.get(runner)?.context ?? context.active();
  const key = (runner: Runner, id: number | string) => `${runIds.get(runner) ?? 0}:${id}`;
  const runIds = new WeakMap<Runner, number>();
  let nextRunId = 0;

  // The context of a span, under the run's span (or the context active now).
  const inSpan = <T>(runner: Runner, span: Span | undefined, fn: () => T): T => (span ? context.with(trace.setSpan(parent(runner), span), fn) : fn());
  const scope: RunScope = {
    request: (runner, requestId, send) => inSpan(runner, requests.get(key(runner, requestId)), send),
    toolCall: (scoped, run) => inSpan(scoped.runner, tools.get(key(scoped.runner, scoped.call.id)), run),
    // The run's `onRequest` and `onMessage` hooks: under its `invoke_agent` span.
    hook: (runner, call) => {
      const run = runs.get(runner);
      return run ? context.with(run.context, call) : call();
    },
  };

  const listener = (event: RunnerEvent) => {
    switch (event.type) {
      case 'run.start': {
        // One id a runner, whatever its pass: a call of one pass may end in the next (it ran on while a hook failed about another).
        if (!runIds.has(event.runner)) runIds.set(event.runner, ++nextRunId);
        // A sub-agent (`agentTool`) is named after its tool.
        const name = event.path?.at(-1) ?? agent;
        // A sub-agent's run is a child of the call that started it, with no context manager to say so too.
        const call = event.callPath?.at(-1);
        // By the runner of that call too, when the event says (the same id may be a call of two runs).
        const caller = callersOf(event)?.at(-1);
        const started = call === undefined ? undefined : caller ? tools.get(key(caller, call)) : toolsByCall.get(call);
        const base = started ? trace.setSpan(context.active(), started) : context.active();
        // The client's own provider (Vertex's, Bedrock's), as the SDK's request spans under these name it.
        const provider = event.provider ?? 'anthropic';
        const span = tracer.startSpan(`invoke_agent ${name}`, {
          kind: SpanKind.INTERNAL,
          attributes: {
            'gen_ai.operation.name': 'invoke_agent',
            'gen_ai.provider.name': provider,
            'gen_ai.system': provider,
            'gen_ai.agent.name': name,
            ...(typeof event.model === 'string' && { 'gen_ai.request.model': event.model }),
            ...conversationOf(event.runner),
          },
        }, base);
        runs.set(event.runner, { span, context: trace.setSpan(base, span), provider });
        break;
      }
      case 'run.end': {
        const run = runs.get(event.runner);
        if (!run) break;
        if (event.error !== undefined) failed(run.span, event.error, capture);
        // Left by the loop body (a `break`, or a throw there): a cancellation, with no status, as the SDK's runner span.
        else if (event.runner.stoppedBy !== 'break') run.span.setStatus({ code: SpanStatusCode.OK });
        run.span.end();
        runs.delete(event.runner);
        break;
      }
      case 'request.start': {
        const body = event.body;
        const model = String(body['model'] ?? '');
        const provider = runs.get(event.runner)?.provider ?? 'anthropic';
        const span = tracer.startSpan(
          `chat ${model}`,
          {
            kind: SpanKind.CLIENT,
            attributes: {
              'gen_ai.operation.name': 'chat',
              'gen_ai.provider.name': provider,
              'gen_ai.system': provider,
              'gen_ai.request.model': model,
              ...(typeof body['max_tokens'] === 'number' && { 'gen_ai.request.max_tokens': body['max_tokens'] }),
              ...(typeof body['temperature'] === 'number' && { 'gen_ai.request.temperature': body['temperature'] }),
              'tool_runner.request.purpose': event.purpose,
              ...conversationOf(event.runner),
            },
          },
          parent(event.runner),
        );
        requests.set(key(event.runner, event.requestId), span);
        // Set on the span when the request ends, beside the reply, within the limit (an attribute set can't be taken back).
        if (capture) contents.set(key(event.runner, event.requestId), requestContent(body, limit));
        break;
      }
      case 'request.end': {
        const id = key(event.runner, event.requestId);
        const span = requests.get(id);
        if (!span) break;
        requests.delete(id);
        const content = capture ? contents.get(id) : undefined;
        if (content) contents.delete(id);
        const message = event.message;
        if (message) {
          const { usage } = message;
          span.setAttributes({
            'gen_ai.response.id': message.id,
            'gen_ai.response.model': message.model,
            'gen_ai.response.finish_reasons': message.stop_reason ? [message.stop_reason] : [],
            // All the input tokens, the cached ones included, as the conventions ask (and the SDK's own span counts them).
            'gen_ai.usage.input_tokens': usage.input_tokens + (usage.cache_read_input_tokens ?? 0) + (usage.cache_creation_input_tokens ?? 0),
            'gen_ai.usage.output_tokens': usage.output_tokens,
            ...(usage.cache_read_input_tokens != null && { 'gen_ai.usage.cache_read.input_tokens': usage.cache_read_input_tokens }),
            ...(usage.cache_creation_input_tokens != null && { 'gen_ai.usage.cache_creation.input_tokens': usage.cache_creation_input_tokens }),
          });
        }
        // The reply within the limit beside the request's content (which loses its oldest parts first).
        if (content) setContent(span, fitContent(message ? [...content, replyContent(message)] : content, limit));
        // A fallback answered (or failed last): which entry; the model that answered is `gen_ai.response.model`.
        if (event.fallback !== undefined) span.setAttribute('tool_runner.request.fallback', event.fallback);
        // A fallback's client may be another provider's (a Vertex client behind an Anthropic one).
        if (event.provider !== undefined) span.setAttributes({ 'gen_ai.provider.name': event.provider, 'gen_ai.system': event.provider });
        if (event.error !== undefined) failed(span, event.error, capture);
        span.end();
        break;
      }
      case 'tool.start': {
        const span = tracer.startSpan(
          `execute_tool ${event.call.name}`,
          {
            kind: SpanKind.INTERNAL,
            attributes: {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': event.call.name,
              'gen_ai.tool.call.id': event.call.id,
              'gen_ai.tool.type': 'function',
              ...conversationOf(event.runner),
            },
          },
          parent(event.runner),
        );
        tools.set(key(event.runner, event.call.id), span);
        toolsByCall.set(event.call.id, span);
        break;
      }
      case 'tool.end': {
        const id = key(event.runner, event.call.id);
        const span = tools.get(id);
        if (!span) break;
        tools.delete(id);
        if (toolsByCall.get(event.call.id) === span) toolsByCall.delete(event.call.id);
        const result = event.result;
        if (event.pending) span.setAttribute('tool_runner.tool.pending_approval', true);
        if (capture) {
          // The arguments as the model sent them, and the result, within the limit together.
          const used = setCapped(span, 'gen_ai.tool.call.arguments', JSON.stringify(event.call.toolUse.input), limit);
          // Without image and document data (and encrypted fields), as on the `chat` spans.
          if (result) setCapped(span, 'gen_ai.tool.call.result', JSON.stringify(withoutLeftOutFields(result.content ?? '')), limit - used);
        }
        if (event.error !== undefined) failed(span, event.error, capture);
        // Cut short by an abort or a `break`: a cancellation, with no error status.
        else if (result?.is_error && !event.cancelled) {
          span.setAttribute('error.type', 'tool_error');
          // The result's text is content (an MCP error, a ToolError's words): on the span only when captured.
          const text = typeof result.content === 'string' ? result.content : JSON.stringify(result.content ?? '');
          span.setStatus({ code: SpanStatusCode.ERROR, ...(capture && { message: cutText(text, 500) }) });
        }
        span.end();
        break;
      }
    }
  };
  return Object.assign(listener, { scope });
}

const DEFAULT_MAX_CONTENT_BYTES = 750_000;

/** `gen_ai.conversation.id` from the run's request options (`openTelemetry.conversationId`), as the SDK's spans have it. */
function conversationOf(runner: Runner): { 'gen_ai.conversation.id': string } | undefined {
  const id = (runner.requestOptions as { openTelemetry?: { conversationId?: unknown } } | undefined)?.openTelemetry?.conversationId;
  return typeof id === 'string' ? { 'gen_ai.conversation.id': id } : undefined;
}

function setContent(span: Span, content: { attributes: Record<string, string>; truncated: boolean }): void {
  span.setAttributes(content.attributes);
  if (content.truncated) span.setAttribute('tool_runner.content.truncated', true);
}

/** A tool span's arguments or result, left out whole when over the limit; the bytes it took. */
function setCapped(span: Span, name: string, json: string | undefined, limit: number): number {
  if (json === undefined) return 0;
  const bytes = utf8Length(json);
  if (bytes <= limit) {
    span.setAttribute(name, json);
    return bytes;
  }
  span.setAttribute('tool_runner.content.truncated', true);
  return 0;
}

/** The error status of a failed operation; an abort (the runner's own `break`, the run's signal) is a cancellation, with none. */
function failed(span: Span, error: unknown, capture: boolean): void {
  if (isCancellation(error)) return;
  const name = error instanceof Error ? errorName(error) : 'Error';
  span.setAttribute('error.type', name);
  // A typed output's parse error may quote the model's answer: contents go on spans only when captured.
  const hidden = error instanceof Error ? hiddenMessage(error, capture) : undefined;
  if (hidden !== undefined) span.recordException({ name, message: hidden });
  else if (error instanceof Error) span.recordException(withoutHeaderValuesIn(error, name));
  span.setStatus({ code: SpanStatusCode.ERROR, message: hidden ?? withoutHeaderValues(thrownMessage(error)) });
}

/** The exception to record: `error`, or its name, message and stack without a header's value they quote (it may be the API key). */
function withoutHeaderValuesIn(error: Error, name: string): Error | { name: string; message: string; stack?: string } {
  const message = withoutHeaderValues(String(error.message));
  if (message === error.message) return error;
  return { name, message, ...(typeof error.stack === 'string' && { stack: withoutHeaderValues(error.stack) }) };
}
