/** Time and concurrency guards around tool calls. */
import { onAbort, tie } from './on-abort.js';
import { readableThrown, wrongValue } from './described.js';

/** The longest delay a timer keeps: a longer one (or Infinity) fires at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** Throws a clear error unless `value` is a timeout a timer can keep (`what` names it: `options.toolTimeoutMs`, ...). */
export function checkTimeoutMs(value: unknown, what: string): void {
  if (typeof value === 'number' && value > 0 && value <= MAX_TIMEOUT_MS) return;
  throw wrongValue(value, `${what} must be a positive number of milliseconds, at most ${MAX_TIMEOUT_MS} (about 24.8 days)`);
}

/** Runs at most `max` tasks at once; the others wait their turn in order. */
export class Limiter {
  readonly #max: number;
  #running = 0;
  readonly #waiting: Array<() => void> = [];

  constructor(max: number) {
    this.#max = max;
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    // A slot freed is handed to the next in line, still counted: a task that comes meanwhile finds none free.
    if (this.#running >= this.#max) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#running++;
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#running--;
    }
  }
}

/**
 * How a guarded run ended: its value, what it threw, or stopped by its timeout (`timedOut`) or the run's abort, once it
 * had `started` or before (the run's signal aborted while it waited for a slot, or a hook ran).
 */
export type RunOutcome = { ok: true; value: unknown } | { ok: false; thrown: unknown } | StoppedOutcome;
export type StoppedOutcome = { ok: false; timedOut: number | undefined; started: boolean };

/** Marks a run that cannot be aborted (no signal, no timeout): never handed on to a tool, whose listeners would pile up on it. */
export const NEVER_ABORTED: AbortSignal = new AbortController().signal;

/**
 * A signal that never fires, of the call's own: what a tool of a run that cannot be aborted gets, so that the listeners
 * it adds (`addEventListener('abort', …)`) go with the call (on one shared signal they stayed for the process's life).
 */
function neverAbortedSignal(): AbortSignal {
  return new AbortController().signal;
}

/** The signal a guarded run was given, as its callee gets it: `NEVER_ABORTED` becomes a signal of the call's own. */
export function ownSignal(signal: AbortSignal): AbortSignal {
  return signal === NEVER_ABORTED ? neverAbortedSignal() : signal;
}

/**
 * A tool context whose `signal` is `NEVER_ABORTED` gets a signal of the call's own when it is first read: most tools
 * never read it, and an `AbortController` costs about 2 µs (bench/own-cost.ts runs one call a turn).
 */
export function withOwnSignal<C extends { signal: AbortSignal }>(context: C): C {
  if (context.signal !== NEVER_ABORTED) return context;
  let own: AbortSignal | undefined;
  return Object.defineProperty(context, 'signal', { get: () => (own ??= neverAbortedSignal()), enumerable: true, configurable: true });
}

/**
 * How long what the run's abort stopped is waited for, not forever: a stopped run that ends when its signal aborts (a
 * sub-agent), so that its own events (its calls' ends, its `run.end`) come before its call's `tool.end`; a hook called
 * once the run has aborted (about a call the abort stopped), which may hang (a log store offline).
 */
export const STOPPED_GRACE_MS = 1000;

/**
 * Starts `run` with a signal that aborts with `signal` or after `timeoutMs` (from now), and
 * settles as soon as either fires: a run that ignores its signal is left behind, not awaited.
 * With `endsWhenStopped` true when it is stopped (a sub-agent that runs: it ends at once when its signal aborts), the run
 * is awaited a little (`STOPPED_GRACE_MS` at most) before the outcome is given.
 */
export async function runWithGuards(
  run: (signal: AbortSignal) => unknown,
  outer: AbortSignal | undefined,
  timeoutMs: number | undefined,
  endsWhenStopped?: () => boolean,
): Promise<RunOutcome> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The shared signal that never aborts is no signal: joined to a timeout's, it would keep every join.
  if (outer === NEVER_ABORTED) outer = undefined;
  // The run's signal as it is (a tool gets the very signal the caller set, as from the SDK's runner).
  let signal = outer ?? NEVER_ABORTED;
  let timedOut = false;
  let untie: (() => void) | undefined;
  if (timeoutMs !== undefined) {
    const own = new AbortController();
    // A `TimeoutError`, as `AbortSignal.timeout()` aborts with: a tool (or an approver) can tell a timeout from an abort.
    timer = setTimeout(() => {
      timedOut = true;
      own.abort(timeoutReason(timeoutMs));
    }, timeoutMs);
    // Tied to the run's signal while the call runs, untied after (`tie`).
    if (outer) untie = tie(own, outer);
    signal = own.signal;
  }
  try {
    if (signal === NEVER_ABORTED) {
      // Nothing can stop it: its own outcome, started (as any guarded run) after the current tick.
      await undefined;
      // (`NEVER_ABORTED` itself: the callee hands the tool a signal of its own, `ownSignal` / `withOwnSignal`.)
      return { ok: true, value: await run(signal) };
    }
    // Aborted before it could start (the run's signal while it waited for a slot, or a hook ran): never started.
    let started = false;
    const running = Promise.resolve().then(() => (signal.aborted ? undefined : ((started = true), run(signal))));
    const settled = await untilAborted(running, signal);
    if (!settled.aborted) return { ok: true, value: settled.value };
    running.catch(() => {});
    if (started && endsWhenStopped?.()) await untilLate(running.then(noop, noop), STOPPED_GRACE_MS);
    return { ok: false, timedOut: timedOut && !outer?.aborted ? timeoutMs : undefined, started };
  } catch (thrown) {
    // A value that cannot be read (a revoked Proxy) would fail the run wherever it is read, and the call would run again.
    return { ok: false, thrown: readableThrown(thrown) };
  } finally {
    clearTimeout(timer);
    untie?.();
  }
}

