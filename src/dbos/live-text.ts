/**
 * A durable run's streamed text, live. A model request step streams its reply inside the step and
 * records the whole message; while the step runs, its text pieces reach the run's listeners as the
 * `request.text` events of the request that runs (as a streamed request of `toolRunner` sends
 * them). Nothing of it is recorded in DBOS, and a step a recovery replays from its record streams
 * nothing, so no text is sent twice. It also tells the steps when the request is a compaction's
 * summary, which goes without streaming, as in a run without durability.
 */
import type { RunnerEvent, RunnerListener } from '../events.js';
import type { Runner } from '../surface.js';

export class LiveText {
  #emit: ((event: RunnerEvent) => void) | undefined;
  #runner: Runner | undefined;
  /** The turn request that runs now (0: none; a compaction's summary is not streamed text of a reply). */
  #requestId = 0;
  /** A compaction's summary is in flight. */
  #summary = false;

  /** Follows the run's own requests (not a sub-agent's): a listener of the run. */
  readonly follow: RunnerListener = (event) => {
    if (event.path) return;
    if (event.type === 'request.start') {
      this.#runner = event.runner;
      this.#requestId = event.purpose === 'turn' ? event.requestId : 0;
      this.#summary = event.purpose === 'compaction';
    } else if (event.type === 'request.end') {
      this.#requestId = 0;
      this.#summary = false;
    }
  };

  /** The run's listeners (with `follow` among them): the text goes to them, when the caller listens. */
  attach(emit: ((event: RunnerEvent) => void) | undefined, callerListens: boolean): void {
    this.#emit = callerListens ? emit : undefined;
  }

  /** Whether the request in flight is a compaction's summary (a step sends it without streaming, its fallbacks too). */
  get summary(): boolean {
    return this.#summary;
  }

  /** Whether anything listens: a step streams its text to `piece` only then. */
  get listening(): boolean {
    return this.#emit !== undefined;
  }

  /** A piece of the streamed reply's text, from the step that runs. */
  readonly piece = (text: string): void => {
    if (this.#requestId !== 0) this.#emit?.({ type: 'request.text', runner: this.#runner!, requestId: this.#requestId, text });
  };
}
