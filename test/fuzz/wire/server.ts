/**
 * A Messages API server that answers with damaged responses, for the wire fuzzer (harness.ts). Each request takes
 * the next answer of its queue: a reply (streamed when the request asks for a stream, JSON otherwise) and the fault
 * to do to it on the wire — a stream cut at a byte, events dropped, repeated, moved or made up, a `data:` line that
 * is no JSON, an `error` event mid-stream, the wrong content type, a JSON body cut short, an empty 200, an error
 * status with or without `retry-after`, the connection reset after the headers, a stall. The testing kit's server
 * damages replies only in the ways a test asks for by name; this one does it at random bytes, which is the point.
 *
 * It records what it was sent, and which responses were still open (neither ended nor closed by the client), so
 * that the fuzzer can tell a socket the runner left open from one the client keeps for reuse.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { sendError } from '../../../src/testing/api-errors.js';
import { ThreadStore } from '../../../src/testing/threads.js';
import { type SseEvent, messageEvents } from '../../../src/testing/wire.js';
import type { BetaContentBlock, BetaMessage } from '../../../src/types.js';

export const faults = [
  'none',
  'cut', // the socket destroyed at a random byte of the body
  'cutEnd', // the body ended cleanly at a random byte
  'drop', // one event (or, as JSON, one field) missing
  'dup', // one event repeated (as JSON: a block repeated)
  'swap', // two neighbouring events swapped
  'deltaFirst', // a block's first delta before its start
  'twoStarts', // message_start twice
  'noStop', // no message_stop (as JSON: no stop_reason)
  'badJson', // a `data:` line (as JSON: the body) that is no JSON
  'errorEvent', // an `error` event (overloaded_error) mid-stream; as JSON, a 529
  'contentType', // the wrong content type: JSON for a stream, a stream for JSON, or HTML
  'empty', // a 200 with an empty body
  'status', // 529, 500 or 429, with or without retry-after
  'reset', // the headers, then the connection reset
  'stallHeaders', // no headers for a while
  'stallBody', // part of the body, then nothing for a while
  'badBlock', // a block that is none: null, without a type, a call without its id
  // What the wire may do to a whole reply, which leaves it whole:
  'chunked', // the body in pieces of 1 to 16 bytes (a character's bytes split), each on a later turn
  'crlf', // SSE lines ended by CRLF
  'comments', // SSE comment lines (keep-alives) between the events
  'unknownEvent', // an event of a type the SDK does not know, and a delta of a type it does not know
] as const;
export type Fault = (typeof faults)[number];
/** The faults that leave the reply whole: it must be kept as if none happened. */
export const wholeFaults: readonly Fault[] = ['none', 'chunked', 'crlf', 'comments', 'unknownEvent', 'stallHeaders', 'stallBody'];

/** An answer: the reply and what goes wrong with it (`at`, in [0, 1): where, of the bytes or events). */
export interface Answer {
  content: BetaContentBlock[];
  stopReason: 'end_turn' | 'tool_use' | 'max_tokens';
  fault: Fault;
  at: number;
  /** For `status`: the code, and whether `retry-after` says when. */
  status?: 429 | 500 | 529;
  retryAfter?: boolean;
  /** For the stalls: how long. */
  stallMs?: number;
}

export interface Served {
  /** The request's body, as sent. */
  body: Record<string, unknown>;
  /** The conversation the model saw: the body's messages, after what its thread holds. */
  conversation: unknown[];
  /** What was answered. */
  answer: Answer;
  /** The reply's id (a whole reply), for the checks. */
  id: string;
}

export interface DamagingServer {
  url: string;
  served: Served[];
  /** The thread requests the server refused (not found, already continued, ...), by their error code. */
  threadRefusals: string[];
  /** Answers to take, in order; past their end, a final text answer. */
  queue: Answer[];
  /** The responses still being written (not ended, their socket not closed). */
  openResponses(): number;
  /** The server's own timers still to fire (a stall's). */
  timers(): number;
  close(): Promise<void>;
}

let replyCount = 0;

