/**
 * The mock server's script: the steps requests take, in order, and what went wrong on the way (a
 * request after the last step, a step that threw), which `assertComplete()` reports.
 */
import { checkSteps } from './server-options.js';

export class Script<S> {
  #steps: S[];
  /** Index in `#steps` of the step the next request takes. */
  #next = 0;
  /** Steps of the scripts `replace` dropped: step numbers count on across scripts. */
  #used = 0;
  readonly #problems: string[] = [];
  /** The first error a problem came from, as the `cause` of `assertComplete`'s error. */
  #cause: unknown;

  constructor(steps: readonly S[]) {
    this.#steps = [...steps];
  }

  /** How many steps were scripted, over every script. */
  get scripted(): number {
    return this.#used + this.#steps.length;
  }

  /** The step the next request takes, and its number; `undefined` after the last step. */
  take(): { step: S; number: number } | undefined {
    // The end of the script is its length: a step left undefined (a condition not met) is a step, answered as a mistake.
    if (this.#next >= this.#steps.length) return undefined;
    const step = this.#steps[this.#next]!;
    return { step, number: this.#used + this.#next++ };
  }

  /** Replaces the steps not yet taken. */
  replace(steps: readonly S[]): void {
    checkSteps('setSteps', steps);
    // Steps already taken are dropped, not kept: a long-lived server does not grow.
    this.#used += this.#next;
    this.#steps = [...steps];
    this.#next = 0;
  }

  /** Something the test must hear about, even if the client under test swallowed the error it got. */
  report(problem: string, cause?: unknown): void {
    this.#problems.push(problem);
    if (cause !== undefined) this.#cause ??= cause;
  }

  /**
   * Throws when a problem was reported or steps are left over. A problem is reported once: a server
   * reused by the next test (`setSteps`) does not fail it for what went wrong in this one.
   */
  assertComplete(): void {
    const problems = this.#problems.splice(0);
    const cause = this.#cause;
    this.#cause = undefined;
    const left = this.#steps.length - this.#next;
    if (left > 0) problems.push(`${left} of ${this.scripted} steps were never requested (the first is step #${this.#used + this.#next})`);
    if (problems.length > 0) {
      const message = `Mock server script not complete:\n- ${problems.join('\n- ')}`;
      throw cause === undefined ? new Error(message) : new Error(message, { cause });
    }
  }
}
