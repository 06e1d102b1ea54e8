/**
 * Approvals decided from the page: `inspect.approve` waits until a page decides (the first
 * decision counts), the run's signal aborts, or the inspector closes (after that, it denies at once).
 */
import type { ApprovalDecision } from '../approval.js';
import { isCallTimeout } from '../guards.js';
import { onAbort } from '../on-abort.js';
import type { CallWhere, InspectorRecord } from './records.js';

/** A decision as the page posts it. */
export interface PageDecision {
  run: string;
  id: string;
  decision: 'allow' | 'deny';
  /** Edited input (allow only): the runner validates it again. */
  input?: unknown;
  reason?: string;
}

/** How a call's wait ended: a page decided it, or it ended without one (the run aborted, its time ran out, the inspector closed). */
type WaitEnd = 'allow' | 'deny' | 'aborted' | 'timedOut' | 'closed';

/** What became of a posted decision: taken, no such call, or its wait had ended (how). */
export type DecideOutcome = 'decided' | 'unknown' | { ended: WaitEnd };

interface Waiting {
  /** The call's input was shown (captured): an edited one is recorded too. */
  shown: boolean;
  decide(decision: ApprovalDecision, record: Omit<Extract<InspectorRecord, { type: 'approval.decided' }>, 'run' | 'time' | 'type' | 'id'>): void;
}

export class PageApprovals {
  readonly #waiting = new Map<string, Waiting>();
  /** Approvals decided already (by another page, the signal, or close), and how, so a late click is told so: the last `MAX_DECIDED`. */
  readonly #decided = new Map<string, WaitEnd>();
  readonly #emit: (record: InspectorRecord) => void;
  /** The inspector closed: a call asked about from now on is denied at once. */
  #closed = false;

  constructor(emit: (record: InspectorRecord) => void) {
    this.#emit = emit;
  }

  /** Waits for a page's decision about call `id` of `run`. */
  ask(where: CallWhere, id: string, name: string, input: unknown, signal: AbortSignal | undefined): Promise<ApprovalDecision> {
    const key = keyOf(where.run, id);
    return new Promise<ApprovalDecision>((resolve) => {
      let stopWaiting: (() => void) | undefined;
      const decide: Waiting['decide'] = (decision, fields) => {
        this.#waiting.delete(key);
        this.#decided.set(key, fields.decision);
        // A long-lived inspector decides without end: the oldest are forgotten (a click on one is told it is unknown).
        if (this.#decided.size > MAX_DECIDED) this.#decided.delete(this.#decided.keys().next().value!);
        stopWaiting?.();
        this.#emit({ ...where, time: Date.now(), type: 'approval.decided', id, ...fields });
        resolve(decision);
      };
      // The run's answer to an aborted or timed-out call is its own, whatever is decided (execute.ts).
      // Timed out: the call's time limit ran out, not the run's own signal (an `AbortSignal.timeout()` is an abort).
      const aborted = () =>
        isCallTimeout(signal?.reason)
          ? decide({ decision: 'deny', reason: 'no decision in time' }, { decision: 'timedOut' })
          : decide({ decision: 'deny', reason: 'the run was aborted' }, { decision: 'aborted' });
      this.#waiting.set(key, { shown: input !== undefined, decide });
      // The whole input, however long: the person decides on it, and may edit it.
      this.#emit({ ...where, time: Date.now(), type: 'approval.waiting', id, name, ...(input !== undefined && { input: jsonOrWords(input) }) });
      if (this.#closed) closed(decide);
      else if (signal?.aborted) aborted();
      // One listener on the run's signal however many calls wait at once (`onAbort`).
      else if (signal) stopWaiting = onAbort(signal, aborted);
    });
  }

  /** Whether a call of `run` (the call `id`, when given) still waits for a decision. */
  waitsIn(run: string, id?: string): boolean {
    if (id !== undefined) return this.#waiting.has(keyOf(run, id));
    const prefix = keyOf(run, '');
    for (const key of this.#waiting.keys()) if (key.startsWith(prefix)) return true;
    return false;
  }

  /** A page's decision; only the first one about a call counts. */
  decide(posted: PageDecision): DecideOutcome {
    const key = keyOf(posted.run, posted.id);
    const waiting = this.#waiting.get(key);
    if (!waiting) {
      const ended = this.#decided.get(key);
      return ended === undefined ? 'unknown' : { ended };
    }
    if (posted.decision === 'allow') {
      const edited = posted.input !== undefined;
      // The input that runs, recorded (when inputs are shown): a recorded file read later says what was sent.
      const record = { decision: 'allow' as const, ...(edited && { edited: true as const }), ...(edited && waiting.shown && { input: posted.input }) };
      waiting.decide(edited ? { decision: 'allow', input: posted.input } : { decision: 'allow' }, record);
    } else {
      const reason = posted.reason?.trim() || undefined;
      waiting.decide({ decision: 'deny', reason }, { decision: 'deny', ...(reason !== undefined && { reason }) });
    }
    return 'decided';
  }

  /** The inspector closes: every call still waiting is denied (no page can decide it any more). */
  closeAll(): void {
    this.#closed = true;
    for (const { decide } of [...this.#waiting.values()]) closed(decide);
  }
}

/** Denies a call no page can decide any more. */
const closed = (decide: Waiting['decide']) => decide({ decision: 'deny', reason: 'the inspector was closed before anyone decided' }, { decision: 'closed' });

const keyOf = (run: string, id: string) => `${run}\u0000${id}`;

/** How many decided approvals a late click is told about ("someone decided it already"). */
const MAX_DECIDED = 10_000;

/** The value as it is, when JSON can carry it; else said in words (the record, and its batch, must be written). */
function jsonOrWords(value: unknown): unknown {
  try {
    JSON.stringify(value);
    return value;
  } catch (error) {
    return `[not JSON: ${(error as Error).message}]`;
  }
}
