/**
 * The order in which the calls of one reply start their steps, in a durable run (`tool-runner/dbos`):
 * the model's. DBOS numbers a workflow's steps as they start, so calls that reached their tools in
 * another order on recovery (a hook, an approval or a validation that took longer this time) would be
 * given each other's recorded results. A call about to run waits until every call before it in the
 * reply has started its step (the durable tool says so: `stepStarted`), or has ended; their tools then
 * run at once, as in any run. A call that starts no step of its own (an agent tool, whose sub-agent's
 * requests are steps) holds the calls after it until it ends.
 */

/** Marks a client whose requests and tools are a durable run's steps (dbos/steps.ts). */
export const ORDERED_STARTS = Symbol.for('tool-runner.orderedStarts');

/** The key of a tool context's callback that says the call's step has started (its number is taken). */
export const STEP_STARTED = Symbol.for('tool-runner.stepStarted');

/** Tells the run that the call of this tool context has started its step: the next call of the reply may start its own. */
export function stepStarted(context: object): void {
  (context as { [STEP_STARTED]?: () => void })[STEP_STARTED]?.();
}

export class StartOrder {
  readonly #ids: readonly string[];
  readonly #passed: Array<() => void> = [];
  readonly #gates: Array<Promise<void>>;

  constructor(ids: readonly string[]) {
    // A history set by hand may repeat an id in one message (the runner answers the repeat as not run): one gate per id.
    this.#ids = [...new Set(ids)];
    this.#gates = this.#ids.map(() => new Promise<void>((resolve) => this.#passed.push(resolve)));
  }

  /** The order of `uses` when `client` runs a durable run's steps and there is more than one call; none otherwise. */
  static of(client: object, uses: ReadonlyArray<{ id: string }>): StartOrder | undefined {
    return ORDERED_STARTS in client && uses.length > 1 ? new StartOrder(uses.map((use) => use.id)) : undefined;
  }

  /** The call `id` is about to run its tool: resolves once every call before it has started its step, or ended. */
  turnOf(id: string): Promise<void> {
    const before = this.#gates.slice(0, Math.max(0, this.#ids.indexOf(id)));
    return before.length === 0 ? Promise.resolve() : Promise.all(before).then(() => undefined);
  }

  /** The call `id` has started its step, or never will. */
  pass(id: string): void {
    this.#passed[this.#ids.indexOf(id)]?.();
  }

  /** `outcome`, once the call `id` has ended: it passes then, if it never ran (invalid, denied, waiting, refused). */
  settles<T>(id: string, outcome: Promise<T>): Promise<T> {
    return outcome.finally(() => this.pass(id));
  }
}
