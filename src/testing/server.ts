/**
 * A local Messages API server driven by a scripted model: the real SDK client talks to it over
 * HTTP (JSON and SSE), so its retries, timeouts and stream parser run exactly as in production.
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { needsNodeServer } from '../needs-node.js';
import Anthropic, { type ClientOptions } from '@anthropic-ai/sdk';
import type { BetaMessage, BetaMessageParam } from '../types.js';
import { type ScriptedReply, buildMessage, inputTokens } from './reply.js';
import { apiId } from './blocks.js';
import { allowPages, answerPreflight } from './cors.js';
import { errorBody, promptTooLong, sendError } from './api-errors.js';
import { invalidJson, refusal } from './refusals.js';
import { type MessagesRoute, messagesRoute } from './routes.js';
import { Script } from './script.js';
import { type OpenedThread, promptSeen, ThreadStore, type ThreadSupport } from './threads.js';
import { closed, sleep } from './waits.js';
import { type SseEvent, encodeEvent, messageEvents } from './wire.js';
import { replyShapeProblem } from './reply-shape.js';
import { checkServerOptions } from './server-options.js';
import { thrownMessage } from '../described.js';

/** A request body as the server received it: the Messages create params, as JSON. */
export interface RecordedBody {
  model?: string;
  max_tokens?: number;
  /** On a thread `continue`, only the new messages (`RecordedRequest.messages` has the whole conversation). */
  messages?: BetaMessageParam[];
  system?: string | Array<{ type: string; text?: string; [field: string]: unknown }>;
  tools?: Array<{ name?: string; type?: string; [field: string]: unknown }>;
  tool_choice?: { type: string; [field: string]: unknown };
  stream?: boolean;
  thread?: { type: 'create' } | { type: 'continue'; previous_message_id: string };
  betas?: string[];
  [field: string]: unknown;
}

/** A request the server received. */
export interface RecordedRequest {
  /** 0-based position among all requests. */
  index: number;
  method: string;
  path: string;
  /** The URL's query parameters (the SDK's `query` request option). */
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  /** The request body as sent: on a thread `continue`, only the new messages. */
  body: RecordedBody;
  /**
   * The whole conversation the model sees: `body.messages`, after the messages the thread holds
   * when the request continues one.
   */
  messages: BetaMessageParam[];
  /** The system prompt the model sees: the body's, or on a thread's continue that sends none, the one the thread holds. */
  system?: RecordedBody['system'];
  /** The tools the model sees: the body's, or on a thread's continue that sends none, the ones the thread holds. */
  tools?: RecordedBody['tools'];
  /** `performance.now()` when the request arrived. */
  time: number;
}

/**
 * A step: a reply, or a function of the request that makes one. A function that throws (a failed
 * assertion about the request) is answered with a 400 naming the failure, and `assertComplete()` throws it.
 */
