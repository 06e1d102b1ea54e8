/** What `runner.done()` resolves: the completion of one attempt at the run, settled from outside. */

/** One shared handler for rejections observed elsewhere (no closure per promise). */
export const ignore = (): void => {};

/** Whether `value` is a promise (or any thenable). */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** A promise with its resolve and reject, and whether either was called. */
export interface Settleable<T> {
  promise: Promise<T>;
  settled: boolean;
  resolve(value: T): void;
  reject(reason: unknown): void;
}

/** A settleable promise whose rejection is never reported as unhandled (the caller may never ask for it). */
export function settleable<T>(): Settleable<T> {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(ignore);
  const handle: Settleable<T> = {
    promise,
    settled: false,
    resolve: (value) => {
      handle.settled = true;
      resolve(value);
    },
    reject: (reason) => {
      handle.settled = true;
      reject(reason);
    },
  };
  return handle;
}
