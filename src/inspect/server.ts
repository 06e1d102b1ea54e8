/**
 * The inspector's HTTP server: the page, its live feed (server-sent events) and the endpoint the
 * page posts decisions to. Every request must carry the token of the URL, or gets 403; a decision
 * must also come from the page's own origin.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PageApprovals, PageDecision } from './approvals.js';
import { pageHtml } from './page.js';
import type { RecordStore } from './store.js';

/** What the page is told when it connects. */
export interface PageSettings {
  /** `live`: runs of this process, decided from the page; `recorded`: a recorded file. */
  mode: 'live' | 'recorded';
  /** Tool inputs and results, the model's text and the prompt are shown. */
  capture: boolean;
  /** A title for the page (the recorded file's name). */
  title: string;
  /** The most runs the page keeps, as the inspector does (`maxRuns`); none for a recorded file. */
  maxRuns?: number;
}

export interface InspectorServer {
  url: string;
  close(): Promise<void>;
}

/** Keep-alive comments on each feed, so that proxies and the browser keep it open. */
const PING_MS = 15_000;
/** Tells a page its records were forgotten (`RecordStore.clear`): it loads again, and gets the records from the start. */
const RESET_EVENT = 'event: reset\ndata: {}\n\n';
/**
 * The most a feed holds unsent past what it was sent on opening (until that is flushed): a page that stops reading (its machine asleep, a stale
 * SSH tunnel that still takes bytes) held every batch since in the watched process, hundreds of MB an hour of a busy run,
 * each page its own copy. Past it the feed ends; the page, when it reads again, reconnects and gets what it missed.
 */
const MAX_UNSENT = 64 * 1024 * 1024;
/** The largest decision body read (an edited input included). */
const MAX_BODY = 1_000_000;

/** What a late decision is told, by how the call's wait had ended. */
const WAIT_ENDED = {
  allow: 'someone decided it already (allowed)',
  deny: 'someone decided it already (denied)',
  aborted: 'its wait ended: the run was aborted',
  timedOut: "its wait ended: the call's time ran out",
  closed: 'its wait ended: the inspector was closed',
} as const;

