/** The client the runner sends requests through: an `Anthropic` instance or anything shaped like one. */
import type Anthropic from '@anthropic-ai/sdk';

/** Options for each request (headers, timeout, maxRetries, signal, ...), as the SDK takes them. */
export type RequestOptions = NonNullable<Parameters<Anthropic['messages']['countTokens']>[1]>;

/** The two calls the runner makes on `client.beta.messages` (or `client.messages`). */
export interface MessagesApi {
  create(body: any, options?: any): PromiseLike<any>;
  stream(body: any, options?: any): MessageStreamLike;
}

/** What the runner uses of the SDK's `BetaMessageStream` (or `MessageStream` for clients without beta). */
export interface MessageStreamLike {
  finalMessage(): Promise<unknown>;
  abort(): void;
  on(event: any, listener: (...args: any[]) => void): unknown;
}

/** `Anthropic`, `AnthropicBedrock`, `AnthropicVertex`, ...: any client with `beta.messages` or `messages`. */
export type ClientLike = { beta: { messages: MessagesApi } } | { messages: MessagesApi };

/** Throws a clear error when the first argument of `toolRunner` is no client at all (`undefined`, a string, ...). */
export function checkClient(client: unknown): void {
  if ((typeof client !== 'object' && typeof client !== 'function') || client === null) {
    throw new TypeError(`toolRunner: the first argument must be an Anthropic client (or an SDK BetaMessageThread), got ${client === null ? 'null' : typeof client}`);
  }
  // The SDK's own form is client.beta.messages.toolRunner(params): here the client comes first.
  if (Object.getPrototypeOf(client) === Object.prototype && 'model' in client && Array.isArray((client as { messages?: unknown }).messages)) {
    throw new TypeError('toolRunner: the first argument is the request params; pass your client first: toolRunner(client, params, options?)');
  }
  // `client.beta.messages` (or `client.messages`) given for the client: its `create` is there, but not where the runner looks.
  if (!canSend(client) && typeof (client as { create?: unknown }).create === 'function') {
    throw new TypeError('toolRunner: the first argument is a messages API (client.beta.messages or client.messages), not the client: pass the client itself, toolRunner(client, params)');
  }
}

/** `client.beta.messages`, or `client.messages` for clients without `beta`. */
export function messagesApi(client: ClientLike): MessagesApi {
  const beta = (client as { beta?: { messages?: MessagesApi } }).beta?.messages;
  if (beta) return beta;
  const messages = (client as { messages?: MessagesApi }).messages;
  if (messages) return messages;
  throw new TypeError('toolRunner: the client has neither `beta.messages` nor `messages`; pass an Anthropic client');
}

/** The GenAI provider `client` names in its own spans (`anthropic`, `gcp.vertex_ai`, `aws.bedrock`); `anthropic` when it names none. */
export function providerOf(client: unknown): string {
  const named = (client as { _genAIProviderName?: unknown } | null | undefined)?._genAIProviderName;
  return typeof named === 'string' && named !== '' ? named : 'anthropic';
}

/** Whether `client` can send a Messages request (`beta.messages.create` or `messages.create`): an Anthropic client, or Bedrock's, Vertex's, ... */
export function canSend(client: unknown): boolean {
  const of = client as { beta?: { messages?: { create?: unknown } }; messages?: { create?: unknown } } | null | undefined;
  return typeof (of?.beta?.messages ?? of?.messages)?.create === 'function';
}

/** What `create({ ...body, stream: true }).withResponse()` resolves to: the response and its SSE events. */
export interface OpenedStream {
  response: Response;
  data: AsyncIterable<unknown> & { controller: AbortController };
}

/** The SDK's client timeout when none is given (10 minutes). */
const DEFAULT_CLIENT_TIMEOUT_MS = 600_000;

/**
 * A request sent without streaming whatever the run does (a compaction's summary): with a timeout
 * given (the client's), the SDK does not refuse a large `max_tokens` ("Streaming is required for
 * operations that may take longer than 10 minutes"), which a streamed run's turns may ask for.
 */
export function withTimeout(options: RequestOptions, client: ClientLike): RequestOptions {
  if (options.timeout !== undefined) return options;
  const timeout = (client as { timeout?: unknown }).timeout;
  return { ...options, timeout: typeof timeout === 'number' ? timeout : DEFAULT_CLIENT_TIMEOUT_MS };
}
