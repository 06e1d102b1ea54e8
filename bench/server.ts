/**
 * The bench's Messages API server, run in its own process so that its CPU is not counted. Each
 * client names its scenario in the `x-bench` header (JSON); the reply is derived from the request.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiId, text, toolUse } from '../src/testing/blocks.js';
import { encodeEvent, messageEvents } from '../src/testing/wire.js';
import type { BetaContentBlock, BetaMessage } from '../src/types.js';

export type Scenario =
  | { kind: 'long'; turns: number }
  | { kind: 'parallel'; calls: number }
  | { kind: 'eager'; textChunks: number; chunkDelayMs: number }
  /** `runs` requests of one `batch` (a concurrent round): every response is held until the last has come, then `holdMs`. */
  | { kind: 'hold'; holdMs: number; runs: number; batch: string }
  | { kind: 'throughput'; chars: number; chunkSize: number }
  /** A parent that calls the `helper` agent each turn until its last; the sub-agent (system `sub`) calls `lookup` until its last turn. */
  | { kind: 'agents'; parentTurns: number; subTurns: number };

interface Reply {
  content: BetaContentBlock[];
  delayMs?: number;
  /** Held until its batch is complete (before `delayMs`). */
  batch?: { id: string; runs: number };
  eventDelayMs?: number;
  chunkSize?: number;
}

/** Threads: the number of replies in the conversation each reply ends, by its id (dropped once continued). */
const threadTurns = new Map<string, number>();

type Body = { messages: Array<{ role: string }>; system?: unknown; thread?: { type: string; previous_message_id?: string } };

/** How many replies the conversation already has: counted in the messages, or kept with the thread. */
function turnOf(body: Body): number {
  const sent = body.messages.filter((message) => message.role === 'assistant').length;
  if (body.thread?.type !== 'continue') return sent;
  const id = body.thread.previous_message_id ?? '';
  const held = threadTurns.get(id) ?? 0;
  threadTurns.delete(id);
  return held + sent;
}

function reply(scenario: Scenario, turn: number, body: Body): Reply {
  switch (scenario.kind) {
    case 'long':
      return { content: turn < scenario.turns - 1 ? [toolUse('step', { n: turn })] : [text('done')] };
    case 'parallel':
      return {
        content: turn === 0 ? Array.from({ length: scenario.calls }, (_, n) => toolUse('wait', { n })) : [text('done')],
      };
    case 'eager':
      return turn === 0
        ? {
            content: [toolUse('lookup', { q: 'x' }), text('word '.repeat(scenario.textChunks * 2))],
            chunkSize: 10,
            eventDelayMs: scenario.chunkDelayMs,
          }
        : { content: [text('done')] };
    case 'hold':
      return { content: [text('done')], delayMs: scenario.holdMs, batch: { id: scenario.batch, runs: scenario.runs } };
    case 'throughput':
      return { content: [text('x'.repeat(scenario.chars))], chunkSize: scenario.chunkSize };
    case 'agents':
      if (body.system === 'sub') return { content: turn < scenario.subTurns - 1 ? [toolUse('lookup', { n: turn })] : [text('sub answer')] };
      return { content: turn < scenario.parentTurns ? [toolUse('helper', { task: `task ${turn}` })] : [text('done')] };
  }
}

function message(content: BetaContentBlock[], model: string): BetaMessage {
  return {
    id: apiId('msg'),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    container: null,
    context_management: null,
    usage: { input_tokens: 10, output_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  } as unknown as BetaMessage;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Concurrent rounds: the requests of a batch come in as the loop starts its runs; each waits for
 * the last, so that every run is in flight for `holdMs` after the loop has started them all, however
 * long that took it.
 */
const batches = new Map<string, { arrived: number; complete: Promise<void>; done: () => void }>();
function batchComplete({ id, runs }: { id: string; runs: number }): Promise<void> {
  let batch = batches.get(id);
  if (!batch) {
    let done = () => {};
    const complete = new Promise<void>((resolve) => (done = resolve));
    batches.set(id, (batch = { arrived: 0, complete, done }));
  }
  if (++batch.arrived === runs) {
    batches.delete(id);
    batch.done();
  }
  return batch.complete;
}

const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const scenario = JSON.parse(String(req.headers['x-bench'])) as Scenario;
  const turn = turnOf(body);
  const planned = reply(scenario, turn, body);
  if (planned.batch) await batchComplete(planned.batch);
  if (planned.delayMs) await sleep(planned.delayMs);
  const built = message(planned.content, body.model);
  if (body.thread) threadTurns.set(built.id, turn + 1);
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json', 'request-id': apiId('req') });
    res.end(JSON.stringify(built));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'request-id': apiId('req') });
  const events = messageEvents(built, planned.chunkSize ?? 16);
  if (!planned.eventDelayMs) {
    // Many events a write, as a busy server's socket would carry them.
    for (let i = 0; i < events.length; i += 64) res.write(events.slice(i, i + 64).map(encodeEvent).join(''));
  } else {
    for (const event of events) {
      res.write(encodeEvent(event));
      if (event.event === 'content_block_delta') await sleep(planned.eventDelayMs);
    }
  }
  res.end();
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
