/**
 * The mock server's script: the steps requests take, in order, and what went wrong on the way (a
 * request after the last step, a step that threw), which `assertComplete()` reports.
 */
import { checkSteps } from './server-options.js';

export class Script<S> {
  #steps: S[];
  /** Index in `#steps` of the step the next request takes. */
  #next = 0;
  /** How many times `setSteps` replaced the script: a step is named by its index in the list it was given in, and that list. */
  #replaced = 0;
  readonly #problems: string[] = [];
  /** The first error a problem came from, as the `cause` of `assertComplete`'s error. */
  #cause: unknown;

  constructor(steps: readonly S[]) {
    this.#steps = [...steps];
  }

  /**
   * The steps of the script now, in words: `2 steps scripted`, or `2 steps scripted by setSteps #1` (a problem of an
   * earlier script, reported after a `setSteps`, still names its own).
   */
  get scripted(): string {
    return `${this.#count()} scripted${this.#replaced === 0 ? '' : ` by setSteps #${this.#replaced}`}`;
  }

  #count(): string {
    return `${this.#steps.length} step${this.#steps.length === 1 ? '' : 's'}`;
  }

  /**
   * The step the next request takes, and its name: `step #1`, its index in the array given to `createMockServer`, or
   * `step #1 of setSteps #2`, in the array of the second `setSteps`; `undefined` after the last step. (Numbers that
   * went on counting across scripts named a step the test could not find: `step #5` of a `setSteps` of two steps.)
   */
  take(): { step: S; name: string } | undefined {
    // The end of the script is its length: a step left undefined (a condition not met) is a step, answered as a mistake.
    if (this.#next >= this.#steps.length) return undefined;
    const index = this.#next++;
    return { step: this.#steps[index]!, name: `step #${index}${this.#of()}` };
  }

  /** Replaces the steps not yet taken. */
  replace(steps: readonly S[]): void {
    checkSteps('setSteps', steps);
    // Steps already taken are dropped, not kept: a long-lived server does not grow.
    this.#steps = [...steps];
    this.#next = 0;
    this.#replaced++;
  }

  /** Which list the script's steps were given in, after a step's number: none for `createMockServer`'s. */
  #of(): string {
    return this.#replaced === 0 ? '' : ` of setSteps #${this.#replaced}`;
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
    // One left is named as it is ("1 of 1 step were never requested (the first is step #0)" read as a slip).
    const first = `step #${this.#next}${this.#of()}`;
    if (left === 1) problems.push(`1 of ${this.#count()} was never requested (${first})`);
    else if (left > 1) problems.push(`${left} of ${this.#count()} were never requested (the first is ${first})`);
    if (problems.length > 0) {
      const message = `Mock server script not complete:\n- ${problems.join('\n- ')}`;
      throw cause === undefined ? new Error(message) : new Error(message, { cause });
    }
  }
}