export async function damagingServer(): Promise<DamagingServer> {
  const served: Served[] = [];
  const threadRefusals: string[] = [];
  // Threads as the testing kit's server holds them (the API's rules): a reply held once it went out whole; a damaged one
  // held or not as `at` says (the server may have written the whole reply the client never read).
  const threads = new ThreadStore('hold');
  const queue: Answer[] = [];
  const open = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const later = (ms: number, then: () => void) => {
    const timer = setTimeout(() => (timers.delete(timer), then()), ms);
    timers.add(timer);
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        // Not the runner's: answered as the API would.
      }
      const opened = body['thread'] ? threads.open(body, req.headers['anthropic-beta']) : undefined;
      if (opened && 'error' in opened) {
        threadRefusals.push(String(opened.error.details?.['error_code'] ?? opened.error.message));
        return sendError(res, opened.error);
      }
      const answer = queue.shift() ?? { content: [{ type: 'text', text: 'the end', citations: null } as BetaContentBlock], stopReason: 'end_turn', fault: 'none', at: 0 };
      const id = `msg_wire${String(++replyCount).padStart(5, '0')}`;
      // Each reply's calls have ids of their own, as the API's do: a reply sent again after a damaged one is a new reply.
      const content = answer.content.map((block, i) => (block.type === 'tool_use' ? { ...block, id: `toolu_${id.slice(4)}_${i}` } : block));
      served.push({ body, conversation: opened ? opened.conversation : ((body['messages'] ?? []) as unknown[]), answer, id });
      open.add(res);
      const done = () => open.delete(res);
      res.on('finish', done);
      res.on('close', done);
      if (opened) {
        const holds = wholeFaults.includes(answer.fault) || (answer.fault !== 'status' && answer.fault !== 'errorEvent' && answer.at > 0.5);
        // A whole reply is held once it went out; a damaged one at once (the server wrote it; the wire lost it).
        if (holds && wholeFaults.includes(answer.fault)) res.on('finish', () => threads.hold(opened, id, content));
        else if (holds) threads.hold(opened, id, content);
        res.on('close', () => threads.release(opened));
      }
      answerWith(res, body['stream'] === true, message(id, body, { ...answer, content }), answer, later);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    threadRefusals,
    queue,
    openResponses: () => [...open].filter((res) => !res.socket?.destroyed).length,
    timers: () => timers.size,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function message(id: string, body: Record<string, unknown>, answer: Answer): BetaMessage {
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: String(body['model'] ?? 'claude-sonnet-5-5'),
    content: answer.content,
    stop_reason: answer.stopReason,
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 10, cache_creation_input_tokens: null, cache_read_input_tokens: null, server_tool_use: null, service_tier: null },
  } as unknown as BetaMessage;
}

const sse = ({ event, data }: SseEvent) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const errorBody = (type: string, text: string) => JSON.stringify({ type: 'error', error: { type, message: text }, request_id: 'req_wire' });

function answerWith(res: ServerResponse, streamed: boolean, reply: BetaMessage, answer: Answer, later: (ms: number, then: () => void) => void): void {
  const { fault, at } = answer;
  const headers = (type: string) => ({ 'content-type': type, 'request-id': `req_${reply.id}` });
  if (fault === 'status') {
    const status = answer.status ?? 529;
    const type = status === 429 ? 'rate_limit_error' : status === 500 ? 'api_error' : 'overloaded_error';
    res.writeHead(status, { ...headers('application/json'), ...(answer.retryAfter && { 'retry-after-ms': '5', 'retry-after': '0' }) });
    res.end(errorBody(type, `${type} (wire fuzzer)`));
    return;
  }
  if (fault === 'stallHeaders') {
    later(answer.stallMs ?? 1_000, () => {
      if (res.socket?.destroyed) return;
      answerWith(res, streamed, reply, { ...answer, fault: 'none' }, later);
    });
    return;
  }
  if (fault === 'empty') {
    res.writeHead(200, headers(streamed ? 'text/event-stream' : 'application/json'));
    res.end();
    return;
  }
  if (fault === 'reset') {
    res.writeHead(200, headers(streamed ? 'text/event-stream' : 'application/json'));
    res.flushHeaders();
    later(5, () => res.socket?.destroy());
    return;
  }
  if (fault === 'contentType') {
    const which = Math.floor(at * 3);
    if (which === 0) {
      res.writeHead(200, headers('text/html'));
      res.end('<html><body>502 Bad Gateway</body></html>');
    } else if (which === 1 && streamed) {
      res.writeHead(200, headers('application/json'));
      res.end(JSON.stringify(reply));
    } else if (streamed) {
      res.writeHead(200, headers('text/plain'));
      res.end(messageEvents(reply, 7).map(sse).join(''));
    } else {
      res.writeHead(200, headers('text/event-stream'));
      res.end(messageEvents(reply, 7).map(sse).join(''));
    }
    return;
  }
  const text = streamed ? streamText(reply, answer) : jsonText(reply, answer);
  if (!streamed && fault === 'errorEvent') {
    res.writeHead(529, headers('application/json'));
    res.end(errorBody('overloaded_error', 'Overloaded'));
    return;
  }
  res.writeHead(200, headers(streamed ? 'text/event-stream' : 'application/json'));
  const bytes = Buffer.from(text, 'utf8');
  const cutAt = Math.floor(at * bytes.length);
  if (fault === 'cut') {
    res.write(bytes.subarray(0, cutAt));
    later(5, () => res.socket?.destroy());
  } else if (fault === 'cutEnd') {
    res.end(bytes.subarray(0, cutAt));
  } else if (fault === 'chunked') {
    let from = 0;
    const next = () => {
      if (res.socket?.destroyed) return;
      if (from >= bytes.length) return void res.end();
      const size = 1 + ((from * 7 + Math.floor(at * 97)) % 16);
      res.write(bytes.subarray(from, (from += size)));
      setImmediate(next);
    };
    next();
  } else if (fault === 'stallBody') {
    res.write(bytes.subarray(0, cutAt));
    later(answer.stallMs ?? 1_000, () => {
      if (!res.socket?.destroyed) res.end(bytes.subarray(cutAt));
    });
  } else {
    res.end(bytes);
  }
}