/** The mark of a call's own time limit on its signal's reason (registered: a sub-agent may run the other build's copy). */
const CALL_TIMEOUT = Symbol.for('tool-runner.callTimeout.v1');

export function timeoutReason(ms: number): DOMException {
  const reason = new DOMException(`timed out after ${ms} ms`, 'TimeoutError');
  Object.defineProperty(reason, CALL_TIMEOUT, { value: ms });
  return reason;
}

/**
 * Whether a signal's reason is a call's time limit (its tool's timeout), not the run's own signal,
 * which may be a `TimeoutError` too (`AbortSignal.timeout()`).
 */
export function isCallTimeout(reason: unknown): boolean {
  return typeof reason === 'object' && reason !== null && typeof (reason as { [CALL_TIMEOUT]?: unknown })[CALL_TIMEOUT] === 'number';
}

/** `untilAborted` with a signal that aborts after `ms` (its timer cleared once the promise settles). */
export async function untilLate<T>(promise: Promise<T>, ms: number): Promise<Settled<T>> {
  const late = new AbortController();
  const timer = setTimeout(() => late.abort(), ms);
  try {
    return await untilAborted(promise, late.signal);
  } finally {
    clearTimeout(timer);
  }
}

const noop = () => {};

type Settled<T> = { aborted: true } | { aborted: false; value: T };

/** What `unlessAborted` gives when the signal aborted first. */
export const STOPPED: unique symbol = Symbol('stopped');

/** A step before a call runs that its tool's timeout ended: the call is answered as timed out, not run. */
export class StepTimedOut {
  constructor(readonly ms: number) {}
}

/**
 * The promise's value, or `STOPPED` as soon as the signal (if any) aborts, or a `StepTimedOut` past `timeoutMs` (the
 * tool's timeout): a step before a call runs that may hang (an async validator, a `needsApproval` rule). The tool
 * then gets its whole timeout to run, as after the approver's wait.
 */
export function stepWithin<T>(promise: Promise<T>, signal: AbortSignal | undefined, timeoutMs: number | undefined, onTimeout?: () => void): Promise<T | typeof STOPPED | StepTimedOut> {
  if (timeoutMs === undefined) return unlessAborted(promise, signal);
  if (signal?.aborted) return dropped(promise, STOPPED);
  return new Promise((resolve, reject) => {
    // Whatever ends the wait first unties the rest: no listener is left on the run's signal, no timer runs on.
    const end = () => {
      clearTimeout(timer);
      untie?.();
    };
    const timer = setTimeout(() => {
      end();
      onTimeout?.();
      resolve(new StepTimedOut(timeoutMs));
    }, timeoutMs);
    const untie = signal && onAbort(signal, () => (end(), resolve(STOPPED)));
    promise.then(
      (value) => (end(), resolve(value)),
      (error: unknown) => (end(), reject(error)),
    );
  });
}

/** The promise's value, or `STOPPED` as soon as the signal (if any) aborts: a step of a call that may hang (a validator, a rule). */
export async function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof STOPPED> {
  if (!signal) return promise;
  const settled = await untilAborted(promise, signal);
  return settled.aborted ? STOPPED : settled.value;
}

/** `instead`, the promise left behind: its failure (a rule that rejects once its signal aborted) is not unhandled. */
function dropped<T, U>(promise: Promise<T>, instead: U): Promise<U> {
  promise.catch(() => {});
  return Promise.resolve(instead);
}

/** Settles with the promise, or with `aborted` as soon as the signal aborts. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<Settled<T>> {
  if (signal.aborted) return dropped(promise, { aborted: true });
  return new Promise((resolve, reject) => {
    const stop = onAbort(signal, () => resolve({ aborted: true }));
    promise.then(
      (value) => {
        stop();
        resolve({ aborted: false, value });
      },
      (error: unknown) => {
        stop();
        reject(error);
      },
    );
  });
}
