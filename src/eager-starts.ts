/** The calls a reply starts while it streams (`runToolsEagerly`): their own abort, and their outcomes. */
import type { CallOutcome } from './execute.js';
import { onAbort } from './on-abort.js';

export interface EagerStarts {
  /** Aborted with the run's signal while `untie` is not called (never `AbortSignal.any`: see runWithGuards). */
  controller: AbortController;
  untie: (() => void) | undefined;
  started: Array<Promise<CallOutcome>>;
  /** The ids of the calls started: forgotten if the reply is not kept, so that a retried reply's calls run anew. */
  ids: string[];
}

/** A reply's eager state, its calls' abort tied to the run's signal (`outer`) until `untie`. */
export function eagerStarts(outer: AbortSignal | undefined): EagerStarts {
  const controller = new AbortController();
  if (outer?.aborted) controller.abort(outer.reason);
  const untie = outer && !outer.aborted ? onAbort(outer, () => controller.abort(outer.reason)) : undefined;
  return { controller, untie, started: [], ids: [] };
}
