/**
 * A turn's request when it may go over a message thread: the thread shapes each attempt's body
 * and options, and a rejection it recovers from sends the request again (a replay, or no thread).
 */
import { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import { type ClientLike, type OpenedStream, type RequestOptions, messagesApi } from './client.js';
import { withFields } from './copy.js';
import type { LeveledLogger } from './log.js';
import type { MessageThread } from './thread.js';
import type { BetaMessage } from './types.js';

/** What a request over a thread needs beside its body. */
export interface ThreadRequest {
  client: ClientLike;
  thread: MessageThread;
  /** The runner made every change to the history since the last request itself. */
  appendsOnly: boolean;
  options: RequestOptions;
  logger: LeveledLogger;
  /** The last request sent for it, not streamed (the SDK's `APIPromise`): whether its response came, should it fail. */
  sent?: PromiseLike<unknown>;
}

/** `create`, over the thread when there is one. */
export function createMessage(body: Record<string, unknown>, request: ThreadRequest): PromiseLike<BetaMessage> {
  const api = messagesApi(request.client);
  if (!request.thread.threading) return (request.sent = api.create(request.thread.unthreaded(body), request.options) as PromiseLike<BetaMessage>);
  return recovering((wire, options) => (request.sent = api.create(wire, options) as PromiseLike<BetaMessage>), body, request, request.options);
}

/** The request's stream; over a thread, the stream's request is sent again as `createMessage` does. */
export function streamMessage(body: Record<string, unknown>, request: ThreadRequest): BetaMessageStream {
  if (!request.thread.threading) return messagesApi(request.client).stream(request.thread.unthreaded(body), request.options) as BetaMessageStream;
  return streamVia(body, request.options, (streamOptions) => openStream(body, request, streamOptions));
}

/**
 * A `MessageStream` whose request `open` sends (and may send again, or elsewhere) with the options
 * the stream gives it (its abort signal among them).
 */
export function streamVia(body: Record<string, unknown>, options: RequestOptions, open: (streamOptions: RequestOptions) => Promise<OpenedStream>): BetaMessageStream {
  // The stream makes its request through `create`, with the options (its abort signal) it passes.
  const through = { create: (_body: unknown, streamOptions: RequestOptions) => ({ withResponse: () => open(streamOptions) }) };
  // No `client` for the stream: each attempt's `create` starts the client's span itself, with the body it sends
  // (the thread's), as the SDK's thread does; given the client, the stream would start one with the whole history.
  return BetaMessageStream.createMessage(through as never, withFields(body, { stream: true }) as never, options);
}

/** Sends a streamed request over the thread when there is one: resolves once the response has arrived. */
export function openStream(body: Record<string, unknown>, request: ThreadRequest, streamOptions: RequestOptions): Promise<OpenedStream> {
  type Sent = { withResponse(): Promise<OpenedStream> };
  const api = messagesApi(request.client);
  const send = (wire: Record<string, unknown>, options: RequestOptions) => (api.create(withFields(wire, { stream: true }), options) as unknown as Sent).withResponse();
  return request.thread.threading ? recovering(send, body, request, streamOptions) : send(request.thread.unthreaded(body), streamOptions);
}

/**
 * Sends the thread's wire body and request options for `body`; on a rejection the thread
 * recovers from, sends the new ones (3 times at most: a thread it stops sends neither `thread`
 * nor its beta).
 */
async function recovering<T>(
  send: (wire: Record<string, unknown>, options: RequestOptions) => PromiseLike<T>,
  body: Record<string, unknown>,
  { thread, appendsOnly, logger }: ThreadRequest,
  options: RequestOptions,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send(thread.wireBody(body, appendsOnly), thread.requestOptions(options));
    } catch (error) {
      if (attempt >= 3 || !thread.recovers(error, logger)) throw error;
    }
  }
}
