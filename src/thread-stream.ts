/**
 * A streamed turn over an SDK thread: the thread's own `BetaMessageStream` builds its message, and the runner's stream
 * reads the same raw events, each copied (sdk-thread.ts sends the turn).
 */
/** What a streamed turn uses of the thread's `BetaMessageStream`. */
export interface ThreadStream {
  controller: AbortController;
  withResponse(): Promise<{ response: Response }>;
  on(event: 'streamEvent', listener: (event: unknown) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error' | 'abort', listener: (error: unknown) => void): unknown;
}

/**
 * The raw events of a thread's stream, as a streamed `create` gives them, for a stream of the runner's
 * to read: each copied as it comes (the thread's stream builds its message from the event objects
 * themselves, so a second reader of them would add every delta twice).
 */
export function eventsOf(stream: ThreadStream): AsyncIterable<unknown> & { controller: AbortController } {
  const queue: unknown[] = [];
  let ended = false;
  let failure: { error: unknown } | undefined;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  stream.on('streamEvent', (event) => (queue.push(structuredClone(event)), notify()));
  stream.on('end', () => ((ended = true), notify()));
  const failed = (error: unknown) => ((failure ??= { error }), notify());
  stream.on('error', failed);
  stream.on('abort', failed);
  async function* events(): AsyncGenerator<unknown> {
    for (;;) {
      if (queue.length > 0) yield queue.shift();
      else if (failure) throw failure.error;
      else if (ended) return;
      else await new Promise<void>((resolve) => (wake = resolve));
    }
  }
  return { [Symbol.asyncIterator]: events, controller: stream.controller };
}