export type Step = ScriptedReply | ((request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>);

export interface MockServerOptions {
  steps: Step[];
  /** Characters per delta event unless a reply says otherwise. Default 16. */
  chunkSize?: number | undefined;
  /** Milliseconds between SSE events unless a reply says otherwise. Default 0. */
  eventDelayMs?: number | undefined;
  /**
   * Message threads (beta `message-threads-2026-08-12`): `hold` (default) keeps each conversation
   * under its last reply's id, as the API does; `unsupported` rejects every thread request.
   */
  threads?: ThreadSupport | undefined;
  /**
   * The model's context window, in the tokens the server counts (about 4 characters a token): a
   * request whose prompt is longer is rejected as the API rejects it (400 `invalid_request_error`,
   * `prompt is too long: N tokens > M maximum`), and consumes no step.
   */
  contextWindow?: number | undefined;
}

export interface MockServer {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** An `Anthropic` client pointed at the server (API key `test-key` unless given); a `baseURL` or `apiKey` given as `undefined` keeps the server's, never the SDK's (api.anthropic.com, `ANTHROPIC_API_KEY`). */
  client(options?: ClientOptions): Anthropic;
  /**
   * Every request received, in order. Each holds the whole conversation it sent, so over thousands of turns the list
   * grows with their square: a long test may empty it as it goes (`server.requests.length = 0`); `index` counts on.
   */
  requests: RecordedRequest[];
  /**
   * Replaces the steps not yet used with these (to script the next part of a conversation, or reuse the server). Errors
   * name these steps by their index here and the call: `step #0 of setSteps #1` for the first call's first step.
   */
  setSteps(steps: Step[]): void;
  /** Throws when steps are left over, a request came after the last step, or a step threw (its error is the `cause`); each problem is reported once. */
  assertComplete(): void;
  /** Forgets every message thread, as a server that lost its state: continuing one gets `thread_not_found`. */
  forgetThreads(): void;
  /** Stops the server: drops open connections, and ends the delays still running. */
  close(): Promise<void>;
}

/**
 * Starts the server on 127.0.0.1 with a free port.
 *
 * @example
 * ```ts
 * const server = await createMockServer({ steps: [
 *   { content: [toolUse('get_weather', { location: 'Paris' })] },
 *   { content: [text('It is 21°C in Paris.')] },
 * ] });
 * const final = await toolRunner(server.client(), { model: 'claude-sonnet-5-5', max_tokens: 1024, messages, tools });
 * server.assertComplete();
 * await server.close();
 * ```
 */
export async function createMockServer(options: MockServerOptions): Promise<MockServer> {
  needsNodeServer('testing', createServer);
  const script = new Script<Step>(checkServerOptions(options).steps);
  const requests: RecordedRequest[] = [];
  /** The requests received so far (`requests` may have been emptied by the test). */
  let received = 0;
  const threads = new ThreadStore(options.threads ?? 'hold');
  /** Aborted by `close()`: the delays still running end with the server (no timer keeps the process alive). */
  const closing = new AbortController();

  const server = createServer((req, res) => {
    allowPages(res);
    // A browser's preflight is no Messages request: not recorded, and it uses no step.
    if (answerPreflight(req, res)) return void req.resume();
    handle(req, res).catch((error: unknown) => {
      // The client went away (while it sent the body): nothing to answer, and nothing wrong with the script.
      if (res.destroyed) return;
      script.report(`Mock server failure on ${req.method} ${req.url}: ${thrownMessage(error)}`, error);
      // Not a 500: the SDK would retry it, and the retry would take the next step.
      if (!res.headersSent) sendError(res, { status: 400, message: `Mock server failure: ${thrownMessage(error)}` });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = req.method ?? 'GET';
    const body = safeParse(raw) as any;
    const route = method === 'POST' ? messagesRoute(url.pathname) : undefined;
    // A body the API cannot read (a lone surrogate: a text cut inside an emoji) is refused before anything else.
    const notJson = route ? invalidJson(raw) : undefined;
    // Only a request for a reply opens a thread: a count, or an unknown route, leaves it as it is.
    const opened = route?.kind === 'create' && body?.thread && !notJson ? threads.open(body, req.headers['anthropic-beta']) : undefined;
    const request: RecordedRequest = {
      index: received++,
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body,
      messages: opened && 'conversation' in opened ? opened.conversation : Array.isArray(body?.messages) ? body.messages : [],
      time: performance.now(),
      ...(promptSeen(body, opened) as Pick<RecordedRequest, 'system' | 'tools'>),
    };
    requests.push(request);
    if (!route) return sendError(res, { status: 404, message: `Mock server: no route for ${method} ${url.pathname}` });
    if (notJson) return sendError(res, { status: 400, message: notJson });
    try {
      await answer(request, res, route, opened);
    } finally {
      // However the request ended (refused, after the last step, a step that threw, a stall the client
      // gave up on), a thread it continued without a reply the server holds can be continued again.
      if (opened && !('error' in opened)) threads.release(opened);
    }
  }

  /** Answers a request to a Messages route; `opened` is the thread it creates or continues, if any. */
  async function answer(request: RecordedRequest, res: ServerResponse, route: MessagesRoute, opened: OpenedThread | undefined): Promise<void> {
    const sent = request.body as any;
    // What the model sees: a thread's continue leaves out the system prompt and tools the thread holds.
    const body = opened && !('error' in opened) && sent ? { ...sent, system: request.system, tools: request.tools } : sent;
    // A body the API would refuse consumes no step, so an offline test fails where production would.
    // A rejected thread consumes no step: the model never saw the request. Its error comes first: the body of a
    // thread's continue holds only the new messages (none, after a paused turn), not the conversation the checks read.
    if (opened && 'error' in opened) return sendError(res, opened.error);
    const refused = refusal(body, route, request.messages);
    if (refused) return sendError(res, { status: 400, message: refused });
    // Nor does a count: it is no turn of the conversation.
    if (route.kind === 'count') return sendBody(res, JSON.stringify({ input_tokens: inputTokens(body, request.messages) }));
    // Nor a prompt too long for the context window.
    const window = options.contextWindow;
    if (window !== undefined) {
      const tokens = inputTokens(body, request.messages);
      if (tokens > window) return sendError(res, promptTooLong(tokens, window));
    }
    const taken = script.take();
    if (!taken) {
      const message =
        `Mock server: request #${request.index} came after the last step (${script.scripted}). ` +
        `Its last message: ${describeLastMessage(body)}`;
      script.report(message);
      return sendError(res, { status: 400, message });
    }
    let reply: ScriptedReply;
    try {
      reply = typeof taken.step === 'function' ? await taken.step(request) : taken.step;
      if (typeof reply !== 'object' || reply === null) throw new TypeError(`the step ${typeof taken.step === 'function' ? 'returned' : 'is'} ${reply === null ? 'null' : typeof reply}, not a reply ({ content }, { error }, ...)`);
      const wrong = replyShapeProblem(reply as object);
      if (wrong) throw new TypeError(wrong);
    } catch (error) {
      // A failed assertion in a step: reported, and answered with a 400, which the SDK does not retry
      // (a retry would take the next step, and the failure would be lost).
      const problem = `${taken.name} threw on request #${request.index}: ${thrownMessage(error)}`;
      script.report(problem, error);
      return sendError(res, { status: 400, message: `Mock server: ${problem}` });
    }
    await sleep(reply.delayMs, closing.signal);
    if (reply.error && !(body?.stream && reply.error.afterEvents !== undefined)) return sendError(res, reply.error);
    const message = buildMessage(reply, body, request.messages, route.model);
    if (body?.stream) {
      // A stream that ends before message_stop leaves the server holding none of the reply.
      if ((await sendStream(res, reply, message)) && opened) threads.hold(opened, message.id, message.content);
    } else {
      // The server has computed the reply, whether or not it reaches the client.
      if (opened && reply.stallAfterEvents === undefined) threads.hold(opened, message.id, message.content);
      await sendJson(res, reply, message);
    }
  }

  /** Sends the events; resolves to whether the whole reply went out. */
  async function sendStream(res: ServerResponse, reply: ScriptedReply, message: BetaMessage): Promise<boolean> {
    // Built before the headers: a step whose reply cannot be streamed is answered with a 400 (a connection
    // dropped after a 200 would be retried by the SDK, and the retry would take the next step).
    const events: SseEvent[] = messageEvents(message, reply.chunkSize ?? options.chunkSize ?? 16);
    const requestId = apiId('req');
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': requestId });
    // A stream dropped or stalled before its first event has answered 200 all the same (its headers, and an SSE comment, went out):
    // Node holds the headers until the first write, and the SDK's timeout (which covers the wait for them) would retry it.
    if (reply.disconnectAfterEvents === 0 || reply.stallAfterEvents === 0) await new Promise((resolve) => res.write(': connected\n\n', resolve));
    // A fault scheduled after more events than the reply has comes after the last one (message_stop).
    const after = (count: number | undefined) => (count === undefined ? undefined : Math.min(count, events.length));
    const [disconnectAt, stallAt, errorAt] = [after(reply.disconnectAfterEvents), after(reply.stallAfterEvents), after(reply.error?.afterEvents)];
    const eventDelay = reply.eventDelayMs ?? options.eventDelayMs ?? 0;
    for (let sent = 0; sent <= events.length; sent++) {
      if (res.destroyed) return false;
      // A fault after message_stop: the whole reply went out, and the server holds it.
      const whole = sent === events.length;
      if (sent === disconnectAt) return void res.socket?.destroy(), whole;
      // A stall ends when the client gives up (or the server closes): till then its request is in flight.
      if (sent === stallAt) return await closed(res), whole;
      if (sent === errorAt && reply.error) {
        // The error whole (its details too), as in a JSON error answer; the request id is in the headers.
        res.end(encodeEvent({ event: 'error', data: { type: 'error', error: errorBody(reply.error, requestId).error } }));
        return whole;
      }
      if (reply.malformed && sent === 2) res.write('event: content_block_start\ndata: {"type":"content_block_st\n\n');
      const event = events[sent];
      if (!event) break;
      if (sent > 0) await sleep(eventDelay, closing.signal);
      // Before a scripted drop, each event is flushed, so the client sees exactly the events sent.
      if (disconnectAt !== undefined) await new Promise((resolve) => res.write(encodeEvent(event), resolve));
      else res.write(encodeEvent(event));
    }
    res.end();
    return true;
  }

  /** Sends the message as JSON; a stall resolves once the client gives up (or the server closes). */
  async function sendJson(res: ServerResponse, reply: ScriptedReply, message: BetaMessage): Promise<void> {
    if (reply.disconnectAfterEvents !== undefined) return void res.socket?.destroy();
    if (reply.stallAfterEvents !== undefined) return closed(res);
    sendBody(res, reply.malformed ? JSON.stringify(message).slice(0, 40) : JSON.stringify(message));
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    requests,
    client: (clientOptions = {}) => new Anthropic({ ...clientOptions, apiKey: clientOptions.apiKey === undefined ? 'test-key' : clientOptions.apiKey, baseURL: clientOptions.baseURL ?? url }),
    setSteps: (replacement) => script.replace(replacement),
    assertComplete: () => script.assertComplete(),
    forgetThreads: () => threads.forget(),
    close: () =>
      new Promise<void>((resolve) => {
        closing.abort();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function describeLastMessage(body: any): string {
  const last = Array.isArray(body?.messages) ? body.messages.at(-1) : undefined;
  const text = JSON.stringify(last) ?? 'none';
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (piece: Buffer) => chunks.push(piece));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function safeParse(raw: string): unknown {
  try {
    return raw ? JSON.parse(raw) : undefined;
  } catch {
    return raw;
  }
}

function sendBody(res: ServerResponse, json: string): void {
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': apiId('req') });
  res.end(json);
}
