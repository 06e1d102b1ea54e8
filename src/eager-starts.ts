/** The calls a reply starts while it streams (`runToolsEagerly`): their own abort, and their outcomes. */
import type { CallOutcome } from './execution-context.js';
import { tie } from './on-abort.js';

export interface EagerStarts {
  /** Aborted with the run's signal until `untie` is called (`tie`). */
  controller: AbortController;
  untie: (() => void) | undefined;
  /** The run's signal the calls follow now (`tie`). */
  outer: AbortSignal | undefined;
  started: Array<Promise<CallOutcome>>;
  /** The ids of the calls started: forgotten if the reply is not kept, so that a retried reply's calls run anew. */
  ids: string[];
}

/** A reply's eager state, its calls' abort tied to the run's signal (`outer`) until `untie`. */
export function eagerStarts(outer: AbortSignal | undefined): EagerStarts {
  const controller = new AbortController();
  return { controller, untie: outer && tie(controller, outer), outer, started: [], ids: [] };
}

/** The calls follow `outer` from now on (none: no signal's), not the signal they were tied to. */
export function tieEager(eager: EagerStarts, outer: AbortSignal | undefined): void {
  eager.untie?.();
  eager.untie = outer && tie(eager.controller, outer);
  eager.outer = outer;
}

/**
 * The abort reasons of the calls of replies not kept (`notKept`), each with the run's signal the calls followed: a toolset's
 * call ends before the turn goes again, unless the run aborts meanwhile (then it is answered as aborted, as any call is).
 */
const NOT_KEPT = new WeakMap<object, { run: AbortSignal | undefined }>();

/** Why a reply's eager calls are aborted when the reply is not kept (the loop body left it, or it failed). */
export function notKept(eager: EagerStarts): DOMException {
  const reason = new DOMException('the reply that asked for this call was not kept', 'AbortError');
  NOT_KEPT.set(reason, { run: eager.outer });
  return reason;
}

/** Aborted because the reply that started the call was not kept (not the run's abort): the run's signal, which still stops it. */
export function abortedAsNotKept(signal: AbortSignal | undefined): { run: AbortSignal | undefined } | undefined {
  const reason: unknown = signal?.reason;
  return signal?.aborted === true && typeof reason === 'object' && reason !== null ? NOT_KEPT.get(reason) : undefined;
}
