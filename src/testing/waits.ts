/** The server's waits: a step's delay (cut short when the server closes), and a connection's end. */
import type { ServerResponse } from 'node:http';
import { onAbort } from '../on-abort.js';

/** Waits `ms`, or less if the server closes first. */
export function sleep(ms: number | undefined, closing: AbortSignal): Promise<void> {
  if (!ms || closing.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const end = () => {
      clearTimeout(timer);
      stop();
      resolve();
    };
    const timer = setTimeout(end, ms);
    // One listener on the server's signal however many replies wait at once.
    const stop = onAbort(closing, end);
  });
}

/** Resolves once the connection of `res` is closed (by the client, or by `close()`). */
export function closed(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => (res.closed ? resolve() : res.once('close', () => resolve())));
}
