/** Waiting for a signal's abort, many at once, behind one listener (a module importing nothing: every subpath may use it). */

/** What waits for each signal's abort, behind one listener of its own. */
const waiting = new WeakMap<AbortSignal, { waiters: Set<() => void>; listener: () => void }>();

/**
 * Calls `callback` when `signal` aborts; returns the function that stops waiting. One listener per
 * signal, however many calls wait on it at once (the run's signal, say): Node warns of a leak past 10.
 * The listener goes when the last wait stops.
 */
export function onAbort(signal: AbortSignal, callback: () => void): () => void {
  let entry = waiting.get(signal);
  if (!entry) {
    const waiters = new Set<() => void>();
    const listener = () => {
      waiting.delete(signal);
      for (const waiter of waiters) waiter();
    };
    entry = { waiters, listener };
    waiting.set(signal, entry);
    signal.addEventListener('abort', listener, { once: true });
  }
  const own = entry;
  // A function of its own: the same callback given twice is two waits.
  const waiter = () => callback();
  own.waiters.add(waiter);
  return () => {
    own.waiters.delete(waiter);
    if (own.waiters.size > 0 || waiting.get(signal) !== own) return;
    waiting.delete(signal);
    signal.removeEventListener('abort', own.listener);
  };
}

/** A signal of its own that aborts with the first of `signals` to abort (with its reason), and `stop`, which unties them. */
export function tiedSignal(...signals: AbortSignal[]): { signal: AbortSignal; stop: () => void } {
  const own = new AbortController();
  const unties = signals.map((signal) => tie(own, signal));
  return { signal: own.signal, stop: () => unties.forEach((untie) => untie()) };
}

/**
 * Aborts `own` when `signal` aborts (at once if it has), with its reason; returns what unties the two. Never
 * `AbortSignal.any`, which lives as long as `signal` does, with every listener left on it (a server's signal: a leak).
 */
export function tie(own: AbortController, signal: AbortSignal): () => void {
  if (!signal.aborted) return onAbort(signal, () => own.abort(signal.reason));
  own.abort(signal.reason);
  return () => {};
}

/**
 * Request options whose `signal` is one of their own, tied to the caller's until `release`: the SDK adds a listener to
 * a request's signal while it is in flight, and eleven runs at once under one signal (a server's) made Node warn of a
 * leak (MaxListenersExceededWarning). Behind `onAbort`, the caller's signal holds one listener however many wait.
 */
export function signalOfItsOwn<O extends { signal?: AbortSignal | null | undefined }>(options: O): { options: O; release: () => void } {
  if (!options.signal) return { options, release: () => {} };
  const { signal, stop } = tiedSignal(options.signal);
  return { options: { ...options, signal }, release: stop };
}
