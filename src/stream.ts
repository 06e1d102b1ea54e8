/** Stream mode: the reply of a stream, and eager tool starts while it still streams. */
import { APIUserAbortError } from '@anthropic-ai/sdk';
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import type { MessageStreamLike } from './client.js';
import type { BetaRawMessageStreamEvent } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { BetaToolUseBlock } from './types.js';

/** How long an aborted stream is given to end by its own abort before it is ended so (`endsWhenAborted`). */
const ABORT_GRACE_MS = 200;

/**
 * Ends a stream that is aborted before it ended (a `break`, `stream.abort()`, the run's signal) the way its own abort
 * ends it (its `finalMessage()` and `done()` reject with an `APIUserAbortError`), when that abort has not ended it within
 * `ABORT_GRACE_MS`. Aborted after the reply's last event came but before the end of its body was read, the fetch under it
 * never settles its read on Node 20 (undici), and the stream never ended: the run waited for its reply for ever (the SDK's
 * runner, which does not await it then, went on), and so did a loop body's own `await stream.finalMessage()`. Call it
 * once the stream's `finalMessage()` is awaited, so that the rejection is handled.
 */
export function endsWhenAborted(stream: BetaMessageStream): void {
  const { signal } = stream.controller;
  const ended = () => stream.ended || stream.errored;
  const aborted = () => {
    if (ended()) return;
    setTimeout(() => {
      // (The stream's own way to end on an abort; a stream without it is left as it is.)
      if (!ended()) (stream as unknown as { _emit?: (event: 'abort', error: Error) => void })._emit?.('abort', new APIUserAbortError());
    }, ABORT_GRACE_MS);
  };
  if (signal.aborted) aborted();
  else signal.addEventListener('abort', aborted, { once: true });
}

/** Why a stream's reply cannot be read though the SDK made a message of it, by stream (`watchedFinalMessage`). */
const SKIPPED = new WeakMap<object, string>();

/** A stream as `watchedFinalMessage` reads it: the SDK's, the runner's, or one a durable run's step opened (client.ts). */
interface WatchedStream<M> {
  on: MessageStreamLike['on'];
  finalMessage(): Promise<M>;
}

/**
 * The stream's final message, its events watched for a block whose start they skipped (a `content_block_delta` or
 * `content_block_stop` for an index no `content_block_start` opened: an event lost or moved by a proxy). The SDK
 * accumulates such a stream without the block (its deltas go nowhere): kept, the history would lack a call the server
 * holds, and a thread continued from the reply gives the model that call unanswered (`skippedBlock` says why it is not
 * read). The SDK's own promise, not one chained to it: the runner takes the reply in before the loop body's
 * `await stream.finalMessage()` goes on (a snapshot taken there holds it).
 */
export function watchedFinalMessage<M>(stream: WatchedStream<M>): Promise<M> {
  const started = new Set<number>();
  stream.on('streamEvent', (event: BetaRawMessageStreamEvent) => {
    if (event.type === 'message_start') started.clear();
    else if (event.type === 'content_block_start') started.add(event.index);
    else if ((event.type === 'content_block_delta' || event.type === 'content_block_stop') && !started.has(event.index) && !SKIPPED.has(stream)) {
      SKIPPED.set(stream, `its events skipped the start of block ${event.index}: a ${event.type} came before its content_block_start`);
    }
  });
  return stream.finalMessage();
}

/** Why the reply of `stream` (`watchedFinalMessage`) cannot be read, if its events skipped the start of a block. */
export function skippedBlock(stream: object | undefined): string | undefined {
  return stream && SKIPPED.get(stream);
}

/** What the stream tells of the calls of a reply as it streams. */
export interface EagerCalls {
  /** A call the model has moved on from: it may start. */
  startEagerly(toolUse: BetaToolUseBlock): void;
  /** A `tool_use` block that finished streaming. */
  closedInStream(toolUse: BetaToolUseBlock): void;
}

/**
 * Calls `calls.startEagerly` with each `tool_use` block of the streamed reply as soon as the model has moved on
 * from it: when the next block starts, or when the reply stops with `tool_use`. A block cut off by
 * `max_tokens` is never started. The block started is the one its `content_block_stop` closed (by the event's
 * index), as the SDK's runner stream has it, not the block at a position of the snapshot: a stream that repeats a
 * `content_block_start` has more blocks than indexes, and the call would start with another block's input under
 * this one's id. After a `fallback` block (the API handed the reply to a fallback model, after a refusal that may
 * have cut the call before it off) no call starts while the reply streams, as in the SDK: they run once it is whole.
 */
export function startToolsEagerly(stream: BetaMessageStream, calls: EagerCalls): void {
  /** The last `tool_use` block closed, not started yet: it starts once the model moves on. */
  let closed: BetaToolUseBlock | undefined;
  let handedOver = false;
  stream.on('streamEvent', (event, snapshot) => {
    let block: BetaToolUseBlock | undefined;
    if (event.type === 'content_block_stop') {
      const stopped = snapshot.content[event.index];
      if (isToolUse(stopped)) calls.closedInStream((block = stopped));
    }
    if (handedOver) return;
    if (event.type === 'content_block_start' && (event.content_block as { type: string }).type === 'fallback') {
      handedOver = true;
      closed = undefined;
      return;
    }
    const movedOn = event.type === 'content_block_start' || (event.type === 'message_delta' && event.delta.stop_reason === 'tool_use');
    if (closed && movedOn) {
      const finished = closed;
      closed = undefined;
      calls.startEagerly(finished);
    }
    if (block) closed = block;
  });
}

function isToolUse(block: unknown): block is BetaToolUseBlock {
  return typeof block === 'object' && block !== null && (block as { type?: unknown }).type === 'tool_use';
}