/** The reply as SSE, the event-level faults done. */
function streamText(reply: BetaMessage, { fault, at }: Answer): string {
  const events = messageEvents(reply, 5);
  const pick = (from: number, to = events.length - 1) => from + Math.floor(at * Math.max(1, to - from + 1));
  switch (fault) {
    case 'drop':
      events.splice(pick(0), 1);
      break;
    case 'dup': {
      const i = pick(0);
      events.splice(i, 0, events[i]!);
      break;
    }
    case 'swap': {
      const i = pick(0, events.length - 2);
      [events[i], events[i + 1]] = [events[i + 1]!, events[i]!];
      break;
    }
    case 'deltaFirst': {
      const delta = events.findIndex((e) => e.event === 'content_block_delta');
      const start = events.findIndex((e) => e.event === 'content_block_start');
      if (delta > 0 && start >= 0) events.splice(start, 0, ...events.splice(delta, 1));
      break;
    }
    case 'twoStarts': {
      const i = pick(1);
      events.splice(i, 0, events[0]!);
      break;
    }
    case 'noStop':
      events.pop();
      break;
    case 'badBlock': {
      const start = events.find((e) => e.event === 'content_block_start');
      const block = (start?.data as { content_block: Record<string, unknown> } | undefined)?.content_block;
      if (block) delete block[block['type'] === 'tool_use' && at < 0.5 ? 'id' : 'type'];
      break;
    }
    case 'badJson': {
      // Not a ping (the SDK skips a ping unread, as it may).
      const i = pick(2);
      const lines = events.map(sse);
      lines[i] = `event: ${events[i]!.event}\ndata: {"type": "${events[i]!.event}", oops\n\n`;
      return lines.join('');
    }
    case 'crlf':
      return events.map(sse).join('').replace(/\n/g, '\r\n');
    case 'comments':
      return events.map((event, i) => `${i % 2 ? ': keep-alive\n\n' : ''}${sse(event)}`).join('');
    case 'unknownEvent': {
      const i = pick(1, events.length - 2);
      events.splice(i, 0, { event: 'future_event', data: { type: 'future_event', note: 'a type of a later API' } });
      const start = events.findIndex((e) => e.event === 'content_block_start');
      const { index } = events[start]!.data as { index: number };
      events.splice(start + 1, 0, { event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'future_delta', value: 1 } } });
      break;
    }
    case 'errorEvent': {
      const i = pick(1);
      const lines = events.map(sse);
      lines.splice(i, lines.length - i, `event: error\ndata: ${errorBody('overloaded_error', 'Overloaded')}\n\n`);
      return lines.join('');
    }
  }
  return events.map(sse).join('');
}

/** The reply as JSON, the body-level faults done. */
function jsonText(reply: BetaMessage, { fault, at }: Answer): string {
  const copy = JSON.parse(JSON.stringify(reply)) as Record<string, unknown>;
  switch (fault) {
    case 'drop': {
      const fields = ['content', 'role', 'usage', 'type', 'id'];
      delete copy[fields[Math.floor(at * fields.length)]!];
      break;
    }
    case 'dup': {
      const content = copy['content'] as unknown[];
      if (content.length > 0) content.push(content[Math.floor(at * content.length)]);
      break;
    }
    case 'noStop':
      copy['stop_reason'] = null;
      break;
    case 'badBlock': {
      const content = copy['content'] as Array<Record<string, unknown> | null>;
      const i = Math.floor(at * content.length);
      if (at < 0.3) content[i] = null;
      else if (content[i]?.['type'] === 'tool_use') delete content[i]!['id'];
      else delete content[i]!['type'];
      break;
    }
    case 'badJson':
      return JSON.stringify(copy).replace(/"content":/, '"content" ');
    case 'swap':
    case 'deltaFirst':
    case 'twoStarts':
      // A field of the wrong type.
      copy['content'] = at < 0.5 ? null : 'not blocks';
      break;
  }
  return JSON.stringify(copy);
}
