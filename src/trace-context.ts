/**
 * The little of OpenTelemetry the core needs to make the SDK runner's own spans (sdk-spans.ts)
 * without importing `@opentelemetry/api`, an optional peer that only `tool-runner/otel` imports.
 *
 * Spans come from the client's own tracer (`client._tracer`), so only the context is left: the
 * active one, a copy with a span set, and running a function inside one. Every copy of
 * `@opentelemetry/api` 1.x keeps the context manager the application registered in one registry
 * on `globalThis` (`Symbol.for('opentelemetry.js.api.1')`), and makes its context keys with
 * `Symbol.for` so that copies of different versions agree on them: this reads the same registry
 * and uses the same span key, as another copy of the API would. With no context manager
 * registered, as with the API's no-op one, a function runs in the context it was called in.
 */

/** OpenTelemetry's `Context`. */
export interface ContextLike {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): ContextLike;
  deleteValue(key: symbol): ContextLike;
}

/** What the SDK spans use of OpenTelemetry's `Span`. */
export interface SpanLike {
  spanContext(): { traceId: string; spanId: string };
  isRecording(): boolean;
  setAttribute(key: string, value: string | number | boolean | string[]): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}

/** What the SDK spans use of OpenTelemetry's `Tracer`. */
export interface TracerLike {
  startSpan(name: string, options?: { kind?: number; attributes?: Record<string, unknown> }, context?: ContextLike): SpanLike;
}

/** OpenTelemetry's `SpanKind.INTERNAL` and `SpanStatusCode` values. */
export const SPAN_KIND_INTERNAL = 0;
export const STATUS_OK = 1;
export const STATUS_ERROR = 2;

interface ContextManagerLike {
  active(): ContextLike;
  with<T>(context: ContextLike, fn: () => T): T;
}

const REGISTRY = Symbol.for('opentelemetry.js.api.1');
const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');
const INVALID_TRACE_ID = '00000000000000000000000000000000';

function contextManager(): ContextManagerLike | undefined {
  return (globalThis as { [REGISTRY]?: { context?: ContextManagerLike } })[REGISTRY]?.context;
}

/** A context of its own, for when no context manager is registered (the API's root context). */
class MapContext implements ContextLike {
  readonly #values: Map<symbol, unknown>;

  constructor(values: Map<symbol, unknown>) {
    this.#values = values;
  }

  getValue(key: symbol): unknown {
    return this.#values.get(key);
  }

  setValue(key: symbol, value: unknown): ContextLike {
    return new MapContext(new Map(this.#values).set(key, value));
  }

  deleteValue(key: symbol): ContextLike {
    const values = new Map(this.#values);
    values.delete(key);
    return new MapContext(values);
  }
}

const ROOT = new MapContext(new Map());

/** The active context (`context.active()`). */
export function activeContext(): ContextLike {
  return contextManager()?.active() ?? ROOT;
}

/** `context` with `span` as its span (`trace.setSpan(context, span)`). */
export function withSpan(context: ContextLike, span: SpanLike): ContextLike {
  return context.setValue(SPAN_KEY, span);
}

/** Calls `fn` with `context` active (`context.with(context, fn)`). */
export function inContext<T>(context: ContextLike, fn: () => T): T {
  const manager = contextManager();
  return manager ? manager.with(context, fn) : fn();
}

/** Whether the span has a trace of its own to record or pass on (`trace.isSpanContextValid`). */
export function hasValidContext(span: SpanLike): boolean {
  const { traceId } = span.spanContext();
  return traceId.length === 32 && traceId !== INVALID_TRACE_ID;
}
