/**
 * A sub-agent whose run failed because what its parent lent it failed (the parent's approver threw, or answered
 * nonsense about one of its calls), kept in this process by the state its parent holds for the call: the parent's
 * retry (iterating it again) goes on with this very run, as a run's own retry does, so the calls of its reply that
 * ran on after the failure are not run again (their results are used; one still running is awaited). Resumed from a
 * snapshot (a copy, another process), the sub-agent goes on from the state it failed with.
 */
import type { RunnerSnapshot } from './snapshot.js';
import type { Runner } from './surface.js';
import type { Usage } from './usage.js';

export interface FailedRun {
  sub: Runner & { runUntilDone(): Promise<unknown> };
  /** The sub-agent's signal's controller: tied again to the retried call's signal. */
  own: AbortController;
  /** Where its lent approver puts its failure (emptied for the retry). */
  lentFailure: { error?: unknown };
  /** What the parent's usage holds of the sub-agent's. */
  counted: () => Usage;
  /** Unties its signal from the failed call's (kept tied so that the parent's abort stops the calls that run on). */
  untie: () => void;
}

const failedRuns = new WeakMap<RunnerSnapshot, FailedRun>();

/** `state` (what the parent holds for the call), with the failed run kept beside it. */
export function keepFailed(state: RunnerSnapshot, run: FailedRun): RunnerSnapshot {
  failedRuns.set(state, run);
  return state;
}

/**
 * The run kept beside `state`, taken (the retried call's from now on, its signal untied from the failed call's); none once
 * its signal has aborted (the parent's abort stopped the calls that ran on: the retry goes on from `state`).
 */
export function takeFailed(state: RunnerSnapshot | undefined): FailedRun | undefined {
  const run = state && failedRuns.get(state);
  if (!run) return undefined;
  failedRuns.delete(state);
  run.untie();
  return run.own.signal.aborted ? undefined : run;
}