export async function serveInspector(options: {
  port: number;
  host: string;
  store: RecordStore;
  approvals: PageApprovals | undefined;
  settings: PageSettings;
}): Promise<InspectorServer> {
  const { store, approvals, settings } = options;
  const token = randomBytes(24).toString('base64url');
  const expected = Buffer.from(token);
  const feeds = new Set<ServerResponse>();

  const server = createServer((request, response) => {
    // A request line no URL can be read from (`GET http://[/`): refused, not thrown in the process that hosts the inspector.
    const url = urlOf(request.url);
    if (!url || !hasToken(url.searchParams.get('token'), expected)) return refuse(response, 403, 'Forbidden: open the URL the inspector printed (it carries a token).');
    if (request.method === 'GET' && url.pathname === '/') return sendPage(response, settings);
    if (request.method === 'GET' && url.pathname === '/api/events') return openFeed(request, response);
    if (url.pathname === '/api/decide') {
      if (request.method !== 'POST') return refuse(response, 405, 'POST a decision here.');
      return void receiveDecision(request, response);
    }
    refuse(response, 404, 'Not found.');
  });

  function openFeed(request: IncomingMessage, response: ServerResponse): void {
    response.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
    const after = Number(request.headers['last-event-id'] ?? 0);
    const { messages, stale } = store.since(Number.isFinite(after) ? after : 0);
    response.write(`retry: 1000\nevent: settings\ndata: ${JSON.stringify({ ...settings, approvals: approvals !== undefined })}\n\n`);
    // The page shows records forgotten since (the recorded file was read again from its start): it starts over.
    if (stale) return void response.end(RESET_EVENT);
    // What the page was sent on opening counts until it is flushed: a page that opened on 300 MB kept and read them held
    // 364 MB of later batches (64 MB past its opening) once it stopped reading.
    let opening = 0;
    messages.forEach(({ json, lastSeq }, i) => response.write(batchEvent(json, lastSeq), i === messages.length - 1 ? () => void (opening = 0) : undefined));
    opening = messages.length > 0 ? response.writableLength : 0;
    feeds.add(response);
    const stop = store.listen(
      (batch) => {
        if (response.writableLength > opening + MAX_UNSENT) return void response.destroy();
        response.write(batchEvent(batch.json, batch.lastSeq));
      },
      // Listening no more at once: the records read again go out before the feed's 'close' (a write after its end throws).
      () => {
        stop();
        response.end(RESET_EVENT);
      },
    );
    const ping = setInterval(() => response.write(': ping\n\n'), PING_MS);
    ping.unref();
    response.on('close', () => {
      stop();
      clearInterval(ping);
      feeds.delete(response);
    });
  }

  async function receiveDecision(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!sameOrigin(request)) return refuse(response, 403, 'Forbidden: decisions are taken only from the inspector page itself.');
    if (!String(request.headers['content-type'] ?? '').startsWith('application/json')) return refuse(response, 415, 'Send the decision as application/json.');
    if (!approvals) return refuse(response, 409, 'This page shows a recorded file: its approvals cannot be decided here.');
    let posted: PageDecision;
    try {
      posted = checkDecision(JSON.parse(await readBody(request)));
    } catch (error) {
      // The rest of a body too large is left unread: the connection closes after the answer (a next request on it would be lost).
      return refuse(response, 400, (error as Error).message, error instanceof BodyTooLarge);
    }
    const outcome = approvals.decide(posted);
    if (outcome === 'decided') return sendJson(response, 200, { decided: true });
    if (outcome === 'unknown') return sendJson(response, 404, { decided: false, reason: 'no such call is waiting for approval' });
    sendJson(response, 409, { decided: false, reason: WAIT_ENDED[outcome.ended] });
  }

  await new Promise<void>((resolve, reject) => {
    const fail = (error: Error) => {
      const name = settings.mode === 'recorded' ? 'inspectRecording' : 'inspector';
      reject(new Error(`${name}: cannot listen on ${options.host} port ${options.port}: ${error.message}`, { cause: error }));
    };
    server.once('error', fail);
    server.listen(options.port, options.host, () => {
      server.off('error', fail);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/?token=${token}`,
    close: () =>
      new Promise<void>((resolve) => {
        // An open page stops reconnecting: the inspector is gone, not the connection.
        for (const feed of feeds) feed.end('event: closed\ndata: {}\n\n');
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

function sendPage(response: ServerResponse, settings: PageSettings): void {
  const nonce = randomBytes(16).toString('base64');
  response.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
  });
  response.end(pageHtml(nonce, settings.title));
}

/** One SSE message per batch: the records as a JSON array (`json`), with the last one's number as its id. */
function batchEvent(json: string, lastSeq: number): string {
  return `id: ${lastSeq}\ndata: ${json}\n\n`;
}

function hasToken(given: string | null, expected: Buffer): boolean {
  if (given === null) return false;
  const bytes = Buffer.from(given);
  return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}

/**
 * A post from the page itself: a browser sends `Origin` (and `Sec-Fetch-Site`) with every POST,
 * and they must name this server. A client that is not a browser sends neither, and needs the token.
 */
function sameOrigin(request: IncomingMessage): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return false;
  const origin = request.headers.origin;
  return origin === undefined || origin === `http://${request.headers.host}`;
}

function checkDecision(value: unknown): PageDecision {
  const posted = value as Partial<PageDecision> | null;
  if (!posted || typeof posted.run !== 'string' || typeof posted.id !== 'string') throw new Error('A decision names the run and the call: { run, id, decision }.');
  if (posted.decision !== 'allow' && posted.decision !== 'deny') throw new Error("decision is 'allow' or 'deny'.");
  if (posted.reason !== undefined && typeof posted.reason !== 'string') throw new Error('reason is a string.');
  // JSON.parse reads nesting of any depth, JSON.stringify does not: an input of 100,000 brackets would be taken, and the
  // record of its decision throw in the batch timer, ending the process that hosts the inspector.
  try {
    JSON.stringify(posted.input);
  } catch (error) {
    throw new Error(`The edited input cannot be recorded: ${(error as Error).message}.`);
  }
  return posted as PageDecision;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new BodyTooLarge('The decision is too large.');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

class BodyTooLarge extends Error {}

function refuse(response: ServerResponse, status: number, message: string, close = false): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...(close && { connection: 'close' }) });
  response.end(message);
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'application/json', 'cache-control': 'no-store' });
  response.end(JSON.stringify(body));
}

/** The request's URL, or `undefined` when none can be read from it. */
function urlOf(target: string | undefined): URL | undefined {
  try {
    return new URL(target ?? '/', 'http://inspector');
  } catch {
    return undefined;
  }
}
